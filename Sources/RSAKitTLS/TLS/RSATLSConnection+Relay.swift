// The `openssl s_client -quiet` loop: bytes from one descriptor go to the server, the
// server's bytes to another, until the server closes.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#endif

extension RSATLSConnection {
    /// Copy `input` to the server and the server's data to `output` until the server closes
    /// the connection, then send close_notify. When `input` ends, nothing is sent to mark
    /// it (as `s_client -quiet`, which ignores EOF): the server's answer is still read.
    ///
    /// - Parameters:
    ///   - input: a readable descriptor (standard input), read 16 KiB at a time.
    ///   - output: a writable descriptor (standard output), written in full.
    ///   - idleTimeout: once `input` has ended, seconds to wait for more from the server
    ///     before giving up (nil: no limit). No limit applies while `input` is open.
    /// - Returns: the number of bytes sent and received.
    /// - Throws: the errors of ``read(maximumByteCount:timeout:)`` and ``write(_:)-([UInt8])``;
    ///   `RSATLSError.timedOut` after `idleTimeout`; `RSATLSError.connectionFailed` when
    ///   `input` or `output` fails (the `errno` text).
    @discardableResult
    public func relay(from input: Int32, to output: Int32, idleTimeout: Double?) throws -> (sent: Int, received: Int) {
        var inputOpen = true
        var sent = 0, received = 0
        var buffer = [UInt8](repeating: 0, count: 16_384)
        defer { close() }
        while true {
            if !hasBufferedData {
                var entries = [pollfd(fd: socketFileDescriptor, events: Int16(POLLIN), revents: 0)]
                if inputOpen { entries.append(pollfd(fd: input, events: Int16(POLLIN), revents: 0)) }
                let milliseconds: Int32 =
                    inputOpen
                    ? -1 : idleTimeout.map { Int32(min(Double(Int32.max), max(0, $0 * 1000)).rounded(.up)) } ?? -1
                let ready = poll(&entries, nfds_t(entries.count), milliseconds)
                if ready < 0 {
                    if errno == EINTR { continue }
                    throw RSATLSError.connectionFailed(reason: "poll: \(RSATLSSocket.errnoText())")
                }
                if ready == 0 {
                    throw RSATLSError.timedOut(
                        operation: "waiting for \(configuration.serverName) after the input ended",
                        seconds: idleTimeout ?? 0)
                }
                if inputOpen && entries[1].revents != 0 {
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
                    if count < 0 {
                        if errno == EINTR || errno == EAGAIN { continue }
                        throw RSATLSError.connectionFailed(reason: "reading the input: \(RSATLSSocket.errnoText())")
                    }
                    if count == 0 {
                        inputOpen = false
                    } else {
                        try write(Array(buffer[0..<count]))
                        sent += count
                    }
                }
                guard entries[0].revents != 0 else { continue }
            }
            // The socket is readable (or GnuTLS holds data): one record at most, no waiting.
            switch try receiveOnce(maximumByteCount: buffer.count) {
            case let .data(bytes):
                try writeAll(bytes, to: output)
                received += bytes.count
            case .closed:
                return (sent, received)
            case .nothing:
                continue
            }
        }
    }

    private func writeAll(_ bytes: [UInt8], to output: Int32) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(output, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw RSATLSError.connectionFailed(reason: "writing the output: \(RSATLSSocket.errnoText())")
            }
            offset += count
        }
    }
}
