import RSAKit

// Protected stores in the CLI: the passphrase is asked for only when a secret is needed
// (the library throws RSAError.keychainLocked), and `--protect` on a new store's first write.
// Commands that add items create a missing store only once their input is read (PendingStore).

/// Run `body`; if the store is protected and locked, read the store's passphrase (see
/// ``Passphrase/readStore(_:command:path:new:)``), unlock and run `body` again.
///
/// - Throws: what `body` throws; `CLIFailure` (65) naming the store for a wrong passphrase.
func withUnlockedStore<T>(_ store: RSAKeyStore, _ arguments: ParsedArguments, command: String, _ body: () throws -> T)
    throws -> T
{
    do {
        return try body()
    } catch RSAError.keychainLocked {
        try unlockStore(store, arguments, command: command)
        return try body()
    }
}

/// Unlock a protected store through a running agent that serves it, else with its
/// passphrase (`--store-passin`, `RSAKIT_STORE_PASSIN`, `--passin`, `RSAKIT_PASSIN`, else a
/// prompt: a pinentry or askpass program, or the terminal; a program is asked twice at most).
///
/// - Throws: `CLIFailure` (65) "wrong passphrase for the key store at PATH".
func unlockStore(_ store: RSAKeyStore, _ arguments: ParsedArguments, command: String) throws {
    // The agent first (RSAKIT_AGENT_SOCK or the default socket), when it serves this store.
    if (try? store.unlock(agentSocketPath: RSAKeychainAgent.defaultSocketPath())) == true { return }
    // Then the TPM, for a store key sealed to it, unless a passphrase source is named: the
    // passphrase is the recovery path when the TPM cannot open it.
    if !Passphrase.storeSourceGiven(arguments, command: command), let needsPIN = try store.storeKeyTPMSealRequiresPIN()
    {
        do {
            let pin =
                needsPIN
                ? try Passphrase.read(
                    arguments, command: command, option: "token-pin", variable: "RSAKIT_TOKEN_PIN",
                    prompt: "PIN for the store's TPM seal: ") : nil
            try store.unlockWithTPM(pin: pin)
            return
        } catch let error as RSAError {
            var reason = CLIFailure.message(for: error)
            if case .tpmKeyLost = error {
                reason = "the TPM no longer holds its seal: it was cleared, reset or replaced"
            }
            printWarning(
                "the TPM did not open the key store at \(terminalSafe(store.path)) (\(reason)); its passphrase opens it"
            )
        }
    }
    try Passphrase.withStorePassphrase(arguments, command: command, path: store.path) {
        try store.unlock(passphrase: $0)
    }
}

/// Run `body`, reporting `RSAError.wrongPassphrase` as a wrong passphrase for the store at
/// `path` (exit 65), so that it is never mistaken for the file's passphrase.
func namingStore<T>(_ path: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch RSAError.wrongPassphrase {
        throw CLIFailure(
            "wrong passphrase for the key store at \(terminalSafe(path)) (its passphrase comes from --store-passin, "
                + "RSAKIT_STORE_PASSIN, else --passin)",
            .dataError)
    }
}

/// The Argon2id parameters named by `--kdf` (interactive, moderate, sensitive; default moderate).
func kdfParameters(_ arguments: ParsedArguments, command: String) throws -> RSAArgon2idParameters {
    switch arguments.value("kdf") ?? "moderate" {
    case "interactive": return .interactive
    case "moderate": return .moderate
    case "sensitive": return .sensitive
    case let other:
        throw UsageError(message: "--kdf must be interactive, moderate or sensitive, got '\(other)'", command: command)
    }
}

/// With `--protect`: protect a store that is still empty (its first write), asking for a new
/// passphrase; nothing to do when it is already protected. A store that already holds items
/// is converted with `rsakit store protect` instead.
func protectNewStoreIfAsked(_ store: RSAKeyStore, _ arguments: ParsedArguments, command: String) throws {
    guard arguments.flag("protect") else { return }
    if try store.isProtected { return }
    let listing = try store.allItems()
    guard listing.keys.isEmpty, listing.passwords.isEmpty, listing.problems.isEmpty else {
        throw CLIFailure(
            "--protect applies to a new store's first write; this store already holds items: run 'rsakit store "
                + "protect'",
            .usage)
    }
    let passphrase = try Passphrase.readStore(arguments, command: command, path: store.path, new: true)
    try store.protect(passphrase: passphrase, parameters: try kdfParameters(arguments, command: command))
}

/// The store a command adds to, created only when the command is ready to write.
///
/// An existing store is opened at once (and unlocked if `unlock` and it is protected, so a
/// wrong passphrase fails before any work); `--protect` on it is applied as
/// ``protectNewStoreIfAsked(_:_:command:)`` says. A missing store is not created here: with
/// `--protect` its new passphrase is read now (before the command's input, in that order on
/// standard input), and ``open()`` creates and protects it once the input has been read
/// and checked. So a failed command leaves no empty store behind.
struct PendingStore {
    /// The store, when it existed at the start.
    let existing: RSAKeyStore?
    private let arguments: ParsedArguments
    private let command: String
    private let newPassphrase: RSASecretBytes?

    init(_ arguments: ParsedArguments, command: String, unlock: Bool) throws {
        self.arguments = arguments
        self.command = command
        if try storeExists(arguments) {
            let store = try openStore(arguments)
            try protectNewStoreIfAsked(store, arguments, command: command)
            if unlock { try unlockIfProtected(store, arguments, command: command) }
            existing = store
            newPassphrase = nil
        } else {
            existing = nil
            newPassphrase =
                arguments.flag("protect")
                ? try Passphrase.readStore(arguments, command: command, path: try storeLocation(arguments), new: true)
                : nil
            if newPassphrase != nil { _ = try kdfParameters(arguments, command: command) }
        }
    }

    /// The store to write: the existing one, else a new one (protected with the passphrase
    /// read at the start, when `--protect` was given).
    func open() throws -> RSAKeyStore {
        if let existing { return existing }
        let store = try openStore(arguments, create: true)
        if let newPassphrase, !(try store.isProtected) {
            try store.protect(passphrase: newPassphrase, parameters: try kdfParameters(arguments, command: command))
        }
        return store
    }
}

/// The `--protect` and `--kdf` options of commands that may make a store's first write.
let protectOptions: [OptionSpec] = [
    .flag(
        "protect",
        "On a new store's first write: protect its secrets with a passphrase (from --store-passin, "
            + "$RSAKIT_STORE_PASSIN, --passin, $RSAKIT_PASSIN or a prompt)."
    ),
    .value("kdf", "COST", "Argon2id cost for --protect: interactive, moderate (default) or sensitive.")
]

/// Unlock a protected, locked store now (before work that would be wasted on a wrong
/// passphrase, such as key generation); nothing for an unprotected store.
func unlockIfProtected(_ store: RSAKeyStore, _ arguments: ParsedArguments, command: String) throws {
    let info = try store.protectionInfo()
    if info.isProtected && !info.isUnlocked { try unlockStore(store, arguments, command: command) }
}
