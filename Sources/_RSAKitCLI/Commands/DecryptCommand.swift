import RSAKit

/// `rsakit decrypt`: SecKeyDecrypt / SecKeyCreateDecryptedData over data of any length; the
/// format is detected by RSAKit's `RSAMessage` (container, armor, raw blocks; Apple's format
/// when asked).
struct DecryptCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "decrypt",
        overview: "Decrypt an rsakit container, raw blocks or Apple's RSA-OAEP + AES-GCM with a private key.",
        usage:
            "rsakit decrypt [--tag <TAG> | --key <FILE>] [--in <FILE>] [--out <FILE>] [--format "
            + "container|raw|apple-aesgcm] [--raw] [--padding pkcs1|oaep] [--oaep-hash <HASH>] [--mgf1-hash "
            + "<HASH>] [--label <TEXT> | --label-hex <HEX>] [--implicit-rejection] [--store <DIR>]",
        options: [
            .value("tag", "TAG", "Use the private key stored under this application tag."),
            .value("key", "FILE", "Use the private key in this file (PEM or DER; PKCS#1 or PKCS#8)."),
            .value("in", "FILE", "Read ciphertext from FILE (default: standard input; '-' too)."),
            .value("out", "FILE", "Write to FILE, only if the command succeeds (default: standard output)."),
            tokenPINOption,
            systemOption,
            .repeated(
                "access-group", "GROUP",
                "With --system: the access group of the key (default: any group this user may use).")
        ] + MessageOptions.specs + [MessageOptions.implicitRejectionSpec],
        discussion: """
            The input form is detected: an rsakit container (by its magic; its header names the
            padding, so no padding option is needed), ASCII armor, or raw blocks (read with
            --padding and the OAEP options). --format raw (--raw) reads raw blocks even if the input
            looks like a container; Apple's format has no header and is read only with
            --format apple-aesgcm. For a container without --tag or --key, the private key is found
            in the store by the fingerprint in the header. Raw blocks need --tag or --key.
            A wrong key, padding, hash or label fails as "decryption failed", except with
            --implicit-rejection (raw PKCS#1 v1.5 blocks only): then a block whose padding is wrong
            decrypts to a synthetic message derived from the key and the block, with no error, as
            OpenSSL 3.2 and the IETF draft on RSA implementation guidance do. That is for programs
            that answer a peer and must not reveal padding errors; to decrypt files, leave it off.
            When writing to standard output and decryption fails part-way, the exit status is
            non-zero and what was written must be discarded (Apple's format writes nothing before its tag checks).
            With --system --tag, the system keychain's agent decrypts one raw block (k bytes, as
            `openssl pkeyutl -encrypt` writes it) with --padding pkcs1 or oaep (one --oaep-hash, no label).
            """)

    let arguments: ParsedArguments
    let options: MessageOptions

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        guard arguments.value("tag") == nil || arguments.value("key") == nil else {
            throw UsageError(message: "give either --tag or --key, not both", command: Self.spec.name)
        }
        options = try MessageOptions(arguments, command: Self.spec.name)
        if !arguments.values("access-group").isEmpty && !arguments.flag("system") {
            throw UsageError(message: "--access-group applies with --system", command: Self.spec.name)
        }
    }

    func run() throws {
        if arguments.flag("system") {
            return try decryptThroughSystemAgent(arguments, padding: options.padding, command: Self.spec.name)
        }
        let input = try InputFile.open(arguments.value("in"))
        defer { input.close() }
        let output = try OutputFile(arguments.value("out"), input: input)
        let meter = ProgressMeter.make(arguments, verb: "decrypted", inputDescriptor: input.fileDescriptor)
        do {
            var source = ProgressSource(RSAFileDescriptorSource(fileDescriptor: input.fileDescriptor), meter)
            var sink = RSAFileDescriptorSink(fileDescriptor: output.fileDescriptor)
            try decrypt(&source, &sink)
            try output.commit()
            meter?.finish()
        } catch {
            meter?.abandon()
            output.discard()
            throw error
        }
    }

    /// What auto-detection cannot see: SecKeyCreateEncryptedData's output has no header.
    private static let appleHint = " (an Apple RSA-OAEP + AES-GCM blob needs --format apple-aesgcm)"

    private func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(_ source: inout Source, _ sink: inout Sink) throws {
        // NOTE: a container's recipient is looked up on a token only with --tag; without it
        // the store's in-memory keys are searched as before.
        // --tag: one store, opened once for the token check and the key.
        let tagged = try arguments.value("tag").map { (tag: $0, store: try openStore(arguments)) }
        if let tagged, let tokenKey = storeTokenKey(tagged.store, tag: tagged.tag) {
            // A key in the TPM that cannot decrypt (or not this padding, when the options say
            // it) says so before a PIN is asked for; a container's header is checked later.
            let format = options.decryptionFormat
            if format?.rejection == .implicit {
                // The token or the TPM checks the padding itself and answers an error: no
                // synthetic message can be made there.
                throw UsageError(
                    message:
                        "--implicit-rejection needs the private key in rsakit's engine; a key "
                        + (tokenKey.reference.isTPM ? "in the TPM" : "on a token")
                        + " checks the padding itself (docs/tpm.md)",
                    command: Self.spec.name)
            }
            try tokenKey.checkTPMDecryption(
                padding: format?.kind == .appleAESGCM || format?.kind == .raw ? format!.padding : nil)
            let pin = try readTokenPIN(arguments, command: Self.spec.name, reference: tokenKey.reference)
            try tokenKey.decryptMessage(
                from: &source, to: &sink, format: options.decryptionFormat, rawPadding: options.padding, pin: pin)
            return
        }
        let explicit = try explicitKey(tagged)
        do {
            try RSAMessage.decrypt(
                from: &source, to: &sink, format: options.decryptionFormat,
                rawPadding: options.padding
            ) { fingerprint in
                if let (key, _) = explicit { return key }
                guard let fingerprint else { throw RSAError.messageNamesNoRecipient }
                let store = try openStore(arguments)
                return try withUnlockedStore(store, arguments, command: Self.spec.name) {
                    try RSAMessage.recipientPrivateKey(in: store, fingerprint: fingerprint)
                }
            }
        } catch let RSAError.encryptedForAnotherKey(expected) {
            let stored = (try? openStore(arguments).keyItems(fingerprint: expected))?.first?.applicationTag
            let which = stored.map { ", which is stored as '\(terminalSafe($0))'" } ?? ""
            throw CLIFailure(
                "encrypted for key \(expected.base64String)\(which), not \(explicit?.1 ?? "this key")", .dataError)
        } catch RSAError.messageNamesNoRecipient {
            switch options.kind {
            case .raw?: throw UsageError(message: "--raw needs --tag or --key", command: Self.spec.name)
            case .appleAESGCM?:
                throw UsageError(message: "--format apple-aesgcm needs --tag or --key", command: Self.spec.name)
            default:
                throw CLIFailure(
                    "input is not an rsakit container (no magic); raw blocks need --tag or --key"
                        + Self.appleHint, .dataError)
            }
        } catch let RSAError.messageInvalid(reason) where options.kind == nil && reason.hasPrefix("input is neither") {
            // Auto-detection knows containers and raw blocks; an Apple blob has no magic to find.
            throw CLIFailure(RSAError.messageInvalid(reason: reason).description + Self.appleHint, .dataError)
        } catch let RSAError.itemNotFound(query) where query.itemClass == .key && query.publicKeyFingerprint != nil {
            // The container's recipient: the library names the private key it looked for; say
            // whether the store holds its public half, and which options give the key instead.
            let fingerprint = query.publicKeyFingerprint!
            let stored = (try? openStore(arguments).keyItems(fingerprint: fingerprint)) ?? []
            if stored.contains(where: { $0.keyClass == .public }) {
                throw CLIFailure(
                    "encrypted for key \(fingerprint.base64String); the store holds only its public key", .notFound)
            }
            throw CLIFailure(
                "encrypted for key \(fingerprint.base64String), which is not in the store; give --key or --tag",
                .notFound)
        }
    }

    /// The key named by --key or --tag (in `tagged`, with its opened store), with a name for
    /// messages; nil when neither is given.
    private func explicitKey(_ tagged: (tag: String, store: RSAKeyStore)?) throws -> (RSAPrivateKey, String)? {
        if let path = arguments.value("key") {
            guard case let .privateKey(key) = try loadKeyFile(path, arguments: arguments, command: Self.spec.name).key
            else {
                throw CLIFailure(
                    "key file '\(path)' holds only a public key; decryption needs the private key", .notFound)
            }
            return (key, "the key in '\(path)'")
        }
        if let tagged {
            return (
                try storePrivateKey(tagged.store, tag: tagged.tag, arguments: arguments, command: Self.spec.name),
                "'\(terminalSafe(tagged.tag))'"
            )
        }
        return nil
    }
}
