// The relay between libcurl's end of a socketpair and an RSATLSConnection, on a thread of
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

/// One relay; it closes the TLS connection and its descriptor when either side ends.
final class HTTPSRelay: @unchecked Sendable {
    // @unchecked: `connection` and `fileDescriptor` are used by the relay's thread alone
    // after init; `failure` is behind the mutex.
    private let connection: RSATLSConnection
    private let fileDescriptor: Int32
    private let state = PThreadMutex<(any Error)?>(nil)

    /// What ended the relay other than a clean close by either side.
    var failure: (any Error)? { state.withLock { $0 } }

    /// Start relaying between `connection` and `fileDescriptor` (the relay's end of the
    /// socketpair, which it owns and closes).
    init(connection: RSATLSConnection, fileDescriptor: Int32) {
        self.connection = connection
        self.fileDescriptor = fileDescriptor
        // A serial queue of its own: Dispatch gives it a thread even when all are busy.
        DispatchQueue(label: "org.rsakit.https-relay", qos: .userInitiated).async {
            do {
                try self.run()
            } catch {
                self.state.withLock { $0 = error }
            }
            self.connection.close()
            Glibc.close(self.fileDescriptor)
        }
    }

    private func run() throws {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let socket = connection.socketFileDescriptor
        while true {
            if !connection.hasBufferedData {
                var entries = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)]
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
            let count = bytes.withUnsafeBytes { send(fileDescriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += count
        }
        return true
    }
}
