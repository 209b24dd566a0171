// Running blocking work off Swift's cooperative thread pool. RSAKit's CPU-bound calls (key
// generation, chunked RSA, Argon2id, PKCS#12 key derivation) and blocking I/O (files,
// sockets, fetches) would stall every task sharing a pool thread if an async caller ran
// them inline; their async forms hand them to a bounded pool of threads of RSAKit's own
// (RSAWorkPool) or, for transfers that wait on a peer, to a thread of their own, and
// suspend until they finish. Cancellation of the awaiting task sets a flag the work polls
// at its own safe points.
import Dispatch
import Synchronization

/// Set when the task awaiting a piece of blocking work is cancelled. The work runs on a
/// Dispatch thread, where `Task.isCancelled` is always false, so it polls this flag instead.
package final class RSACancellationFlag: Sendable {
    private let state = Atomic<Bool>(false)

    /// Whether cancellation was requested.
    package var isCancelled: Bool { state.load(ordering: .acquiring) }

    /// Request cancellation (idempotent; called from any thread).
    func cancel() { state.store(true, ordering: .releasing) }

    /// - Throws: `CancellationError` once cancellation was requested.
    package func check() throws {
        if isCancelled { throw CancellationError() }
    }
}

/// A value handed to blocking work and back while its owner is suspended. Sound only
/// because the owner awaits the work: the value is never used by two threads at once.
package final class RSAHandOver<Value>: @unchecked Sendable {
    package var value: Value
    package init(_ value: Value) { self.value = value }
}

package enum RSABlockingWork {
    /// The label of the queues blocking work runs on.
    static let queueLabel = "org.rsakit.blocking-work"

    /// Run `body` on ``RSAWorkPool/shared`` (at most the processor count plus two threads,
    /// however many calls wait) and suspend the calling task until it returns. For work that
    /// computes (key generation, PKCS#12's key derivation, Argon2id) or waits a bounded time
    /// (trust evaluation's fetches, each with its own timeout): a thread per call would let
    /// 64 waiting key generations make 64 threads that only compete for the same cores.
    ///
    /// Cancellation of the calling task sets the flag `body` receives; `body` decides where
    /// to stop (and throws `CancellationError`). A task cancelled before its work starts
    /// throws `CancellationError` at once and its work never runs, so a cancelled call does
    /// not wait for a place in the pool.
    package static func run<T: Sendable>(_ body: @escaping @Sendable (RSACancellationFlag) throws -> T) async throws
        -> T
    {
        try await RSAWorkPool.shared.run(body)
    }

    /// Run `body` on a serial Dispatch queue of its own and suspend the calling task until
    /// it returns: a thread per call, for work that waits on a peer for as long as the peer
    /// takes (one HTTPS transfer, one connection's socket), as URLSession gives each task
    /// its own. Such work in the bounded pool would let a few slow servers starve every key
    /// generation. A serial queue is "overcommitting": Dispatch gives it a thread even when
    /// every processor is busy, whereas the cooperative pool (on Linux, Dispatch's width-
    /// limited root queue) and `.concurrent` queues would wait for one.
    ///
    /// Cancellation as ``run(_:)``, except that a task cancelled while the thread starts
    /// still hears of it from `body`'s first check.
    package static func runOnOwnThread<T: Sendable>(_ body: @escaping @Sendable (RSACancellationFlag) throws -> T)
        async throws -> T
    {
        let flag = RSACancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                DispatchQueue(label: queueLabel, qos: .userInitiated).async {
                    continuation.resume(
                        with: Result {
                            try flag.check()
                            return try body(flag)
                        })
                }
            }
        } onCancel: {
            flag.cancel()
        }
    }
}
