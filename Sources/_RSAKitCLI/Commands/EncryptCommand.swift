#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// `rsakit encrypt`: SecKeyEncrypt / SecKeyCreateEncryptedData over data of any length, in
/// the rsakit container, raw blocks or Apple's RSA-OAEP + AES-GCM (RSAKit's `RSAMessage`).
struct EncryptCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "encrypt",
        overview: "Encrypt data for a public key (rsakit container, raw blocks, or Apple's RSA-OAEP + AES-GCM).",
        usage:
            "rsakit encrypt (--tag <TAG> | --key <FILE> | --cert <FILE> | --cert-label <L>) [--in <FILE>] [--out "
            + "<FILE>] [--format container|raw|apple-aesgcm] [--raw] [--armor] [--padding pkcs1|oaep] "
            + "[--oaep-hash <HASH>] [--mgf1-hash <HASH>] [--label <TEXT> | --label-hex <HEX>] [--store <DIR>]",
        options: [
            .value("tag", "TAG", "Encrypt for the public key stored under this application tag."),
            .value("key", "FILE", "Encrypt for the key in this file (PEM or DER; PKCS#1, SPKI or PKCS#8)."),
            .value(
                "cert", "FILE",
                "Encrypt for the RSA key of this certificate (DER or PEM; warns when expired or its key usage "
                    + "forbids key encipherment)."
            ),
            .value("cert-label", "L", "Encrypt for the RSA key of the stored certificate with this label."),
            .value("in", "FILE", "Read plaintext from FILE (default: standard input; '-' too)."),
            .value("out", "FILE", "Write to FILE, only if the command succeeds (default: standard output).")
        ] + MessageOptions.specs + [
            .flag("armor", "Write ASCII armor (base64 between BEGIN/END lines) for text channels (container only).")
        ],
        discussion: """
            By default the output is an rsakit container (version 2): a header naming the recipient
            key and the padding, then blocks that nobody without the private key can forge, reorder,
            splice or truncate undetected (see README). With --format raw (--raw), each k-byte block
            carries at most k - 11 plaintext bytes (PKCS#1 v1.5) or k - 2 hLen - 2 (OAEP).
            --format apple-aesgcm writes what SecKeyCreateEncryptedData makes with
            kSecKeyAlgorithmRSAEncryptionOAEPSHA256AESGCM (--oaep-hash picks the SHA).
            """)

    let arguments: ParsedArguments
    let format: RSAMessageFormat

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        let given = ["tag", "key", "cert", "cert-label"].filter { arguments.value($0) != nil }
        guard given.count == 1 else {
            throw UsageError(
                message: given.isEmpty
                    ? "missing --tag <TAG> or --key <FILE> (or --cert <FILE>, --cert-label <L>)"
                    : "give either --tag or --key (or --cert, --cert-label), not several", command: Self.spec.name)
        }
        let options = try MessageOptions(arguments, command: Self.spec.name)
        if arguments.flag("armor") && (options.kind ?? .container) != .container {
            let name = arguments.flag("raw") ? "--raw" : "--format \(options.kind!.rawValue)"
            throw UsageError(
                message: "--armor applies to the rsakit container and cannot be combined with \(name)",
                command: Self.spec.name)
        }
        if case let .oaep(parameters) = options.padding, !parameters.label.isEmpty,
            (options.kind ?? .container) == .container
        {
            throw UsageError(
                message: "the rsakit container records OAEP with an empty label only; use --format raw for --label",
                command: Self.spec.name)
        }
        format = options.encryptionFormat(armored: arguments.flag("armor"))
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
        if let tag = arguments.value("tag"), let tokenKey = storeTokenKey(try openStore(arguments), tag: tag),
            let tpmKey = tokenKey.reference.tpmKey
        {
            try refuseUndecryptable(tpmKey.usage, tag: tag)
            noteTPMCost(key, input: input)
        }
        let output = try OutputFile(arguments.value("out"), input: input)
        let meter = ProgressMeter.make(arguments, verb: "encrypted", inputDescriptor: input.fileDescriptor)
        do {
            if !format.armored && isatty(output.fileDescriptor) == 1 {
                // As age does: binary on a terminal is garbage and may drive the terminal.
                throw UsageError(
                    message:
                        "refusing to write binary ciphertext to a terminal; add --armor (-a), give --out FILE (-o), "
                        + "or redirect standard output",
                    command: Self.spec.name)
            }
            var source = ProgressSource(RSAFileDescriptorSource(fileDescriptor: input.fileDescriptor), meter)
            var sink = RSAFileDescriptorSink(fileDescriptor: output.fileDescriptor)
            try RSAMessage.encrypt(from: &source, to: &sink, for: key, format: format)
            try output.commit()
            meter?.finish()
        } catch {
            meter?.abandon()
            output.discard()
            throw error
        }
    }

    /// Refuse to encrypt to a key in the TPM what it could never decrypt: only the public key
    /// is needed to encrypt, but the TPM decrypts the one scheme fixed in the key.
    /// - Throws: `UsageError` naming the options that fit.
    private func refuseUndecryptable(_ usage: RSATPMKeyUsage, tag: String) throws {
        let name = shellQuoted(terminalSafe(tag))
        switch usage {
        case .sign:
            throw UsageError(
                message:
                    "the TPM key \(name) can only sign (its usage, fixed in the TPM): nothing encrypted to it could "
                    + "ever be decrypted; encrypt to a TPM key made with --usage decrypt",
                command: Self.spec.name)
        case .decryptOAEP, .decryptPKCS1v15:
            guard format.padding != usage.decryptionPadding else { return }
            let fix =
                usage == .decryptOAEP
                ? "use --padding oaep (SHA-256, no label) or --format apple-aesgcm"
                : "use the default --padding pkcs1 in the container or raw blocks"
            let scheme = usage == .decryptOAEP ? "RSAES-OAEP with SHA-256" : "RSAES-PKCS1-v1_5"
            throw UsageError(
                message:
                    "the TPM key \(name) decrypts only \(scheme) (its scheme, fixed in the TPM), so what this would "
                    + "write (\(format)) could never be decrypted: \(fix)",
                command: Self.spec.name)
        }
    }

    /// Say, before encrypting to a key in the TPM, how many private operations in the TPM the
    /// decryption will take (a TPM does a few to a few dozen a second), and recommend Apple's
    /// format (one) when that is more than a few.
    private func noteTPMCost(_ key: RSAPublicKey, input: InputFile) {
        var info = stat()
        let size: Int? =
            fstat(input.fileDescriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : nil
        var text = "rsakit: note: the private key is in a TPM: "
        if let size,
            let count = format.privateOperationCount(plaintextByteCount: size, modulusByteCount: key.modulusByteCount)
        {
            text += "decrypting this takes \(count) private operation\(count == 1 ? "" : "s") in the TPM"
            if count > 1 { text += " (a TPM does about 5 to 50 a second)" }
        } else if let perMiB = format.privateOperationCount(
            plaintextByteCount: 1 << 20, modulusByteCount: key.modulusByteCount)
        {
            text += "decrypting takes \(perMiB) private operation\(perMiB == 1 ? "" : "s") in the TPM per MiB"
        } else {
            return
        }
        if format.kind != .appleAESGCM,
            (size.flatMap {
                format.privateOperationCount(plaintextByteCount: $0, modulusByteCount: key.modulusByteCount)
            } ?? 4) > 3
        {
            text += "; --format apple-aesgcm takes one for any size"
        }
        printError(text + "\n")
    }
}
