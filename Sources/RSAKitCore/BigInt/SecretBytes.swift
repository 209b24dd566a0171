internal import CRSAKitShims

/// A small secret (a message secret, a session key) in memory that is zeroed when the last
/// reference goes away, and that is never copied into a Swift array except by ``array``.
final class SecretBytes: @unchecked Sendable {
    // Immutable after init; read concurrently by pipeline workers.
    private let storage: UnsafeMutableBufferPointer<UInt8>

    /// `count` bytes from `random`.
    init(random: RSARandomSource, count: Int) {
        storage = .allocate(capacity: count)
        storage.initialize(repeating: 0)
        random.fill(UnsafeMutableRawBufferPointer(storage))
    }

    /// `count` zero bytes, to be filled through ``baseAddress`` (decrypted blocks before they
    /// are copied out).
    init(count: Int) {
        storage = .allocate(capacity: max(1, count))
        storage.initialize(repeating: 0)
    }

    /// A copy of `bytes`.
    init<C: Collection>(copying bytes: C) where C.Element == UInt8 {
        storage = .allocate(capacity: bytes.count)
        _ = storage.initialize(from: bytes)
    }

    deinit {
        // explicit_bzero: a store the optimiser may not drop.
        rsakit_secure_zero(storage.baseAddress, storage.count)
        storage.deallocate()
    }

    /// The first byte, for C calls that fill or read the buffer in place.
    var baseAddress: UnsafeMutablePointer<UInt8> { storage.baseAddress! }

    /// Length in bytes.
    var count: Int { storage.count }

    /// A copy as an array (the caller wipes it).
    var array: [UInt8] { Array(storage) }

    /// Run `body` over the bytes without copying them.
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(storage))
    }

    /// Constant-time comparison with `other` (same length and contents).
    func isEqual(to other: ArraySlice<UInt8>) -> Bool {
        guard other.count == storage.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(storage, other) { difference |= x ^ y }
        // Only the verdict leaves: declassified for the constant-time harness.
        var matches = ConstantTime.isZero(difference)
        ConstantTimeAudit.declassify(&matches)
        return matches != 0
    }
}
