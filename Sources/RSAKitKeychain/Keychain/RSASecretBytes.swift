/// Secret bytes (a passphrase, a derived key, a password value) that are zeroed when the
/// object is freed: the one owner of its buffer, so no copy is left behind by this type.
///
/// The library takes passphrases as `RSASecretBytes` (or `[UInt8]`, which it copies into one
/// and zeroes what it copied). Bytes handed out through ``withUnsafeBytes(_:)`` are not
/// copied; ``bytes`` makes an ordinary array the caller must treat (and wipe) as secret.
/// Zeroing uses libsodium's `sodium_memzero`, which the compiler may not remove.
import RSAKitCore
import RSAKitPKI

public final class RSASecretBytes: @unchecked Sendable {
    // NOTE: @unchecked: the buffer is written only in init and deinit (and by
    // ``withUnsafeMutableBytes(_:)``, whose caller owns the object exclusively).
    // At least one byte is allocated, so that the buffers handed out always have a base
    // address (C APIs want a valid pointer even for an empty passphrase).
    private let storage: UnsafeMutableRawBufferPointer
    private var pointer: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: storage[0..<byteCount])
    }
    private let byteCount: Int

    /// The number of bytes.
    public var count: Int { byteCount }

    /// Whether there are no bytes (an empty passphrase).
    public var isEmpty: Bool { byteCount == 0 }

    /// `count` zero bytes, to be filled by ``withUnsafeMutableBytes(_:)``.
    public init(zeroedCount count: Int) {
        byteCount = max(count, 0)
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
    }

    /// A copy of `bytes`. The caller remains responsible for wiping its own array.
    public convenience init<C: Collection>(copying bytes: C) where C.Element == UInt8 {
        self.init(zeroedCount: bytes.count)
        var i = 0
        for b in bytes { pointer[i] = b; i += 1 }
    }

    /// Take `bytes` and zero the caller's array (`bytes` is empty afterwards).
    public convenience init(consuming bytes: inout [UInt8]) {
        self.init(copying: bytes)
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { Sodium.memzero(base, buffer.count) }
        }
        bytes = []
    }

    /// The UTF-8 bytes of `text` (for tests and `pass:`; Swift strings cannot be wiped).
    public convenience init(utf8 text: String) {
        self.init(copying: Array(text.utf8))
    }

    deinit {
        Sodium.memzero(storage.baseAddress!, storage.count)
        storage.deallocate()
    }

    /// Run `body` over the bytes, without copying them. The base address is never nil.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(pointer))
    }

    /// Run `body` over the writable bytes (to fill a buffer made with ``init(zeroedCount:)``).
    public func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(pointer)
    }

    /// A copy as an ordinary array: secret; wipe it after use.
    public var bytes: [UInt8] { Array(UnsafeRawBufferPointer(pointer)) }

    /// Whether both hold the same bytes (compared in time independent of the contents;
    /// the lengths are not secret).
    public func constantTimeEquals(_ other: RSASecretBytes) -> Bool {
        guard count == other.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<count { difference |= pointer[i] ^ other.pointer[i] }
        return difference == 0
    }
}
