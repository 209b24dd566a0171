import RSAKit

/// The format and padding options of `encrypt` and `decrypt`, parsed into the library's
/// ``RSAMessageFormat`` and ``RSAEncryptionPadding`` (the format logic itself is RSAKit's).
struct MessageOptions {
    /// The option specs both commands list (`--armor` is encrypt's own).
    static let specs: [OptionSpec] = [
        .value(
            "format", "FORMAT",
            "container (default), raw (k-byte blocks) or apple-aesgcm (SecKeyCreateEncryptedData with "
                + "...OAEPSHA*AESGCM)."
        ).choices(RSAMessageFormat.Kind.allCases.map(\.rawValue)),
        .flag("raw", "Short for --format raw."),
        .value("padding", "SCHEME", "pkcs1 (default, RSAES-PKCS1-v1_5) or oaep (RSAES-OAEP).").choices(["pkcs1", "oaep"]
        ),
        .value(
            "oaep-hash", "HASH",
            "OAEP hash (default sha256): sha1, sha224, sha256, sha384, sha512, sha512-224, sha512-256, sha3-*."
        ).choices(RSAHashAlgorithm.allCases.map(\.rawValue)),
        .value(
            "mgf1-hash", "HASH", "MGF1 hash (default: the OAEP hash; Java's OAEPWithSHA-256AndMGF1Padding uses sha1)."
        ).choices(RSAHashAlgorithm.allCases.map(\.rawValue)),
        .value("label", "TEXT", "OAEP label as UTF-8 text (raw blocks only; default empty)."),
        .value("label-hex", "HEX", "OAEP label as hex bytes (raw blocks only).")
    ]

    /// The format named by --format / --raw, nil when neither was given.
    let kind: RSAMessageFormat.Kind?
    /// The padding named by --padding and the OAEP options (PKCS#1 v1.5 when none were given).
    let padding: RSAEncryptionPadding
    /// The hash for Apple's format (--oaep-hash, default sha256).
    let appleHash: RSAHashAlgorithm
    /// decrypt's --implicit-rejection: raw PKCS#1 v1.5 blocks with a bad padding give their
    /// synthetic message (RSAPaddingRejection.implicit).
    let implicitRejection: Bool

    /// decrypt's own option.
    static let implicitRejectionSpec = OptionSpec.flag(
        "implicit-rejection",
        "With --raw and PKCS#1 v1.5: a block with a bad padding gives a synthetic message, not an error (for "
            + "protocols; draft-irtf-cfrg-rsa-guidance)."
    )

    init(_ arguments: ParsedArguments, command: String) throws {
        func usage(_ message: String) -> UsageError { UsageError(message: message, command: command) }
        var kind: RSAMessageFormat.Kind?
        if let name = arguments.value("format") {
            guard let parsed = RSAMessageFormat.Kind(rawValue: name) else {
                throw usage("unknown --format '\(name)' (use container, raw or apple-aesgcm)")
            }
            kind = parsed
        }
        if arguments.flag("raw") {
            if let kind, kind != .raw {
                throw usage("--raw means --format raw; it cannot be combined with --format \(kind.rawValue)")
            }
            kind = .raw
        }
        self.kind = kind
        implicitRejection = arguments.flag("implicit-rejection")
        if implicitRejection {
            guard kind == .raw else { throw usage("--implicit-rejection applies to raw PKCS#1 v1.5 blocks; add --raw") }
            guard arguments.value("padding") ?? "pkcs1" == "pkcs1" else {
                throw usage("--implicit-rejection is defined for PKCS#1 v1.5 only; drop --padding oaep")
            }
        }
        let hash = try Self.hash(arguments, "oaep-hash", command)
        let mgf1 = try Self.hash(arguments, "mgf1-hash", command)
        let label = try Self.label(arguments, command)
        let scheme = arguments.value("padding")
        if let scheme, scheme != "pkcs1", scheme != "oaep" {
            throw usage("unknown --padding '\(scheme)' (use pkcs1 or oaep)")
        }
        if kind == .appleAESGCM {
            if scheme == "pkcs1" { throw usage("--format apple-aesgcm always uses OAEP; drop --padding pkcs1") }
            if let mgf1, mgf1 != (hash ?? .sha256) {
                throw usage("--format apple-aesgcm uses the OAEP hash for MGF1 too; drop --mgf1-hash")
            }
            if label != nil { throw usage("--format apple-aesgcm uses an empty label; drop --label") }
            let apple = hash ?? .sha256
            guard RSAAppleAESGCM.supportedHashes.contains(apple) else {
                throw usage(
                    "--format apple-aesgcm is defined for sha1, sha224, sha256, sha384 and sha512, not "
                        + "\(apple.rawValue)"
                )
            }
            appleHash = apple
            padding = .oaep(RSAOAEPParameters(hash: apple, mgf1Hash: apple, label: []))
            return
        }
        appleHash = .sha256
        if scheme == "oaep" {
            padding = .oaep(RSAOAEPParameters(hash: hash ?? .sha256, mgf1Hash: mgf1, label: label ?? []))
        } else {
            for (given, name) in [(hash != nil, "--oaep-hash"), (mgf1 != nil, "--mgf1-hash"), (label != nil, "--label")]
            where given {
                throw usage("\(name) applies to OAEP; add --padding oaep")
            }
            padding = .pkcs1v15
        }
    }

    /// The format to write (container by default).
    func encryptionFormat(armored: Bool) -> RSAMessageFormat {
        switch kind ?? .container {
        case .container: return .container(padding: padding, armored: armored)
        case .raw: return .rawBlocks(padding: padding)
        case .appleAESGCM: return .appleAESGCM(hash: appleHash)
        }
    }

    /// The format to read: nil detects (container or armor, else raw blocks with ``padding``).
    var decryptionFormat: RSAMessageFormat? {
        switch kind {
        case nil: return nil
        case .container: return .container()
        case .raw: return implicitRejection ? .rawBlocksWithImplicitRejection() : .rawBlocks(padding: padding)
        case .appleAESGCM: return .appleAESGCM(hash: appleHash)
        }
    }

    private static func hash(_ arguments: ParsedArguments, _ name: String, _ command: String) throws
        -> RSAHashAlgorithm?
    {
        guard let text = arguments.value(name) else { return nil }
        guard let hash = RSAHashAlgorithm(name: text) else {
            let known = RSAHashAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError(message: "unknown --\(name) '\(text)' (known: \(known))", command: command)
        }
        return hash
    }

    private static func label(_ arguments: ParsedArguments, _ command: String) throws -> [UInt8]? {
        let text = arguments.value("label"), hex = arguments.value("label-hex")
        if text != nil && hex != nil {
            throw UsageError(message: "give either --label or --label-hex, not both", command: command)
        }
        if let text { return Array(text.utf8) }
        guard let hex else { return nil }
        let digits = Array(hex.utf8)
        var bytes: [UInt8] = []
        var index = 0
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x41...0x46: return c - 0x41 + 10
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
        while index + 1 < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { break }
            bytes.append(high << 4 | low)
            index += 2
        }
        guard index == digits.count else {
            throw UsageError(
                message: "--label-hex expects an even number of hex digits, got '\(hex)'", command: command)
        }
        return bytes
    }
}
