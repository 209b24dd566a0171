// Running blocking work off Swift's cooperative thread pool (issue 28). RSAKit's CPU-bound
// calls (key generation, chunked RSA, Argon2id) and blocking I/O (files, sockets) would
// stall every task sharing a pool thread if an async caller ran them inline; their async
// forms hand them to a Dispatch queue instead and suspend until they finish. Cancellation
// of the awaiting task sets a flag the work polls at its own safe points.
import Dispatch
import Synchronization

/// Set when the task awaiting a piece of blocking work is cancelled. The work runs on a
/// Dispatch thread, where `Task.isCancelled` is always false, so it polls this flag instead.
package final class RSACancellationFlag: Sendable {
    private let state = Atomic<Bool>(false)

    /// Whether cancellation was requested.
    var isCancelled: Bool { state.load(ordering: .acquiring) }

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

    /// Run `body` on a serial Dispatch queue of its own and suspend the calling task until
    /// it returns. A serial queue is "overcommitting": Dispatch gives it a thread even when
    /// every processor is busy, whereas the cooperative pool (on Linux, Dispatch's width-
    /// limited root queue) and `.concurrent` queues would wait for one, so that blocking
    /// work there would stall the tasks of the pool.
    ///
    /// Cancellation of the calling task sets the flag `body` receives; `body` decides where
    /// to stop (and throws `CancellationError`). A task cancelled before the work starts
    /// throws `CancellationError` without running `body`.
    package static func run<T: Sendable>(_ body: @escaping @Sendable (RSACancellationFlag) throws -> T) async throws -> T {
        let flag = RSACancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                DispatchQueue(label: queueLabel, qos: .userInitiated).async {
                    continuation.resume(with: Result {
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
