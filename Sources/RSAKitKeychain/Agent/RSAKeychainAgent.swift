// The keychain agent: holds one protected store's key, unlocked once, and opens or seals item
// secrets for clients of the same user over a Unix socket (AgentWire). The store key never
// leaves the process; clients receive only the plaintexts of the items they ask for, which a
// client with the passphrase could open itself.

import RSAKitCore
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
internal import CRSAKitShims

/// An agent serving one unlocked protected store (the `ssh-agent` pattern), for
/// `rsakit agent start`.
///
/// Rules: the socket is created 0600 inside a folder that is (or is made) 0700 and owned by
/// the user; each connection's peer must have the agent's uid (`SO_PEERCRED`), else it gets an
/// error response and is closed; a frame over ``maximumFrameByteCount`` bytes, malformed, or
/// not complete within 5 s closes that connection only; connections are served concurrently.
/// The key is dropped (zeroed) when the lifetime or the idle time passes, on `lock`, and when
/// the store's protection record changes (`change-passphrase`, `unprotect`, a new `protect`).
/// A locked agent that is still running takes the key again from an `unlock` request with the
/// store's passphrase (``RSAKeychainAgent/unlock(at:storePath:passphrase:)``). A status request
/// is not activity: only opening and sealing secrets put off the idle time. SIGINT, SIGTERM and
/// SIGHUP remove the socket before the agent dies of them.
public final class RSAKeychainAgent: Sendable {
    /// The largest request or response frame, in bytes.
    public static let maximumFrameByteCount = AgentWire.maximumFrameByteCount

    /// The canonical path of the store served.
    public let storePath: String
    /// The socket path.
    public let socketPath: String
    private let protectionPath: String
    let store: RSAKeyStore
    private let deadline: Double?
    private let idleSeconds: Double?
    private struct State {
        var key: UnlockedStoreKey?
        var protectionBytes: [UInt8]
        var lastUse: Double
        var stopping = false
    }
    private let state: PThreadMutex<State>

    /// An agent for `store`, which must be protected and unlocked (with its passphrase).
    ///
    /// - Parameters:
    ///   - store: the unlocked store; its key is copied into the agent.
    ///   - socketPath: where to listen (its folder is created 0700 if missing).
    ///   - lifetime: seconds until the key is dropped, nil for no limit.
    ///   - idle: seconds without a request until the key is dropped, nil for no limit.
    /// - Throws: `RSAError.keychainLocked` when the store is not unlocked, `RSAError.keychainProtection`
    ///   when it is not protected, `RSAError.storeIOError`.
    public init(store: RSAKeyStore, socketPath: String, lifetime: Double? = nil, idle: Double? = nil) throws {
        guard let key = try store.withReadLock({ try store.currentStoreKey() }) else {
            throw RSAError.keychainProtection(reason: "the store is not protected: it needs no agent")
        }
        guard case .local = key.backing else { throw RSAError.keychainLocked }
        storePath = store.path
        self.store = store
        self.socketPath = socketPath
        protectionPath = store.layout.protectionPath
        let bytes = try StoreFileSystem.readFile(protectionPath, maximumByteCount: 64 * 1024)?.bytes ?? []
        let now = RSAKeychainAgent.now()
        deadline = lifetime.map { now + $0 }
        idleSeconds = idle
        state = PThreadMutex(State(key: key, protectionBytes: bytes, lastUse: now))
    }

    /// Listen, then call `ready` (the socket exists and accepts), then serve until
    /// `stop` is asked or the key expires. The socket is removed on return.
    ///
    /// - Throws: `RSAError.storeIOError` naming the socket path when it cannot be created, or
    ///   when another agent already listens there (a stale socket of a dead agent is replaced).
    public func serve(ready: () -> Void = {}) throws {
        try serve(sshSocketPath: nil, ready: ready)
    }

    /// ``serve(ready:)``, and when `sshSocketPath` is given, the ssh-agent protocol
    /// (draft-miller-ssh-agent) on a second socket there, for `SSH_AUTH_SOCK`: it lists the
    /// store's RSA private keys (`ssh-rsa` blobs, the tag as comment; none while locked) and
    /// signs with them (`rsa-sha2-256`, `rsa-sha2-512`; SHA-1 `ssh-rsa` is refused), under the
    /// same rules as the agent's socket (0600 in a 0700 folder, peers of this uid only, frames
    /// of at most 256 KiB). Every other request (adding, removing, locking keys) is answered
    /// SSH_AGENT_FAILURE. Private keys are opened in the agent for one signature each.
    ///
    /// - Throws: as ``serve(ready:)``, for either socket.
    public func serve(sshSocketPath: String?, ready: () -> Void = {}) throws {
        var listeners = [try listen(socketPath)]
        // A terminating signal removes the sockets, as a clean stop does (a stale socket would
        // otherwise stay until the next start replaced it).
        var signalSlots = [rsakit_tempfile_register(socketPath)]
        defer {
            listeners.forEach { close($0) }
            unlink(socketPath)
            if let sshSocketPath { unlink(sshSocketPath) }
            signalSlots.forEach { rsakit_tempfile_unregister($0) }
            state.withLock { $0.key = nil }
        }
        if let sshSocketPath {
            listeners.append(try listen(sshSocketPath))
            signalSlots.append(rsakit_tempfile_register(sshSocketPath))
        }
        ready()
        while true {
            if expireIfDue() { return }
            if state.withLock({ $0.stopping }) { return }
            var descriptors = listeners.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&descriptors, nfds_t(descriptors.count), 250) > 0 else { continue }
            for (index, descriptor) in descriptors.enumerated() where descriptor.revents & Int16(POLLIN) != 0 {
                let client = accept(descriptor.fd, nil, nil)
                guard client >= 0 else { continue }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                let speaksSSH = index == 1
                DispatchQueue.global().async { [self] in
                    defer { close(client) }
                    if speaksSSH { serveSSHConnection(client) } else { serveConnection(client) }
                }
            }
        }
    }

    /// Drop the key now (`rsakit agent lock`).
    public func lock() { state.withLock { $0.key = nil } }

    // MARK: Internals

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Drop the key when the lifetime or idle time has passed; true when the agent should end.
    func expireIfDue() -> Bool {
        let now = Self.now()
        return state.withLock { state in
            if let deadline, now >= deadline { state.key = nil; return true }
            if let idleSeconds, now - state.lastUse >= idleSeconds { state.key = nil; return true }
            return false
        }
    }

    private func listen(_ socketPath: String) throws -> Int32 {
        let folder = String(socketPath[..<(socketPath.lastIndex(of: "/") ?? socketPath.startIndex)])
        if !folder.isEmpty {
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw RSAError.storeIOError(path: folder, reason: "mkdir: \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else {
                throw RSAError.storeIOError(
                    path: folder, reason: "the socket folder is not a folder owned by this user")
            }
            if info.st_mode & 0o077 != 0 { chmod(folder, 0o700) }
        }
        // A socket file left by a dead agent is replaced; a live agent is not. Bound under umask
        // 0177, so that no other user can connect before the chmod.
        return try AgentWire.listen(path: socketPath, mode: 0o600, backlog: 16, bindUmask: 0o177)
    }

    /// Requests on one connection until it closes or misbehaves.
    package func serveConnection(_ fd: Int32) {
        AgentWire.setTimeouts(fd, seconds: AgentWire.readTimeoutSeconds)
        var peer: UInt32 = 0
        guard rsakit_peer_uid(fd, &peer) == 0, peer == getuid() else {
            let refusal = AgentWire.Message(
                .error, [Array("the rsakit agent serves only its own user (uid \(getuid()))".utf8)])
            try? AgentWire.writeAll(fd, refusal.encoded())
            return
        }
        while true {
            guard let request = try? AgentWire.readMessage(fd) else { return }
            var response = respond(to: request)
            var frame = response.encoded()
            for index in response.fields.indices { wipe(&response.fields[index]) }
            defer { wipe(&frame) }
            guard (try? AgentWire.writeAll(fd, frame)) != nil else { return }
            if request.operation == .stop { return }
        }
    }

    private func error(_ message: String) -> AgentWire.Message { AgentWire.Message(.error, [Array(message.utf8)]) }

    private func respond(to request: AgentWire.Message) -> AgentWire.Message {
        var request = request
        defer { for index in request.fields.indices { wipe(&request.fields[index]) } }
        if expireIfDue() { return error("locked: the agent's time is up") }
        switch request.operation {
        case .lock:
            lock()
            return AgentWire.Message(.ok)
        case .stop:
            state.withLock {
                $0.key = nil; $0.stopping = true
            }
            return AgentWire.Message(.ok)
        case .status, .open, .seal, .unlock:
            guard let path = request.fields.first, path.elementsEqual(storePath.utf8) else {
                return error("this agent serves the store at \(storePath)")
            }
            if request.operation == .unlock {
                guard request.fields.count == 2 else { return error("unlock takes a store path and a passphrase") }
                return unlock(passphrase: RSASecretBytes(copying: request.fields[1]))
            }
            guard let key = currentKey(touch: request.operation != .status) else { return error("locked") }
            switch request.operation {
            case .status:
                return AgentWire.Message(.ok, [Array(storePath.utf8), Array(key.keyID.utf8)])
            case .open:
                guard request.fields.count == 3 else {
                    return error("open takes a store path, a sealed secret and associated data")
                }
                guard let opened = try? key.open(request.fields[1], associatedData: request.fields[2]) else {
                    return error("the sealed secret does not open under the store key")
                }
                return AgentWire.Message(.ok, [opened.bytes])
            default:
                guard request.fields.count == 3 else {
                    return error("seal takes a store path, a secret and associated data")
                }
                guard let sealed = try? key.seal(request.fields[1], associatedData: request.fields[2]) else {
                    return error("sealing failed")
                }
                return AgentWire.Message(.ok, [sealed])
            }
        case .ok, .error, .system:
            return error("not a request this agent serves")
        }
    }

    /// Take the store key again with `passphrase` (the store's current protection record),
    /// whether the agent was locked or still holds a key.
    private func unlock(passphrase: RSASecretBytes) -> AgentWire.Message {
        do {
            try store.unlock(passphrase: passphrase)
            let taken = try store.withReadLock { try store.currentStoreKey() }
            // The agent's state is the one place the key is kept, so that lock drops it.
            store.lock()
            guard let key = taken, case .local = key.backing else {
                return error("the store is not protected any more: it needs no agent")
            }
            let bytes = try StoreFileSystem.readFile(protectionPath, maximumByteCount: 64 * 1024)?.bytes ?? []
            let now = Self.now()
            state.withLock { state in
                state.key = key
                state.protectionBytes = bytes
                state.lastUse = now
            }
            return AgentWire.Message(.ok)
        } catch RSAError.wrongPassphrase {
            return error("wrong passphrase")
        } catch {
            return self.error("unlock failed: \(error)")
        }
    }

    /// The key, unless the store's protection record changed since the agent unlocked it
    /// (then the key is dropped for good). `touch`: the request counts as activity for the
    /// idle time.
    func currentKey(touch: Bool) -> UnlockedStoreKey? {
        let bytes = (try? StoreFileSystem.readFile(protectionPath, maximumByteCount: 64 * 1024))??.bytes
        let now = Self.now()
        return state.withLock { state in
            guard let key = state.key else { return nil }
            guard let bytes, bytes == state.protectionBytes else {
                state.key = nil
                return nil
            }
            if touch { state.lastUse = now }
            return key
        }
    }
}
