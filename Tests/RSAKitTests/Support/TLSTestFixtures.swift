import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// What the TLS client tests share: `openssl s_server` on 127.0.0.1 with TestPKI's server
/// chain, the client identity, a configuration anchored at TestPKI's root, a socket that
/// listens but never answers. One per test; ``stop()`` in tearDown.
final class TLSTestFixtures {
    let pki: TestPKI
    let directory: URL
    private var servers: [TLSTestServer] = []
    private var listeners: [Int32] = []

    init() throws {
        pki = try TestPKI.shared()
        directory = TestKeys.scratch.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Stop the servers, close the listeners, remove the scratch folder.
    func stop() {
        for server in servers { server.stop() }
        for fd in listeners { close(fd) }
        servers = []
        listeners = []
        try? FileManager.default.removeItem(at: directory)
    }

    /// openssl s_server -accept 127.0.0.1:PORT -Verify 5 -verify_return_error -CAfile root.pem
    ///   -cert server.pem -cert_chain intermediate.pem -key leaf.key -www [extra]
    func startServer(_ extra: [String] = []) throws -> TLSTestServer {
        let server = try TLSTestServer(
            openssl: try OpenSSL.require(),
            arguments: [
                "-Verify", "5", "-verify_return_error", "-CAfile", pki.path("root.pem"),
                "-cert", pki.path("server.pem"), "-cert_chain", pki.path("intermediate.pem"),
                "-key", pki.leafKey, "-www"
            ] + extra,
            directory: directory.path)
        servers.append(server)
        return server
    }

    /// nginx serving HTTP/2 and HTTP/1.1 with TestPKI's server chain, requiring a client
    /// certificate from its root (``NginxTestServer``); stopped by the caller.
    func startNginx() throws -> NginxTestServer {
        let chain =
            try String(contentsOfFile: pki.path("server.pem"), encoding: .utf8)
            + String(contentsOfFile: pki.path("intermediate.pem"), encoding: .utf8)
        try chain.write(toFile: directory.path + "/chain.pem", atomically: true, encoding: .utf8)
        return try NginxTestServer(
            chain: directory.path + "/chain.pem", key: pki.leafKey, clientCA: pki.path("root.pem"),
            directory: directory.path)
    }

    /// leaf.key as rsakit reads it.
    func leafPrivateKey() throws -> RSAPrivateKey {
        guard
            case let .privateKey(key) = try RSAKeyFile(
                bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: pki.leafKey)))
            ).key
        else {
            throw XCTSkip("leaf.key is not a private key")
        }
        return key
    }

    /// The client identity: leaf.key, client.pem, and the intermediate sent with it.
    func clientIdentity() throws -> RSATLSClientIdentity {
        try RSATLSClientIdentity(
            privateKey: leafPrivateKey(), certificate: pki.certificate("client"),
            chain: [pki.certificate("intermediate")], name: "client")
    }

    /// Anchored at root.pem only, 20-second timeout.
    func configuration(_ version: RSATLSProtocolVersion?, serverName: String = "server.rsakit.test") throws
        -> RSATLSClientConfiguration
    {
        var configuration = RSATLSClientConfiguration(serverName: serverName)
        configuration.protocolVersion = version
        configuration.anchorCertificates = [try pki.certificate("root")]
        configuration.anchorCertificatesOnly = true
        configuration.timeout = 20
        return configuration
    }

    /// A listening socket on 127.0.0.1 that nobody accepts on: TCP connects (the kernel's
    /// backlog), TLS waits forever. - Returns: its port.
    func silentListener(backlog: Int32 = 4) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listeners.append(fd)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        XCTAssertTrue(bound)
        XCTAssertEqual(listen(fd, backlog), 0)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A listener on 127.0.0.1 whose accept queue is full, so that a TCP connect to it stalls
    /// before the handshake completes (Linux completes handshakes for a listener that never
    /// accepts until its backlog is full, then drops the SYNs). - Returns: its port, once a
    /// probe connect has been seen to stall for 200 ms.
    func stalledListener() throws -> Int {
        let port = try silentListener(backlog: 0)
        for _ in 0..<8 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if poll(&entry, 1, 200) == 0 {
                close(fd)
                return port
            }
            listeners.append(fd)  // a completed connection: it keeps the queue full
        }
        throw XCTSkip("could not fill a backlog-0 listener's queue on 127.0.0.1")
    }
}
