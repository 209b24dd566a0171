// The agent's socket protocol: one request, one response, each a frame
//
//   frame   = length (4 bytes, big-endian, at most maximumFrameByteCount) || payload
//   payload = version (1 byte, 1) || operation (1 byte) || field*
//   field   = length (4 bytes, big-endian) || bytes
//
// Requests: status(store path), open(store path, sealed, associated data), seal(store path,
// secret, associated data), lock(), stop(). Responses: ok(field*) or error(message). A frame
// that is too long, malformed, or not complete within the read timeout closes that connection.

import RSAKitCore
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

package enum AgentWire {
    static let version: UInt8 = 1
    /// The largest frame either side accepts: an item file is at most 64 KiB.
    static let maximumFrameByteCount = 256 * 1024
    /// How long a client may take to send a whole frame to the agent, in seconds.
    static let readTimeoutSeconds = 5
    /// How long a client waits for the agent's answer, in seconds: an agent that is stopped
    /// (SIGSTOP) or hung costs a client at most this before it falls back to the passphrase.
    /// Every operation but `unlock` is a lookup or a seal in memory (microseconds).
    static let answerTimeoutSeconds = 1
    /// The same for `unlock`, which runs Argon2id in the agent at the store's cost (seconds at
    /// the sensitive cost on a slow machine).
    static let unlockAnswerTimeoutSeconds = 120

    package enum Operation: UInt8 {
        case status = 1, open = 2, seal = 3, lock = 4, stop = 5, unlock = 6
        /// A request to the system keychain agent: field 0 names the verb (RSASystemKeychain.swift).
        case system = 7
        case ok = 0x80, error = 0x81
    }

    package struct Message {
        package var operation: Operation
        package var fields: [[UInt8]]

        package func encoded() -> [UInt8] {
            var payload: [UInt8] = [AgentWire.version, operation.rawValue]
            for field in fields { payload += AgentWire.bigEndian(field.count) + field }
            return AgentWire.bigEndian(payload.count) + payload
        }

        /// A payload (without its length).
        /// - Throws: `AgentWire.Failure` for another version, an unknown operation or bad field lengths.
        package init(payload: [UInt8]) throws {
            guard payload.count >= 2, payload[0] == AgentWire.version else {
                throw Failure("unsupported protocol version")
            }
            guard let operation = Operation(rawValue: payload[1]) else {
                throw Failure("unknown operation \(payload[1])")
            }
            var fields: [[UInt8]] = []
            var offset = 2
            while offset < payload.count {
                guard payload.count - offset >= 4 else { throw Failure("truncated field length") }
                let n = AgentWire.readBigEndian(payload, offset)
                offset += 4
                guard n <= payload.count - offset else { throw Failure("field longer than the frame") }
                fields.append(Array(payload[offset..<(offset + n)]))
                offset += n
            }
            self.operation = operation
            self.fields = fields
        }

        init(_ operation: Operation, _ fields: [[UInt8]] = []) {
            self.operation = operation
            self.fields = fields
        }
    }

    /// A protocol or transport failure (the connection is then closed).
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func bigEndian(_ n: Int) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8),
            UInt8(truncatingIfNeeded: n)
        ]
    }

    package static func readBigEndian(_ bytes: [UInt8], _ offset: Int) -> Int {
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    // MARK: Sockets

    /// Write all of `bytes` to `fd`.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure("write failed: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    /// Read exactly `count` bytes (the socket's receive timeout bounds each wait).
    static func readExactly(_ fd: Int32, _ count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, count - offset, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(
                    errno == EAGAIN || errno == EWOULDBLOCK
                        ? "timed out" : "read failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 {
                throw Failure(offset == 0 ? "connection closed" : "connection closed in the middle of a frame")
            }
            offset += n
        }
        return buffer
    }

    /// Read one frame and decode it. The payload buffer is wiped after decoding.
    static func readMessage(_ fd: Int32) throws -> Message {
        let header = try readExactly(fd, 4)
        let length = readBigEndian(header, 0)
        guard length <= maximumFrameByteCount else {
            throw Failure("frame of \(length) bytes is over the \(maximumFrameByteCount)-byte limit")
        }
        var payload = try readExactly(fd, length)
        defer { wipe(&payload) }
        return try Message(payload: payload)
    }

    /// Send and receive timeouts of `seconds` on `fd`.
    static func setTimeouts(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// A sockaddr_un for `path` (at most 107 bytes).
    static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw Failure("the socket path is longer than \(MemoryLayout.size(ofValue: address.sun_path) - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return address
    }

    /// Connect to the agent socket at `path`, with send and receive timeouts of
    /// `timeoutSeconds`; nil when nothing listens there.
    static func connect(_ path: String, timeoutSeconds: Int = answerTimeoutSeconds) throws -> Int32? {
        var address = try address(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket failed: \(String(cString: strerror(errno)))") }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            return nil
        }
        setTimeouts(fd, seconds: timeoutSeconds)
        return fd
    }

    /// A listening Unix socket at `path` for an agent: a socket file left by a dead agent is
    /// replaced, a live agent's is not; the socket is close-on-exec and gets `mode` once it
    /// listens. The folder must exist: each agent makes and checks it by its own rule.
    ///
    /// - Parameters:
    ///   - path: the socket's path, at most 107 bytes (sun_path).
    ///   - mode: the socket file's permissions once it listens (chmod).
    ///   - backlog: the queue of connections not yet accepted, for listen(2).
    ///   - bindUmask: the umask while binding, so that the socket is never looser than `mode`
    ///     before the chmod; nil keeps the process's. The umask is process-wide: a tight one
    ///     suits a private socket, and a loose one would leak into files other threads make.
    /// - Returns: the listening descriptor; the caller closes it and removes the socket.
    /// - Throws: `RSAError.storeIOError` naming `path` when another agent listens there, the
    ///   path is too long, or socket, bind or listen fail (the reason names the call).
    static func listen(path: String, mode: mode_t, backlog: Int32, bindUmask: mode_t? = nil) throws -> Int32 {
        if let fd = try? connect(path) {
            close(fd)
            throw RSAError.storeIOError(path: path, reason: "an agent already listens there")
        }
        unlink(path)
        var address: sockaddr_un
        do { address = try self.address(path) } catch {
            throw RSAError.storeIOError(path: path, reason: "\(error)")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw RSAError.storeIOError(path: path, reason: "socket: \(String(cString: strerror(errno)))")
        }
        let oldMask = bindUmask.map { umask($0) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if let oldMask { umask(oldMask) }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw RSAError.storeIOError(path: path, reason: "bind/listen: \(reason)")
        }
        chmod(path, mode)
        return fd
    }

    /// One request and its response over a fresh connection.
    /// - Throws: `Failure` when nothing listens, the connection breaks, or the response is malformed.
    static func request(_ path: String, _ message: Message) throws -> Message {
        let timeout = message.operation == .unlock ? unlockAnswerTimeoutSeconds : answerTimeoutSeconds
        guard let fd = try connect(path, timeoutSeconds: timeout) else { throw Failure("no agent listens at \(path)") }
        defer { close(fd) }
        var frame = message.encoded()
        defer { wipe(&frame) }
        try writeAll(fd, frame)
        return try readMessage(fd)
    }
}
