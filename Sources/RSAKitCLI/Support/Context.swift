#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RSAKit

/// A type-erased byte source, so commands can stack armor and peeking freely.
final class AnySource: RSAByteSource {
    private let readFunction: (Int) throws -> [UInt8]
    private let remainingFunction: () -> Int?

    init<S: RSAByteSource>(_ inner: S) {
        let box = Box(inner)
        readFunction = { try box.value.read(upTo: $0) }
        remainingFunction = { box.value.remainingByteCount }
    }

    private final class Box<S> { var value: S; init(_ value: S) { self.value = value } }

    func read(upTo maximumCount: Int) throws -> [UInt8] { try readFunction(maximumCount) }
    var remainingByteCount: Int? { remainingFunction() }
}

/// Read up to `count` bytes, fewer only at end of input.
func peek<S: RSAByteSource>(_ source: inout S, _ count: Int) throws -> [UInt8] {
    var out: [UInt8] = []
    while out.count < count {
        let piece = try source.read(upTo: count - out.count)
        if piece.isEmpty { break }
        out += piece
    }
    return out
}

/// Open the key store named by --store (else $RSAKIT_STORE, else the XDG default).
func openStore(_ arguments: ParsedArguments) throws -> RSAKeyStore {
    let allowInsecure = arguments.flag("allow-insecure-store")
    let store: RSAKeyStore
    do {
        store = try RSAKeyStore(path: arguments.value("store"), allowInsecurePermissions: allowInsecure)
    } catch let RSAError.insecureStorePermissions(path, mode) {
        throw CLIFailure("unprotected key store: \(path) has mode 0\(String(mode, radix: 8)), which lets group or others read it; run 'chmod go-rwx' on it, or pass --allow-insecure-store", .failure)
    }
    for warning in store.permissionWarnings {
        if case let RSAError.insecureStorePermissions(path, mode) = warning {
            printError("rsakit: warning: unprotected key store: \(path) has mode 0\(String(mode, radix: 8)); continuing because of --allow-insecure-store\n")
        }
    }
    return store
}

/// The public key stored under `tag`: its public item, else the public half of its private
/// item (a pair stored with --private-tag has only the private item under that tag).
func storePublicKey(_ store: RSAKeyStore, tag: String) throws -> RSAPublicKey {
    try store.publicKeyOfAnyItem(tag: tag)
}

/// The private key stored under `tag`, with a clear message when only the public half is there.
/// In a protected store the passphrase is asked for (see ``withUnlockedStore``).
func storePrivateKey(_ store: RSAKeyStore, tag: String, arguments: ParsedArguments, command: String) throws -> RSAPrivateKey {
    do {
        return try withUnlockedStore(store, arguments, command: command) { try store.privateKey(tag: tag) }
    } catch RSAError.keyNotFound {
        if (try? store.item(tag: tag, keyClass: .public)) != nil {
            throw CLIFailure("the store holds only the public key for tag '\(tag)'; this needs the private key", .notFound)
        }
        throw RSAError.keyNotFound(tag: tag)
    }
}

/// Read a key file of any format the formats layer knows, printing its warnings. An
/// encrypted one (PKCS#8 or OpenSSL legacy PEM) is decrypted with the passphrase from
/// `--passin` / `RSAKIT_PASSIN` / a terminal prompt, asked for only when the file is encrypted.
func loadKeyFile(_ path: String, arguments: ParsedArguments? = nil, command: String = "") throws -> RSAKeyFile {
    var bytes = try readWholeFile(path, what: "key file")
    defer { wipe(&bytes) }
    do {
        var passphrase: RSASecretBytes?
        if RSAKeyFile.isEncrypted(bytes), let arguments {
            passphrase = try Passphrase.read(arguments, command: command, prompt: "Passphrase for the key file \(path): ")
        }
        let file = try RSAKeyFile(bytes: bytes, passphrase: passphrase?.bytes)
        for warning in file.warnings { printError("rsakit: warning: \(path): \(warning)\n") }
        return file
    } catch let error as RSAError {
        let status: ExitStatus = { if case .passphraseNeeded = error { return .usage } else { return .dataError } }()
        throw CLIFailure("cannot load key file '\(path)': \(error.description)", status)
    }
}

/// Date as ISO 8601 (UTC, seconds).
func iso8601(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
}

/// Serialise a JSON value with sorted keys, one trailing newline.
func jsonText(_ value: Any) throws -> String {
    let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self) + "\n"
}

/// True when file descriptor 2 is a terminal.
var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
