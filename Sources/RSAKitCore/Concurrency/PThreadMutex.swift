// A mutual-exclusion lock over a POSIX mutex, for RSAKit's shared state.
// Synchronization.Mutex is a futex lock inside the Swift standard library, which is not
// built with ThreadSanitizer: TSan never sees its acquire and release and reports every
// access inside `withLock` as a race, so a suppression had to excuse whole sites (and would
// have hidden a real race in them). pthread_mutex_lock/unlock are intercepted by TSan, so
// the sites are checked. The cost is an uncontended lock and unlock, tens of nanoseconds.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value guarded by a `pthread_mutex_t` (PTHREAD_MUTEX_ERRORCHECK is not used: a
/// relock is a programming error caught in tests by the deadlock it causes).
///
/// Public for the rsakit PKCS#11 module (a host calls it from any thread, CKF_OS_LOCKING_OK)
/// and for apps that want the lock ThreadSanitizer sees; RSAKit itself spells it
/// `PThreadMutex`.
package final class RSAPThreadMutex<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A lock guarding `value`.
    /// - Parameter value: the initial value (moved in).
    /// - Note: Traps only if `pthread_mutex_init` fails (out of memory at process level).
    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Run `body` with exclusive access to the value; the lock is released when `body`
    /// returns or throws. Not reentrant.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

/// RSAKit's internal spelling of ``RSAPThreadMutex``.
package typealias PThreadMutex<Value> = RSAPThreadMutex<Value>
