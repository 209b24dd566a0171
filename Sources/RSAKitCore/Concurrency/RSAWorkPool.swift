// The bounded pool behind RSAKit's async calls. Dispatch gives every serial queue a thread
// of its own when the others are busy ("overcommit"), so one queue per call made one
// thread per waiting call: 64 async key generations took a process from 23 threads to 72,
// all competing for the same cores. Here at most `width` threads run work, whatever the
// number of callers; the others wait in a FIFO without a thread.
import Dispatch

/// A FIFO of blocking work drained by at most ``width`` threads (each a serial Dispatch
/// queue, started on demand and ended when the FIFO is empty, so an idle process keeps none).
///
/// Never on the cooperative pool: a job blocks its thread for as long as it runs. A job must
/// not wait for another job of the same pool (with every thread waiting, none would run).
package final class RSAWorkPool: Sendable {
    /// The pool the async calls share: the processor count plus two threads, the two for
    /// work that waits on a fetch (trust evaluation's OCSP, CRL and issuer downloads, each
    /// under its own timeout) while the processors stay busy with computation.
    package static let shared = RSAWorkPool(width: RSAWorkerBudget.processorCount + 2)

    /// The most threads that run jobs at once.
    package let width: Int

    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var running = 0
    }
    private let state = PThreadMutex(State())

    /// A pool of at most `width` threads (at least 1).
    package init(width: Int) { self.width = max(1, width) }

    /// The threads running jobs now and the jobs waiting for one (for tests).
    package var load: (running: Int, waiting: Int) {
        state.withLock { ($0.running, $0.jobs.count - $0.head) }
    }

    /// Run `body` on one of the pool's threads and suspend until it returns.
    ///
    /// Cancelling the awaiting task sets the flag `body` polls; a job still waiting for a
    /// thread is dropped and the call throws `CancellationError` at once.
    package func run<T: Sendable>(_ body: @escaping @Sendable (RSACancellationFlag) throws -> T) async throws -> T {
        let flag = RSACancellationFlag()
        let ticket = Ticket<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                ticket.store(continuation)
                // A cancellation that came before the store could not take the continuation:
                // answer it here instead of after a wait for a thread.
                if flag.isCancelled, let taken = ticket.take() {
                    taken.resume(throwing: CancellationError())
                    return
                }
                submit {
                    // Whoever takes the continuation first answers it: this thread, or a
                    // cancellation while the job waited.
                    guard let taken = ticket.take() else { return }
                    taken.resume(
                        with: Result {
                            try flag.check()
                            return try body(flag)
                        })
                }
            }
        } onCancel: {
            flag.cancel()
            ticket.take()?.resume(throwing: CancellationError())
        }
    }

    /// Queue `job`, and start a thread for the pool unless ``width`` already run.
    private func submit(_ job: @escaping @Sendable () -> Void) {
        let start: Bool = state.withLock { state in
            state.jobs.append(job)
            guard state.running < width else { return false }
            state.running += 1
            return true
        }
        if start {
            DispatchQueue(label: RSABlockingWork.queueLabel, qos: .userInitiated).async { self.drain() }
        }
    }

    /// Run queued jobs until none is left, then give the thread back.
    private func drain() {
        while let job = next() { job() }
    }

    private func next() -> (@Sendable () -> Void)? {
        state.withLock { state in
            guard state.head < state.jobs.count else {
                state.jobs.removeAll(keepingCapacity: true)
                state.head = 0
                state.running -= 1
                return nil
            }
            let job = state.jobs[state.head]
            state.head += 1
            return job
        }
    }

    /// The continuation of one call, answered exactly once.
    private final class Ticket<T: Sendable>: Sendable {
        private let continuation = PThreadMutex<CheckedContinuation<T, Error>?>(nil)
        func store(_ value: CheckedContinuation<T, Error>) { continuation.withLock { $0 = value } }
        func take() -> CheckedContinuation<T, Error>? {
            continuation.withLock { value in
                defer { value = nil }
                return value
            }
        }
    }
}
