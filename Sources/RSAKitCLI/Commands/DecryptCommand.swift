import RSAKit

/// `rsakit decrypt`: SecKeyDecrypt with PKCS#1 v1.5 padding over data of any length.
struct DecryptCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "decrypt",
        overview: "Decrypt an rsakit container or raw PKCS#1 v1.5 blocks with a private key.",
        usage: "rsakit decrypt [--tag <TAG> | --key <FILE>] [--in <FILE>] [--out <FILE>] [--raw] [--store <DIR>]",
        options: [
            .value("tag", "TAG", "Use the private key stored under this application tag."),
            .value("key", "FILE", "Use the private key in this file (PEM or DER; PKCS#1 or PKCS#8)."),
            .value("in", "FILE", "Read ciphertext from FILE (default: standard input; '-' too)."),
            .value("out", "FILE", "Write to FILE, only if the command succeeds (default: standard output)."),
            .flag("raw", "Treat the input as bare k-byte blocks even if it looks like a container."),
        ],
        discussion: """
        The input form is detected: an rsakit container (by its magic), ASCII armor, or raw
        blocks. For a container without --tag or --key, the private key is found in the store
        by the fingerprint in the header. Raw blocks need --tag or --key.
        When writing to standard output and decryption fails part-way, the exit status is
        non-zero and what was written must be discarded.
        """)

    let arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        guard arguments.value("tag") == nil || arguments.value("key") == nil else {
            throw UsageError(message: "give either --tag or --key, not both", command: Self.spec.name)
        }
    }

    func run() throws {
        let input = try InputFile.open(arguments.value("in"))
        defer { input.close() }
        let output = try OutputFile(arguments.value("out"), input: input)
        do {
            var sink = FileDescriptorSink(fileDescriptor: output.fileDescriptor)
            try decrypt(input: input, to: &sink)
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }

    private func decrypt(input: InputFile, to sink: inout FileDescriptorSink) throws {
        var base = FileDescriptorSource(fileDescriptor: input.fileDescriptor)
        var prefix = try peek(&base, MessageContainer.headerByteCount)
        if !MessageContainer.hasMagic(prefix) && prefix.count == MessageContainer.headerByteCount {
            // Armor may follow some text (a pasted e-mail): look a little further for it.
            prefix += try peek(&base, Self.armorSearchByteCount - prefix.count)
        }
        var source = AnySource(PrefixedSource(prefix: prefix, inner: base))
        if hasArmorBeginLine(prefix) {
            source = AnySource(ArmorDecodingSource(source))
            prefix = try peek(&source, MessageContainer.headerByteCount)
            source = AnySource(PrefixedSource(prefix: prefix, inner: source))
        }
        let raw = arguments.flag("raw")
        if prefix.isEmpty && !raw {
            throw CLIFailure("input is empty: nothing to decrypt", .dataError)
        }
        if !raw && MessageContainer.hasMagic(prefix) {
            let header = try MessageContainer.Header(parsing: prefix)
            _ = try peek(&source, MessageContainer.headerByteCount) // consume the header
            let (key, name) = try containerKey(for: header)
            guard key.publicKey.fingerprint.bytes == header.recipientFingerprint else {
                let wanted = RSAKeyFingerprint(bytes: header.recipientFingerprint)!
                throw CLIFailure("encrypted for key \(wanted.base64String), not \(name)", .dataError)
            }
            try MessageContainer.decrypt(header: header, from: &source, to: &sink, with: key)
        } else {
            guard let (key, _) = try explicitKey() else {
                throw UsageError(message: "input is not an rsakit container; raw blocks need --tag or --key", command: Self.spec.name)
            }
            do {
                try PKCS1v15Chunking.decrypt(from: &source, to: &sink, with: key)
            } catch let RSAError.ciphertextLengthInvalid(byteCount, blockSize) where !raw {
                throw CLIFailure("input is neither an rsakit container (no magic) nor whole raw blocks: "
                    + "\(byteCount) bytes is not a multiple of the block size \(blockSize) bytes", .dataError)
            }
        }
    }

    /// How far into the input to look for an armor BEGIN line after leading text.
    static let armorSearchByteCount = 8192

    /// True when `prefix` has the armor BEGIN line at the start of a line.
    private func hasArmorBeginLine(_ prefix: [UInt8]) -> Bool {
        let begin = Array(Armor.beginLine.utf8)
        guard prefix.count >= begin.count else { return false }
        for start in 0...(prefix.count - begin.count)
        where start == 0 || prefix[start - 1] == 0x0A || prefix[start - 1] == 0x0D {
            if Array(prefix[start..<(start + begin.count)]) == begin { return true }
        }
        return false
    }

    /// The key named by --key or --tag, with a name for messages; nil when neither is given.
    private func explicitKey() throws -> (RSAPrivateKey, String)? {
        if let path = arguments.value("key") {
            guard case let .privateKey(key) = try loadKeyFile(path, arguments: arguments, command: Self.spec.name).key else {
                throw CLIFailure("key file '\(path)' holds only a public key; decryption needs the private key", .notFound)
            }
            return (key, "the key in '\(path)'")
        }
        if let tag = arguments.value("tag") {
            return (try storePrivateKey(try openStore(arguments), tag: tag, arguments: arguments, command: Self.spec.name), tag)
        }
        return nil
    }

    /// The key for a container: explicit, or found in the store by the header's fingerprint.
    private func containerKey(for header: MessageContainer.Header) throws -> (RSAPrivateKey, String) {
        if let explicit = try explicitKey() { return explicit }
        let fingerprint = RSAKeyFingerprint(bytes: header.recipientFingerprint)!
        let store = try openStore(arguments)
        let items = try store.items(fingerprint: fingerprint)
        guard let item = items.first(where: { $0.keyClass == .private }) else {
            if items.contains(where: { $0.keyClass == .public }) {
                throw CLIFailure("encrypted for key \(fingerprint.base64String); the store holds only its public key", .notFound)
            }
            throw CLIFailure("encrypted for key \(fingerprint.base64String), which is not in the store; give --key or --tag", .notFound)
        }
        return (try storePrivateKey(store, tag: item.applicationTag, arguments: arguments, command: Self.spec.name), item.applicationTag)
    }
}
