import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// RSAHTTPSClient against a real `openssl s_server -WWW` on 127.0.0.1, which serves the files
/// of its folder and requires a client certificate from TestPKI's root (-Verify 5
/// -verify_return_error). libcurl speaks the HTTP, rsakit's TLS client the TLS.
final class HTTPSClientTests: XCTestCase {
    private var fixtures: TLSTestFixtures!
    private var pki: TestPKI { fixtures.pki }

    override func setUpWithError() throws { fixtures = try TLSTestFixtures() }
    override func tearDown() { fixtures.stop() }

    /// s_server -WWW over the fixtures' folder, TLS 1.3 unless told.
    private func startWWWServer(_ version: String = "-tls1_3") throws -> TLSTestServer {
        let server = try TLSTestServer(
            openssl: try OpenSSL.require(),
            arguments: [
                "-Verify", "5", "-verify_return_error", "-CAfile", pki.path("root.pem"),
                "-cert", pki.path("server.pem"), "-cert_chain", pki.path("intermediate.pem"),
                "-key", pki.leafKey, "-WWW", version
            ],
            directory: fixtures.directory.path)
        return server
    }

    /// Anchored at TestPKI's root only.
    private func clientConfiguration(identity: RSATLSClientIdentity?) throws -> RSAHTTPSClientConfiguration {
        var configuration = RSAHTTPSClientConfiguration(identity: identity)
        configuration.tlsConfiguration.anchorCertificates = [try pki.certificate("root")]
        configuration.tlsConfiguration.anchorCertificatesOnly = true
        return configuration
    }

    private func url(_ server: TLSTestServer, _ name: String) -> URL {
        URL(string: "https://127.0.0.1:\(server.port)/\(name)")!
    }

    /// The client identity as a store keeps it: added with addIdentity, read back by label.
    private func storedIdentity() throws -> RSATLSClientIdentity {
        let store = try RSAKeyStore(path: fixtures.directory.appendingPathComponent("store").path)
        try store.addIdentity(
            privateKey: fixtures.leafPrivateKey(), certificate: pki.certificate("client"),
            chain: [pki.certificate("intermediate")], tag: "com.example.client", label: "client")
        return try RSATLSClientIdentity(store: store, label: "client")
    }

    func testData_ClientCertificateFromTheStore_IsSentAndTheFileReturned() async throws {
        try Data("hello over rsakit TLS\n".utf8).write(to: fixtures.directory.appendingPathComponent("hello.txt"))
        let server = try startWWWServer()
        let client = RSAHTTPSClient(configuration: try clientConfiguration(identity: storedIdentity()))
        let (body, response) = try await client.data(
            for: RSAHTTPSRequest(url: url(server, "hello.txt"), timeoutInterval: 20))
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "hello over rsakit TLS\n")
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertTrue(response.isSuccess)
        XCTAssertEqual(response.httpVersion, "HTTP/1.0")  // s_server -WWW answers in HTTP/1.0
        XCTAssertEqual(response.url, url(server, "hello.txt"))
        // The server saw the client certificate the store holds.
        XCTAssertTrue(server.waitForLog("RSAKit Test Client"), server.log)
    }

    func testData_ClientIdentityHandler_AskedOnlyWhenTheServerWantsOne() async throws {
        try Data("handler\n".utf8).write(to: fixtures.directory.appendingPathComponent("h.txt"))
        let server = try startWWWServer()
        let identity = try fixtures.clientIdentity()
        let asked = LockedBox<[String]>([])
        var configuration = try clientConfiguration(identity: nil)
        configuration.clientIdentityHandler = { challenge in
            asked.update {
                $0.append(
                    "\(challenge.host):\(challenge.port) \(challenge.serverCertificates.first?.subjectSummary ?? "")")
            }
            return identity
        }
        let (body, response) = try await RSAHTTPSClient(configuration: configuration)
            .data(for: RSAHTTPSRequest(url: url(server, "h.txt"), timeoutInterval: 20))
        XCTAssertEqual(String(decoding: body, as: UTF8.self), "handler\n")
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(asked.value, ["127.0.0.1:\(server.port) server.rsakit.test"])
    }

    func testData_ServerFromAnotherCA_ThrowsServerNotTrusted() async throws {
        let server = try startWWWServer()
        var configuration = try clientConfiguration(identity: fixtures.clientIdentity())
        // A CA that did not issue the server's chain is the only anchor.
        configuration.tlsConfiguration.anchorCertificates = [try pki.certificate("untrusted-root")]
        do {
            _ = try await RSAHTTPSClient(configuration: configuration).data(
                for: RSAHTTPSRequest(url: url(server, "x"), timeoutInterval: 20))
            XCTFail("an untrusted server answered")
        } catch let RSATLSError.serverNotTrusted(evaluation, certificates, refusedByHandler) {
            XCTAssertFalse(evaluation.result.isTrusted)
            XCTAssertEqual(certificates.first?.subjectSummary, "server.rsakit.test")
            XCTAssertFalse(refusedByHandler)
        }
    }

    func testData_NoIdentity_ServerRequiringOne_ThrowsClientCertificateRejected() async throws {
        for version in ["-tls1_3", "-tls1_2"] {
            let server = try startWWWServer(version)
            do {
                _ = try await RSAHTTPSClient(configuration: try clientConfiguration(identity: nil))
                    .data(for: RSAHTTPSRequest(url: url(server, "x"), timeoutInterval: 20))
                XCTFail("\(version): answered without a client certificate")
            } catch let RSATLSError.clientCertificateRejected(_, certificateSent) {
                XCTAssertFalse(certificateSent, version)
            } catch {
                XCTFail("\(version): \(String(reflecting: error))")
            }
            server.stop()
        }
    }

    func testData_NotHTTPS_IsRefusedBeforeConnecting() async throws {
        let client = RSAHTTPSClient()
        for text in ["http://127.0.0.1:1/", "ftp://127.0.0.1/x", "https:///nohost"] {
            do {
                _ = try await client.data(for: RSAHTTPSRequest(url: URL(string: text)!))
                XCTFail("\(text) was fetched")
            } catch let error as RSAHTTPSError {
                guard case .unsupportedURL = error else { return XCTFail("\(text): \(error)") }
            }
        }
    }

    func testData_ServerThatNeverAnswers_TimesOut() async throws {
        let port = try fixtures.silentListener()
        let started = Date()
        do {
            _ = try await RSAHTTPSClient(configuration: try clientConfiguration(identity: nil))
                .data(for: RSAHTTPSRequest(url: URL(string: "https://127.0.0.1:\(port)/")!, timeoutInterval: 1))
            XCTFail("a silent server answered")
        } catch let RSATLSError.timedOut(_, seconds) {
            XCTAssertEqual(seconds, 1)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testData_BodyOverTheLimit_ThrowsResponseTooLarge() async throws {
        try Data(count: 100_000).write(to: fixtures.directory.appendingPathComponent("big.bin"))
        let server = try startWWWServer()
        var configuration = try clientConfiguration(identity: fixtures.clientIdentity())
        configuration.maximumResponseByteCount = 10_000
        do {
            _ = try await RSAHTTPSClient(configuration: configuration).data(
                for: RSAHTTPSRequest(url: url(server, "big.bin"), timeoutInterval: 20))
            XCTFail("the limit was not kept")
        } catch let error as RSAHTTPSError {
            XCTAssertEqual(error, .responseTooLarge(limit: 10_000))
        }
    }

    /// 50 MB streamed to a file: the process's resident memory grows by far less than the
    /// body, and the file appears whole (and only once complete).
    func testDownload_50MB_StreamedToAFile_InBoundedMemory() async throws {
        let byteCount = 50 << 20
        let source = fixtures.directory.appendingPathComponent("large.bin")
        _ = FileManager.default.createFile(atPath: source.path, contents: nil)
        let handle = try FileHandle(forWritingTo: source)
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        for index in 0..<(byteCount >> 20) {
            for offset in stride(from: 0, to: chunk.count, by: 4096) {
                chunk[offset] = UInt8(truncatingIfNeeded: index &+ offset >> 12)
            }
            handle.write(Data(chunk))
        }
        try handle.close()
        let server = try startWWWServer()
        let destination = fixtures.directory.appendingPathComponent("out/large.bin")
        try FileManager.default.createDirectory(
            at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        let client = RSAHTTPSClient(configuration: try clientConfiguration(identity: fixtures.clientIdentity()))
        let baseline = Self.residentBytes()
        // Sampled on a thread of its own every 10 ms while the download runs.
        let peak = LockedBox(baseline)
        let stop = LockedBox(false)
        let sampler = Thread {
            while !stop.value {
                let now = HTTPSClientTests.residentBytes()
                peak.update { $0 = max($0, now) }
                usleep(10_000)
            }
        }
        sampler.start()
        let response = try await client.download(
            for: RSAHTTPSRequest(url: url(server, "large.bin"), timeoutInterval: 20), toPath: destination.path)
        stop.update { $0 = true }
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int, byteCount)
        XCTAssertEqual(try Data(contentsOf: destination), try Data(contentsOf: source))
        let growth = peak.value - baseline
        XCTAssertLessThan(
            growth, 16 << 20, "resident memory grew by \(growth >> 20) MiB for a \(byteCount >> 20) MiB body")
    }

    func testDownload_CancelledMidBody_ThrowsCancellationAndLeavesNothing() async throws {
        let source = fixtures.directory.appendingPathComponent("huge.bin")
        _ = FileManager.default.createFile(atPath: source.path, contents: nil)
        let handle = try FileHandle(forWritingTo: source)
        try handle.truncate(atOffset: 1 << 30)  // sparse: 1 GiB that costs no disk
        try handle.close()
        let server = try startWWWServer()
        let destination = fixtures.directory.appendingPathComponent("partial.bin")
        let client = RSAHTTPSClient(configuration: try clientConfiguration(identity: fixtures.clientIdentity()))
        let request = RSAHTTPSRequest(url: url(server, "huge.bin"), timeoutInterval: 20)
        let task = Task { try await client.download(for: request, toPath: destination.path) }
        try await Task.sleep(nanoseconds: 700_000_000)
        let cancelled = Date()
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("a 1 GiB download finished within 0.7 s")
        } catch is CancellationError {
        }
        XCTAssertLessThan(Date().timeIntervalSince(cancelled), 2, "the transfer did not stop promptly")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: fixtures.directory.path).filter {
                $0.contains("partial")
            }, [])
    }

    /// VmRSS of this process, in bytes.
    private static func residentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}

/// A value shared with a @Sendable closure in a test.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
    func update(_ body: (inout Value) -> Void) { lock.lock(); defer { lock.unlock() }; body(&stored) }
}
