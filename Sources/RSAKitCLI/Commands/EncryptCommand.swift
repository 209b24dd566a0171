import RSAKit

/// `rsakit encrypt`: SecKeyEncrypt with PKCS#1 v1.5 padding over data of any length.
struct EncryptCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "encrypt",
        overview: "Encrypt data for a public key (rsakit container, or raw PKCS#1 v1.5 blocks).",
        usage: "rsakit encrypt (--tag <TAG> | --key <FILE> | --cert <FILE> | --cert-label <L>) [--in <FILE>] [--out <FILE>] [--raw] [--armor] [--store <DIR>]",
        options: [
            .value("tag", "TAG", "Encrypt for the public key stored under this application tag."),
            .value("key", "FILE", "Encrypt for the key in this file (PEM or DER; PKCS#1, SPKI or PKCS#8)."),
            .value("cert", "FILE", "Encrypt for the RSA key of this certificate (DER or PEM; warns when expired or its key usage forbids key encipherment)."),
            .value("cert-label", "L", "Encrypt for the RSA key of the stored certificate with this label."),
            .value("in", "FILE", "Read plaintext from FILE (default: standard input; '-' too)."),
            .value("out", "FILE", "Write to FILE, only if the command succeeds (default: standard output)."),
            .flag("raw", "Write bare k-byte PKCS#1 v1.5 blocks (as iOS, Java and openssl pkeyutl per block)."),
            .flag("armor", "Write ASCII armor (base64 between BEGIN/END lines) for text channels."),
        ],
        discussion: """
        By default the output is an rsakit container: a header naming the recipient key, then
        blocks whose framing detects reordering, splicing and truncation (see README).
        With --raw, each block of k bytes carries at most k - 11 plaintext bytes.
        """)

    let arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        let given = ["tag", "key", "cert", "cert-label"].filter { arguments.value($0) != nil }
        guard given.count == 1 else {
            throw UsageError(message: given.isEmpty ? "missing --tag <TAG> or --key <FILE> (or --cert <FILE>, --cert-label <L>)"
                                                    : "give either --tag or --key (or --cert, --cert-label), not several", command: Self.spec.name)
        }
        if arguments.flag("raw") && arguments.flag("armor") {
            throw UsageError(message: "--armor applies to the rsakit container and cannot be combined with --raw", command: Self.spec.name)
        }
    }

    func run() throws {
        let key: RSAPublicKey
        if let path = arguments.value("key") {
            key = try loadKeyFile(path, arguments: arguments, command: Self.spec.name).publicKey
        } else if let path = arguments.value("cert") {
            key = try CertificateRecipient.publicKey(file: path)
        } else if let label = arguments.value("cert-label") {
            key = try CertificateRecipient.publicKey(label: label, store: try openStore(arguments))
        } else {
            key = try storePublicKey(try openStore(arguments), tag: arguments.value("tag")!)
        }
        let input = try InputFile.open(arguments.value("in"))
        defer { input.close() }
        let output = try OutputFile(arguments.value("out"), input: input)
        do {
            var source = FileDescriptorSource(fileDescriptor: input.fileDescriptor)
            let sink = FileDescriptorSink(fileDescriptor: output.fileDescriptor)
            if arguments.flag("armor") {
                var armored = try ArmorEncodingSink(sink)
                try encrypt(&source, &armored, key)
                try armored.finish()
            } else {
                var plain = sink
                try encrypt(&source, &plain, key)
            }
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }

    private func encrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        _ source: inout Source, _ sink: inout Sink, _ key: RSAPublicKey
    ) throws {
        if arguments.flag("raw") {
            try PKCS1v15Chunking.encrypt(from: &source, to: &sink, with: key)
        } else {
            try MessageContainer.encrypt(from: &source, to: &sink, with: key)
        }
    }
}
