import Foundation
import RSAKit
import Synchronization
import XCTest
@testable import RSAKitCore

/// The async forms run off the cooperative pool, stop when their task
/// is cancelled, and share one worker budget.
final class AsyncMessageTests: XCTestCase {
    private func folder(_ name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rsakit-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        return folder
    }

    func testAsyncFileAndDataRoundTrip() async throws {
        let key = try TestKeys.generated(bits: 1024)
        let folder = try folder("async")
        let plain = folder.appendingPathComponent("plain"), sealed = folder.appendingPathComponent("sealed")
        let opened = folder.appendingPathComponent("opened")
        let message = [UInt8]((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try Data(message).write(to: plain)
        try await RSAMessage.encryptFile(at: plain, to: sealed, for: key.publicKey, maximumWorkers: 2)
        try await RSAMessage.decryptFile(at: sealed, to: opened, with: key)
        XCTAssertEqual([UInt8](try Data(contentsOf: opened)), message)

        let raw = try await RSAMessage.encrypt(
            Data(message), for: key.publicKey, format: .rawBlocks(padding: .pkcs1v15))
        XCTAssertEqual(raw.count, (message.count + 116) / 117 * key.blockSize, "117-byte chunks, one k-byte block each")
        let back = try await RSAMessage.decrypt(raw, with: key, format: .rawBlocks(padding: .pkcs1v15))
        XCTAssertEqual([UInt8](back), message)
    }

    /// Blocking work must not occupy the cooperative pool (as wide as the processor count):
    /// four calls that each block for 300 ms, more than there are processors here, run at
    /// once and a task on the pool keeps running meanwhile.
    func testAsyncWorkRunsOffTheCooperativePool() async throws {
        let ticks = Atomic<Int>(0)
        let ticker = Task {
            while !Task.isCancelled {
                ticks.add(1, ordering: .relaxed)
                try? await Task.sleep(nanoseconds: 5_000_000)
            }
        }
        let calls = max(4, 2 * RSAWorkerBudget.processorCount)
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<calls {
                group.addTask { _ = try await RSABlockingWork.run { _ -> Int32 in usleep(300_000) } }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - started
        let ticked = ticks.load(ordering: .relaxed)
        ticker.cancel()
        XCTAssertLessThan(elapsed, .milliseconds(900), "\(calls) blocking calls ran side by side")
        XCTAssertGreaterThan(ticked, 20, "the pool ran other tasks while \(calls) calls blocked")

        // And a real one: a 2 MB encryption with one worker, the pool still free.
        let key = try TestKeys.generated(bits: 1024)
        let big = Data(repeating: 0x5A, count: 2_000_000)
        let sealed = try await RSAMessage.encrypt(big, for: key.publicKey, format: .rawBlocks(), maximumWorkers: 1)
        XCTAssertEqual(sealed.count, (big.count + 116) / 117 * 128)
    }

    func testCancellation_StopsBetweenBatches_AndLeavesNoOutputFile() async throws {
        let key = try TestKeys.generated(bits: 2048)
        // 20 MB at 2048 bits is 85,000 blocks: seconds of work with one worker.
        let folder = try folder("cancel")
        let plain = folder.appendingPathComponent("plain"), sealed = folder.appendingPathComponent("sealed")
        try Data(repeating: 0x41, count: 20_000_000).write(to: plain)
        let started = ContinuousClock.now
        let task = Task {
            try await RSAMessage.encryptFile(
                at: plain, to: sealed, for: key.publicKey, format: .rawBlocks(), maximumWorkers: 1)
        }
        try await Task.sleep(nanoseconds: 200_000_000)
        task.cancel()
        do {
            try await task.value
            XCTFail("not cancelled")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "stopped at a batch boundary, not at the end")
        XCTAssertFalse(FileManager.default.fileExists(atPath: sealed.path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["plain"], "no temporary left")

        // A call whose task is already cancelled does not start.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await RSAMessage.encrypt(Data([1, 2, 3]), for: key.publicKey)
        }
        do {
            _ = try await early.value
            XCTFail("not cancelled")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
    }

    func testAsyncKeyGeneration_ProducesAValidKey_AndCancels() async throws {
        // e = 65537: with e = 3 the FIPS 186-5 A.1.3 bound fails a 1024-bit search about once
        // in 700 keys (TestKeys.generated).
        let key = try await RSAPrivateKey(bitCount: 1024, publicExponent: 65537)
        XCTAssertEqual(key.modulusBitCount, 1024)
        XCTAssertEqual(key.publicExponent, [0x01, 0x00, 0x01])
        XCTAssertEqual(try RSAMessage.decrypt(RSAMessage.encrypt([7, 8, 9], for: key.publicKey), with: key), [7, 8, 9])

        // 8192 bits takes seconds; cancelled after 100 ms, it stops at the next candidate.
        let started = ContinuousClock.now
        let task = Task { try await RSAPrivateKey(bitCount: 8192) }
        try await Task.sleep(nanoseconds: 100_000_000)
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("an 8192-bit key in 100 ms: not cancelled")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))
    }

    func testAsyncStoreOpen_UnlocksAProtectedStore() async throws {
        let path = try folder("store").appendingPathComponent("store")
        let store = try RSAKeyStore(path: path.path)
        try store.protect(passphrase: RSASecretBytes(copying: Array("open sesame".utf8)), parameters: .interactive)
        try store.addGenericPassword(RSASecretBytes(copying: Array("pw".utf8)), service: "svc", account: "acct")

        let opened = try await RSAKeyStore.open(
            at: path, passphrase: RSASecretBytes(copying: Array("open sesame".utf8)))
        XCTAssertEqual(
            try opened.genericPasswordValue(service: "svc", account: "acct").bytes,
            Array("pw".utf8))
        do {
            _ = try await RSAKeyStore.open(at: path, passphrase: RSASecretBytes(copying: Array("wrong".utf8)))
            XCTFail("a wrong passphrase opened the store")
        } catch {
            XCTAssertEqual(error as? RSAError, .wrongPassphrase)
        }
        do {
            _ = try await RSAKeyStore.open(at: path.appendingPathComponent("missing"), createIfMissing: false)
            XCTFail("a missing store opened")
        } catch {
            guard case .storeNotFound? = error as? RSAError else { return XCTFail("\(error)") }
        }
        // The default creates, as RSAKeyStore(url:) and RSAKeyStore(path:) do.
        let made = try await RSAKeyStore.open(at: path.appendingPathComponent("made"))
        XCTAssertTrue(try made.allItems().keys.isEmpty)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path.appendingPathComponent("made").path))
    }

    func testWorkerBudget_BoundsConcurrentCalls() async throws {
        let budget = RSAWorkerBudget(total: 2)
        let first = await budget.acquire(upTo: 8)
        XCTAssertEqual(first, 2, "never more than the total")
        let waiter = Task { await budget.acquire(upTo: 1) }
        try await Task.sleep(nanoseconds: 50_000_000)
        budget.release(first)
        let second = await waiter.value
        XCTAssertEqual(second, 1)
        budget.release(second)

        let inside = try await RSAWorkerBudget.run(maximumWorkers: 1) { _ in RSAPKCS1v15Chunking.defaultConcurrency }
        XCTAssertEqual(inside, 1)
        XCTAssertEqual(RSAPKCS1v15Chunking.defaultConcurrency, RSAWorkerBudget.processorCount, "outside an async call")
    }
}
