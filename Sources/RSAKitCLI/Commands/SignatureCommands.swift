#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// The options `sign` and `verify` share: key, scheme, hashes, salt length, input.
private let signatureOptions: [OptionSpec] = [
    .value("scheme", "SCHEME", "pkcs1 (RSASSA-PKCS1-v1_5, the default) or pss (RSASSA-PSS)."),
    .value("hash", "HASH", "Message hash: sha1, sha224, sha256 (default), sha384, sha512, sha512-224, sha512-256, sha3-224, sha3-256, sha3-384, sha3-512."),
    .value("mgf1-hash", "HASH", "PSS only: the MGF1 hash (default: the message hash)."),
    .value("in", "FILE", "Read the message from FILE (default: standard input; '-' too)."),
]

/// Parsed scheme options, shared by both commands.
struct SignatureSettings {
    let hash: RSAHashAlgorithm
    let padding: RSASignaturePadding

    init(_ arguments: ParsedArguments, command: String, verifying: Bool) throws {
        let hashName = arguments.value("hash") ?? "sha256"
        guard let hash = RSAHashAlgorithm(name: hashName) else {
            throw UsageError(message: "unknown hash '\(hashName)'; use one of \(RSAHashAlgorithm.allCases.map(\.rawValue).joined(separator: ", "))", command: command)
        }
        self.hash = hash
        let scheme = arguments.value("scheme") ?? "pkcs1"
        switch scheme {
        case "pkcs1", "pkcs1v15", "pkcs1-v1_5":
            for option in ["salt-length", "mgf1-hash"] where arguments.value(option) != nil {
                throw UsageError(message: "--\(option) applies to --scheme pss only", command: command)
            }
            padding = .pkcs1v15
        case "pss":
            let salt: RSAPSSSaltLength
            // Verification recovers the signer's salt length unless one is named (openssl's
            // default, `auto`); signing keeps sLen = hLen. An explicit number stays strict.
            switch arguments.value("salt-length") ?? (verifying ? "auto" : "digest") {
            case "digest": salt = .digestLength
            case "max": salt = .maximum
            case "auto" where verifying: salt = .auto
            case let text:
                guard let n = Int(text), n >= 0 else {
                    throw UsageError(message: "--salt-length expects a number of bytes, 'digest', 'max'\(verifying ? " or 'auto'" : ""), got '\(text)'", command: command)
                }
                salt = .byteCount(n)
            }
            var mgf1 = hash
            if let name = arguments.value("mgf1-hash") {
                guard let parsed = RSAHashAlgorithm(name: name) else {
                    throw UsageError(message: "unknown MGF1 hash '\(name)'", command: command)
                }
                mgf1 = parsed
            }
            padding = mgf1 == hash ? .pss(saltLength: salt) : .pssMGF1(mgf1, saltLength: salt)
        default:
            throw UsageError(message: "unknown --scheme '\(scheme)'; use pkcs1 or pss", command: command)
        }
    }

    /// Hash the input incrementally (memory stays bounded for large files).
    func digest(of input: InputFile) throws -> [UInt8] {
        var source = RSAFileDescriptorSource(fileDescriptor: input.fileDescriptor)
        var hasher = RSAHasher(algorithm: hash)
        while true {
            let piece = try source.read(upTo: 1 << 16)
            if piece.isEmpty { break }
            hasher.update(piece)
        }
        return hasher.finalize()
    }
}

private func requireOneKeySource(_ arguments: ParsedArguments, _ command: String, certificate: Bool = false) throws {
    let names = certificate ? ["tag", "key", "cert"] : ["tag", "key"]
    let given = names.filter { arguments.value($0) != nil }
    guard given.count == 1 else {
        let choices = certificate ? "--tag <TAG>, --key <FILE> or --cert <FILE>" : "--tag <TAG> or --key <FILE>"
        throw UsageError(message: given.isEmpty ? "missing \(choices)" : "give one of \(choices), not several", command: command)
    }
}

/// `rsakit sign`: SecKeyCreateSignature; byte-compatible with `openssl dgst -sign`.
struct SignCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "sign",
        overview: "Sign data with a private key (RSASSA-PKCS1-v1_5 or RSASSA-PSS).",
        usage: "rsakit sign (--tag <TAG> | --key <FILE>) [--scheme pkcs1|pss] [--hash <HASH>] [--salt-length <N>|digest|max] [--in <FILE>] [--out <FILE>]",
        options: [
            .value("tag", "TAG", "Sign with the private key stored under this application tag."),
            .value("key", "FILE", "Sign with the private key in this file (PEM or DER; PKCS#1 or PKCS#8)."),
        ] + signatureOptions + [
            .value("salt-length", "LEN", "PSS only: salt bytes, 'digest' (the hash length, default) or 'max'."),
            .value("out", "FILE", "Write the k-byte signature to FILE, only on success (default: standard output)."),
        ],
        discussion: """
        The signature is the bare k bytes (k = modulus length), as `openssl dgst -sha256 -sign
        key.pem` writes it; `--scheme pss --salt-length digest` matches `openssl dgst -sha256
        -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:digest -sign key.pem`.
        """)

    let arguments: ParsedArguments
    let settings: SignatureSettings

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        try requireOneKeySource(arguments, Self.spec.name)
        settings = try SignatureSettings(arguments, command: Self.spec.name, verifying: false)
    }

    func run() throws {
        let key: RSAPrivateKey
        if let path = arguments.value("key") {
            guard case let .privateKey(privateKey) = try loadKeyFile(path, arguments: arguments, command: Self.spec.name).key else {
                throw CLIFailure("key file '\(path)' holds a public key; signing needs the private key", .dataError)
            }
            key = privateKey
        } else {
            key = try storePrivateKey(try openStore(arguments), tag: arguments.value("tag")!, arguments: arguments, command: Self.spec.name)
        }
        let input = try InputFile.open(arguments.value("in"))
        defer { input.close() }
        let digest = try settings.digest(of: input)
        let signature = try key.signature(forDigest: digest, hash: settings.hash, padding: settings.padding)
        try writeOutput(signature, to: arguments.value("out"), input: input)
    }
}

/// `rsakit verify`: SecKeyVerifySignature; accepts what `openssl dgst -sign` writes.
struct VerifyCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "verify",
        overview: "Verify a signature with a public key: prints 'signature ok' (exit 0) or fails (exit 65).",
        usage: "rsakit verify (--tag <TAG> | --key <FILE> | --cert <FILE>) --signature <FILE> [--scheme pkcs1|pss] [--hash <HASH>] [--salt-length <N>|digest|max|auto] [--in <FILE>]",
        options: [
            .value("tag", "TAG", "Verify with the public key stored under this application tag."),
            .value("key", "FILE", "Verify with the key in this file (public or private; PEM or DER)."),
            .value("cert", "FILE", "Verify with the RSA key of this X.509 certificate (DER or PEM; the first of a bundle)."),
            .value("signature", "FILE", "The signature file (k bytes)."),
        ] + signatureOptions + [
            .value("salt-length", "LEN", "PSS only: 'auto' (the default: the salt length is recovered from the signature, RFC 8017 §9.1.2, as openssl's verify default), or exactly N bytes, 'digest' (the hash length) or 'max'."),
        ],
        discussion: """
        Exit status 0 and 'signature ok' on standard output for a valid signature; exit status
        65 and 'rsakit: error: signature invalid' on standard error otherwise (wrong key, hash,
        scheme, salt length, altered data or signature). Without --salt-length a PSS signature
        with any salt length is accepted, so `openssl dgst -sigopt rsa_padding_mode:pss -sign`
        signatures (maximum salt) verify with no options beyond --scheme pss; a number,
        'digest' or 'max' requires exactly that salt length.
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
        let input = try InputFile.open(arguments.value("in"))
        defer { input.close() }
        let digest = try settings.digest(of: input)
        guard key.isValidSignature(signature, forDigest: digest, hash: settings.hash, padding: settings.padding) else {
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
        throw CLIFailure("\(path): the certificate's public key is \(certificate.publicKeyAlgorithmName), not RSA", .dataError)
    }
    let now = Date()
    if now > certificate.notValidAfter || now < certificate.notValidBefore {
        printWarning("\(path): the certificate is not valid now (\(iso8601(certificate.notValidBefore)) to \(iso8601(certificate.notValidAfter)))")
    }
    if let usage = certificate.keyUsage, !usage.contains(.digitalSignature) {
        printWarning("\(path): the certificate's key usage (\(usage)) does not allow digital signatures")
    }
    return key
}
