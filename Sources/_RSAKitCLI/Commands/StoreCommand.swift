#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// `rsakit store init | protect | change-passphrase | unprotect | info`: making a store (shared
/// with a Unix group or not), and secrets at rest.
struct StoreCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "store",
        overview:
            "Make a store (shared with a Unix group or not); protect its secrets with a passphrase (and this "
            + "machine's TPM), change it, remove it, or show the state.",
        usage:
            "rsakit store init|protect|change-passphrase|unprotect|info [--shared-with <GROUP>] [--store-passin "
            + "<SPEC>] [--new-passin <SPEC>] [--kdf <COST>] [--tpm [--tpm-pin]] [--json] [--store <DIR>]",
        options: [
            .value(
                "shared-with", "GROUP",
                "init: share the new store with the members of this Unix group (folders 2770, files 0660, owned by "
                    + "the group)."
            ).only("init"),
            .flag(
                "tpm",
                "protect: also seal the store key to this machine's TPM, so the store opens here without the "
                    + "passphrase (which stays the recovery path); on a protected store, adds the seal."
            ).only("protect"),
            .flag(
                "tpm-pin",
                "protect --tpm: guard the TPM's seal with a PIN (--token-pin, $RSAKIT_TOKEN_PIN or a prompt)."
            ).only("protect"),
            tokenPINOption.only("protect"),
            .value(
                "new-passin", "SPEC",
                "change-passphrase: the new passphrase, same syntax as --passin (default: $RSAKIT_NEW_PASSIN, else a "
                    + "prompt)."
            ).only("change-passphrase"),
            .value(
                "kdf", "COST",
                "protect, change-passphrase: Argon2id cost interactive, moderate (default; kept by "
                    + "change-passphrase) or sensitive."
            ).only("protect", "change-passphrase"),
            .flag("json", "info: print a JSON object.").only("info")
        ],
        positionals: ["SUBCOMMAND"],
        subcommands: ["init", "protect", "change-passphrase", "unprotect", "info"],
        discussion: """
            init               make the store now (other commands make it at their first add); with
                               --shared-with GROUP, a store every member of that Unix group reads and writes:
                               folders 2770 (setgid), files 0660, all owned by GROUP whatever the umask, a
                               group-writable lock. Users outside GROUP are refused (exit 77). A folder or
                               file of a shared store open to others, or owned by another group, is refused
                               as loose. Run it as root or as a member of GROUP.
            protect            seal every private key and password value under a new random store key,
                               itself sealed by a key derived from the passphrase (Argon2id); one atomic step.
            change-passphrase  reseal the store key alone (asks for the old passphrase, then the new one).
            unprotect          write every secret back in the clear (asks for the passphrase).
            protect --tpm      also seal the store key to this machine's TPM (docs/tpm.md): commands then open
                               the store without asking; the passphrase opens it where the TPM cannot.
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
        if subcommand == "init" {
            try initialise()
            return
        }
        let store = try openStore(arguments)
        let name = Self.spec.name
        switch subcommand {
        case "init":
            throw CLIFailure("internal: init is handled before the store is opened", .failure)
        case "protect":
            if try store.isProtected {
                guard arguments.flag("tpm") else {
                    throw CLIFailure(
                        "the store \(store.path) is already protected (use 'rsakit store change-passphrase')", .failure)
                }
                let passphrase = try Passphrase.readStore(arguments, command: name, path: store.path)
                try namingStore(store.path) { try store.unlock(passphrase: passphrase) }
                try store.sealStoreKeyToTPM(passphrase: passphrase, pin: try tpmSealPIN())
                try printOutput("sealed to the TPM: \(store.path) (the passphrase still opens it)\n")
                return
            }
            let passphrase = try Passphrase.readStore(arguments, command: name, path: store.path, new: true)
            let pin = arguments.flag("tpm") ? try tpmSealPIN() : nil
            try store.protect(passphrase: passphrase, parameters: try kdfParameters(arguments, command: name))
            if arguments.flag("tpm") {
                do {
                    try store.sealStoreKeyToTPM(passphrase: passphrase, pin: pin)
                } catch {
                    printWarning(
                        "the store is protected with the passphrase, but not sealed to the TPM: "
                            + "\(CLIFailure.from(error).description)"
                    )
                    throw error
                }
                try printOutput("protected: \(store.path) (sealed to the TPM; the passphrase is the recovery path)\n")
                return
            }
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
                if let group = store.sharedUnixGroup { object["sharedWith"] = group }
                if let p = info.parameters {
                    object["kdf"] = "argon2id"
                    object["opsLimit"] = p.opsLimit
                    object["memoryLimitBytes"] = p.memoryLimitByteCount
                    object["cipher"] = "xchacha20-poly1305"
                }
                if let date = info.passphraseDate { object["passphraseChanged"] = rfc3339(date) }
                if info.isProtected { object["sealedToTPM"] = info.isSealedToTPM }
                try printOutput(try jsonText(object))
                return
            }
            var text = "store: \(store.path)\nprotected: \(info.isProtected ? "yes" : "no")\n"
            if let group = store.sharedUnixGroup { text += "shared with Unix group: \(group)\n" }
            if let p = info.parameters {
                text += "kdf: argon2id (opslimit \(p.opsLimit), memlimit \(p.memoryLimitByteCount) bytes)\n"
                text += "cipher: xchacha20-poly1305 (store key 256 bits)\n"
            }
            if let date = info.passphraseDate { text += "passphrase changed: \(iso8601(date))\n" }
            if info.isSealedToTPM { text += "sealed to the TPM: yes (opens on this machine without the passphrase)\n" }
            try printOutput(text)
        }
    }

    /// `store init [--shared-with GROUP]`.
    private func initialise() throws {
        let location = try storeLocation(arguments)
        guard let group = arguments.value("shared-with") else {
            let store = try openStore(arguments, create: true)
            try printOutput("store: \(terminalSafe(store.path))\n")
            return
        }
        let store: RSAKeyStore
        do {
            store = try RSAKeyStore.createShared(path: location, unixGroup: group)
        } catch let RSAError.invalidAttribute(reason) {
            throw CLIFailure("--shared-with: \(reason)", .usage)
        }
        try printOutput("store: \(terminalSafe(store.path))\nshared with Unix group: \(terminalSafe(group))\n")
    }

    /// The PIN of a new TPM seal: --tpm-pin (or a PIN source given) asks for one, else none.
    private func tpmSealPIN() throws -> RSASecretBytes? {
        guard arguments.flag("tpm-pin") || arguments.value("token-pin") != nil else { return nil }
        return try Passphrase.read(
            arguments, command: Self.spec.name, option: "token-pin", variable: "RSAKIT_TOKEN_PIN",
            prompt: "New PIN for the store's TPM seal: ", confirm: true)
    }
}
