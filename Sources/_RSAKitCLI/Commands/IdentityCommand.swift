#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// `rsakit identity import | list | show | export | delete`: identities (a certificate
/// whose public key matches a stored private key), after Apple's SecPKCS12Import and
/// SecIdentity. A thin layer over `RSAPKCS12`, `RSAKeyStore.addIdentity` and `RSATrust`.
struct IdentityCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "identity",
        overview: "Import (PKCS#12), list, show, export or delete identities (key + certificate + chain).",
        usage:
            "rsakit identity import <FILE.p12|https://URL> [--label <L>] [--tag <T>] [--replace] [--anchor "
            + "<FILE>]... [--anchors-only] [--passin <SPEC>] | list [--json] | show --label <L> [--json] | "
            + "export --label <L> --format p12|pem [--passout <SPEC>] [--out <FILE>] | delete --label <L> "
            + "[--store <DIR>]",
        options: [
            accessGroupOption,
            .value(
                "label", "L",
                "import: the certificate's label (default: the p12 friendly name, else the subject summary); show, "
                    + "export, delete: which identity."
            ).only("import", "show", "export", "delete"),
            .value("tag", "T", "import: the private key's application tag (default: the label).").only("import"),
            .repeated(
                "anchor", "FILE",
                "import: a trust anchor for the trust result (a private PKI's root) and, for an https:// URL, for "
                    + "the server; repeatable."
            ).only("import"),
            .flag(
                "anchors-only",
                "import: use only --anchor files and the store's trusted certificates as anchors, not the system's."
            ).only("import"),
            .flag("replace", "import: replace items with the same tag or issuer + serial.").only("import"),
            .value(
                "format", "FORMAT",
                "export: p12 (as OpenSSL 3.0 writes it) or pem (key, certificate and chain, for curl --cert/--key)."
            ).choices(["p12", "pem"]).only("export"),
            .value(
                "passout", "SPEC",
                "export --format p12: its passphrase, same syntax as --passin (default: $RSAKIT_PASSOUT, else a "
                    + "prompt, asked twice)."
            ).only("export"),
            .value("out", "FILE", "export: write to FILE (mode 0600; default: standard output).").only("export"),
            .flag("json", "list, show: print JSON.").only("list", "show")
        ],
        positionals: ["SUBCOMMAND", "FILE"],
        subcommands: ["import", "list", "show", "export", "delete"],
        discussion: """
            import verifies the PKCS#12 MAC first, then stores the key pair, the certificate and its chain in one
            write (nothing is stored on any failure), and prints the label stored, the trust result of the chain
            under the Basic X.509 policy and the rest. Re-import: a key is stored once; if it is already stored
            under another tag, --replace moves it to the new tag (and relabels the certificate), else it is refused. \
            The p12 passphrase is read with --passin; a protected store's with --store-passin (else the
            same --passin). A store that does not exist is created only once the file has been read and checked.
            An https:// URL is downloaded into memory (never to disk; at most 16 MiB; redirects to https only) from a
            server trusted by the system roots or --anchor, then imported the same way.
            """,
        passphrases: .only(["import", "export"]))

    let arguments: ParsedArguments
    let subcommand: String

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        let sub = try parseSubcommand(arguments, spec: Self.spec)
        subcommand = sub
        if sub == "import" {
            guard arguments.positionals.count == 2 else {
                throw UsageError(message: "missing PKCS#12 file argument <FILE.p12>", command: Self.spec.name)
            }
            let source = arguments.positionals[1].lowercased()
            if source.contains("://") && !source.hasPrefix("https://") {
                throw UsageError(
                    message: "only https:// URLs are downloaded, not '\(terminalSafe(arguments.positionals[1]))'",
                    command: Self.spec.name)
            }
        } else if arguments.positionals.count > 1 {
            throw UsageError(message: "unexpected argument '\(arguments.positionals[1])'", command: Self.spec.name)
        }
        if ["show", "export", "delete"].contains(sub), arguments.value("label") == nil {
            throw UsageError(message: "\(sub) needs --label", command: Self.spec.name)
        }
        if sub == "export" {
            guard let format = arguments.value("format"), ["p12", "pem"].contains(format) else {
                throw UsageError(message: "export needs --format p12 or --format pem", command: Self.spec.name)
            }
            if format == "pem" && arguments.value("passout") != nil {
                throw UsageError(message: "--passout applies to --format p12", command: Self.spec.name)
            }
        }
    }

    func run() throws {
        if subcommand == "import" { return try importIdentity() }
        let store = try openStore(arguments)
        switch subcommand {
        case "list": try list(store)
        case "show":
            let identity = try identity(store)
            try printOutput(arguments.flag("json") ? try jsonText(Self.json(identity)) : describe(identity, store))
        case "export": try export(store)
        default:
            let identity = try identity(store)
            try store.deleteCertificate(id: identity.certificate.itemID)
            try store.deleteKey(tag: identity.privateKey.applicationTag)
            try printOutput(
                "deleted identity: label: \(terminalSafe(identity.certificate.label)), private key tag: "
                    + "\(terminalSafe(identity.privateKey.applicationTag))\n"
            )
        }
    }

    /// The file is read, its MAC checked and its contents parsed before the store is opened,
    /// so a missing, damaged or wrongly unlocked file leaves no new store behind.
    private func importIdentity() throws {
        let path = arguments.positionals[1]
        // The anchor files are read before anything is stored: a bad one stores nothing.
        let anchors = try arguments.values("anchor").flatMap { try readCertificateFile($0) }
        let p12 = path.lowercased().hasPrefix("https://") ? try download(path, anchors: anchors) : try readFile(path)
        for warning in p12.warnings { printWarning("\(terminalSafe(path)): \(warning)") }
        let label = arguments.value("label") ?? p12.friendlyName ?? p12.certificate.subjectSummary
        let tag = arguments.value("tag") ?? label
        let store = try PendingStore(arguments, command: Self.spec.name, unlock: false).open()
        let identity: RSAIdentityItem
        do {
            identity = try withUnlockedStore(store, arguments, command: Self.spec.name) {
                try CLIFailure.hintingDuplicates(option: "--replace") {
                    try store.addIdentity(
                        privateKey: p12.privateKey, certificate: p12.certificate, chain: p12.chain,
                        tag: tag, label: label, replace: arguments.flag("replace"))
                }
            }
        } catch let RSAError.keyStoredUnderAnotherTag(stored, requested) {
            throw CLIFailure(
                "the key of '\(terminalSafe(path))' is already stored under tag \"\(terminalSafe(stored))\": give "
                    + "--replace to move it to tag \"\(terminalSafe(requested))\", or --tag \(shellQuoted(stored)) "
                    + "to keep it",
                .alreadyExists)
        }
        // Evaluated as `trust evaluate` would: --anchor files, --anchors-only, and the store's
        // certificates (candidates) and trust settings; the identity was stored either way.
        var trust = p12.trust
        trust.anchorCertificates = anchors
        trust.anchorCertificatesOnly = arguments.flag("anchors-only")
        do { try trust.addKeychain(store) } catch {
            printWarning("the store's certificates were not used for the trust result: \(error)")
        }
        let evaluation = trust.evaluate()
        var text = "imported identity: \(terminalSafe(identity.certificate.label))\n"
        text +=
            "subject summary: \(terminalSafe(p12.certificate.subjectSummary))\nprivate key tag: "
            + "\(terminalSafe(identity.privateKey.applicationTag))\n"
        text += "certificate fingerprint (SHA-256): \(p12.certificate.fingerprintHex)\n"
        text += "public key fingerprint: \(p12.privateKey.fingerprint.base64String)\n"
        text +=
            "certificate item id: \(identity.certificate.itemID)\nprivate key item id: \(identity.privateKey.itemID)\n"
        text += "chain: \(identity.chain.count) certificate\(identity.chain.count == 1 ? "" : "s")\n"
        text += "trust (basic X.509): \(evaluation.result.rawValue)\n"
        for failure in evaluation.failures { text += "  \(terminalSafe(failure.description))\n" }
        try printOutput(text)
    }

    private func readFile(_ path: String) throws -> RSAPKCS12 {
        var bytes = try readWholeFile(path, what: "PKCS#12 file")
        defer { wipe(&bytes) }
        let passphrase = try Passphrase.read(
            arguments, command: Self.spec.name, prompt: "Passphrase for the PKCS#12 file \(path): ")
        do {
            return try RSAPKCS12(derRepresentation: bytes, passphrase: passphrase.bytes)
        } catch let error as RSAError {
            throw CLIFailure(
                "cannot import '\(path)': \(CLIFailure.message(for: error))", CLIFailure.status(for: error))
        }
    }

    /// The file at an https URL, read into memory by the library's downloading initialiser:
    /// the server trusted by the system roots or the --anchor files (only those with
    /// --anchors-only), redirects https to https only, at most RSAPKCS12.maximumByteCount.
    private func download(_ text: String, anchors: [X509Certificate]) throws -> RSAPKCS12 {
        guard let url = URL(string: text), url.host(percentEncoded: false)?.isEmpty == false else {
            throw UsageError(
                message: "expected an https:// URL with a host, got '\(terminalSafe(text))'", command: Self.spec.name)
        }
        var configuration = RSAHTTPSClientConfiguration()
        configuration.tlsConfiguration.anchorCertificates = anchors
        configuration.tlsConfiguration.anchorCertificatesOnly = arguments.flag("anchors-only")
        let client = RSAHTTPSClient(configuration: configuration)
        let passphrase = try Passphrase.read(
            arguments, command: Self.spec.name, prompt: "Passphrase for the PKCS#12 file at \(text): ")
        let bytes = passphrase.bytes
        do {
            return try FetchCommand.wait { try await RSAPKCS12(contentsOf: url, client: client, passphrase: bytes) }
        } catch let error as RSAError {
            throw CLIFailure(
                "cannot import '\(terminalSafe(text))': \(CLIFailure.message(for: error))",
                CLIFailure.status(for: error))
        }
    }

    private func list(_ store: RSAKeyStore) throws {
        let identities = try store.allIdentities()
        if arguments.flag("json") {
            try printOutput(try jsonText(identities.map(Self.json)))
            return
        }
        if identities.isEmpty {
            try printOutput("no identities in the store\n")
            return
        }
        var text = ""
        for identity in identities {
            text +=
                "\(terminalSafe(identity.certificate.label))  tag: "
                + "\(terminalSafe(identity.privateKey.applicationTag))  not after: "
                + "\(iso8601(identity.certificate.notValidAfter))  fingerprint: "
                + "\(identity.certificate.fingerprintHex)\n"
        }
        try printOutput(text)
    }

    /// The JSON object of one identity, the same in `identity list --json` and `identity show --json`.
    private static func json(_ identity: RSAIdentityItem) -> [String: Any] {
        [
            "class": "identity", "label": identity.certificate.label, "subject": identity.certificate.subject,
            "issuer": identity.certificate.issuer, "serialNumber": identity.certificate.serialNumberHex,
            "privateKeyTag": identity.privateKey.applicationTag, "fingerprint": identity.certificate.fingerprintHex,
            "publicKeyFingerprint": identity.privateKey.fingerprint.hexString,
            "notValidBefore": rfc3339(identity.certificate.notValidBefore),
            "notValidAfter": rfc3339(identity.certificate.notValidAfter),
            "certificateItemID": identity.certificate.itemID,
            "privateKeyItemID": identity.privateKey.itemID, "chain": identity.chain.map(\.label),
            "accessGroup": identity.accessGroup
        ]
    }

    private func identity(_ store: RSAKeyStore) throws -> RSAIdentityItem {
        let label = arguments.value("label") ?? ""
        return try uniqueItem(try store.identities(label: label), what: "identity", plural: "identities", label: label)
        {
            (try? store.allIdentities().map(\.certificate.label)) ?? []
        }
    }

    private func describe(_ identity: RSAIdentityItem, _ store: RSAKeyStore) throws -> String {
        let certificate = try store.certificateValue(id: identity.certificate.itemID)
        var text =
            "label: \(terminalSafe(identity.certificate.label))\nprivate key tag: "
            + "\(terminalSafe(identity.privateKey.applicationTag))\n"
        text +=
            "private key item id: \(identity.privateKey.itemID)\ncertificate item id: \(identity.certificate.itemID)\n"
        text += "access group: \(identity.accessGroup)\n"
        text += CertShow.text(certificate)
        for member in identity.chain { text += "chain: \(terminalSafe(member.label)) (\(member.fingerprintHex))\n" }
        return text
    }

    private func export(_ store: RSAKeyStore) throws {
        let identity = try identity(store)
        let key = try withUnlockedStore(store, arguments, command: Self.spec.name) {
            try store.privateKey(tag: identity.privateKey.applicationTag)
        }
        let certificate = try store.certificateValue(id: identity.certificate.itemID)
        let chain = try identity.chain.map { try store.certificateValue(id: $0.itemID) }
        var bytes: [UInt8]
        if arguments.value("format") == "p12" {
            let passphrase = try Passphrase.read(
                arguments, command: Self.spec.name, option: "passout", variable: "RSAKIT_PASSOUT",
                prompt: "Passphrase for the PKCS#12 file: ", confirm: true)
            bytes = try RSAPKCS12.derRepresentation(
                privateKey: key, certificate: certificate, chain: chain,
                friendlyName: identity.certificate.label, passphrase: passphrase.bytes)
        } else {
            bytes = Array(
                (key.pkcs8PEMRepresentation + certificate.pemRepresentation + chain.map(\.pemRepresentation).joined())
                    .utf8)
        }
        defer { wipe(&bytes) }
        try writeOutput(bytes, to: arguments.value("out"), mode: 0o600)
    }
}
