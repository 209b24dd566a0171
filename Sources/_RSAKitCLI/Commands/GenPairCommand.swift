import RSAKit
#if canImport(Glibc)
import Glibc
#endif

/// `rsakit genpair`: SecKeyGeneratePair with kSecAttrIsPermanent and an application tag.
struct GenPairCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "genpair",
        overview: "Generate an RSA key pair and store it under an application tag.",
        usage:
            "rsakit genpair --tag <TAG> [--bits <N>] [--exponent <E>] [--private-tag <TAG2>] [--label <TEXT>] "
            + "[--replace] [--token <URI> [--token-pin <SPEC>] | --tpm [--usage decrypt|sign] [--padding oaep|pkcs1] "
            + "[--tpm-pin] [--token-pin <SPEC>]] "
            + "[--protect] [--store <DIR>]",
        options: [
            accessGroupOption,
            .value("tag", "TAG", "Application tag of the pair (of its public half when --private-tag is given)."),
            .value("bits", "N", "Modulus size in bits, 1024 to 16384 (default 2048)."),
            .value("exponent", "E", "Public exponent, odd and >= 3 (default 65537)."),
            .value("private-tag", "TAG2", "Store the private half under this tag instead."),
            .value("label", "TEXT", "A free-text label for both items."),
            .flag("replace", "Replace existing items with the same tags."),
            tokenOption, tokenPINOption
        ] + tpmOptions + protectOptions,
        discussion:
            "Prints the tag, the size in bits, the block size k and the SHA-256 fingerprint.\nProgress is shown on "
            + "stderr for sizes of 4096 bits and more when stderr is a terminal.\nWith --token the pair is "
            + "generated on the PKCS#11 token (sensitive, not extractable; e = 65537); the store keeps\nthe "
            + "public key and a reference, and sign and decrypt with --tag run on the token.\nWith --tpm the "
            + "pair is generated inside this machine's TPM, the Secure Enclave's counterpart "
            + "(docs/tpm.md):\n2048 or 3072 bits, e = 65537, never exportable, and one usage fixed in the TPM: "
            + "--usage decrypt (default;\n--padding oaep, the default, or pkcs1) or --usage sign, so the TPM does no "
            + "raw RSA for anyone; a TPM\ndoes a few to a few dozen private operations a second."
    )

    let arguments: ParsedArguments
    let tag: String
    let bits: Int
    let exponent: UInt64
    let usage: RSATPMKeyUsage

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        tag = try arguments.required("tag", Self.spec.name)
        bits = try arguments.integer("bits", Self.spec.name) ?? 2048
        guard bits >= RSAPrivateKey.minimumGeneratedBitCount, bits <= RSAPrivateKey.maximumGeneratedBitCount else {
            throw UsageError(
                message:
                    "--bits must be between \(RSAPrivateKey.minimumGeneratedBitCount) and "
                    + "\(RSAPrivateKey.maximumGeneratedBitCount), got \(bits)",
                command: Self.spec.name)
        }
        if arguments.value("token") != nil || arguments.flag("tpm") {
            let using = arguments.flag("tpm") ? "--tpm" : "--token"
            for option in ["exponent", "private-tag"] where arguments.value(option) != nil {
                throw UsageError(message: "--\(option) cannot be used with \(using)", command: Self.spec.name)
            }
        }
        if arguments.flag("tpm") {
            if arguments.value("token") != nil {
                throw UsageError(
                    message: "--tpm and --token name two places for the key: give one", command: Self.spec.name)
            }
            if let given = arguments.value("bits"), !RSATokenKey.tpmModulusBitCounts.contains(bits) {
                throw UsageError(
                    message: "--bits with --tpm must be 2048 or 3072 (what TPMs make), got \(given)",
                    command: Self.spec.name)
            }
            usage = try tpmUsage(arguments, command: Self.spec.name)
        } else {
            for option in ["tpm-pin", "usage", "padding"]
            where option == "tpm-pin" ? arguments.flag(option) : arguments.value(option) != nil {
                throw UsageError(message: "--\(option) needs --tpm", command: Self.spec.name)
            }
            usage = .decryptOAEP
        }
        if let text = arguments.value("exponent") {
            guard let e = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text), e >= 3, e & 1 == 1
            else {
                throw UsageError(
                    message: "--exponent must be an odd integer >= 3, got '\(text)'", command: Self.spec.name)
            }
            exponent = e
        } else {
            exponent = 65537
        }
    }

    func run() throws {
        // A missing store is created only after the key has been generated (PendingStore).
        let pending = try PendingStore(arguments, command: Self.spec.name, unlock: true)
        let privateTag = arguments.value("private-tag") ?? tag
        let replace = arguments.flag("replace")
        // Fail before the (possibly long) generation when the tag is taken; the store checks
        // again under its lock when adding.
        if !replace, let store = pending.existing {
            for (t, keyClass) in [(tag, RSAKeyClass.public), (privateTag, .private)] {
                if (try? store.keyItem(tag: t, keyClass: keyClass)) != nil {
                    throw RSAError.duplicateItem(.key(tag: t, keyClass: keyClass))
                }
            }
        }
        if bits < 2048 {
            printWarning(
                "a \(bits)-bit key is weaker than today's minimum of 2048 bits (NIST SP 800-131A); use it only for "
                    + "tests or compatibility"
            )
        }
        if bits % 8 != 0 {
            printWarning(
                "\(bits) bits is not a multiple of 8; some tools (and SecKeyCreateRandomKey) expect whole bytes")
        }
        if arguments.flag("tpm") {
            try generateInTPM(pending: pending, replace: replace)
            return
        }
        if let uri = try tokenURI(arguments, command: Self.spec.name) {
            try generateOnToken(uri, pending: pending, replace: replace)
            return
        }
        let showProgress = bits >= 4096 && stderrIsTerminal && !arguments.flag("quiet")
        var lastStage: RSAKeyGenerationProgress.Stage?
        let key = try RSAPrivateKey.generate(bitCount: bits, publicExponent: exponent) { event in
            if showProgress {
                let stage: String
                switch event.stage {
                case .searchingFirstPrime: stage = "searching for p"
                case .searchingSecondPrime: stage = "searching for q"
                case .computingPrivateExponent: stage = "computing d"
                }
                if event.stage != lastStage || event.candidatesTested % 16 == 0 {
                    printError(
                        "\rrsakit: generating \(bits)-bit key: \(stage) (\(event.candidatesTested) candidates)\u{1B}[K")
                    lastStage = event.stage
                }
            }
            return true
        }
        if showProgress { printError("\r\u{1B}[K") }
        let store = try pending.open()
        let items = try withUnlockedStore(store, arguments, command: Self.spec.name) {
            try store.addKeyPair(
                key, tag: tag, privateTag: arguments.value("private-tag"), label: arguments.value("label"),
                replace: replace)
        }
        var text = "tag: \(terminalSafe(tag))\n"
        if privateTag != tag { text += "private tag: \(terminalSafe(privateTag))\n" }
        text += "bits: \(key.modulusBitCount)\n"
        let containerPayload = RSAMessageContainer.payloadByteCount(blockSize: key.modulusByteCount)
        text +=
            "block size: \(key.modulusByteCount) bytes (at most \(key.maximumMessageByteCount) plaintext bytes per "
            + "raw block, \(containerPayload) per container block)\n"
        text += "fingerprint: \(items.public.fingerprint.base64String)\n"
        try printOutput(text)
    }

    /// genpair --token: the pair is made on the token (the token's errors change nothing in
    /// the store), then the store records it.
    private func generateOnToken(_ uri: RSATokenURI, pending: PendingStore, replace: Bool) throws {
        let pin = try readTokenPIN(arguments, command: Self.spec.name, token: uri.tokenLabel)
        let key = try RSATokenKey.generate(on: uri, bits: bits, label: arguments.value("label") ?? tag, pin: pin)
        // NOTE: if the store write fails now, the new objects stay on the token (CKA_ID below).
        let store = try pending.open()
        let items = try store.addTokenKeyPair(key, tag: tag, label: arguments.value("label"), replace: replace)
        var text = "tag: \(terminalSafe(tag))\n"
        text += "bits: \(key.publicKey.modulusBitCount)\n"
        text +=
            "token: \(terminalSafe(key.reference.tokenLabel)) (serial \(terminalSafe(key.reference.tokenSerial)), id "
            + "\(key.reference.objectIDHex))\n"
        text += "fingerprint: \(items.public.fingerprint.base64String)\n"
        try printOutput(text)
    }

    /// genpair --tpm: the pair is made in the TPM with its one usage (nothing is written
    /// anywhere until then), then the store records its blobs; a missing store is created
    /// only once that worked.
    private func generateInTPM(pending: PendingStore, replace: Bool) throws {
        var pin: RSASecretBytes?
        if arguments.flag("tpm-pin") || arguments.value("token-pin") != nil || getenv("RSAKIT_TOKEN_PIN") != nil {
            pin = try Passphrase.read(
                arguments, command: Self.spec.name, option: "token-pin", variable: "RSAKIT_TOKEN_PIN",
                prompt: "New PIN for the TPM key: ", confirm: true)
        }
        let configuration = RSATPMConfiguration()
        let key = try RSATokenKey.generateInTPM(configuration, bits: bits, usage: usage, pin: pin)
        let store = try pending.open()
        let items = try store.addTokenKeyPair(key, tag: tag, label: arguments.value("label"), replace: replace)
        var text = "tag: \(terminalSafe(tag))\n"
        text += "bits: \(key.publicKey.modulusBitCount)\n"
        text += "location: tpm (\(terminalSafe(configuration.tcti)); PIN: \(pin == nil ? "none" : "set"))\n"
        text += "usage: \(usage)\n"
        if usage == .sign, key.reference.tpmKey?.signsPSSWithDigestLengthSalt == false {
            printWarning(
                "this TPM does not sign RSA-PSS with a salt as long as the hash: the key cannot sign for TLS 1.3")
        }
        text += "fingerprint: \(items.public.fingerprint.base64String)\n"
        try printOutput(text)
    }
}
