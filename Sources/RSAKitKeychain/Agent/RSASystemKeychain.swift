// The system keychain: one store owned by a dedicated user (rsakit), 0700, that no service
// reads directly. A system agent running as that user serves it over a socket that anyone may
// connect to, and decides each request by the peer's uid and gid, which the kernel records at
// connect(2) (SO_PEERCRED) and the peer cannot forge. Rules name, per access group, the Unix
// users and Unix groups allowed to use it; root may use every group and alone changes the
// rules. This is the Linux counterpart of Apple's system keychain: a boundary the kernel keeps
// (another uid cannot read the agent's memory or the store's files), not a filter inside the
// caller.
//
// Requests are AgentWire frames of operation `system`: field 0 is the verb, then its
// arguments. Answers are `ok` with the result fields, or `error` with a message and a code
// (denied, notfound, duplicate, usage, data, failure) that the client maps to RSAError.

import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
internal import CRSAKitShims

/// One rule of the system keychain: the access group ``accessGroup`` may be used by the Unix
/// user or the members of the Unix group ``subject`` names.
public struct RSASystemAccessRule: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Who a rule allows.
    public enum Subject: Sendable, Hashable, Codable {
        /// One Unix user, by name.
        case user(String)
        /// Every member of a Unix group (primary or supplementary), by name.
        case group(String)
    }

    /// The access group allowed.
    public let accessGroup: String
    /// The user or group it is allowed to.
    public let subject: Subject

    /// A rule; the names are checked when the agent stores it.
    public init(accessGroup: String, subject: Subject) {
        self.accessGroup = accessGroup
        self.subject = subject
    }

    /// "G user U" or "G group UG", as `rsakit access-group list` prints it.
    public var description: String {
        switch subject {
        case let .user(name): return "\(accessGroup) user \(name)"
        case let .group(name): return "\(accessGroup) group \(name)"
        }
    }
}

/// Where the system keychain lives by default, and its rules file.
public enum RSASystemKeychain {
    /// The system store: `$RSAKIT_SYSTEM_STORE` when set and not empty, else
    /// `/var/lib/rsakit/system`.
    public static func defaultStorePath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["RSAKIT_SYSTEM_STORE"], !path.isEmpty { return path }
        return "/var/lib/rsakit/system"
    }

    /// The system agent's socket: `$RSAKIT_SYSTEM_SOCKET` when set and not empty, else
    /// `/run/rsakit/system.sock`.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String
    {
        if let path = environment["RSAKIT_SYSTEM_SOCKET"], !path.isEmpty { return path }
        return "/run/rsakit/system.sock"
    }

    /// The rules file inside the system store.
    static let rulesFileName = "access-rules"

    struct RulesFile: Codable {
        var format = 1
        var rules: [RSASystemAccessRule]
    }
}

extension RSAKeyStore {
    /// The system keychain's rules kept in this store (none when it has no rules file).
    ///
    /// - Throws: `RSAError.storeIOError` for a rules file that cannot be read or parsed.
    package func systemAccessRules() throws -> [RSASystemAccessRule] {
        let path = layout.absolute(RSASystemKeychain.rulesFileName)
        return try withReadLock {
            guard let file = try StoreFileSystem.readFile(path, maximumByteCount: 1024 * 1024) else { return [] }
            do {
                return try JSONDecoder().decode(RSASystemKeychain.RulesFile.self, from: Data(file.bytes)).rules
            } catch {
                throw RSAError.storeIOError(path: path, reason: "the access rules are not readable: \(error)")
            }
        }
    }

    /// Replace the rules, atomically (journaled like every write).
    package func setSystemAccessRules(_ rules: [RSASystemAccessRule]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let bytes = try Array(encoder.encode(RSASystemKeychain.RulesFile(rules: rules)))
        try withWriteTransaction { tx in
            try tx.stageFile(RSASystemKeychain.rulesFileName, contents: bytes)
        }
    }
}

/// The system keychain agent (`rsakit agent serve --system`): serves one store, owned by the
/// user it runs as, to every local user, deciding each request by the peer's credentials
/// against the rules (``RSASystemAccessRule``).
///
/// - A peer sees, reads, uses and adds to only the access groups a rule allows its uid or one
///   of its groups (its primary gid from `SO_PEERCRED`, its supplementary groups from the
///   group database); root (uid 0) may use every group, and only root may change the rules.
/// - A peer allowed no group is refused (``RSAError/storeAccessDenied(path:reason:)``); an
///   item of a group it is not allowed is not found for it, as on Apple platforms. An add
///   names a group it is allowed, or goes into its only group: a group no rule names is
///   refused, never created.
/// - Private keys never leave the agent: it signs and decrypts for the peer.
/// - The socket is mode 0666 in a folder of the agent's user (0755): every local user may
///   connect, and the credentials decide. Each request is one frame of at most 256 KiB,
///   answered, then the connection closes; a slow or malformed frame closes it.
public final class RSASystemKeychainAgent: Sendable {
    /// The system store's folder.
    public let storePath: String
    /// The socket path.
    public let socketPath: String
    private let stopping = PThreadMutex(false)

    /// An agent for the store at `storePath`, which must exist and belong to this process's
    /// user (the store itself refuses group or other access to its files).
    ///
    /// - Throws: `RSAError.storeNotFound` when there is no store; `RSAError.storeIOError`
    ///   when the store folder belongs to another user; every error of opening the store.
    public init(storePath: String, socketPath: String) throws {
        let store = try RSAKeyStore(path: storePath, createIfMissing: false)
        var st = stat()
        guard lstat(store.path, &st) == 0, st.st_uid == geteuid() else {
            throw RSAError.storeIOError(
                path: store.path,
                reason: "the system store must belong to the user the agent runs as (uid \(geteuid()))")
        }
        self.storePath = store.path
        self.socketPath = socketPath
    }

    /// Listen, call `ready`, and serve until ``stop()`` or until `shouldStop` (asked every
    /// quarter of a second: a signal handler's flag) returns true. The socket is removed on
    /// return.
    ///
    /// - Throws: `RSAError.storeIOError` naming the socket when it cannot be made, or when
    ///   another agent listens there.
    public func serve(ready: () -> Void = {}, shouldStop: () -> Bool = { false }) throws {
        let listener = try listen()
        let slot = rsakit_tempfile_register(socketPath)
        defer {
            close(listener)
            unlink(socketPath)
            rsakit_tempfile_unregister(slot)
        }
        ready()
        while !stopping.withLock({ $0 }) && !shouldStop() {
            var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 250) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            DispatchQueue.global().async { [self] in
                defer { close(client) }
                serveConnection(client)
            }
        }
    }

    /// End ``serve(ready:shouldStop:)`` within a quarter of a second.
    public func stop() { stopping.withLock { $0 = true } }

    private func listen() throws -> Int32 {
        let folder = StoreFileSystem.parent(of: socketPath)
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw RSAError.storeIOError(path: folder, reason: "mkdir: \(String(cString: strerror(errno)))")
        }
        // Every local user may connect; SO_PEERCRED decides what each may do.
        return try AgentWire.listen(path: socketPath, mode: 0o666, backlog: 64)
    }

    // MARK: Requests

    /// A refusal or failure sent back as `error(message, code)`.
    struct Refusal: Error {
        let code: String
        let message: String
        static func denied(_ message: String) -> Refusal { Refusal(code: "denied", message: message) }
        static func usage(_ message: String) -> Refusal { Refusal(code: "usage", message: message) }
    }

    /// Who is asking: the kernel's record of the peer.
    struct Peer {
        let uid: uid_t
        let gid: gid_t
        var userName: String { StoreSharing.userName(uid) }
        /// The names of the peer's groups: its primary one and its supplementary ones.
        var groupNames: Set<String> {
            var names: Set<String> = [StoreSharing.groupName(gid)]
            let name = userName
            guard StoreSharing.userIDs(named: name)?.uid == uid else { return names }
            var count: Int32 = 64
            var groups = [gid_t](repeating: 0, count: Int(count))
            if getgrouplist(name, gid, &groups, &count) < 0 {
                groups = [gid_t](repeating: 0, count: Int(count))
                _ = getgrouplist(name, gid, &groups, &count)
            }
            for group in groups.prefix(Int(max(count, 0))) { names.insert(StoreSharing.groupName(group)) }
            return names
        }
    }

    package func serveConnection(_ fd: Int32) {
        AgentWire.setTimeouts(fd, seconds: AgentWire.readTimeoutSeconds)
        var uid: UInt32 = 0, gid: UInt32 = 0
        guard rsakit_peer_credentials(fd, &uid, &gid) == 0 else { return }
        guard var request = try? AgentWire.readMessage(fd) else { return }
        defer { for index in request.fields.indices { wipe(&request.fields[index]) } }
        var answer: AgentWire.Message
        do {
            guard request.operation == .system, let verb = request.fields.first else {
                throw Refusal.usage("not a system keychain request")
            }
            answer = AgentWire.Message(
                .ok,
                try respond(
                    String(decoding: verb, as: UTF8.self),
                    Array(request.fields.dropFirst()), peer: Peer(uid: uid, gid: gid)))
        } catch let refusal as Refusal {
            answer = AgentWire.Message(.error, [Array(refusal.message.utf8), Array(refusal.code.utf8)])
        } catch let error as RSAError {
            answer = AgentWire.Message(.error, [Array(error.description.utf8), Array(Self.code(for: error).utf8)])
        } catch {
            answer = AgentWire.Message(.error, [Array("\(error)".utf8), Array("failure".utf8)])
        }
        var frame = answer.encoded()
        for index in answer.fields.indices { wipe(&answer.fields[index]) }
        defer { wipe(&frame) }
        try? AgentWire.writeAll(fd, frame)
    }

    static func code(for error: RSAError) -> String {
        switch error {
        case .itemNotFound: return "notfound"
        case .duplicateItem: return "duplicate"
        case .accessGroupNotAllowed, .storeAccessDenied: return "denied"
        case .invalidAttribute, .invalidTag, .invalidLabel, .keySizeUnsupported, .keyTooSmallForPadding,
            .saltLengthInvalid, .keyRestricted, .digestLengthMismatch:
            return "usage"
        case .decryptionFailed, .ciphertextLengthInvalid: return "data"
        default: return "failure"
        }
    }

    /// The access groups `peer` may use, sorted; nil for root (every group).
    func allowedGroups(_ peer: Peer, rules: [RSASystemAccessRule]) -> [String]? {
        if peer.uid == 0 { return nil }
        let user = peer.userName
        let groups = peer.groupNames
        var allowed = Set<String>()
        for rule in rules {
            switch rule.subject {
            case let .user(name) where name == user: allowed.insert(rule.accessGroup)
            case let .group(name) where groups.contains(name): allowed.insert(rule.accessGroup)
            default: break
            }
        }
        return allowed.sorted()
    }

    /// The store opened for `peer`: seeing only `first` when it is given (and allowed), which
    /// is then where new items go; else every group the peer is allowed.
    private func store(for peer: Peer, first: String? = nil) throws -> RSAKeyStore {
        let rules = try RSAKeyStore(path: storePath, createIfMissing: false).systemAccessRules()
        guard var groups = allowedGroups(peer, rules: rules) else {
            guard let first else { return try RSAKeyStore(path: storePath, createIfMissing: false) }
            try RSAKeyStore.validateAccessGroup(first)
            return try RSAKeyStore(path: storePath, accessGroups: [first], createIfMissing: false)
        }
        guard !groups.isEmpty else {
            throw Refusal.denied(
                "user \(peer.userName) (uid \(peer.uid)) is allowed no access group of the system keychain")
        }
        if let first {
            guard groups.contains(first) else {
                throw Refusal.denied(
                    "user \(peer.userName) is not allowed access group \"\(first)\" "
                        + "(allowed: \(groups.map { "\"\($0)\"" }.joined(separator: ", ")))")
            }
            groups = [first]
        }
        return try RSAKeyStore(path: storePath, accessGroups: groups, createIfMissing: false)
    }

    private static func text(_ field: [UInt8]) -> String { String(decoding: field, as: UTF8.self) }

    private func respond(_ verb: String, _ fields: [[UInt8]], peer: Peer) throws -> [[UInt8]] {
        func arguments(_ count: Int) throws {
            guard fields.count == count else { throw Refusal.usage("\(verb) takes \(count) arguments") }
        }
        func group(_ field: [UInt8]) -> String? { field.isEmpty ? nil : Self.text(field) }
        switch verb {
        case "password-get":
            try arguments(3)
            let store = try store(for: peer, first: group(fields[2]))
            let value = try store.genericPasswordValue(service: Self.text(fields[0]), account: Self.text(fields[1]))
            return [value.bytes]
        case "password-add":
            try arguments(4)
            let store = try store(for: peer, first: try addGroup(group(fields[3]), peer: peer))
            let attributes = try store.addGenericPassword(
                RSASecretBytes(copying: fields[2]),
                service: Self.text(fields[0]), account: Self.text(fields[1]))
            return [Array(attributes.accessGroup.utf8)]
        case "sign":
            // tag, hash name, scheme (pkcs1 | pss), digest, group
            try arguments(5)
            guard let hash = RSAHashAlgorithm(name: Self.text(fields[1])) else { throw Refusal.usage("unknown hash") }
            let padding: RSASignaturePadding
            switch Self.text(fields[2]) {
            case "pkcs1": padding = .pkcs1v15
            case "pss": padding = .pss(saltLength: .digestLength)
            default: throw Refusal.usage("unknown signature scheme")
            }
            let key = try store(for: peer, first: group(fields[4])).privateKey(tag: Self.text(fields[0]))
            return [try key.signature(forDigest: fields[3], hash: hash, padding: padding)]
        case "decrypt":
            // tag, padding (pkcs1 | oaep-HASH), ciphertext, group
            try arguments(4)
            let padding: RSAEncryptionPadding
            let name = Self.text(fields[1])
            if name == "pkcs1" {
                padding = .pkcs1v15
            } else if name.hasPrefix("oaep-"), let hash = RSAHashAlgorithm(name: String(name.dropFirst(5))) {
                padding = .oaep(RSAOAEPParameters(hash: hash))
            } else {
                throw Refusal.usage("unknown encryption padding")
            }
            let key = try store(for: peer, first: group(fields[3])).privateKey(tag: Self.text(fields[0]))
            return [try key.decrypt(fields[2], padding: padding)]
        case "list":
            try arguments(0)
            let listing = try store(for: peer).allItems()
            var lines: [[UInt8]] = []
            for key in listing.keys {
                lines.append(Array("key\t\(key.accessGroup)\t\(key.keyClass.rawValue)\t\(key.applicationTag)".utf8))
            }
            for password in listing.passwords {
                lines.append(Array("password\t\(password.accessGroup)\t\(password.service)\t\(password.account)".utf8))
            }
            for certificate in listing.certificates {
                lines.append(Array("certificate\t\(certificate.accessGroup)\t\(certificate.subject)".utf8))
            }
            return lines
        case "objects":
            // What a PKCS#11 token or a TLS client needs: per key or certificate six fields,
            // kind ("public", "private", "certificate"), group, tag (empty for a
            // certificate), label, DER (SubjectPublicKeyInfo of the key, or of a private
            // key's public half; the certificate). Never a private key's parts.
            try arguments(0)
            let snapshot = try store(for: peer).snapshot()
            var fields: [[UInt8]] = []
            for key in snapshot.keys {
                guard let publicKey = snapshot.publicKeys[key.itemID] else { continue }
                fields += [
                    Array(key.keyClass.rawValue.utf8), Array(key.accessGroup.utf8), Array(key.applicationTag.utf8),
                    Array((key.label ?? "").utf8), publicKey.derRepresentation
                ]
            }
            for stored in snapshot.certificates {
                fields += [
                    Array("certificate".utf8), Array(stored.attributes.accessGroup.utf8), [],
                    Array(stored.attributes.label.utf8), stored.certificate.derRepresentation
                ]
            }
            return fields
        case "rules":
            try arguments(0)
            let rules = try RSAKeyStore(path: storePath, createIfMissing: false).systemAccessRules()
            // Root reads every rule; another user the rules of the groups it may use.
            guard let allowed = allowedGroups(peer, rules: rules) else {
                return rules.map { Array($0.description.utf8) }
            }
            guard !allowed.isEmpty else {
                throw Refusal.denied(
                    "user \(peer.userName) (uid \(peer.uid)) is allowed no access group of the system keychain")
            }
            return rules.filter { allowed.contains($0.accessGroup) }.map { Array($0.description.utf8) }
        case "allow", "deny":
            // access group, "user" | "group", name
            try arguments(3)
            guard peer.uid == 0 else {
                throw Refusal.denied(
                    "only root may change the system keychain's rules (you are \(peer.userName), uid \(peer.uid))")
            }
            let accessGroup = Self.text(fields[0]), name = Self.text(fields[2])
            try RSAKeyStore.validateAccessGroup(accessGroup)
            let subject: RSASystemAccessRule.Subject
            switch Self.text(fields[1]) {
            case "user":
                guard StoreSharing.userIDs(named: name) != nil else {
                    throw Refusal.usage("no Unix user is named \"\(name)\"")
                }
                subject = .user(name)
            case "group":
                guard StoreSharing.groupID(named: name) != nil else {
                    throw Refusal.usage("no Unix group is named \"\(name)\"")
                }
                subject = .group(name)
            default:
                throw Refusal.usage("a rule names a user or a group")
            }
            let store = try RSAKeyStore(path: storePath, createIfMissing: false)
            var rules = try store.systemAccessRules()
            let rule = RSASystemAccessRule(accessGroup: accessGroup, subject: subject)
            if verb == "allow" {
                if !rules.contains(rule) { rules.append(rule) }
            } else {
                guard rules.contains(rule) else {
                    throw Refusal(code: "notfound", message: "no rule \"\(rule)\" to remove")
                }
                rules.removeAll { $0 == rule }
            }
            try store.setSystemAccessRules(rules)
            return []
        default:
            throw Refusal.usage("unknown request \"\(verb)\"")
        }
    }

    /// The group an add goes into: the one named, else the peer's only group (root and peers
    /// of several groups must name one). The name must be a valid group name.
    private func addGroup(_ named: String?, peer: Peer) throws -> String {
        if let named {
            try RSAKeyStore.validateAccessGroup(named)
            return named
        }
        let rules = try RSAKeyStore(path: storePath, createIfMissing: false).systemAccessRules()
        func allowedCount(_ peer: Peer) -> String {
            allowedGroups(peer, rules: rules).map { String($0.count) } ?? "all"
        }
        guard let groups = allowedGroups(peer, rules: rules), groups.count == 1 else {
            throw Refusal.usage("name the access group to add to: the caller may use \(allowedCount(peer)) groups")
        }
        return groups[0]
    }
}
