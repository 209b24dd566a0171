internal import CGMP
internal import CRSAKitShims

/// An owning wrapper over one GMP `mpz_t` (arbitrary-precision signed integer).
///
/// Internal to RSAKit: nothing outside `BigInt/` touches GMP. Every instance owns its
/// limbs; `deinit` zeroes the whole limb allocation before freeing it, and the GMP
/// allocator installed by ``BigNumber/prepareGMP()`` zeroes every block GMP frees or
/// moves internally (temporaries included), so values that held key material do not
/// linger in freed heap memory. (Scratch space that GMP places on the stack with
/// `alloca` for small operands is not covered.)
///
/// Instances are mutable only through the in-place `set…` methods used by the
/// primitives on values they own; values stored in keys are never mutated after
/// construction, which is what makes sharing them across threads safe.
internal final class BigNumber: @unchecked Sendable {
    /// Stable storage for the `__mpz_struct` (GMP keeps pointers to it across calls).
    let raw: UnsafeMutablePointer<__mpz_struct>

    /// Montgomery constants for self used as a public modulus (see ``montgomery``):
    /// computed on first use, dropped by the in-place mutators.
    private let montgomeryCache = PThreadMutex<MontgomeryCacheState>(.notComputed)

    private enum MontgomeryCacheState {
        case notComputed
        case computed(MontgomeryModulus?)
    }

    private static let gmpPrepared: Bool = {
        rsakit_gmp_install_zeroing_allocator()
        return true
    }()

    /// Install the zeroing allocator before the first GMP allocation. Idempotent.
    static func prepareGMP() {
        _ = gmpPrepared
    }

    /// A new integer with value 0.
    init() {
        BigNumber.prepareGMP()
        raw = UnsafeMutablePointer<__mpz_struct>.allocate(capacity: 1)
        __gmpz_init(raw)
    }

    /// A new integer with the value of `value`.
    convenience init(_ value: UInt) {
        self.init()
        __gmpz_set_ui(raw, value)
    }

    /// OS2IP (RFC 8017 §4.2): the non-negative integer whose big-endian octets are `bytes`.
    /// Leading zero bytes are allowed and ignored; an empty array is 0.
    convenience init(bytes: [UInt8]) {
        self.init()
        bytes.withUnsafeBufferPointer { buffer in
            rsakit_os2ip(raw, buffer.baseAddress, buffer.count)
        }
    }

    /// OS2IP over a slice, without copying it first.
    convenience init(bytes: ArraySlice<UInt8>) {
        self.init()
        bytes.withUnsafeBufferPointer { buffer in
            rsakit_os2ip(raw, buffer.baseAddress, buffer.count)
        }
    }

    /// A copy of `other` (its own limbs).
    convenience init(copying other: BigNumber) {
        self.init()
        __gmpz_set(raw, other.raw)
    }

    deinit {
        rsakit_mpz_clear_secure(raw)
        raw.deallocate()
    }

    // MARK: - Queries

    /// -1, 0 or 1.
    var sign: Int { Int(rsakit_mpz_sgn(raw)) }

    var isZero: Bool { sign == 0 }

    var isOdd: Bool { rsakit_mpz_odd_p(raw) != 0 }

    /// Number of significant bits of |self|; 0 for 0.
    var bitCount: Int { isZero ? 0 : Int(__gmpz_sizeinbase(raw, 2)) }

    /// Number of octets of the minimal big-endian encoding of |self|; 0 for 0.
    var byteCount: Int { (bitCount + 7) / 8 }

    /// Bit `index` (0 = least significant) of self.
    func testBit(_ index: Int) -> Bool { __gmpz_tstbit(raw, mp_bitcnt_t(index)) != 0 }

    /// -1, 0, 1 as self <, =, > other.
    func compare(_ other: BigNumber) -> Int {
        let c = __gmpz_cmp(raw, other.raw)
        return c < 0 ? -1 : (c > 0 ? 1 : 0)
    }

    /// -1, 0, 1 as self <, =, > value.
    func compare(_ value: UInt) -> Int {
        let c = __gmpz_cmp_ui(raw, value)
        return c < 0 ? -1 : (c > 0 ? 1 : 0)
    }

    /// self mod `divisor` for a small positive divisor (self >= 0).
    func remainder(dividingBy divisor: UInt) -> UInt {
        UInt(__gmpz_fdiv_ui(raw, divisor))
    }

    /// The value as a machine word, when it fits (self >= 0, < 2^64).
    var uintValue: UInt? {
        guard sign >= 0, bitCount <= UInt.bitWidth else { return nil }
        return UInt(__gmpz_get_ui(raw))
    }

    // MARK: - Octet strings (RFC 8017 §4)

    /// I2OSP (RFC 8017 §4.1): exactly `count` big-endian octets, leading zeros included.
    /// - Throws: `RSAError.integerTooLarge(byteCount:)` when self >= 256^count or self < 0.
    func bytes(count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let status = out.withUnsafeMutableBufferPointer { buffer in
            rsakit_i2osp(buffer.baseAddress, count, raw)
        }
        guard status == 0 else { throw RSAError.integerTooLarge(byteCount: count) }
        return out
    }

    /// I2OSP of a secret value into exactly `count` octets with no branch on its value (only
    /// its limb count is used, as public); the caller guarantees 0 <= self < 256^count.
    func secretBytes(count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBufferPointer { rsakit_i2osp_secret($0.baseAddress, count, raw) }
        return out
    }

    /// The minimal big-endian encoding of self >= 0 (no leading zero octets; `[]` for 0).
    var minimalBytes: [UInt8] {
        // Cannot fail: byteCount is exactly large enough.
        (try? bytes(count: byteCount)) ?? []
    }

    // MARK: - Arithmetic producing new values

    static func + (a: BigNumber, b: BigNumber) -> BigNumber {
        let r = BigNumber(); __gmpz_add(r.raw, a.raw, b.raw); return r
    }

    static func - (a: BigNumber, b: BigNumber) -> BigNumber {
        let r = BigNumber(); __gmpz_sub(r.raw, a.raw, b.raw); return r
    }

    static func * (a: BigNumber, b: BigNumber) -> BigNumber {
        let r = BigNumber(); __gmpz_mul(r.raw, a.raw, b.raw); return r
    }

    static func + (a: BigNumber, b: UInt) -> BigNumber {
        let r = BigNumber(); __gmpz_add_ui(r.raw, a.raw, b); return r
    }

    static func - (a: BigNumber, b: UInt) -> BigNumber {
        let r = BigNumber(); __gmpz_sub_ui(r.raw, a.raw, b); return r
    }

    static func * (a: BigNumber, b: UInt) -> BigNumber {
        let r = BigNumber(); __gmpz_mul_ui(r.raw, a.raw, b); return r
    }

    /// Floor division quotient a / b (b != 0).
    static func / (a: BigNumber, b: BigNumber) -> BigNumber {
        let r = BigNumber(); __gmpz_fdiv_q(r.raw, a.raw, b.raw); return r
    }

    /// The least non-negative residue of self modulo `m` (m > 0). Not constant-time.
    func mod(_ m: BigNumber) -> BigNumber {
        let r = BigNumber(); __gmpz_mod(r.raw, raw, m.raw); return r
    }

    /// self * 2^bits.
    func shiftedLeft(_ bits: Int) -> BigNumber {
        let r = BigNumber(); __gmpz_mul_2exp(r.raw, raw, mp_bitcnt_t(bits)); return r
    }

    /// floor(self / 2^bits).
    func shiftedRight(_ bits: Int) -> BigNumber {
        let r = BigNumber(); __gmpz_fdiv_q_2exp(r.raw, raw, mp_bitcnt_t(bits)); return r
    }

    /// |self|.
    var magnitude: BigNumber {
        let r = BigNumber(); __gmpz_abs(r.raw, raw); return r
    }

    /// 2^bits.
    static func powerOfTwo(_ bits: Int) -> BigNumber {
        let r = BigNumber(); __gmpz_setbit(r.raw, mp_bitcnt_t(bits)); return r
    }

    /// gcd(self, other) >= 0.
    func gcd(_ other: BigNumber) -> BigNumber {
        let r = BigNumber(); __gmpz_gcd(r.raw, raw, other.raw); return r
    }

    /// lcm(self, other) >= 0.
    func lcm(_ other: BigNumber) -> BigNumber {
        let r = BigNumber(); __gmpz_lcm(r.raw, raw, other.raw); return r
    }

    /// floor(sqrt(self)) for self >= 0.
    func squareRoot() -> BigNumber {
        let r = BigNumber(); __gmpz_sqrt(r.raw, raw); return r
    }

    /// self^-1 mod m in [1, m), or nil when gcd(self, m) != 1.
    /// Variable time (GMP's extended gcd): callers blind secret inputs first.
    func inverseVarTime(modulo m: BigNumber) -> BigNumber? {
        let r = BigNumber()
        return __gmpz_invert(r.raw, raw, m.raw) != 0 ? r : nil
    }

    /// self^exponent mod m. Variable time in every argument: use only with a public
    /// exponent, or for primality tests.
    ///
    /// For an exponent of at most 64 bits (an RSA public exponent), an odd m and
    /// 0 <= self < m, this uses m's cached Montgomery constants (``montgomery``); otherwise
    /// GMP's `mpz_powm`. Both give the same value.
    func powModVarTime(_ exponent: BigNumber, _ m: BigNumber) -> BigNumber {
        if exponent.sign > 0, exponent.bitCount <= 64, let modulus = m.montgomery,
            let r = modulus.powVarTime(self, exponent)
        {
            return r
        }
        let r = BigNumber(); __gmpz_powm(r.raw, raw, exponent.raw, m.raw); return r
    }

    /// The Montgomery constants of self as a modulus, computed once and kept for the
    /// life of this value (nil when self is even or <= 1). Thread-safe.
    var montgomery: MontgomeryModulus? {
        montgomeryCache.withLock { state in
            switch state {
            case .computed(let modulus):
                return modulus
            case .notComputed:
                let modulus = MontgomeryModulus(self)
                state = .computed(modulus)
                return modulus
            }
        }
    }

    /// Forget the Montgomery constants (self is about to change).
    private func dropMontgomeryCache() {
        montgomeryCache.withLock { $0 = .notComputed }
    }

    /// self^exponent mod m with GMP's `mpz_powm_sec`: time and memory access pattern
    /// independent of the exponent's and base's values (they depend on operand sizes only).
    /// Requires exponent > 0 and m odd (checked by the caller: keys are validated).
    func powMod(_ exponent: BigNumber, _ m: BigNumber) -> BigNumber {
        let r = BigNumber(); rsakit_mpz_powm_sec(r.raw, raw, exponent.raw, m.raw); return r
    }

    // MARK: - In-place updates (for values the caller owns exclusively)

    /// self = (self * other) mod m.
    func multiplyMod(by other: BigNumber, _ m: BigNumber) {
        dropMontgomeryCache()
        __gmpz_mul(raw, raw, other.raw)
        __gmpz_mod(raw, raw, m.raw)
    }

    /// self = self^2 mod m.
    func squareMod(_ m: BigNumber) {
        dropMontgomeryCache()
        __gmpz_mul(raw, raw, raw)
        __gmpz_mod(raw, raw, m.raw)
    }

    /// Set bit `index` (0 = least significant).
    func setBit(_ index: Int) {
        dropMontgomeryCache()
        __gmpz_setbit(raw, mp_bitcnt_t(index))
    }
}

extension BigNumber: Equatable {
    static func == (a: BigNumber, b: BigNumber) -> Bool { a.compare(b) == 0 }
}
