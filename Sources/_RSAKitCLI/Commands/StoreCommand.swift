#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// `rsakit store protect | change-passphrase | unprotect | info`: secrets at rest.
struct StoreCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "store",
        overview: "Protect the store's secrets with a passphrase, change it, remove it, or show the state.",
        usage: "rsakit store protect|change-passphrase|unprotect|info [--store-passin <SPEC>] [--new-passin <SPEC>] [--kdf <COST>] [--json] [--store <DIR>]",
        options: [
            .value("new-passin", "SPEC", "change-passphrase: the new passphrase, same syntax as --passin (default: $RSAKIT_NEW_PASSIN, else a prompt).").only("change-passphrase"),
            .value("kdf", "COST", "protect, change-passphrase: Argon2id cost interactive, moderate (default; kept by change-passphrase) or sensitive.").only("protect", "change-passphrase"),
            .flag("json", "info: print a JSON object.").only("info"),
        ],
        positionals: ["SUBCOMMAND"],
        subcommands: ["protect", "change-passphrase", "unprotect", "info"],
        discussion: """
        protect            seal every private key and password value under a new random store key,
                           itself sealed by a key derived from the passphrase (Argon2id); one atomic step.
        change-passphrase  reseal the store key alone (asks for the old passphrase, then the new one).
        unprotect          write every secret back in the clear (asks for the passphrase).
        info               say whether the store is protected, and the Argon2id parameters.
        Item attributes (tags, labels, fingerprints, services, accounts) stay readable: list needs no passphrase.
        A wrong passphrase exits with status 65 and changes nothing.
        """,
        passphrases: .only(["protect", "change-passphrase", "unprotect"]))

    let arguments: ParsedArguments
    let subcommand: String

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        let sub = try parseSubcommand(arguments, spec: Self.spec)
        subcommand = sub
        if arguments.value("kdf") != nil { _ = try kdfParameters(arguments, command: Self.spec.name) }
    }

    func run() throws {
        let store = try openStore(arguments)
        let name = Self.spec.name
        switch subcommand {
        case "protect":
            if try store.isProtected {
                throw CLIFailure("the store \(store.path) is already protected (use 'rsakit store change-passphrase')", .failure)
            }
            let passphrase = try Passphrase.readStore(arguments, command: name, path: store.path, new: true)
            try store.protect(passphrase: passphrase, parameters: try kdfParameters(arguments, command: name))
            try printOutput("protected: \(store.path)\n")
        case "change-passphrase":
            guard try store.isProtected else {
                throw CLIFailure("the store \(store.path) is not protected (use 'rsakit store protect')", .failure)
            }
            let old = try Passphrase.readStore(arguments, command: name, path: store.path)
            // Check the old passphrase before asking for a new one.
            try namingStore(store.path) { try store.unlock(passphrase: old) }
            let new = try Passphrase.read(
                arguments, command: name, option: "new-passin", variable: "RSAKIT_NEW_PASSIN",
                prompt: "New passphrase for the key store at \(store.path): ", confirm: true)
            try Passphrase.requireNonEmpty(new, newPassphraseOfStoreAt: store.path)
            let parameters = arguments.value("kdf") != nil ? try kdfParameters(arguments, command: name) : nil
            try namingStore(store.path) { try store.changePassphrase(from: old, to: new, parameters: parameters) }
            try printOutput("passphrase changed: \(store.path)\n")
        case "unprotect":
            guard try store.isProtected else {
                throw CLIFailure("the store \(store.path) is not protected", .failure)
            }
            let passphrase = try Passphrase.readStore(arguments, command: name, path: store.path)
            try namingStore(store.path) { try store.unprotect(passphrase: passphrase) }
            try printOutput("unprotected: \(store.path) (secrets are now stored in the clear)\n")
        default:
            let info = try store.protectionInfo()
            if arguments.flag("json") {
                var object: [String: Any] = ["path": store.path, "protected": info.isProtected]
                if let p = info.parameters {
                    object["kdf"] = "argon2id"
                    object["opsLimit"] = p.opsLimit
                    object["memoryLimitBytes"] = p.memoryLimitByteCount
                    object["cipher"] = "xchacha20-poly1305"
                }
                if let date = info.passphraseDate { object["passphraseChanged"] = rfc3339(date) }
                try printOutput(try jsonText(object))
                return
            }
            var text = "store: \(store.path)\nprotected: \(info.isProtected ? "yes" : "no")\n"
            if let p = info.parameters {
                text += "kdf: argon2id (opslimit \(p.opsLimit), memlimit \(p.memoryLimitByteCount) bytes)\n"
                text += "cipher: xchacha20-poly1305 (store key 256 bits)\n"
            }
            if let date = info.passphraseDate { text += "passphrase changed: \(iso8601(date))\n" }
            try printOutput(text)
        }
    }
}
