import RSAKit

// Protected stores in the CLI: the passphrase is asked for only when a secret is needed
// (the library throws RSAError.keychainLocked), and `--protect` on a new store's first write.

/// Run `body`; if the store is protected and locked, read the passphrase (`--passin`,
/// `RSAKIT_PASSIN`, a prompt), unlock and run `body` again.
///
/// - Throws: what `body` throws; `RSAError.wrongPassphrase` (exit 65).
func withUnlockedStore<T>(_ store: RSAKeyStore, _ arguments: ParsedArguments, command: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch RSAError.keychainLocked {
        try unlockStore(store, arguments, command: command)
        return try body()
    }
}

/// Unlock a protected store with the passphrase from `--passin` / `RSAKIT_PASSIN` / the terminal.
func unlockStore(_ store: RSAKeyStore, _ arguments: ParsedArguments, command: String) throws {
    let passphrase = try Passphrase.read(arguments, command: command, prompt: "Passphrase for the rsakit store \(store.path): ")
    try store.unlock(passphrase: passphrase)
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
    let listing = try store.allKeychainItems()
    guard listing.keys.isEmpty, listing.passwords.isEmpty, listing.problems.isEmpty else {
        throw CLIFailure("--protect applies to a new store's first write; this store already holds items: run 'rsakit store protect'", .usage)
    }
    let passphrase = try Passphrase.read(
        arguments, command: command, prompt: "New passphrase for the rsakit store \(store.path): ", confirm: true)
    try store.protect(passphrase: passphrase, parameters: try kdfParameters(arguments, command: command))
}

/// The `--protect` and `--kdf` options of commands that may make a store's first write.
let protectOptions: [OptionSpec] = [
    .flag("protect", "On a new store's first write: protect its secrets with a passphrase (from --passin, $RSAKIT_PASSIN or a prompt)."),
    .value("kdf", "COST", "Argon2id cost for --protect: interactive, moderate (default) or sensitive."),
]

/// Unlock a protected, locked store now (before work that would be wasted on a wrong
/// passphrase, such as key generation); nothing for an unprotected store.
func unlockIfProtected(_ store: RSAKeyStore, _ arguments: ParsedArguments, command: String) throws {
    let info = try store.protectionInfo()
    if info.isProtected && !info.isUnlocked { try unlockStore(store, arguments, command: command) }
}
