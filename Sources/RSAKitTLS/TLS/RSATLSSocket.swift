// TCP for the TLS client: resolve, connect within a time limit, wait for input. Plain
// POSIX sockets (getaddrinfo, non-blocking connect + poll); no C library of ours.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#endif
// This target also depends on CCurl, whose header includes <sys/socket.h>: clang may file the
// socket declarations under CCurl's module instead of Glibc's, depending on which it built
// first, so a file that uses them imports both (a clean release build lost SOCK_STREAM here).
internal import CCurl

/// Socket helpers for ``RSATLSConnection``.
enum RSATLSSocket {
    /// Connect a blocking TCP socket to `host`:`port`, trying each resolved address in turn,
    /// within `timeout` seconds overall.
    ///
    /// - Parameter cancellation: when given, each socket is attached to it before its connect
    ///   starts, so that cancelling shuts it down and ends the connect at once (Linux aborts a
    ///   connect in progress on shutdown and wakes the poll).
    /// - Returns: the connected socket (close-on-exec); the caller closes it.
    /// - Throws: `RSATLSError.connectFailed` (refused, unreachable, unknown host: the last
    ///   address's reason); `RSATLSError.timedOut` when the time runs out; `CancellationError`
    ///   once `cancellation` is cancelled.
    static func connect(host: String, port: Int, timeout: Double, cancellation: RSATLSCancellableSocket? = nil) throws
        -> Int32
    {
        guard (1...65_535).contains(port) else {
            throw RSATLSError.connectFailed(host: host, port: port, reason: "the port must be 1 to 65535")
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let list else {
            throw RSATLSError.connectFailed(
                host: host, port: port, reason: String(cString: gai_strerror(resolved)).lowercased())
        }
        defer { freeaddrinfo(list) }

        let deadline = monotonicSeconds() + timeout
        var reason = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(
                address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                address.pointee.ai_protocol)
            guard fd >= 0 else { reason = errnoText(); continue }
            if let cancellation, !cancellation.attach(fd) {
                Glibc.close(fd)
                throw CancellationError()
            }
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            var code = Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen)
            if code != 0 && errno == EINPROGRESS {
                let remaining = deadline - monotonicSeconds()
                guard remaining > 0, try waitFor(fd, events: Int16(POLLOUT), timeout: remaining) else {
                    cancellation?.markClosed()
                    Glibc.close(fd)
                    throw RSATLSError.timedOut(
                        operation: "connecting to \(RSATLSConnection.endpointText(host: host, port: port))",
                        seconds: timeout)
                }
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                if error != 0 { errno = error; code = -1 } else { code = 0 }
            }
            if code != 0 {
                reason = errnoText()
                cancellation?.markClosed()
                Glibc.close(fd)
                if cancellation?.isCancelled == true { throw CancellationError() }
                continue
            }
            _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return fd
        }
        throw RSATLSError.connectFailed(host: host, port: port, reason: reason)
    }

    /// Wait until `fd` is ready for `events` (POLLIN, POLLOUT) or `timeout` seconds pass
    /// (nil: no limit). EINTR restarts the wait with the time left.
    ///
    /// - Returns: true when ready (or hung up / in error, which the next call reports).
    static func waitFor(_ fd: Int32, events: Int16, timeout: Double?) throws -> Bool {
        let deadline = timeout.map { monotonicSeconds() + $0 }
        while true {
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let milliseconds =
                deadline.map { Int32(max(0, min(Double(Int32.max), ($0 - monotonicSeconds()) * 1000)).rounded(.up)) }
                ?? -1
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready == 0 { return false }
            if errno != EINTR { throw RSATLSError.connectionFailed(reason: "poll: \(errnoText())") }
        }
    }

    /// Seconds on the monotonic clock.
    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// `strerror(errno)`, lower case ("connection refused").
    static func errnoText() -> String {
        String(cString: strerror(errno)).lowercased()
    }
}
