// A protected store unlocked through a running agent (RSAKeychainAgent): the store key stays
// in the agent, which seals and opens item secrets on request.

import RSAKitCore
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension RSAKeyStore {
    /// Unlock this store through the agent listening at `socketPath`, if one serves this
    /// store, is unlocked, and holds its current key (the key id of the protection record).
    /// From then on every secret is sealed and opened by the agent; the key never enters this
    /// process. If the agent goes away later, the operation that needed it throws
    /// `RSAError.keychainLocked` and the store is locked again, so a caller falls back to
    /// ``unlock(passphrase:)``.
    ///
    /// - Returns: true when unlocked through the agent; false when there is no agent there,
    ///   it serves another store, is locked, or holds another key (nothing changes then), or
    ///   the store is not protected.
    /// - Throws: `RSAError.storeIOError` when the protection record cannot be read.
    public func unlock(agentSocketPath socketPath: String) throws -> Bool {
        guard let record = try withReadLock({ try readProtection() }) else { return false }
        let status: AgentWire.Message
        do {
            status = try AgentWire.request(socketPath, AgentWire.Message(.status, [Array(path.utf8)]))
        } catch {
            return false
        }
        guard status.operation == .ok, status.fields.count == 2,
            status.fields[0].elementsEqual(path.utf8),
            status.fields[1].elementsEqual(record.keyID.utf8)
        else { return false }
        let key = UnlockedStoreKey(keyID: record.keyID, agentSocketPath: socketPath, storePath: path)
        unlocked.withLock { $0 = key }
        return true
    }

    /// Whether this object is unlocked through an agent (rather than by a passphrase).
    public var isUnlockedByAgent: Bool {
        unlocked.withLock { key in
            if case .agent? = key?.backing { return true }
            return false
        }
    }
}

extension RSAKeychainAgent {
    /// The agent socket a client uses: `RSAKIT_AGENT_SOCK` when set and not empty, else
    /// `$XDG_RUNTIME_DIR/rsakit/agent.sock`, else `/tmp/rsakit-UID/agent.sock`.
    /// - Parameter environment: the variables to read (default: this process's).
    public static func defaultSocketPath(environment: [String: String]? = nil) -> String {
        func variable(_ name: String) -> String? {
            let value = environment.map { $0[name] } ?? getenv(name).map { String(cString: $0) }
            return value.flatMap { $0.isEmpty ? nil : $0 }
        }
        if let socket = variable("RSAKIT_AGENT_SOCK") { return socket }
        if let runtime = variable("XDG_RUNTIME_DIR") { return runtime + "/rsakit/agent.sock" }
        return "/tmp/rsakit-\(getuid())/agent.sock"
    }

    /// Whether something accepts connections on the Unix socket at `path` (an agent's socket
    /// or its ssh-agent socket); nothing is sent.
    package static func isListening(at path: String) -> Bool {
        guard let fd = try? AgentWire.connect(path) else { return false }
        close(fd)
        return true
    }

    /// Ask the agent at `socketPath` to drop its key (`lock`) or to end (`stop`).
    /// - Returns: false when no agent listens there.
    public static func send(_ command: RSAKeychainAgentCommand, to socketPath: String) -> Bool {
        let operation: AgentWire.Operation = command == .lock ? .lock : .stop
        guard let reply = try? AgentWire.request(socketPath, AgentWire.Message(operation)) else { return false }
        return reply.operation == .ok
    }

    /// What the agent at `socketPath` serves: its store path and whether it holds a key, nil
    /// when no agent listens there.
    public static func status(at socketPath: String, storePath: String) -> (
        serves: Bool, unlocked: Bool, message: String
    )? {
        guard let reply = try? AgentWire.request(socketPath, AgentWire.Message(.status, [Array(storePath.utf8)])) else {
            return nil
        }
        if reply.operation == .ok { return (true, true, "unlocked") }
        let message = reply.fields.first.map { String(decoding: $0, as: UTF8.self) } ?? "error"
        return (!message.hasPrefix("this agent serves"), false, message)
    }
}

extension RSAKeychainAgent {
    /// Give the agent at `socketPath`, which serves the store at `storePath` (locked or not),
    /// the store key again: it opens it with `passphrase` (Argon2id runs in the agent) and
    /// serves as it did after `start`. The passphrase crosses the socket, which only this
    /// user's processes may use.
    ///
    /// - Returns: false when no agent listens at `socketPath`.
    /// - Throws: `RSAError.wrongPassphrase`; `RSAError.keychainProtection(reason:)` naming the
    ///   agent's answer when it serves another store or cannot take the key.
    public static func unlock(at socketPath: String, storePath: String, passphrase: RSASecretBytes) throws -> Bool {
        var secret = passphrase.bytes
        defer { wipe(&secret) }
        guard
            let reply = try? AgentWire.request(socketPath, AgentWire.Message(.unlock, [Array(storePath.utf8), secret]))
        else {
            return false
        }
        guard reply.operation == .ok else {
            let message = reply.fields.first.map { String(decoding: $0, as: UTF8.self) } ?? "error"
            if message == "wrong passphrase" { throw RSAError.wrongPassphrase }
            throw RSAError.keychainProtection(reason: "the agent at \(socketPath): \(message)")
        }
        return true
    }
}

/// A request to a running agent without a store: drop the key, or end.
public enum RSAKeychainAgentCommand: Sendable {
    /// Drop (zero) the store key; the agent keeps running, locked.
    case lock
    /// Drop the key and end the agent (the socket is removed).
    case stop
}
