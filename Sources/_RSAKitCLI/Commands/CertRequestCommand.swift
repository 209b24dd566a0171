import RSAKit

// `rsakit cert request` and `rsakit cert self-sign`: a PKCS#10 request or a self-signed
// certificate for the key under --tag, signed where the key lives (the store, or its token).
// The library does the work (RSAKeyStore.certificateSigner, RSACertificateRequest,
// X509Certificate.selfSigned); this file reads options and writes the result.

/// The options only `cert request` and `cert self-sign` take (joined to CertCommand's spec).
let certificateRequestOptions: [OptionSpec] = [
    .value("tag", "TAG", "request, self-sign: the private key's application tag (in the store or on a token).").only(
        "request", "self-sign"),
    .value(
        "subject", "DN",
        "request, self-sign: the subject, an RFC 4514 string such as 'CN=host.example.com,O=Example,C=GB'."
    ).only("request", "self-sign"),
    .repeated(
        "san", "NAME",
        "request, self-sign: a subject alternative name, DNS:NAME, IP:ADDRESS, email:ADDRESS or URI:URI (repeat for "
            + "several)."
    ).only("request", "self-sign"),
    .value("days", "N", "self-sign: days of validity from now (1 to 36500).").only("self-sign"),
    .flag("ca", "self-sign: a CA certificate (basicConstraints cA true, keyUsage keyCertSign and cRLSign).").only(
        "self-sign"),
    .value("hash", "HASH", "request, self-sign: the signature's hash (default sha256).").choices([
        "sha256", "sha384", "sha512"
    ]).only("request", "self-sign"),
    .value(
        "scheme", "SCHEME",
        "request, self-sign: pkcs1 (RSASSA-PKCS1-v1_5, the default) or pss (RSASSA-PSS, salt = hash length)."
    ).choices(["pkcs1", "pss"]).only("request", "self-sign"),
    tokenPINOption.only("request", "self-sign")
]

/// Reading and running `cert request` / `cert self-sign`.
enum CertificateRequestOptions {
    /// Checks made before anything is opened: --tag, --subject (and --days for self-sign)
    /// given, --days a number in range, every --san readable, no file argument.
    /// - Throws: `UsageError`; `RSAError.invalidSubjectAlternativeName` (exit 64).
    static func validate(_ arguments: ParsedArguments, subcommand: String) throws {
        let command = CertCommand.spec.name
        guard arguments.positionals.count == 1 else {
            throw UsageError(
                message: "unexpected argument '\(terminalSafe(arguments.positionals[1]))'", command: command)
        }
        _ = try arguments.required("tag", command)
        _ = try arguments.required("subject", command)
        _ = try alternativeNames(arguments)
        if subcommand == "self-sign" {
            guard let days = try arguments.integer("days", command) else {
                throw UsageError(message: "self-sign needs --days <N>", command: command)
            }
            guard (1...X509Certificate.maximumValidityDays).contains(days) else {
                throw UsageError(
                    message: "--days must be 1 to \(X509Certificate.maximumValidityDays), got \(days)", command: command
                )
            }
        }
        if arguments.value("label") != nil && !arguments.flag("add") {
            throw UsageError(message: "--label names the stored certificate: it needs --add", command: command)
        }
    }

    /// `cert request`: write the request (PEM, or DER with --der) to --out or standard output.
    static func request(_ arguments: ParsedArguments) throws {
        let output = try OutputFile(arguments.value("out"), input: nil)
        do {
            let request = try build(arguments) { store, signer, names, scheme in
                try RSACertificateRequest(
                    subject: arguments.value("subject")!, alternativeNames: names, signer: signer, scheme: scheme)
            }
            let bytes = arguments.flag("der") ? request.derRepresentation : Array(request.pemRepresentation.utf8)
            var sink = RSAFileDescriptorSink(fileDescriptor: output.fileDescriptor)
            try sink.write(bytes)
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }

    /// `cert self-sign`: write the certificate to --out or standard output; with --add store
    /// it too (then, without --out, only the added lines are printed). The output file is
    /// linked into place only after the certificate is stored, so a refused --add leaves no file.
    static func selfSign(_ arguments: ParsedArguments) throws {
        let adding = arguments.flag("add")
        let output = adding && arguments.value("out") == nil ? nil : try OutputFile(arguments.value("out"), input: nil)
        do {
            var added: RSACertificateAttributes?
            var identityTag: String?
            let certificate = try build(arguments) { store, signer, names, scheme in
                let certificate = try X509Certificate.selfSigned(
                    subject: arguments.value("subject")!, alternativeNames: names,
                    validityDays: try arguments.integer("days", CertCommand.spec.name)!,
                    isCertificateAuthority: arguments.flag("ca"), signer: signer, scheme: scheme)
                if adding {
                    // A token key's store was never unlocked; a protected store may need it now.
                    let item = try withUnlockedStore(store, arguments, command: CertCommand.spec.name) {
                        try store.addCertificate(certificate, label: arguments.value("label"))
                    }
                    added = item
                    identityTag = (try? store.identity(for: item))?.privateKey.applicationTag
                }
                return certificate
            }
            if let output {
                let bytes =
                    arguments.flag("der") ? certificate.derRepresentation : Array(certificate.pemRepresentation.utf8)
                var sink = RSAFileDescriptorSink(fileDescriptor: output.fileDescriptor)
                try sink.write(bytes)
                try output.commit()
            }
            if let added {
                var text =
                    "added certificate: label: \(terminalSafe(added.label)), fingerprint: \(added.fingerprintHex), "
                    + "item id: \(added.itemID)\n"
                if let identityTag { text += "identity: private key tag \(terminalSafe(identityTag))\n" }
                try printOutput(text)
            }
        } catch {
            output?.discard()
            throw error
        }
    }

    /// Open the store, find the signer for --tag (a token key asks for its PIN), read the
    /// names and scheme, and run `make`.
    private static func build<T>(
        _ arguments: ParsedArguments,
        _ make: (
            RSAKeyStore, RSACertificateSigner, [X509Certificate.SubjectAlternativeName], RSACertificateSignatureScheme
        ) throws -> T
    ) throws -> T {
        let command = CertCommand.spec.name
        let tag = arguments.value("tag")!
        let names = try alternativeNames(arguments)
        let hash = RSAHashAlgorithm(rawValue: arguments.value("hash") ?? "sha256") ?? .sha256
        let scheme: RSACertificateSignatureScheme = arguments.value("scheme") == "pss" ? .pss(hash) : .pkcs1v15(hash)
        let store = try openStore(arguments)
        let signer: RSACertificateSigner
        if let tokenKey = storeTokenKey(store, tag: tag) {
            let pin = try readTokenPIN(arguments, command: command, reference: tokenKey.reference)
            signer = RSACertificateSigner(tokenKey: tokenKey, pin: pin)
        } else {
            signer = RSACertificateSigner(
                privateKey: try storePrivateKey(store, tag: tag, arguments: arguments, command: command))
        }
        do {
            return try make(store, signer, names, scheme)
        } catch let RSAError.invalidDistinguishedName(name, reason) {
            throw CLIFailure(
                "--subject: invalid distinguished name \"\(terminalSafe(name))\": \(terminalSafe(reason))", .usage)
        }
    }

    /// The --san values, parsed.
    /// - Throws: `CLIFailure` (64) naming the bad value.
    private static func alternativeNames(_ arguments: ParsedArguments) throws -> [X509Certificate
        .SubjectAlternativeName]
    {
        do {
            return try arguments.values("san").map { try X509Certificate.SubjectAlternativeName(parsing: $0) }
        } catch let RSAError.invalidSubjectAlternativeName(name, reason) {
            throw CLIFailure(
                "--san: invalid subject alternative name \"\(terminalSafe(name))\": \(terminalSafe(reason))", .usage)
        }
    }
}
