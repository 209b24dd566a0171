import Foundation
import XCTest

/// A real `openssl s_server` on 127.0.0.1 and a free port, for the TLS tests of both test
/// targets. Every wait is
/// bounded; `stop()` (also run by `deinit`) kills it. Its stdout and stderr go to `logPath`.
///
///   openssl s_server -accept 127.0.0.1:PORT -Verify 5 -verify_return_error -CAfile ca.pem
///     -cert srv.pem -cert_chain int.pem -key srv.key -www        (or without -www: echo mode,
///     which prints the application data it receives)
package final class TLSTestServer {
    package let port: Int
    package let logPath: String
    private let process: ChildProcess
    private let input = Pipe()

    /// A port nobody listens on right now (bound to 127.0.0.1:0 and released).
    package static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(fd, pointer, length) == 0 else { return -1 }
                return getsockname(fd, pointer, &length)
            }
        }
        guard bound == 0 else { throw CocoaError(.fileWriteUnknown) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Start s_server with `arguments` after `-accept 127.0.0.1:PORT`; waits (at most 15 s)
    /// for its "ACCEPT" line. Retries on another port if the port was taken meanwhile.
    package init(openssl: String, arguments: [String], directory: String) throws {
        (port, logPath, process) = try TLSTestServer.start(
            openssl: openssl, arguments: arguments, directory: directory, input: input)
    }

    private static func start(openssl: String, arguments: [String], directory: String, input: Pipe) throws -> (
        Int, String, ChildProcess
    ) {
        var lastLog = ""
        for attempt in 0..<3 {
            let port = try TLSTestServer.freePort()
            let log = directory + "/s_server-\(port)-\(attempt).log"
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            // stdin is a pipe this object holds open: s_server in echo mode ends at end of input.
            let process = try ChildProcess(
                [openssl, "s_server", "-accept", "127.0.0.1:\(port)"] + arguments,
                directory: directory,
                stdin: .descriptor(input.fileHandleForReading.fileDescriptor),
                stdout: .appending(log), stderr: .appending(log))
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline && process.isRunning {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                if text.contains("ACCEPT") { return (port, log, process) }
                usleep(20_000)
            }
            lastLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            process.kill9()
        }
        XCTFail("openssl s_server did not start: \(lastLog)")
        throw CocoaError(.executableLoad)
    }

    /// What s_server printed so far.
    package var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Wait (at most `seconds`) until the log contains `text`.
    package func waitForLog(_ text: String, seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if log.contains(text) { return true }
            usleep(20_000)
        }
        return log.contains(text)
    }

    /// Kill the server (SIGTERM, then SIGKILL after 2 s) and reap it.
    package func stop() {
        guard process.isRunning else { return }
        process.send(SIGTERM)
        _ = try? process.wait(timeout: 2)  // past the deadline it kills (SIGKILL) and reaps
        try? input.fileHandleForWriting.close()
    }

    deinit { stop() }
}
