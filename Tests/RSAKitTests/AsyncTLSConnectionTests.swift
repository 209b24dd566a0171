import Foundation
import Synchronization
import XCTest
import RSAKit
import RSAKitTestSupport

/// RSAAsyncTLSConnection against a real `openssl s_server` on 127.0.0.1: the same
/// handshake as RSATLSConnection, its calls on the connection's own executor (never the
/// cooperative pool), shared between tasks, cancellation that ends a blocked call at once.
final class AsyncTLSConnectionTests: XCTestCase {
    private var fixtures: TLSTestFixtures!

    override func setUpWithError() throws { fixtures = try TLSTestFixtures() }
    override func tearDown() { fixtures.stop() }

    /// A connection with the client identity to a fresh `openssl s_server -www`, which sends
    /// nothing until it has a request.
    private func connectToNewServer() async throws -> RSAAsyncTLSConnection {
        let server = try fixtures.startServer()
        return try await RSAAsyncTLSConnection.connect(
            host: "127.0.0.1", port: server.port,
            configuration: fixtures.configuration(nil),
            identity: fixtures.clientIdentity())
    }

    func testAsyncConnection_HandshakeRequestAndClose() async throws {
        let connection = try await connectToNewServer()
        XCTAssertEqual(connection.protocolVersion, "TLS1.3")
        XCTAssertEqual(connection.trustEvaluation.result, .unspecified)
        XCTAssertEqual(connection.privateKeyOperations.map(\.scheme), ["rsa_pss_rsae_sha256"])
        XCTAssertEqual(connection.clientSignatureAlgorithm, "RSA-PSS-RSAE-SHA256")
        XCTAssertTrue(connection.sessionDescription.hasPrefix("(TLS1.3)-"), connection.sessionDescription)
        XCTAssertTrue(connection.clientCertificateSent)

        // Shared between tasks (Sendable): one writes, another reads to close_notify.
        try await Task { try await connection.write(Data("GET / HTTP/1.0\r\n\r\n".utf8)) }.value
        let page = try await Task { () -> String in
            var page: [UInt8] = []
            while let bytes = try await connection.read(timeout: 20) { page += bytes }
            return String(decoding: page, as: UTF8.self)
        }.value
        XCTAssertTrue(page.contains("HTTP/1.0 200 ok"), page)
        XCTAssertTrue(page.contains("Subject: CN=RSAKit Test Client, O=RSAKit Tests"), page)
        await connection.close()
        let afterClose = try await connection.read(timeout: 1)
        XCTAssertNil(afterClose)
        do {
            try await connection.write([1])
            XCTFail("a write after close succeeded")
        } catch {
            guard case .connectionFailed? = error as? RSATLSError else { return XCTFail("\(error)") }
        }
    }

    func testAsyncConnection_TypedTrustFailure() async throws {
        let server = try fixtures.startServer()
        do {
            _ = try await RSAAsyncTLSConnection.connect(
                host: "127.0.0.1", port: server.port,
                configuration: fixtures.configuration(.tls12, serverName: "other.example"),
                identity: fixtures.clientIdentity())
            XCTFail("a wrong hostname connected")
        } catch let RSATLSError.serverNotTrusted(evaluation, sent, refusedByHandler) {
            XCTAssertEqual(evaluation.failures.map(\.kind), [.hostnameMismatch(hostname: "other.example")])
            XCTAssertEqual(sent.count, 2)
            XCTAssertFalse(refusedByHandler)
        }
    }

    /// Reads blocked at once on as many connections as the machine has cores plus one leave
    /// the cooperative pool free: a task that sleeps 5 ms at a time never waits 250 ms.
    func testBlockedReads_OnMoreConnectionsThanCores_NeverStallThePool() async throws {
        var connections: [RSAAsyncTLSConnection] = []
        for _ in 0...ProcessInfo.processInfo.activeProcessorCount {
            connections.append(try await connectToNewServer())
        }
        let longestWait = Mutex<Duration>(.zero)
        let ticker = Task {
            var last = ContinuousClock.now
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 5_000_000)
                let now = ContinuousClock.now
                longestWait.withLock { $0 = max($0, now - last) }
                last = now
            }
        }
        // s_server -www sends nothing until it has a request: each read waits its 1.5 s.
        let readers = connections.map { connection in Task { _ = try? await connection.read(timeout: 1.5) } }
        for reader in readers { await reader.value }
        ticker.cancel()
        XCTAssertLessThan(
            longestWait.withLock { $0 }, .milliseconds(250), "a blocked read held a thread of the cooperative pool")
        for connection in connections { await connection.close() }
    }

    /// Two tasks on one connection: the second call runs after the first has ended, never
    /// beside it (the GnuTLS session is used by one call at a time).
    func testTwoTasksOnOneConnection_RunInOrderWithoutOverlap() async throws {
        let connection = try await connectToNewServer()
        let start = ContinuousClock.now
        let first = Task { () -> Duration in
            _ = try? await connection.read(timeout: 2)
            return ContinuousClock.now - start
        }
        try await Task.sleep(nanoseconds: 200_000_000)
        let second = Task { () -> Duration in
            _ = try? await connection.read(timeout: 0.3)
            return ContinuousClock.now - start
        }
        let firstEnded = await first.value, secondEnded = await second.value
        XCTAssertGreaterThanOrEqual(firstEnded, .milliseconds(1900))
        XCTAssertGreaterThanOrEqual(secondEnded, firstEnded, "the second read ran beside the first")
        await connection.close()
    }

    /// A connect that stalls before TCP completes (a full backlog drops its SYNs), cancelled
    /// at 100 ms, throws `CancellationError` at once, not at the connect's timeout.
    func testCancellingAStalledTCPConnect_EndsItAtOnce() async throws {
        let port = try fixtures.stalledListener()
        let settings = try fixtures.configuration(nil)
        let connecting = Task {
            try await RSAAsyncTLSConnection.connect(
                host: "127.0.0.1", port: port, configuration: settings, identity: nil)
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        let cancelled = ContinuousClock.now
        connecting.cancel()
        do {
            _ = try await connecting.value
            XCTFail("a connect to a full backlog completed")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertLessThan(ContinuousClock.now - cancelled, .milliseconds(250))
    }

    /// A read waiting on a server that sends nothing (s_server -www waits for the request)
    /// and a handshake with a listener that never answers both end when their task is
    /// cancelled, long before their 20-second timeouts; meanwhile the pool runs other tasks.
    func testCancellation_EndsABlockedReadAndHandshake_AndThePoolKeepsRunning() async throws {
        let connection = try await connectToNewServer()
        let ticks = Atomic<Int>(0)
        let ticker = Task {
            while !Task.isCancelled {
                ticks.add(1, ordering: .relaxed)
                try? await Task.sleep(nanoseconds: 5_000_000)
            }
        }
        defer { ticker.cancel() }
        let started = ContinuousClock.now
        let reader = Task { try await connection.read(timeout: 20) }
        try await Task.sleep(nanoseconds: 300_000_000)
        let ticksWhileBlocked = ticks.load(ordering: .relaxed)
        reader.cancel()
        do {
            _ = try await reader.value
            XCTFail("the read returned")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
        XCTAssertGreaterThan(ticksWhileBlocked, 10, "the pool ran other tasks while the read blocked")
        // The connection is over: writing to the shut-down socket is an error, not a SIGPIPE
        // that ends the process (GnuTLS sends with MSG_NOSIGNAL), and close() sends nothing.
        for _ in 0..<2 {
            do {
                try await connection.write(Data("GET / HTTP/1.0\r\n\r\n".utf8))
                XCTFail("a write on a shut-down socket succeeded")
            } catch {
                guard case .connectionFailed? = error as? RSATLSError else { return XCTFail("\(error)") }
            }
        }
        await connection.close()

        let port = try fixtures.silentListener()
        let settings = try fixtures.configuration(nil)
        let handshakeStarted = ContinuousClock.now
        let connecting = Task {
            try await RSAAsyncTLSConnection.connect(
                host: "127.0.0.1", port: port, configuration: settings, identity: nil)
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        connecting.cancel()
        do {
            _ = try await connecting.value
            XCTFail("a silent listener completed a handshake")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertLessThan(ContinuousClock.now - handshakeStarted, .seconds(5))
    }
}
