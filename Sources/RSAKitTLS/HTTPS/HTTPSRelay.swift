// The relay between libcurl's loopback TCP connection and an RSATLSConnection, on a thread of
// its own: libcurl's plain HTTP goes out as TLS records, the server's records come back as
// plain bytes. Memory stays bounded: one 16 KiB record at a time, and a blocking send into
// the socketpair holds the relay (and so the server) back while libcurl's consumer is slow.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
// This target also depends on CCurl, whose header includes <sys/socket.h>: clang may file the
// socket declarations under CCurl's module instead of Glibc's, depending on which it built
// first, so a file that uses them imports both.
internal import CCurl

/// One relay; it closes the TLS connection and its descriptor when either side ends.
final class HTTPSRelay: @unchecked Sendable {
    // @unchecked: `connection` and `fileDescriptor` are used by the relay's thread alone
    // after init; `failure` is behind the mutex.
    private let connection: RSATLSConnection
    private var fileDescriptor: Int32 = -1
    private let state = PThreadMutex<(any Error)?>(nil)

    /// What ended the relay other than a clean close by either side.
    var failure: (any Error)? { state.withLock { $0 } }

    /// Accept libcurl's connection on `listener` (only from `expectedPeer`, within
    /// `acceptTimeout` seconds), then relay between it and `connection`. The relay owns and
    /// closes the listener, the accepted socket and the connection.
    init(connection: RSATLSConnection, listener: Int32, expectedPeer: sockaddr_in, acceptTimeout: Double) {
        self.connection = connection
        // A serial queue of its own: Dispatch gives it a thread even when all are busy.
        DispatchQueue(label: "org.rsakit.https-relay", qos: .userInitiated).async {
            defer { self.connection.close() }
            let accepted = HTTPSLoopback.accept(listener, from: expectedPeer, timeout: acceptTimeout)
            Glibc.close(listener)
            guard let accepted else { return }
            self.fileDescriptor = accepted
            do {
                try self.run()
            } catch {
                self.state.withLock { $0 = error }
            }
            Glibc.close(accepted)
        }
    }

    private func run() throws {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let socket = connection.socketFileDescriptor
        while true {
            if !connection.hasBufferedData {
                var entries = [
                    pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
                ]
                if poll(&entries, 2, -1) < 0 {
                    if errno == EINTR { continue }
                    throw RSATLSError.connectionFailed(reason: "poll: \(RSATLSSocket.errnoText())")
                }
                if entries[1].revents != 0 {
                    let count = buffer.withUnsafeMutableBytes { recv(fileDescriptor, $0.baseAddress, $0.count, 0) }
                    if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    // libcurl closed its end: the exchange is over (or was abandoned).
                    if count <= 0 { return }
                    try connection.write(Array(buffer[0..<count]))
                }
                guard entries[0].revents != 0 else { continue }
            }
            switch try connection.receiveOnce(maximumByteCount: buffer.count) {
            case let .data(bytes):
                // An error here is libcurl having gone away: nothing left to deliver to.
                guard sendAll(bytes) else { return }
            case .closed:
                return
            case .nothing:
                continue
            }
        }
    }

    /// Write all of `bytes` to libcurl's end (MSG_NOSIGNAL: a closed end is an error, not SIGPIPE).
    private func sendAll(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes {
                send(fileDescriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += count
        }
        return true
    }
}

/// The loopback TCP pair between libcurl and a relay.
enum HTTPSLoopback {
    /// A listener on 127.0.0.1 (port chosen by the kernel, backlog 1) and a client socket
    /// bound to 127.0.0.1, not yet connected (libcurl connects it).
    /// - Throws: `RSATLSError.connectionFailed` with the `errno` text.
    static func make() throws -> (
        client: Int32, listener: Int32, clientAddress: sockaddr_in, listenerAddress: sockaddr_in
    ) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw failure("socket") }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard client >= 0 else { Glibc.close(listener); throw failure("socket") }
        do {
            let listenerAddress = try bindLoopback(listener)
            guard listen(listener, 1) == 0 else { throw failure("listen") }
            let clientAddress = try bindLoopback(client)
            return (client, listener, clientAddress, listenerAddress)
        } catch {
            Glibc.close(listener)
            Glibc.close(client)
            throw error
        }
    }

    /// Accept one connection from `peer` within `timeout` seconds; others are closed.
    /// - Returns: the accepted socket, or nil (time out, error).
    static func accept(_ listener: Int32, from peer: sockaddr_in, timeout: Double) -> Int32? {
        let deadline = RSATLSSocket.monotonicSeconds() + timeout
        while true {
            let remaining = deadline - RSATLSSocket.monotonicSeconds()
            guard remaining > 0,
                (try? RSATLSSocket.waitFor(listener, events: Int16(POLLIN), timeout: remaining)) == true
            else { return nil }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let fd = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listener, $0, &length) }
            }
            if fd < 0 {
                if errno == EINTR || errno == EAGAIN || errno == ECONNABORTED { continue }
                return nil
            }
            if address.sin_port == peer.sin_port && address.sin_addr.s_addr == peer.sin_addr.s_addr { return fd }
            Glibc.close(fd)
        }
    }

    private static func bindLoopback(_ fd: Int32) throws -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7f00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw failure("bind") }
        return address
    }

    private static func failure(_ call: String) -> RSATLSError {
        RSATLSError.connectionFailed(reason: "\(call) on 127.0.0.1 for the HTTP relay: \(RSATLSSocket.errnoText())")
    }
}
