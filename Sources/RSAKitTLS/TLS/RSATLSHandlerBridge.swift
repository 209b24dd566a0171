// Awaiting an async handler from inside the TLS handshake. GnuTLS calls the verify callback
// synchronously, on the thread running the handshake, and needs the verdict before it
// returns; there is no way to suspend the handshake and resume it later. So the thread
// blocks on a semaphore while the handler runs as a task, which is sound because of where
// that thread comes from: RSAAsyncTLSConnection runs its calls on the connection's own
// serial queue (RSATLSQueueExecutor) and RSAHTTPSClient each transfer on a thread of its own
// (RSABlockingWork.runOnOwnThread), never on the cooperative pool. The waiting thread holds
// no pool thread, so the handler's task always finds one, however many handshakes wait,
// and cannot deadlock against them. Only the synchronous RSATLSConnection called from a
// task's body would block a pool thread here; its documentation says to use the async
// connection from async code.
import Dispatch
import RSAKitCore

enum RSATLSHandlerBridge {
    /// Run `operation` as a detached task (it must not inherit the caller's actor: that is the
    /// connection's executor, whose thread is the one waiting) and block this thread until it
    /// returns, or for `seconds` at most, then answer `fallback`.
    static func wait<T: Sendable>(
        seconds: Double, orElse fallback: T,
        _ operation: @escaping @Sendable () async -> T
    ) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = PThreadMutex<T?>(nil)
        let task = Task.detached {
            let value = await operation()
            result.withLock { $0 = value }
            done.signal()
        }
        let deadline: DispatchTime = seconds.isFinite && seconds > 0 ? .now() + seconds : .distantFuture
        if done.wait(timeout: deadline) == .timedOut {
            // The handshake gives up; the handler hears of it through cancellation, and what
            // it returns later is dropped. The result is read before the cancel: a handler
            // that returns at once when cancelled (a `try? await Task.sleep`) must not have
            // that answer taken for one given in time.
            let inTime = result.withLock { $0 }
            task.cancel()
            return inTime ?? fallback
        }
        return result.withLock { $0 } ?? fallback
    }
}
