#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// The options `sign` and `verify` share: key, scheme, hashes, salt length, input.
private let signatureOptions: [OptionSpec] = [
    .value(
        "scheme", "SCHEME",
        "pkcs1 (RSASSA-PKCS1-v1_5, the default) or pss (RSASSA-PSS; the default for an RSA-PSS key)."
    ).choices(["pkcs1", "pss"]),
    .value(
        "hash", "HASH",
        "Message hash: sha1, sha224, sha256 (default; an RSA-PSS key's own hash when it names one), sha384, sha512, "
            + "sha512-224, sha512-256, sha3-224, sha3-256, sha3-384, sha3-512; with --scheme pss also shake128 and "
            + "shake256 (RFC 8702: SHAKE as hash and MGF)."
    ).choices(RSAHashAlgorithm.allCases.map(\.rawValue)),
    .value("mgf1-hash", "HASH", "PSS only: the MGF1 hash (default: the key's, else the message hash).").choices(
        RSAHashAlgorithm.allCases.map(\.rawValue)),
    .value("in", "FILE", "Read the message from FILE (default: standard input; '-' too).")
]

/// The scheme options as given, resolved against the key once it is loaded: an id-RSASSA-PSS
/// key (RFC 4055) supplies the defaults its parameters name, and options that contradict
/// them are refused with the key's values (`RSAError.keyRestricted`, exit 64).
struct SignatureSettings {
    /// A message hash: SHA-1/SHA-2/SHA-3, or SHAKE for PSS (RFC 8702).
    enum Hash {
        case sha(RSAHashAlgorithm)
        case shake(RSAPSSSHAKE)
    }

    /// What to sign or verify with, once resolved.
    struct Resolved {
        let hash: Hash
        /// For `.sha`: the scheme; for `.shake`: `.pss` carrying the salt length.
        let padding: RSASignaturePadding
        let saltLength: RSAPSSSaltLength
    }

    let command: String
    let verifying: Bool
    let scheme: String?
    let hash: Hash?
    let mgf1Hash: RSAHashAlgorithm?
    let saltLength: RSAPSSSaltLength?

    init(_ arguments: ParsedArguments, command: String, verifying: Bool) throws {
        self.command = command
        self.verifying = verifying
        scheme = arguments.value("scheme")
        if let name = arguments.value("hash") {
            if let sha = RSAHashAlgorithm(name: name) {
                hash = .sha(sha)
            } else if let shake = RSAPSSSHAKE(rawValue: name.lowercased()) {
                hash = .shake(shake)
            } else {
                throw UsageError(
                    message:
                        "unknown hash '\(name)'; use one of "
                        + "\(RSAHashAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")), or shake128 or "
                        + "shake256 with --scheme pss",
                    command: command)
            }
        } else {
            hash = nil
        }
        if let name = arguments.value("mgf1-hash") {
            guard let parsed = RSAHashAlgorithm(name: name) else {
                throw UsageError(message: "unknown MGF1 hash '\(name)'", command: command)
            }
            mgf1Hash = parsed
        } else {
            mgf1Hash = nil
        }
        // Verification recovers the signer's salt length unless one is named (openssl's
        // default, `auto`); signing keeps sLen = hLen. An explicit number stays strict.
        switch arguments.value("salt-length") {
        case nil: saltLength = nil
        case "digest": saltLength = .digestLength
        case "max": saltLength = .maximum
        case "auto" where verifying: saltLength = .auto
        case let text?:
            guard let n = Int(text), n >= 0 else {
                throw UsageError(
                    message:
                        "--salt-length expects a number of bytes, 'digest', 'max'\(verifying ? " or 'auto'" : ""), "
                        + "got '\(text)'",
                    command: command)
            }
            saltLength = .byteCount(n)
        }
        switch scheme {
        case nil, "pss": break
        case "pkcs1", "pkcs1v15", "pkcs1-v1_5":
            for option in ["salt-length", "mgf1-hash"] where arguments.value(option) != nil {
                throw UsageError(message: "--\(option) applies to --scheme pss only", command: command)
            }
            if case .shake? = hash {
                throw UsageError(
                    message: "SHAKE128 and SHAKE256 sign with --scheme pss only (RFC 8702)", command: command)
            }
        default:
            throw UsageError(message: "unknown --scheme '\(scheme!)'; use pkcs1 or pss", command: command)
        }
    }

    /// The hash, scheme and salt for `key`: the options, with an RSA-PSS key's parameters as
    /// the defaults (its scheme PSS, its hashes, its salt length exactly).
    /// - Throws: `UsageError` for PSS-only options without PSS; `RSAError.keyRestricted`
    ///   when the options contradict the key's parameters.
    func resolved(for key: RSAPublicKey) throws -> Resolved {
        let restriction = key.pssRestriction
        let parameters = restriction?.parameters
        let isPSS = scheme.map { $0 == "pss" } ?? (restriction != nil)
        guard isPSS else {
            for (option, given) in [("salt-length", saltLength != nil), ("mgf1-hash", mgf1Hash != nil)] where given {
                throw UsageError(message: "--\(option) applies to --scheme pss only", command: command)
            }
            let sha: RSAHashAlgorithm
            switch hash {
            case let .sha(named)?: sha = named
            case .shake?:
                throw UsageError(
                    message: "SHAKE128 and SHAKE256 sign with --scheme pss only (RFC 8702)", command: command)
            case nil: sha = .sha256
            }
            try restriction?.check(
                hash: sha, padding: .pkcs1v15, encodedBitCount: key.modulusBitCount - 1, verifying: verifying)
            return Resolved(hash: .sha(sha), padding: .pkcs1v15, saltLength: .digestLength)
        }
        let salt = saltLength ?? parameters.map { .byteCount($0.saltLength) } ?? (verifying ? .auto : .digestLength)
        switch hash ?? parameters.map({ .sha($0.hash) }) ?? .sha(.sha256) {
        case let .shake(shake):
            if mgf1Hash != nil {
                throw UsageError(
                    message:
                        "--mgf1-hash does not apply to SHAKE, which is its own mask generation function (RFC 8702)",
                    command: command)
            }
            try restriction?.checkSHAKE(shake)
            return Resolved(hash: .shake(shake), padding: .pss(saltLength: salt), saltLength: salt)
        case let .sha(sha):
            let mgf1 = mgf1Hash ?? parameters?.mgf1Hash ?? sha
            let padding: RSASignaturePadding = mgf1 == sha ? .pss(saltLength: salt) : .pssMGF1(mgf1, saltLength: salt)
            try restriction?.check(
                hash: sha, padding: padding, encodedBitCount: key.modulusBitCount - 1, verifying: verifying)
            return Resolved(hash: .sha(sha), padding: padding, saltLength: salt)
        }
    }
}

/// The message's hash for `resolved`: read incrementally for SHA (memory stays bounded for
/// large files); for SHAKE, which RSAKit hashes in one call, the whole message.
private enum SignatureInput {
    case digest([UInt8])
    case message([UInt8])

    init(_ input: InputFile, _ resolved: SignatureSettings.Resolved) throws {
        var source = RSAFileDescriptorSource(fileDescriptor: input.fileDescriptor)
        switch resolved.hash {
        case let .sha(algorithm):
            var hasher = RSAHasher(algorithm: algorithm)
            while true {
                let piece = try source.read(upTo: 1 << 16)
                if piece.isEmpty { break }
                hasher.update(piece)
            }
            self = .digest(hasher.finalize())
        case .shake:
            var message: [UInt8] = []
            while true {
                let piece = try source.read(upTo: 1 << 16)
                if piece.isEmpty { break }
                message += piece
            }
            self = .message(message)
        }
    }
}

private func requireOneKeySource(_ arguments: ParsedArguments, _ command: String, certificate: Bool = false) throws {
    let names = certificate ? ["tag", "key", "cert"] : ["tag", "key"]
    let given = names.filter { arguments.value($0) != nil }
    guard given.count == 1 else {
        let choices = certificate ? "--tag <TAG>, --key <FILE> or --cert <FILE>" : "--tag <TAG> or --key <FILE>"
        throw UsageError(
            message: given.isEmpty ? "missing \(choices)" : "give one of \(choices), not several", command: command)
    }
}

/// `rsakit sign`: SecKeyCreateSignature; byte-compatible with `openssl dgst -sign`.
struct SignCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "sign",
        overview: "Sign data with a private key (RSASSA-PKCS1-v1_5 or RSASSA-PSS).",
        usage:
            "rsakit sign (--tag <TAG> | --key <FILE>) [--scheme pkcs1|pss] [--hash <HASH>] [--salt-length "
            + "<N>|digest|max] [--in <FILE>] [--out <FILE>]",
        options: [
            .value("tag", "TAG", "Sign with the private key stored under this application tag."),
            .value("key", "FILE", "Sign with the private key in this file (PEM or DER; PKCS#1 or PKCS#8)."),
            tokenPINOption
        ] + signatureOptions + [
            .value("salt-length", "LEN", "PSS only: salt bytes, 'digest' (the hash length, default) or 'max'."),
            .value("out", "FILE", "Write the k-byte signature to FILE, only on success (default: standard output)."),
            systemOption,
            .repeated(
                "access-group", "GROUP",
                "With --system: the access group of the key (default: any group this user may use).")
        ],
        discussion: """
            The signature is the bare k bytes (k = modulus length), as `openssl dgst -sha256 -sign
            key.pem` writes it; `--scheme pss --salt-length digest` matches `openssl dgst -sha256
            -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:digest -sign key.pem`.
            An RSA-PSS key (id-RSASSA-PSS, as `openssl genpkey -algorithm RSA-PSS` makes) signs with
            PSS and its own hash, MGF1 hash and salt length by default; its salt length is the
            least allowed, and other hashes or PKCS#1 v1.5 are refused (exit 64).
            With --system --tag, the system keychain's agent signs (the key never leaves it): the input
            is hashed here (SHA-1, SHA-2 or SHA-3), PKCS#1 v1.5 or PSS with a salt of the digest's length.
            """)

    let arguments: ParsedArguments
    let settings: SignatureSettings

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        try requireOneKeySource(arguments, Self.spec.name)
        settings = try SignatureSettings(arguments, command: Self.spec.name, verifying: false)
        if !arguments.values("access-group").isEmpty && !arguments.flag("system") {
            throw UsageError(message: "--access-group applies with --system", command: Self.spec.name)
        }
    }

    func run() throws {
        if arguments.flag("system") { return try signThroughSystemAgent(arguments, command: Self.spec.name) }
        // --tag: one store, opened once for the token check and the key.
        let tagged = try arguments.value("tag").map { (tag: $0, store: try openStore(arguments)) }
        if let tagged, let tokenKey = storeTokenKey(tagged.store, tag: tagged.tag) {
            try signOnToken(tokenKey)
            return
        }
        let key: RSAPrivateKey
        if let path = arguments.value("key") {
            guard
                case let .privateKey(privateKey) = try loadKeyFile(path, arguments: arguments, command: Self.spec.name)
                    .key
            else {
                throw CLIFailure("key file '\(path)' holds a public key; signing needs the private key", .dataError)
            }
            key = privateKey
        } else {
            key = try storePrivateKey(tagged!.store, tag: tagged!.tag, arguments: arguments, command: Self.spec.name)
        }
        let resolved = try settings.resolved(for: key.publicKey)
        let input = try InputFile.open(arguments.value("in"))
        defer { input.close() }
        let signature: [UInt8]
        switch (try SignatureInput(input, resolved), resolved.hash) {
        case let (.digest(digest), .sha(hash)):
            signature = try key.signature(forDigest: digest, hash: hash, padding: resolved.padding)
        case let (.message(message), .shake(shake)):
            signature = try key.signature(for: message, shake: shake, saltLength: resolved.saltLength)
        default:
            throw CLIFailure("internal error: hash and input disagree", .failure)
        }
        try writeOutput(signature, to: arguments.value("out"), input: input)
    }

    /// sign --tag for a key on a token: C_Sign there (SHA-1/SHA-2 hashes; SHAKE is refused).
    private func signOnToken(_ key: RSATokenKey) throws {
        let resolved = try settings.resolved(for: key.publicKey)
        let input = try InputFile.open(arguments.value("in"))
        defer { input.close() }
        guard case let .sha(hash) = resolved.hash else {
            throw UsageError(
                message: "a token key signs with SHA-1 or SHA-2 hashes, not SHAKE", command: Self.spec.name)
        }
        // A key in the TPM that cannot sign this way says so before a PIN is asked for.
        try key.checkTPMSigning(hash: hash, padding: resolved.padding)
        guard case let .digest(digest) = try SignatureInput(input, resolved) else {
            throw UsageError(
                message: "a token key signs with SHA-1 or SHA-2 hashes, not SHAKE", command: Self.spec.name)
        }
        let pin = try readTokenPIN(arguments, command: Self.spec.name, reference: key.reference)
        let signature = try key.signature(forDigest: digest, hash: hash, padding: resolved.padding, pin: pin)
        try writeOutput(signature, to: arguments.value("out"), input: input)
    }
}

/// `rsakit verify`: SecKeyVerifySignature; accepts what `openssl dgst -sign` writes.
struct VerifyCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "verify",
        overview: "Verify a signature with a public key: prints 'signature ok' (exit 0) or fails (exit 65).",
        usage:
            "rsakit verify (--tag <TAG> | --key <FILE> | --cert <FILE>) --signature <FILE> [--scheme pkcs1|pss] "
            + "[--hash <HASH>] [--salt-length <N>|digest|max|auto] [--in <FILE>]",
        options: [
            .value("tag", "TAG", "Verify with the public key stored under this application tag."),
            .value("key", "FILE", "Verify with the key in this file (public or private; PEM or DER)."),
            .value(
                "cert", "FILE", "Verify with the RSA key of this X.509 certificate (DER or PEM; the first of a bundle)."
            ),
            .value("signature", "FILE", "The signature file (k bytes).")
        ] + signatureOptions + [
            .value(
                "salt-length", "LEN",
                "PSS only: 'auto' (the default: the salt length is recovered from the signature, RFC 8017 §9.1.2, as "
                    + "openssl's verify default), or exactly N bytes, 'digest' (the hash length) or 'max'."
            )
        ],
        discussion: """
            Exit status 0 and 'signature ok' on standard output for a valid signature; exit status
            65 and 'rsakit: error: signature invalid' on standard error otherwise (wrong key, hash,
            scheme, salt length, altered data or signature). Without --salt-length a PSS signature
            with any salt length is accepted, so `openssl dgst -sigopt rsa_padding_mode:pss -sign`
            signatures (maximum salt) verify with no options beyond --scheme pss; a number,
            'digest' or 'max' requires exactly that salt length. An RSA-PSS key verifies with its
            own parameters by default, its salt length exactly (not 'auto'), as openssl does.
            """)

    let arguments: ParsedArguments
    let settings: SignatureSettings

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        try requireOneKeySource(arguments, Self.spec.name, certificate: true)
        _ = try arguments.required("signature", Self.spec.name)
        settings = try SignatureSettings(arguments, command: Self.spec.name, verifying: true)
    }

    func run() throws {
        let key: RSAPublicKey
        if let path = arguments.value("key") {
            key = try loadKeyFile(path, arguments: arguments, command: Self.spec.name).publicKey
        } else if let path = arguments.value("cert") {
            key = try certificatePublicKey(path)
        } else {
            key = try storePublicKey(try openStore(arguments), tag: arguments.value("tag")!)
        }
        let signaturePath = arguments.value("signature")!
        let signature = try readWholeFile(signaturePath, what: "signature file")
        let resolved = try settings.resolved(for: key)
        let input = try InputFile.open(arguments.value("in"))
        defer { input.close() }
        let valid: Bool
        switch (try SignatureInput(input, resolved), resolved.hash) {
        case let (.digest(digest), .sha(hash)):
            valid = key.isValidSignature(signature, forDigest: digest, hash: hash, padding: resolved.padding)
        case let (.message(message), .shake(shake)):
            valid = key.isValidSignature(signature, for: message, shake: shake, saltLength: resolved.saltLength)
        default:
            throw CLIFailure("internal error: hash and input disagree", .failure)
        }
        guard valid else {
            throw CLIFailure("signature invalid", .dataError)
        }
        try printOutput("signature ok\n")
    }
}

/// The RSA public key of the first certificate in `path` (`verify --cert`), with a warning
/// when the certificate is outside its validity or its key usage lacks digitalSignature.
private func certificatePublicKey(_ path: String) throws -> RSAPublicKey {
    let certificate = try CertificateRecipient.firstCertificate(file: path)
    guard let key = certificate.publicKey else {
        throw CLIFailure(
            "\(path): the certificate's public key is \(certificate.publicKeyAlgorithmName), not RSA", .dataError)
    }
    let now = Date()
    if now > certificate.notValidAfter || now < certificate.notValidBefore {
        printWarning(
            "\(path): the certificate is not valid now (\(iso8601(certificate.notValidBefore)) to "
                + "\(iso8601(certificate.notValidAfter)))"
        )
    }
    if let usage = certificate.keyUsage, !usage.contains(.digitalSignature) {
        printWarning("\(path): the certificate's key usage (\(usage)) does not allow digital signatures")
    }
    return key
}
