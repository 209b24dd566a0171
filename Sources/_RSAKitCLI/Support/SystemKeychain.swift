#if canImport(Glibc)
import Glibc
#endif
import RSAKit

// `--system`: the command asks the system keychain agent instead of reading a store. The
// agent decides by this process's uid and groups (SO_PEERCRED), so what these functions can
// reach is what the rules allow this user, nothing the caller could widen.

/// `--system` on the commands that can use the system keychain.
let systemOption = OptionSpec.flag(
    "system",
    "Use the system keychain through its agent (socket: $RSAKIT_SYSTEM_SOCKET, else /run/rsakit/system.sock): only "
        + "the access groups its rules allow this user."
)

/// The client of the system agent, after refusing --store beside --system (the agent serves
/// the one system store).
func systemKeychainClient(_ arguments: ParsedArguments, command: String) throws -> RSASystemKeychainClient {
    if arguments.value("store") != nil {
        throw UsageError(
            message: "--store does not apply to the system keychain, which its agent serves", command: command)
    }
    return RSASystemKeychainClient()
}

/// The first `--access-group`, which a `--system` request names (at most one).
func systemAccessGroup(_ arguments: ParsedArguments, command: String) throws -> String? {
    let groups = arguments.values("access-group")
    guard groups.count <= 1 else {
        throw UsageError(message: "with --system, give at most one --access-group", command: command)
    }
    if let group = groups.first { try RSAKeyStore.validateAccessGroup(group) }
    return groups.first
}

/// `body`, with an agent that is not there told apart from a refusal.
func askingSystemAgent<T>(_ client: RSASystemKeychainClient, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let RSAError.storeIOError(path, reason) where path == client.socketPath {
        throw CLIFailure(
            "the system keychain at \(terminalSafe(path)): \(terminalSafe(reason)) (is `rsakit agent serve --system` "
                + "running?)",
            .failure)
    }
}

/// `password add|find --system`.
func passwordThroughSystemAgent(_ arguments: ParsedArguments, subcommand: String, command: String) throws {
    let client = try systemKeychainClient(arguments, command: command)
    let group = try systemAccessGroup(arguments, command: command)
    let service = arguments.value("service") ?? "", account = arguments.value("account") ?? ""
    switch subcommand {
    case "add":
        for option in ["update", "label", "comment", "json"] where arguments.givenOptionNames.contains(option) {
            throw UsageError(message: "--\(option) does not apply with --system", command: command)
        }
        let value = try readPasswordValue(allowEmpty: arguments.flag("allow-empty"))
        let added = try askingSystemAgent(client) {
            try client.addGenericPassword(value, service: service, account: account, accessGroup: group)
        }
        try printOutput(
            "added generic password: service: \(terminalSafe(service)), account: \(terminalSafe(account)), access "
                + "group: \(added)\n"
        )
    case "find":
        guard arguments.value("account") != nil, arguments.flag("value") else {
            throw UsageError(message: "with --system, find takes --service, --account and --value", command: command)
        }
        let value = try askingSystemAgent(client) {
            try client.genericPasswordValue(service: service, account: account, accessGroup: group)
        }
        var sink = RSAFileDescriptorSink(fileDescriptor: STDOUT_FILENO)
        var bytes = value.bytes
        defer { wipe(&bytes) }
        try sink.write(bytes)
        try writePasswordValueEnd(&sink)
    default:
        throw UsageError(message: "with --system, password takes add and find", command: command)
    }
}

/// `list --system`: the items of the groups this user may use.
func listThroughSystemAgent(_ arguments: ParsedArguments, command: String) throws {
    let client = try systemKeychainClient(arguments, command: command)
    let lines = try askingSystemAgent(client) { try client.itemLines() }
    guard !lines.isEmpty else { return try printOutput("no items of the system keychain are open to you\n") }
    var text = ""
    for line in lines {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 3 else { continue }
        let suffix = "  [group: \(terminalSafe(fields[1]))]"
        switch fields[0] {
        case "key" where fields.count == 4: text += "\(fields[2]) key \(terminalSafe(fields[3]))\(suffix)\n"
        case "password" where fields.count == 4:
            text += "password \(terminalSafe(fields[2])) / \(terminalSafe(fields[3]))\(suffix)\n"
        default: text += "\(fields[0]) \(terminalSafe(fields[2]))\(suffix)\n"
        }
    }
    try printOutput(text)
}

/// `sign --system --tag T`: the input hashed here, signed by the agent (PKCS#1 v1.5, or PSS
/// with a salt of the digest's length); SHA-1, SHA-2 and SHA-3 hashes.
func signThroughSystemAgent(_ arguments: ParsedArguments, command: String) throws {
    let client = try systemKeychainClient(arguments, command: command)
    guard let tag = arguments.value("tag") else {
        throw UsageError(message: "with --system, sign takes --tag", command: command)
    }
    for option in ["mgf1-hash", "salt-length", "token-pin", "key"] where arguments.givenOptionNames.contains(option) {
        throw UsageError(message: "--\(option) does not apply with --system", command: command)
    }
    let name = arguments.value("hash") ?? "sha256"
    guard let hash = RSAHashAlgorithm(name: name) else {
        throw UsageError(
            message: "with --system, --hash is a SHA-1, SHA-2 or SHA-3 hash, not '\(terminalSafe(name))'",
            command: command)
    }
    let input = try InputFile.open(arguments.value("in"))
    defer { input.close() }
    var hasher = RSAHasher(algorithm: hash)
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let n = read(input.fileDescriptor, &buffer, buffer.count)
        if n < 0 {
            if errno == EINTR { continue }
            throw CLIFailure("cannot read the input: \(String(cString: strerror(errno)))", .failure)
        }
        if n == 0 { break }
        hasher.update(Array(buffer[..<n]))
    }
    let digest = hasher.finalize()
    let signature = try askingSystemAgent(client) {
        try client.signature(
            forDigest: digest, hash: hash, pss: arguments.value("scheme") == "pss", tag: tag,
            accessGroup: try systemAccessGroup(arguments, command: command))
    }
    try writeOutput(signature, to: arguments.value("out"), input: input)
}

/// `decrypt --system --tag T`: one raw block (k bytes, as `openssl pkeyutl -encrypt` writes),
/// PKCS#1 v1.5 or OAEP with one hash for OAEP and MGF1 and an empty label.
func decryptThroughSystemAgent(_ arguments: ParsedArguments, padding: RSAEncryptionPadding, command: String) throws {
    let client = try systemKeychainClient(arguments, command: command)
    guard let tag = arguments.value("tag") else {
        throw UsageError(message: "with --system, decrypt takes --tag", command: command)
    }
    let oaepHash: RSAHashAlgorithm?
    switch padding {
    case .pkcs1v15: oaepHash = nil
    case let .oaep(parameters):
        guard parameters.mgf1Hash == parameters.hash, parameters.label.isEmpty else {
            throw UsageError(
                message: "with --system, OAEP takes one hash for OAEP and MGF1 and no label", command: command)
        }
        oaepHash = parameters.hash
    }
    let input = try InputFile.open(arguments.value("in"))
    defer { input.close() }
    var ciphertext: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while ciphertext.count <= 64 * 1024 {
        let n = read(input.fileDescriptor, &buffer, buffer.count)
        if n < 0 {
            if errno == EINTR { continue }
            throw CLIFailure("cannot read the input: \(String(cString: strerror(errno)))", .failure)
        }
        if n == 0 { break }
        ciphertext += buffer[..<n]
    }
    let plaintext = try askingSystemAgent(client) {
        try client.decrypt(
            ciphertext, tag: tag, oaepHash: oaepHash, accessGroup: try systemAccessGroup(arguments, command: command))
    }
    var bytes = plaintext.bytes
    defer { wipe(&bytes) }
    try writeOutput(bytes, to: arguments.value("out"), input: input, mode: 0o600)
}

/// `rsakit access-group allow|deny|list`: the system keychain's rules (changes: root only).
struct AccessGroupCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "access-group",
        overview: "Allow or deny Unix users and groups an access group of the system keychain, or list the rules.",
        usage: "rsakit access-group allow|deny <GROUP> (--user <USER> | --group <UNIXGROUP>) | list",
        options: [
            .value("user", "USER", "allow, deny: the Unix user the rule is for.").only("allow", "deny"),
            .value("group", "UNIXGROUP", "allow, deny: the Unix group whose members the rule is for.").only(
                "allow", "deny")
        ],
        positionals: ["SUBCOMMAND", "GROUP"],
        subcommands: ["allow", "deny", "list"],
        discussion: """
            The system keychain's agent (rsakit agent serve --system) lets a process use an access
            group only when a rule allows its Unix user, or one of its Unix groups; root may use
            every group. Only root changes the rules (the agent checks the caller's uid, exit 77
            otherwise). allow adds a rule, deny removes one; an access group name that is not valid,
            or a Unix user or group that does not exist, is refused (exit 64) and nothing is stored.
            list prints one rule per line: GROUP user USER, or GROUP group UNIXGROUP.
            The agent's socket is $RSAKIT_SYSTEM_SOCKET, else /run/rsakit/system.sock.
            """,
        passphrases: .none)

    let arguments: ParsedArguments
    let subcommand: String

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        subcommand = try parseSubcommand(arguments, spec: Self.spec)
        if subcommand == "list" {
            guard arguments.positionals.count == 1 else {
                throw UsageError(message: "list takes no access group", command: Self.spec.name)
            }
            return
        }
        guard arguments.positionals.count == 2 else {
            throw UsageError(message: "\(subcommand) takes one access group", command: Self.spec.name)
        }
        guard (arguments.value("user") == nil) != (arguments.value("group") == nil) else {
            throw UsageError(message: "\(subcommand) takes --user or --group (one of them)", command: Self.spec.name)
        }
        try RSAKeyStore.validateAccessGroup(arguments.positionals[1])
    }

    func run() throws {
        let client = try systemKeychainClient(arguments, command: Self.spec.name)
        if subcommand == "list" {
            let rules = try askingSystemAgent(client) { try client.rules() }
            return try printOutput(
                rules.isEmpty
                    ? "no rules: only root uses the system keychain\n"
                    : rules.map { terminalSafe($0) + "\n" }.joined())
        }
        let group = arguments.positionals[1]
        let subject: RSASystemAccessRule.Subject =
            arguments.value("user").map { .user($0) } ?? .group(arguments.value("group")!)
        let rule = RSASystemAccessRule(accessGroup: group, subject: subject)
        try askingSystemAgent(client) { try client.setRule(rule, allow: subcommand == "allow") }
        try printOutput("\(subcommand == "allow" ? "allowed" : "denied"): \(terminalSafe(rule.description))\n")
    }
}
