internal import CGMP

// Fixed-length little-endian 64-bit limb arrays, for the radix-2^52 vector kernel
// (CRSAKitVector), which takes GMP's limb order but not GMP's types.

extension BigNumber {
    /// |self| as exactly `count` little-endian 64-bit limbs (higher limbs dropped, zero
    /// limbs added). Copies limbs by position; branches only on the limb counts.
    func limbs(count: Int) -> [UInt64] {
        var out = [UInt64](repeating: 0, count: count)
        let used = min(Int(__gmpz_size(raw)), count)
        if used > 0, let source = __gmpz_limbs_read(raw) {
            for i in 0..<used { out[i] = UInt64(source[i]) }
        }
        return out
    }

    /// The non-negative integer with the little-endian 64-bit limbs `limbs`.
    convenience init(limbs: UnsafeBufferPointer<UInt64>) {
        self.init()
        __gmpz_import(raw, limbs.count, -1, 8, 0, 0, limbs.baseAddress)
    }

    /// Limbs of |self| (GMP's size).
    var limbCount: Int { Int(__gmpz_size(raw)) }
}
