import Foundation
@testable import RSAKit
import XCTest

/// Issue 16 §6: async file and stream calls, cancellation between batches, the shared
/// worker budget.
final class AsyncMessageTests: XCTestCase {
    /// A source over bytes that cancels the current task after its first read and counts reads.
    private struct CancellingSource: RSAByteSource {
        var inner: RSAArrayByteSource
        var reads = 0
        mutating func read(upTo maximumCount: Int) throws -> [UInt8] {
            reads += 1
            if reads == 1 { withUnsafeCurrentTask { $0?.cancel() } }
            return try inner.read(upTo: maximumCount)
        }
        var remainingByteCount: Int? { inner.remainingByteCount }
    }

    func testAsyncFileRoundTrip_AndStreams() async throws {
        let key = try TestKeys.generated(bits: 1024)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rsakit-async-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = folder.appendingPathComponent("plain"), sealed = folder.appendingPathComponent("sealed")
        let opened = folder.appendingPathComponent("opened")
        let message = [UInt8]((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try Data(message).write(to: plain)
        try await RSAMessage.encryptFile(at: plain, to: sealed, for: key.publicKey, maximumWorkers: 2)
        try await RSAMessage.decryptFile(at: sealed, to: opened, with: key)
        XCTAssertEqual([UInt8](try Data(contentsOf: opened)), message)

        var source = RSAArrayByteSource(message)
        var sink = RSAArrayByteSink()
        try await RSAMessage.encrypt(from: &source, to: &sink, for: key.publicKey, format: .rawBlocks(padding: .pkcs1v15))
        XCTAssertEqual(sink.bytes.count % key.blockSize, 0)
        var back = RSAArrayByteSource(sink.bytes), out = RSAArrayByteSink()
        try await RSAMessage.decrypt(from: &back, to: &out, with: key, format: .rawBlocks(padding: .pkcs1v15))
        XCTAssertEqual(out.bytes, message)
    }

    func testCancellation_StopsBetweenBatches_AndLeavesNoOutputFile() async throws {
        let key = try TestKeys.generated(bits: 1024)
        let message = [UInt8](repeating: 0x41, count: 400_000)   // many batches of blocks
        let task = Task { () -> (Error?, Int) in
            var source = CancellingSource(inner: RSAArrayByteSource(message))
            var sink = RSAArrayByteSink()
            do {
                try await RSAMessage.encrypt(from: &source, to: &sink, for: key.publicKey,
                                             format: .rawBlocks(padding: .pkcs1v15), maximumWorkers: 1)
                return (nil, source.reads)
            } catch {
                return (error, source.reads)
            }
        }
        let (error, reads) = await task.value
        XCTAssertTrue(error is CancellationError, "\(String(describing: error))")
        XCTAssertLessThan(reads, 5, "reading stopped soon after cancellation")

        // A file call cancelled before it starts writes nothing.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rsakit-cancel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = folder.appendingPathComponent("plain"), sealed = folder.appendingPathComponent("sealed")
        try Data(message).write(to: plain)
        let fileTask = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await RSAMessage.encryptFile(at: plain, to: sealed, for: key.publicKey)
        }
        do {
            try await fileTask.value
            XCTFail("not cancelled")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: sealed.path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["plain"], "no temporary left")
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

        let inside = try await RSAWorkerBudget.run(maximumWorkers: 1) { RSAPKCS1v15Chunking.defaultConcurrency }
        XCTAssertEqual(inside, 1)
        XCTAssertEqual(RSAPKCS1v15Chunking.defaultConcurrency, RSAWorkerBudget.processorCount, "outside an async call")
    }
}
