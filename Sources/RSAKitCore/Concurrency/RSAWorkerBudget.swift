#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process-wide budget of block workers shared by RSAKit's `async` calls.
///
/// A synchronous call uses one worker per active processor. An `async` call first takes
/// between 1 and that many workers from this budget (waiting while it is empty) and uses
/// only those, so a task group of twenty decryptions on a 4-core machine runs 4 workers in
/// all instead of 80.
package final class RSAWorkerBudget: Sendable {
    /// Active processors (at least 1).
    static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The workers granted to the current RSAKit async call, bound on the thread that runs it.
    @TaskLocal static var granted: Int?

    /// What ``RSAPKCS1v15Chunking/defaultConcurrency`` returns.
    static var currentLimit: Int { min(granted ?? processorCount, processorCount) }

    static let shared = RSAWorkerBudget(total: processorCount)

    private struct State {
        var available: Int
        var waiters: [(wanted: Int, continuation: CheckedContinuation<Int, Never>)] = []
    }
    private let state: PThreadMutex<State>

    init(total: Int) { state = PThreadMutex(State(available: max(1, total))) }

    /// Take between 1 and `wanted` workers, waiting until at least one is free.
    func acquire(upTo wanted: Int) async -> Int {
        let wanted = max(1, wanted)
        return await withCheckedContinuation { continuation in
            let granted: Int? = state.withLock { state in
                guard state.available > 0, state.waiters.isEmpty else {
                    state.waiters.append((wanted, continuation))
                    return nil
                }
                let count = min(wanted, state.available)
                state.available -= count
                return count
            }
            if let granted { continuation.resume(returning: granted) }
        }
    }

    /// Give `count` workers back and wake waiters in arrival order.
    func release(_ count: Int) {
        let woken: [(Int, CheckedContinuation<Int, Never>)] = state.withLock { state in
            state.available += count
            var woken: [(Int, CheckedContinuation<Int, Never>)] = []
            while state.available > 0, !state.waiters.isEmpty {
                let waiter = state.waiters.removeFirst()
                let grant = min(waiter.wanted, state.available)
                state.available -= grant
                woken.append((grant, waiter.continuation))
            }
            return woken
        }
        for (grant, continuation) in woken { continuation.resume(returning: grant) }
    }

    /// Run `body` with workers from the shared budget, off the cooperative pool
    /// (``RSABlockingWork``), honouring cancellation before it starts; `body` gets the flag
    /// that cancellation sets, to poll between batches.
    package static func run<T: Sendable>(
        maximumWorkers: Int?,
        _ body: @escaping @Sendable (RSACancellationFlag) throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let count = await shared.acquire(upTo: maximumWorkers ?? processorCount)
        defer { shared.release(count) }
        try Task.checkCancellation()
        return try await RSABlockingWork.run { flag in
            try $granted.withValue(count) { try body(flag) }
        }
    }
}

/// A source that throws `CancellationError` once `flag` is set. The block pipeline reads
/// one batch (32 blocks per worker) at a time, so cancellation takes effect between
/// batches; a batch in flight finishes.
package struct CancellationCheckingSource<Inner: RSAByteSource>: RSAByteSource {
    var inner: Inner
    let flag: RSACancellationFlag

    package init(inner: Inner, flag: RSACancellationFlag) {
        self.inner = inner
        self.flag = flag
    }

    package mutating func read(upTo maximumCount: Int) throws -> [UInt8] {
        try flag.check()
        return try inner.read(upTo: maximumCount)
    }
    package var remainingByteCount: Int? { inner.remainingByteCount }
}
