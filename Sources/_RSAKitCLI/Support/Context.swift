#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

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

/// The store folder named by --store, else $RSAKIT_STORE, else the XDG default.
func storeLocation(_ arguments: ParsedArguments) throws -> String {
    try arguments.value("store") ?? RSAKeyStore.defaultLocation()
}

/// Whether a key store exists at the location `arguments` name (its VERSION file is there).
func storeExists(_ arguments: ParsedArguments) throws -> Bool {
    var info = stat()
    return stat(try storeLocation(arguments) + "/VERSION", &info) == 0
}

/// `--access-group G`, on the commands that add, find, list, show, export and delete items:
/// the store is opened with these groups (the first is where new items go) and sees only them.
let accessGroupOption = OptionSpec.repeated(
    "access-group", "GROUP",
    "Access group (repeatable): see and change only items of these groups; new items go into the first. Default: "
        + "every group, new items into \"default\"."
)

/// "  [group: G]" after a listed item of a group other than the default one (group names are
/// letters, digits, '-', '_' and '.', so they need no escaping).
func groupSuffix(_ group: String) -> String {
    group == RSAKeyStore.defaultAccessGroup ? "" : "  [group: \(group)]"
}

/// Open the key store named by --store (else $RSAKIT_STORE, else the XDG default).
///
/// - Parameter create: true only for a command that adds an item, called once its input has
///   been read and checked; every other command opens with false, and a store that does
///   not exist is then reported (exit 66), never created.
func openStore(_ arguments: ParsedArguments, create: Bool = false) throws -> RSAKeyStore {
    let allowInsecure = arguments.flag("allow-insecure-store")
    let location = try storeLocation(arguments)
    let store: RSAKeyStore
    do {
        let groups = arguments.values("access-group")
        if groups.isEmpty {
            store = try RSAKeyStore(path: location, createIfMissing: create, allowInsecurePermissions: allowInsecure)
        } else {
            store = try RSAKeyStore(
                path: location, accessGroups: groups, createIfMissing: create,
                allowInsecurePermissions: allowInsecure)
        }
    } catch RSAError.storeNotFound {
        throw CLIFailure(
            "no key store at \(terminalSafe(location)): it does not exist (genpair or import creates it; --store or "
                + "RSAKIT_STORE choose another)",
            .notFound)
    } catch RSAError.insecureStorePermissions(let firstPath, let firstMode) {
        // Name every offending path at once, with the one chmod that fixes them all.
        var findings = [(firstPath, firstMode)]
        if let all = try? RSAKeyStore(path: location, allowInsecurePermissions: true) {
            let listed = all.permissionWarnings.compactMap { warning -> (String, UInt32)? in
                if case let RSAError.insecureStorePermissions(path, mode) = warning { return (path, mode) }
                return nil
            }
            if !listed.isEmpty { findings = listed }
        }
        let list = findings.map { "\(terminalSafe($0.0)) (mode 0\(String($0.1, radix: 8)))" }.joined(separator: ", ")
        let command = "chmod go-rwx " + findings.map { shellQuoted($0.0) }.joined(separator: " ")
        let subject = findings.count == 1 ? "this path lets" : "these \(findings.count) paths let"
        throw CLIFailure(
            "unprotected key store: \(subject) group or others read it: \(list); run '\(terminalSafe(command))', or "
                + "pass --allow-insecure-store",
            .failure)
    }
    for warning in store.permissionWarnings {
        if case let RSAError.insecureStorePermissions(path, mode) = warning {
            printWarning(
                "unprotected key store: \(terminalSafe(path)) has mode 0\(String(mode, radix: 8)); continuing "
                    + "because of --allow-insecure-store"
            )
        } else if case RSAError.insecureSharedStore = warning {
            printWarning(terminalSafe(warning.description) + "; continuing because of --allow-insecure-store")
        }
    }
    return store
}

/// "no key with tag "x"", with the nearest stored tags when one is a likely slip.
func tagNotFound(_ store: RSAKeyStore, tag: String) -> CLIFailure {
    let tags = (try? store.allKeyItems().items.map(\.applicationTag)) ?? []
    return CLIFailure("no key with tag \"\(terminalSafe(tag))\"" + didYouMean(tag, tags, show: terminalSafe), .notFound)
}

/// The public key stored under `tag`: its public item, else the public half of its private
/// item (a pair stored with --private-tag has only the private item under that tag).
func storePublicKey(_ store: RSAKeyStore, tag: String) throws -> RSAPublicKey {
    do {
        return try store.publicKeyOfAnyItem(tag: tag)
    } catch RSAError.itemNotFound {
        throw tagNotFound(store, tag: tag)
    }
}

/// The private key stored under `tag`, with a clear message when only the public half is
/// there (naming the private tag of the pair when it is stored under another tag).
/// In a protected store the passphrase is asked for (see ``withUnlockedStore``).
func storePrivateKey(_ store: RSAKeyStore, tag: String, arguments: ParsedArguments, command: String) throws
    -> RSAPrivateKey
{
    do {
        return try withUnlockedStore(store, arguments, command: command) { try store.privateKey(tag: tag) }
    } catch let RSAError.itemNotFound(query) where query.itemClass == .key {
        if let publicItem = try? store.keyItem(tag: tag, keyClass: .public) {
            let shown = terminalSafe(tag)
            if let privateItem = (try? store.keyItems(fingerprint: publicItem.fingerprint))?.first(where: {
                $0.keyClass == .private
            }) {
                let other = terminalSafe(privateItem.applicationTag)
                throw CLIFailure(
                    "the store holds only the public key for tag '\(shown)'; its private key is stored under tag "
                        + "'\(other)' (use --tag \(shellQuoted(other)))",
                    .notFound)
            }
            throw CLIFailure(
                "the store holds only the public key for tag '\(shown)'; this needs the private key", .notFound)
        }
        throw tagNotFound(store, tag: tag)
    }
}

/// Read a key file of any format the formats layer knows, printing its warnings. An
/// encrypted one (PKCS#8 or OpenSSL legacy PEM) is decrypted with the passphrase from
/// `--passin` / `RSAKIT_PASSIN` / a terminal prompt, asked for only when the file is encrypted.
func loadKeyFile(_ path: String, arguments: ParsedArguments? = nil, command: String = "") throws -> RSAKeyFile {
    var bytes = try readWholeFile(path, what: "key file")
    defer { wipe(&bytes) }
    return try parseKeyFile(bytes, name: path, arguments: arguments, command: command)
}

/// Parse key bytes (a file's or standard input's), printing their warnings; an encrypted
/// key is decrypted as ``loadKeyFile(_:arguments:command:)`` says.
func parseKeyFile(_ bytes: [UInt8], name path: String, arguments: ParsedArguments? = nil, command: String = "") throws
    -> RSAKeyFile
{
    do {
        let file: RSAKeyFile
        do {
            file = try RSAKeyFile(bytes: bytes, passphrase: nil)
        } catch let RSAError.passphraseNeeded(what) where arguments != nil {
            // Asked for only now that the file is known to be encrypted; the message names
            // the format when no passphrase can be had.
            let passphrase: RSASecretBytes
            do {
                passphrase = try Passphrase.read(
                    arguments!, command: command, prompt: "Passphrase for the key file \(path): ")
            } catch let failure as CLIFailure where failure.status == .usage {
                // A source that gave nothing (an unset variable) keeps its own reason; with no
                // source and no terminal, say how to give one.
                let reason =
                    Passphrase.hasSource(arguments!)
                    ? failure.message : "give its passphrase with --passin SPEC or RSAKIT_PASSIN"
                throw CLIFailure("key file '\(path)' is encrypted (\(what)); \(reason)", .usage)
            }
            file = try RSAKeyFile(bytes: bytes, passphrase: passphrase.bytes)
        }
        for warning in file.warnings { printWarning("\(path): \(warning)") }
        return file
    } catch let error as RSAError {
        let status: ExitStatus = { if case .passphraseNeeded = error { return .usage } else { return .dataError } }()
        throw CLIFailure("cannot load key file '\(path)': \(CLIFailure.message(for: error))", status)
    }
}

/// A date as RFC 3339 in UTC with milliseconds ("2025-01-31T12:00:00.000Z"), the form the
/// store's item files use.
func rfc3339(_ date: Date) -> String {
    let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
    let millis = Int(milliseconds - Int64(seconds) * 1000)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    return pad(Int(parts.tm_year) + 1900, 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-" + pad(Int(parts.tm_mday), 2)
        + "T" + pad(Int(parts.tm_hour), 2) + ":" + pad(Int(parts.tm_min), 2) + ":" + pad(Int(parts.tm_sec), 2)
        + "." + pad(millis, 3) + "Z"
}

/// A date as RFC 3339 in UTC to the whole second ("2025-01-31T12:00:00Z"), for text meant
/// for people (certificate validity, trust reasons); JSON and item files use ``rfc3339(_:)``.
func iso8601(_ date: Date) -> String {
    let full = rfc3339(date)
    return String(full.prefix(19)) + "Z"
}

/// Parse an RFC 3339 date-time ("2020-06-15T12:00:00Z", "2020-06-15T14:00:00.5+02:00"; `T`/`t`,
/// `Z`/`z` or a `+HH:MM`/`-HH:MM` offset, optional fractional seconds); nil for anything else,
/// including out-of-range fields. RFC 3339 §5.6.
func parseRFC3339(_ text: String) -> Date? {
    let c = Array(text.utf8)
    guard c.count >= 20, c[4] == 0x2D, c[7] == 0x2D, c[10] == 0x54 || c[10] == 0x74,
        c[13] == 0x3A, c[16] == 0x3A
    else { return nil }
    func number(_ range: Range<Int>) -> Int? {
        var value = 0
        for digit in c[range] {
            guard (0x30...0x39).contains(digit) else { return nil }
            value = value * 10 + Int(digit - 0x30)
        }
        return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
        let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
        (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
    else { return nil }
    var index = 19
    var fraction = 0.0
    if c[index] == 0x2E {
        index += 1
        let start = index
        var scale = 0.1
        while index < c.count, (0x30...0x39).contains(c[index]) {
            fraction += Double(c[index] - 0x30) * scale
            scale /= 10
            index += 1
        }
        guard index > start else { return nil }
    }
    guard index < c.count else { return nil }
    var offset = 0
    if c[index] == 0x5A || c[index] == 0x7A {
        guard index + 1 == c.count else { return nil }
    } else {
        guard index + 6 == c.count, c[index] == 0x2B || c[index] == 0x2D, c[index + 3] == 0x3A,
            let hours = number(index + 1..<index + 3), let minutes = number(index + 4..<index + 6),
            hours < 24, minutes < 60
        else { return nil }
        offset = (hours * 60 + minutes) * 60 * (c[index] == 0x2B ? 1 : -1)
    }
    var parts = tm()
    parts.tm_year = Int32(year - 1900)
    parts.tm_mon = Int32(month - 1)
    parts.tm_mday = Int32(day)
    parts.tm_hour = Int32(hour)
    parts.tm_min = Int32(minute)
    parts.tm_sec = Int32(second)
    var seconds = timegm(&parts)
    // timegm normalises a day past the month's end (2021-02-30); the round trip rejects it.
    var back = tm()
    gmtime_r(&seconds, &back)
    guard Int(back.tm_mday) == day, Int(back.tm_mon) == month - 1 else { return nil }
    return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
}

/// Serialise a JSON value with sorted keys, one trailing newline; an empty array is "[]".
func jsonText<Value: Encodable>(_ value: Value) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let text = String(decoding: try encoder.encode(value), as: UTF8.self)
    return (text.filter { !$0.isWhitespace } == "[]" ? "[]" : text) + "\n"
}

/// True when file descriptor 2 is a terminal.
var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
