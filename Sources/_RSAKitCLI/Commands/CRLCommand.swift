#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// `rsakit crl add | list | delete`: CRL items in the store (one per issuer, the newest),
/// used by `trust evaluate` and `tls connect` as `--crl` files are. Thin over
/// `RSAKeyStore.addCRL`, `allCRLs()` and `deleteCRL`.
struct CRLCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "crl",
        overview: "Add, list or delete certificate revocation lists (one per issuer; a newer CRL number supersedes).",
        usage: "rsakit crl add <FILE> | list [--json] | delete --issuer <DN>|--fingerprint <F> [--store <DIR>]",
        options: [
            .value("issuer", "DN", "delete: the CRL of this issuer (RFC 4514, as crl list prints it).").only("delete"),
            .value("fingerprint", "F", "delete: the CRL whose DER has this SHA-256 (64 hex digits, colons allowed).")
                .only("delete"),
            .flag("json", "list: print JSON.").only("list")
        ],
        positionals: ["SUBCOMMAND", "FILE"],
        subcommands: ["add", "list", "delete"],
        discussion: """
            add reads PEM (any number of X509 CRL blocks) or one DER CRL. A CRL is refused by name when
            it is stale (nextUpdate passed) or not yet valid, when the store holds a certificate of its
            issuer and the signature does not verify with that key, or when the stored CRL of the same
            issuer has a higher CRL number (a lower one is replaced). Stored CRLs are checked by
            trust evaluate and tls connect without --crl.
            """,
        passphrases: .none)

    let arguments: ParsedArguments
    let subcommand: String

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        subcommand = try parseSubcommand(arguments, spec: Self.spec)
        if subcommand == "add" {
            guard arguments.positionals.count == 2 else {
                throw UsageError(message: "missing CRL file argument <FILE>", command: Self.spec.name)
            }
        } else if arguments.positionals.count > 1 {
            throw UsageError(message: "unexpected argument '\(arguments.positionals[1])'", command: Self.spec.name)
        }
        if subcommand == "delete" {
            guard (arguments.value("issuer") == nil) != (arguments.value("fingerprint") == nil) else {
                throw UsageError(message: "delete needs one of --issuer or --fingerprint", command: Self.spec.name)
            }
        }
    }

    func run() throws {
        switch subcommand {
        case "add":
            // The file is parsed before the store is opened: a bad file creates no store.
            let path = arguments.positionals[1]
            let crls: [X509CRL]
            do { crls = try X509CRL.crls(from: try readWholeFile(path, what: "CRL file")) } catch let error as RSAError
            {
                throw CLIFailure(
                    "cannot read the CRL file '\(terminalSafe(path))': \(CLIFailure.message(for: error))", .dataError)
            }
            let store = try openStore(arguments, create: true)
            var text = ""
            for added in try store.addCRLs(crls) {
                text +=
                    "added CRL: issuer: \(terminalSafe(added.attributes.issuer)), number: "
                    + "\(Self.number(added.attributes)), "
                    + "revoked: \(added.attributes.revokedCount), fingerprint: \(added.attributes.fingerprintHex)\n"
                if let old = added.superseded {
                    text += "superseded CRL number \(Self.number(old)) (fingerprint \(old.fingerprintHex))\n"
                }
            }
            try printOutput(text)
        case "delete":
            let store = try openStore(arguments)
            let deleted: RSACRLAttributes
            if let issuer = arguments.value("issuer") {
                deleted = try store.deleteCRL(issuer: issuer)
            } else {
                let hex = arguments.value("fingerprint")!.filter { $0 != ":" }.lowercased()
                guard hex.count == 64, let bytes = hexBytes(hex) else {
                    throw UsageError(
                        message: "--fingerprint must be 64 hex digits (SHA-256 of the DER)", command: Self.spec.name)
                }
                deleted = try store.deleteCRL(fingerprint: bytes)
            }
            try printOutput("deleted CRL: issuer: \(terminalSafe(deleted.issuer)), number: \(Self.number(deleted))\n")
        default:
            let items = try openStore(arguments).allCRLs()
            if arguments.flag("json") {
                try printOutput(try jsonText(items.map(Self.json)))
            } else if items.isEmpty {
                try printOutput("no CRLs in the store\n")
            } else {
                var text = "NUMBER   THIS UPDATE           NEXT UPDATE           REVOKED  ISSUER\n"
                for item in items {
                    text +=
                        String(padded(Self.number(item), 8).prefix(8)) + " "
                        + String(padded(iso8601(item.thisUpdate), 21).prefix(21)) + " "
                        + String(padded(item.nextUpdate.map(iso8601) ?? "-", 21).prefix(21)) + " "
                        + String(padded(String(item.revokedCount), 8).prefix(8)) + " " + terminalSafe(item.issuer)
                        + "\n"
                }
                try printOutput(text)
            }
        }
    }

    /// "0x02", or "-" without a cRLNumber.
    static func number(_ item: RSACRLAttributes) -> String {
        item.crlNumberHex.map { "0x" + $0 } ?? "-"
    }

    /// The text `rsakit show --id` prints for one CRL item.
    static func text(_ item: RSACRLAttributes) -> String {
        """
        class: CRL
        issuer: \(terminalSafe(item.issuer))
        number: \(number(item))
        this update: \(iso8601(item.thisUpdate))
        next update: \(item.nextUpdate.map(iso8601) ?? "(none)")
        revoked: \(item.revokedCount)
        fingerprint (sha-256): \(item.fingerprintHex)
        item id: \(item.itemID)
        created: \(iso8601(item.creationDate))

        """
    }

    /// The JSON object of one CRL item.
    static func json(_ item: RSACRLAttributes) -> [String: Any] {
        [
            "class": "crl", "issuer": item.issuer, "crlNumber": item.crlNumberHex as Any? ?? JSONValue.null,
            "thisUpdate": rfc3339(item.thisUpdate),
            "nextUpdate": item.nextUpdate.map(rfc3339) as Any? ?? JSONValue.null,
            "revokedCount": item.revokedCount, "fingerprint": item.fingerprintHex, "itemID": item.itemID,
            "creationDate": rfc3339(item.creationDate)
        ]
    }
}
