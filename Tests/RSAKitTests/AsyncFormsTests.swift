import Foundation
import XCTest
import RSAKit
import RSAKitCore
import RSAKitTestSupport

/// The async forms of the calls that block (key generation, trust evaluation, PKCS#12
/// import over HTTPS, the async server-trust handler) and the bounded pool they share.
final class AsyncFormsTests: XCTestCase {
    /// Threads of this process now (`Threads:` of /proc/self/status).
    private static func threadCount() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") } ?? ""
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? -1
    }

    /// The highest thread count seen while `body` runs, sampled every 2 ms on a thread
    /// started (and so counted) before `body` starts.
    private static func peakThreadCount(during body: () async throws -> Void) async rethrows -> Int {
        let peak = LockedBox(threadCount())
        let stop = LockedBox(false)
        let sampler = Thread {
            while !stop.value {
                let now = threadCount()
                peak.update { $0 = max($0, now) }
                usleep(2_000)
            }
        }
        sampler.start()
        defer { stop.update { $0 = true } }
        try await body()
        return peak.value
    }

    /// Start the cooperative pool's threads and the sampler's, so that the baseline counts them.
    private static func warmUp() async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<16 { group.addTask { try? await Task.sleep(nanoseconds: 20_000_000) } }
        }
        _ = try? await peakThreadCount { try await Task.sleep(nanoseconds: 20_000_000) }
        try? await Task.sleep(nanoseconds: 50_000_000)
    }

    func testGenerateAsync_64AtOnce_ThreadCountStaysWithinThePool_AndEveryKeyIsRight() async throws {
        await Self.warmUp()
        let baseline = Self.threadCount()
        let width = RSAWorkPool.shared.width
        let busiest = LockedBox(0)
        var keys: [RSAPrivateKey] = []
        let peak = try await Self.peakThreadCount {
            keys = try await withThrowingTaskGroup(of: RSAPrivateKey.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        let key = try await RSAPrivateKey.generateAsync(bitCount: 1024)
                        let running = RSAWorkPool.shared.load.running
                        busiest.update { $0 = max($0, running) }
                        return key
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        print(
            "note: 64 async key generations: \(baseline) threads before, \(peak) at most (pool width \(width), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores)"
        )
        XCTAssertLessThanOrEqual(peak, baseline + width + 2, "threads grew with the number of waiting calls")
        XCTAssertLessThanOrEqual(busiest.value, width)
        XCTAssertEqual(keys.count, 64)
        XCTAssertEqual(
            Set(keys.map { $0.publicKey.fingerprint.base64String }).count, 64, "two calls returned the same key")
        for key in keys {
            XCTAssertEqual(key.modulusBitCount, 1024)
            let message = Array("bounded pool".utf8)
            let signature = try key.signature(for: message, hash: .sha256, padding: .pkcs1v15)
            XCTAssertTrue(key.publicKey.isValidSignature(signature, for: message, hash: .sha256, padding: .pkcs1v15))
        }
    }

    /// The measure can tell: a thread per call (what the HTTPS transfers keep) does grow
    /// with the callers, where the pool does not.
    func testThreadCount_AThreadPerCall_GrowsWithTheCallers() async throws {
        await Self.warmUp()
        let baseline = Self.threadCount()
        let peak = try await Self.peakThreadCount {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<24 {
                    group.addTask { () async throws -> Void in
                        try await RSABlockingWork.runOnOwnThread { (_: RSACancellationFlag) -> Void in usleep(300_000) }
                    }
                }
                try await group.waitForAll()
            }
        }
        print("note: 24 calls with a thread each: \(baseline) threads before, \(peak) at most")
        XCTAssertGreaterThan(peak, baseline + RSAWorkPool.shared.width + 2)
    }

    func testWorkPool_CancelledWhileWaiting_ThrowsAtOnce_AndNeverRuns() async throws {
        let pool = RSAWorkPool(width: 1)
        let release = DispatchSemaphore(value: 0)
        let blocker = Task { try await pool.run { _ in release.wait() } }
        while pool.load.running == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
        let ran = LockedBox(false)
        let waiting = Task { try await pool.run { _ in ran.update { $0 = true } } }
        while pool.load.waiting == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
        let start = Date()
        waiting.cancel()
        do {
            try await waiting.value
            XCTFail("a cancelled waiting call returned")
        } catch is CancellationError {}
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.25)
        release.signal()
        try await blocker.value
        try await pool.run { _ in }  // the dropped job ran nothing and the pool still works
        XCTAssertFalse(ran.value)
        // The worker counts itself idle just after the caller resumes: wait for it (a bound,
        // not a timing assertion).
        let deadline = Date().addingTimeInterval(5)
        while pool.load.running != 0 && Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        XCTAssertEqual(pool.load.running, 0)
    }

    func testGenerateAsync_Cancelled_ThrowsCancellationError() async throws {
        let task = Task { try await RSAPrivateKey.generateAsync(bitCount: 8192) }
        try await Task.sleep(nanoseconds: 50_000_000)
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("an 8192-bit generation was not cancelled")
        } catch is CancellationError {}
    }

    func testGenerateKeyPairAsync_StoresBothHalves() async throws {
        let folder = TestKeys.scratch.appendingPathComponent("async-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        let store = try RSAKeyStore(path: folder.path)
        let made = try await store.generateKeyPairAsync(tag: "com.example.async", label: "async", bitCount: 1024)
        XCTAssertEqual(try store.privateKey(tag: "com.example.async"), made.key)
        XCTAssertEqual(made.public.label, "async")
        XCTAssertEqual(made.private.keySizeInBits, 1024)
        do {
            _ = try await store.generateKeyPairAsync(tag: "com.example.async", bitCount: 1024)
            XCTFail("a second pair under the tag was stored without replace")
        } catch RSAError.duplicateItem {}
    }

    func testEvaluateAsync_GivesTheSynchronousEvaluation() async throws {
        let pki = try TestPKI.shared()
        var trust = RSATrust(
            certificates: [try pki.certificate("server"), try pki.certificate("intermediate")],
            policy: .sslServer(hostname: "server.rsakit.test"))
        trust.anchorCertificates = [try pki.certificate("root")]
        trust.anchorCertificatesOnly = true
        let asynchronous = try await trust.evaluateAsync()
        let synchronous = trust.evaluate()
        XCTAssertEqual(asynchronous.result, .unspecified)
        XCTAssertEqual(asynchronous.result, synchronous.result)
        XCTAssertEqual(asynchronous.chain, synchronous.chain)
    }

    func testImportIdentityAsync_PKCS12Bytes_StoresTheIdentity() async throws {
        let pki = try TestPKI.shared()
        let p12 = pki.path("async-\(UUID().uuidString).p12")
        try OpenSSL.run([
            "pkcs12", "-export", "-inkey", pki.leafKey, "-in", pki.path("client.pem"), "-name", "Client Identity",
            "-passout", "pass:pfx secret", "-out", p12
        ])
        let folder = TestKeys.scratch.appendingPathComponent("async-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        let store = try RSAKeyStore(path: folder.path)
        let (identity, contents) = try await store.importIdentityAsync(
            pkcs12: [UInt8](Data(contentsOf: URL(fileURLWithPath: p12))),
            passphrase: Array("pfx secret".utf8))
        XCTAssertEqual(identity.certificate.label, "Client Identity")
        XCTAssertEqual(identity.privateKey.applicationTag, "Client Identity")
        XCTAssertEqual(contents.certificate, try pki.certificate("client"))
    }
}
