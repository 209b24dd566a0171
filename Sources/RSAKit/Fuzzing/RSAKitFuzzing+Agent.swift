// The agent's side of one connection, for Fuzz/Sources/FuzzAgentWire: what a local
// client can send the agent is untrusted input (frames, field lengths, operations).

import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
import RSAKitTLS
#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// The bytes the fuzzing client read, filled by its reader thread and read after it ends
/// (the DispatchGroup's wait orders the accesses).
private final class DrainedBytes: @unchecked Sendable {
    var bytes: [UInt8] = []
}

@_spi(Fuzzing)
extension RSAKitFuzzing {
    /// One response frame the agent wrote: its payload decoded, or nil when it does not decode.
    public struct AgentResponse: Sendable, Equatable {
        /// The frame's payload, as sent.
        public let payload: [UInt8]
        /// The operation byte (0x80 ok, 0x81 error) and fields, when the payload decodes.
        public let decoded: (operation: UInt8, fields: [[UInt8]])?

        public static func == (a: AgentResponse, b: AgentResponse) -> Bool {
            a.payload == b.payload && a.decoded?.operation == b.decoded?.operation
                && a.decoded?.fields == b.decoded?.fields
        }
    }

    /// Serve one connection whose client sends `clientBytes` (then closes its side) with a fresh
    /// agent for `store` (protected and unlocked), exactly as ``RSAKeychainAgent`` serves a
    /// socket; return every frame it wrote back, and whether the bytes after the last whole
    /// frame were left over (the agent stopped reading).
    /// - Parameter clientBytes: at most 64 KiB (both ends are a `socketpair`, written before
    ///   the agent reads; its answers are read by a second thread while it serves).
    /// - Throws: `RSAError.internalError` when the socket pair cannot be made; what the agent's
    ///   initialiser throws.
    public static func agentConnection(store: RSAKeyStore, clientBytes: [UInt8]) throws -> (
        responses: [AgentResponse], trailingBytes: Int
    ) {
        precondition(clientBytes.count <= 64 * 1024, "the socket buffer holds the whole request")
        let agent = try RSAKeychainAgent(store: store, socketPath: "/nonexistent/rsakit-fuzz.sock")
        let written = try served(clientBytes) { agent.serveConnection($0) }
        var responses: [AgentResponse] = []
        var offset = 0
        while written.count - offset >= 4 {
            let length = AgentWire.readBigEndian(written, offset)
            guard length <= written.count - offset - 4 else { break }
            let payload = Array(written[(offset + 4)..<(offset + 4 + length)])
            let message = try? AgentWire.Message(payload: payload)
            responses.append(
                AgentResponse(payload: payload, decoded: message.map { ($0.operation.rawValue, $0.fields) }))
            offset += 4 + length
        }
        return (responses, written.count - offset)
    }

    /// Write `clientBytes` into one end of a socket pair and close its sending side, run
    /// `serve` on the other end (as an agent serves an accepted connection), and return every
    /// byte `serve` wrote back, drained by a second thread while it runs.
    /// - Throws: `RSAError.internalError` when the socket pair cannot be made.
    static func served(_ clientBytes: [UInt8], by serve: (Int32) -> Void) throws -> [UInt8] {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
            throw RSAError.internalError("socketpair failed")
        }
        defer { close(fds[0]) }
        var bufferSize: Int32 = 256 * 1024
        setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &bufferSize, socklen_t(MemoryLayout<Int32>.size))
        try AgentWire.writeAll(fds[0], clientBytes)
        shutdown(fds[0], Int32(SHUT_WR))
        // Everything the agent writes, drained while it serves (as a real client reads its
        // answers): a unix socket counts about a kilobyte of its send buffer per small frame,
        // so a few hundred unread answers would fill it, and the agent, after its send
        // timeout, would rightly close the connection of a client that does not read.
        let drained = DrainedBytes()
        let reader = DispatchGroup()
        let clientEnd = fds[0]
        DispatchQueue.global().async(group: reader) {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(clientEnd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                drained.bytes += chunk[0..<n]
            }
        }
        serve(fds[1])
        close(fds[1])
        reader.wait()
        return drained.bytes
    }

    /// The 32-byte key of an unlocked protected store, so that the harness can check that no
    /// response carries it; nil for an unprotected or locked store. Fuzzing only.
    public static func storeKeyBytes(_ store: RSAKeyStore) -> [UInt8]? {
        guard let key = try? store.withReadLock({ try store.currentStoreKey() }), case let .local(secret) = key.backing
        else { return nil }
        return secret.bytes
    }

    /// Decode a request payload as the agent does (`AgentWire.Message(payload:)`) and encode
    /// it back: nil when it does not decode, else the operation byte, the fields and the frame
    /// `encoded()` makes (length prefix included).
    public static func agentDecode(_ payload: [UInt8]) -> (operation: UInt8, fields: [[UInt8]], frame: [UInt8])? {
        guard let message = try? AgentWire.Message(payload: payload) else { return nil }
        return (message.operation.rawValue, message.fields, message.encoded())
    }
}
