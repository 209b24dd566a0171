import Foundation
import XCTest

/// A real `openssl s_server` on 127.0.0.1 and a free port, for the TLS tests. Every wait is
/// bounded; `stop()` (also run by `deinit`) kills it. Its stdout and stderr go to `logPath`.
///
///   openssl s_server -accept 127.0.0.1:PORT -Verify 5 -verify_return_error -CAfile ca.pem
///     -cert srv.pem -cert_chain int.pem -key srv.key -www        (or without -www: echo mode,
///     which prints the application data it receives)
final class TLSTestServer {
    let port: Int
    let logPath: String
    private let process: Process
    private let input = Pipe()

    /// A port nobody listens on right now (bound to 127.0.0.1:0 and released).
    static func freePort() throws -> Int {
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
    init(openssl: String, arguments: [String], directory: String) throws {
        (port, logPath, process) = try TLSTestServer.start(openssl: openssl, arguments: arguments, directory: directory, input: input)
    }

    private static func start(openssl: String, arguments: [String], directory: String, input: Pipe) throws -> (Int, String, Process) {
        var lastLog = ""
        for attempt in 0..<3 {
            let port = try TLSTestServer.freePort()
            let log = directory + "/s_server-\(port)-\(attempt).log"
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: openssl)
            process.arguments = ["s_server", "-accept", "127.0.0.1:\(port)"] + arguments
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardOutput = handle
            process.standardError = handle
            process.standardInput = input
            try process.run()
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline && process.isRunning {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                if text.contains("ACCEPT") { return (port, log, process) }
                usleep(20_000)
            }
            lastLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        XCTFail("openssl s_server did not start: \(lastLog)")
        throw CocoaError(.executableLoad)
    }

    /// What s_server printed so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Wait (at most `seconds`) until the log contains `text`.
    func waitForLog(_ text: String, seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if log.contains(text) { return true }
            usleep(20_000)
        }
        return log.contains(text)
    }

    /// Kill the server (SIGTERM, then SIGKILL after 2 s) and reap it.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
    }

    deinit { stop() }
}

/// The certificates and keys of the TLS tests, made by the real `openssl` once per process:
///
///   ca.pem/ca.key          "RSAKit TLS Test Root"   self-signed CA
///     openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -subj "/CN=RSAKit TLS Test Root"
///       -days 30 -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
///   int.pem/int.key        "RSAKit TLS Test Intermediate", by the root (CA:TRUE, pathlen:0)
///   srv.pem/srv.key        "localhost" by the intermediate: serverAuth, SAN DNS:localhost, IP:127.0.0.1
///   alice.pem/alice.key    "alice" by the root: clientAuth; alice.p12 = openssl pkcs12 -export (pass "alicepass")
///   other.pem/other.key    "RSAKit TLS Other Root"  an unrelated CA
///   bob.pem/bob.key        "bob" by the other root: clientAuth
///   Leaves: openssl req -newkey rsa:2048 -nodes -keyout X.key -subj ... -out X.csr;
///           openssl x509 -req -in X.csr -CA ISSUER.pem -CAkey ISSUER.key -set_serial N -days 30 -extfile X.ext -out X.pem
final class TLSTestPKI: @unchecked Sendable {
    let directory: String
    private static let lock = NSLock()
    nonisolated(unsafe) private static var instance: TLSTestPKI?

    static func shared(openssl: String) throws -> TLSTestPKI {
        lock.lock(); defer { lock.unlock() }
        if let instance { return instance }
        let pki = try TLSTestPKI(openssl: openssl)
        instance = pki
        return pki
    }

    func path(_ name: String) -> String { directory + "/" + name }

    private init(openssl: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rsakit-tls-pki-\(getpid())-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func run(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: openssl)
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            let err = Pipe()
            process.standardError = err
            process.standardOutput = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let errors = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                XCTFail("openssl \(arguments.joined(separator: " ")): \(String(decoding: errors, as: UTF8.self))")
                throw CocoaError(.fileWriteUnknown)
            }
        }
        func write(_ text: String, _ name: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path(name))) }
        func root(_ name: String, _ subject: String) throws {
            try run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".pem",
                     "-subj", subject, "-days", "30", "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        }
        func leaf(_ name: String, _ subject: String, issuer: String, serial: Int, extensions: String) throws {
            try write(extensions, name + ".ext")
            try run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-subj", subject, "-out", name + ".csr"])
            try run(["x509", "-req", "-in", name + ".csr", "-CA", issuer + ".pem", "-CAkey", issuer + ".key",
                     "-set_serial", String(serial), "-days", "30", "-extfile", name + ".ext", "-out", name + ".pem"])
        }
        try root("ca", "/CN=RSAKit TLS Test Root")
        try root("other", "/CN=RSAKit TLS Other Root")
        try leaf("int", "/CN=RSAKit TLS Test Intermediate", issuer: "ca", serial: 2,
                 extensions: "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n")
        try leaf("srv", "/CN=localhost", issuer: "int", serial: 3,
                 extensions: "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n")
        let client = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n"
        try leaf("alice", "/CN=alice/O=RSAKit Tests", issuer: "ca", serial: 4, extensions: client)
        try leaf("bob", "/CN=bob/O=Elsewhere", issuer: "other", serial: 5, extensions: client)
        // openssl pkcs12 -export -inkey alice.key -in alice.pem -name alice -passout pass:alicepass -out alice.p12
        try run(["pkcs12", "-export", "-inkey", "alice.key", "-in", "alice.pem", "-name", "alice",
                 "-passout", "pass:alicepass", "-out", "alice.p12"])
    }
}
