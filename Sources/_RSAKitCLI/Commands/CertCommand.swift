#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// `rsakit cert add | find | list | export | delete`: certificate items, after macOS
/// `security add-certificate`, `add-trusted-cert`, `find-certificate`, `delete-certificate`;
/// `cert request | self-sign`: a PKCS#10 request or a self-signed certificate for a stored
/// key, signed where the key lives (CertRequestCommand.swift).
struct CertCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "cert",
        overview:
            "Add, find, list, export or delete certificates (unique on issuer + serial); make a certificate request "
            + "or a self-signed certificate for a stored key.",
        usage:
            "rsakit cert show <FILE> [--json] | add <FILE> [--label <L>] [--trust|--distrust] [--replace] | "
            + "find|export|delete --label <L>|--fingerprint <F>|--id <ID> [--der] [--out <FILE>] | list [--json] "
            + "[--store <DIR>] | request --tag <TAG> --subject <DN> [--san <NAME>]... [--out <FILE>] [--der] | "
            + "self-sign --tag <TAG> --subject <DN> --days <N> [--san <NAME>]... [--ca] [--out <FILE>] [--add "
            + "[--label <L>]]",
        options: [
            accessGroupOption,
            .value("label", "L", "The label (add, self-sign --add: default the subject summary, i.e. the common name).")
                .only("add", "find", "export", "delete", "self-sign"),
            .value(
                "fingerprint", "F",
                "find, export, delete: SHA-256 of the certificate's DER (64 hex digits, colons allowed)."
            ).only("find", "export", "delete"),
            .value("id", "ID", "find, export, delete: the item id.").only("find", "export", "delete"),
            .flag(
                "trust",
                "add: mark the certificate trusted (an anchor for trust evaluation, like security add-trusted-cert)."
            ).only("add"),
            .flag("distrust", "add: mark the certificate distrusted (trust evaluation denies chains through it).").only(
                "add"),
            .flag("replace", "add: replace a certificate with the same issuer and serial.").only("add"),
            .flag("der", "export, request, self-sign: write DER instead of PEM.").only(
                "export", "request", "self-sign"),
            .value(
                "out", "FILE", "export, request, self-sign: write to FILE, only on success (default: standard output)."
            ).only("export", "request", "self-sign")
        ] + certificateRequestOptions + [
            .flag(
                "add", "self-sign: also store the certificate, so the key becomes an identity (for tls connect --tag)."
            ).only("self-sign"),
            .flag("json", "show, find, list: print JSON.").only("show", "find", "list")
        ],
        positionals: ["SUBCOMMAND", "FILE"],
        subcommands: ["show", "add", "find", "list", "export", "delete", "request", "self-sign"],
        discussion: """
            add reads DER, PEM or a PEM bundle; with several certificates the first is the certificate and the others \
            its chain, stored with it.
            request and self-sign sign with the private key under --tag where it lives: in the store, or on its \
            PKCS#11 token (the PIN from --token-pin, $RSAKIT_TOKEN_PIN or a prompt); `openssl req -verify -in req.pem` \
            checks a request. The subject is an RFC 4514 string ('CN=host,O=Example,C=GB'); --san takes DNS:NAME, \
            IP:ADDRESS, email:ADDRESS or URI:URI and may be repeated. Signatures are sha256WithRSAEncryption unless \
            --hash or --scheme pss say otherwise. A self-signed certificate gets a 20-byte random serial, subject and \
            authority key identifiers, basicConstraints (cA true only with --ca) and keyUsage (digitalSignature, \
            nonRepudiation, keyEncipherment; with --ca digitalSignature, keyCertSign, cRLSign). self-sign --add also \
            stores the certificate (without --out only the added lines are printed), and the output file appears only \
            once it is stored.
            """,
        passphrases: .only(["request", "self-sign"]))

    let arguments: ParsedArguments
    let subcommand: String

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        let sub = try parseSubcommand(arguments, spec: Self.spec)
        subcommand = sub
        if sub == "show" {
            guard arguments.positionals.count == 2 else {
                throw UsageError(message: "missing certificate file argument <FILE>", command: Self.spec.name)
            }
        } else if sub == "add" {
            guard arguments.positionals.count == 2 else {
                throw UsageError(message: "missing certificate file argument <FILE>", command: Self.spec.name)
            }
            guard !(arguments.flag("trust") && arguments.flag("distrust")) else {
                throw UsageError(message: "give --trust or --distrust, not both", command: Self.spec.name)
            }
        } else if sub == "request" || sub == "self-sign" {
            try CertificateRequestOptions.validate(arguments, subcommand: sub)
        } else if arguments.positionals.count > 1 {
            throw UsageError(message: "unexpected argument '\(arguments.positionals[1])'", command: Self.spec.name)
        }
        if ["find", "export", "delete"].contains(sub) {
            let given = ["label", "fingerprint", "id"].filter { arguments.value($0) != nil }
            guard given.count == 1 else {
                throw UsageError(message: "\(sub) needs one of --label, --fingerprint or --id", command: Self.spec.name)
            }
        }
    }

    func run() throws {
        if subcommand == "show" {
            // A file, not the store (x509's CertShowCommand.swift).
            return try CertShow.run(path: arguments.positionals[1], json: arguments.flag("json"))
        }
        if subcommand == "add" { return try add() }
        if subcommand == "request" { return try CertificateRequestOptions.request(arguments) }
        if subcommand == "self-sign" { return try CertificateRequestOptions.selfSign(arguments) }
        let store = try openStore(arguments)
        switch subcommand {
        case "find":
            let items = try selected(store)
            if arguments.flag("json") {
                try printOutput(try jsonText(items.map(certificateJSON)))
            } else {
                try printOutput(items.map(certificateText).joined(separator: "\n"))
            }
        case "export":
            let items = try selected(store)
            guard items.count == 1 else {
                throw CLIFailure("\(items.count) certificates have this label; use --fingerprint or --id", .usage)
            }
            let certificate = try store.certificateValue(id: items[0].itemID)
            let bytes =
                arguments.flag("der") ? certificate.derRepresentation : Array(certificate.pemRepresentation.utf8)
            try writeOutput(bytes, to: arguments.value("out"), mode: 0o644)
        case "delete":
            let items = try selected(store)
            for item in items { try store.deleteCertificate(id: item.itemID) }
            try printOutput(
                items.map { "deleted certificate: label: \(terminalSafe($0.label)), item id: \($0.itemID)\n" }.joined())
        default:
            let listing = try store.allItems()
            for problem in listing.problems { printWarning(problem.description) }
            if arguments.flag("json") {
                try printOutput(try jsonText(listing.certificates.map(certificateJSON)))
            } else if listing.certificates.isEmpty {
                try printOutput("no certificates in the store\n")
            } else {
                try printOutput(certificateTable(listing.certificates))
            }
        }
    }

    /// `cert add`: the file is read and parsed before the store is opened, so a bad file
    /// leaves no new store behind.
    private func add() throws {
        let certificates = try readCertificateFile(arguments.positionals[1])
        let store = try openStore(arguments, create: true)
        let trust: RSACertificateTrust =
            arguments.flag("trust") ? .trusted : arguments.flag("distrust") ? .distrusted : .unspecified
        let item = try CLIFailure.hintingDuplicates(option: "--replace") {
            try store.addCertificate(
                certificates[0], label: arguments.value("label"), trust: trust,
                chain: Array(certificates.dropFirst()), replace: arguments.flag("replace"))
        }
        var text =
            "added certificate: label: \(terminalSafe(item.label)), fingerprint: \(item.fingerprintHex), item id: "
            + "\(item.itemID)\n"
        // Only the certificate of an identity gets this line: no identity is not an error here.
        do {
            let identity = try store.identity(for: item)
            text += "identity: private key tag \(terminalSafe(identity.privateKey.applicationTag))\n"
        } catch RSAError.itemNotFound {}
        try printOutput(text)
    }

    /// The certificates named by --label, --fingerprint or --id (never empty).
    private func selected(_ store: RSAKeyStore) throws -> [RSACertificateAttributes] {
        if let label = arguments.value("label") {
            return try requireLabelFound(try store.certificates(label: label), what: "certificate", label: label) {
                (try? store.allItems().certificates.map(\.label)) ?? []
            }
        }
        if let text = arguments.value("fingerprint") {
            let hex = text.filter { $0 != ":" }.lowercased()
            guard hex.count == 64, let bytes = hexBytes(hex) else {
                throw UsageError(
                    message: "--fingerprint must be 64 hex digits (SHA-256 of the DER)", command: Self.spec.name)
            }
            return [try store.certificate(fingerprint: bytes)]
        }
        let id = arguments.value("id")!
        guard case let .certificate(item) = try store.item(id: id) else {
            throw CLIFailure("item \(id) is not a certificate", .usage)
        }
        return [item]
    }
}

/// Bytes of an even-length hex string, or nil.
func hexBytes(_ hex: String) -> [UInt8]? {
    var out: [UInt8] = []
    var iterator = hex.makeIterator()
    while let hi = iterator.next() {
        guard let lo = iterator.next(), let byte = UInt8(String([hi, lo]), radix: 16) else { return nil }
        out.append(byte)
    }
    return out
}

/// The table of `cert list`.
func certificateTable(_ items: [RSACertificateAttributes]) -> String {
    var text =
        "TRUST        NOT AFTER             " + String(padded("FINGERPRINT (SHA-256)", 66).prefix(66)) + "LABEL\n"
    for item in items {
        text +=
            String(padded(item.trust.rawValue, 12).prefix(12)) + " "
            + String(padded(iso8601(item.notValidAfter), 21).prefix(21)) + " "
            + item.fingerprintHex + "  " + terminalSafe(item.label) + groupSuffix(item.accessGroup) + "\n"
    }
    return text
}

/// The attribute lines of one certificate item.
func certificateText(_ item: RSACertificateAttributes) -> String {
    """
    class: certificate
    label: \(terminalSafe(item.label))
    subject: \(terminalSafe(item.subject))
    issuer: \(terminalSafe(item.issuer))
    serial: \(item.serialNumberHex)
    not before: \(iso8601(item.notValidBefore))
    not after: \(iso8601(item.notValidAfter))
    fingerprint (sha-256): \(item.fingerprintHex)
    public key fingerprint: \(item.publicKeyFingerprint?.base64String ?? "(none)")
    trust: \(item.trust.rawValue)
    access group: \(item.accessGroup)
    item id: \(item.itemID)
    created: \(iso8601(item.creationDate))

    """
}

/// The JSON object of one certificate item, in the names of the JSON table (docs/scripting.md).
func certificateJSON(_ item: RSACertificateAttributes) -> [String: Any] {
    [
        "class": "certificate",
        "label": item.label,
        "subject": item.subject,
        "issuer": item.issuer,
        "serialNumber": item.serialNumberHex,
        "notValidBefore": rfc3339(item.notValidBefore),
        "notValidAfter": rfc3339(item.notValidAfter),
        "fingerprint": item.fingerprintHex,
        "publicKeyFingerprint": item.publicKeyFingerprint?.hexString as Any? ?? JSONValue.null,
        "trust": item.trust.rawValue,
        "chain": item.chainFingerprints.map { lowercaseHex($0) },
        "itemID": item.itemID,
        "accessGroup": item.accessGroup,
        "creationDate": rfc3339(item.creationDate)
    ]
}
