internal import CGMP
internal import CRSAKitShims

/// The Montgomery constants of one public odd modulus n (-n^-1 mod 2^64 and R^2 mod n),
/// computed once, for repeated exponentiation by a public exponent of at most 64 bits:
/// the RSA public operation and the re-encryption check of the private one.
///
/// Saves what GMP's `mpz_powm` redoes on every call (a full division to bring the base
/// into Montgomery form, the inverse limb, a sliding-window table that a sparse exponent
/// such as 65537 does not need). See `rsakit_montgomery.h`.
///
/// Immutable after construction and holding public data only: safe to share across threads.
internal final class MontgomeryModulus: @unchecked Sendable {
    private let context: OpaquePointer

    /// The constants of `n`, or nil when n is even or <= 1.
    init?(_ n: BigNumber) {
        guard let context = rsakit_mont_create(n.raw) else { return nil }
        self.context = context
    }

    deinit { rsakit_mont_destroy(context) }

    /// base^exponent mod n, or nil when base is outside [0, n) or exponent outside
    /// [1, 2^64) (the caller then falls back to `mpz_powm`).
    /// Variable time in the exponent (public); see the header for the base.
    func powVarTime(_ base: BigNumber, _ exponent: BigNumber) -> BigNumber? {
        let r = BigNumber()
        return rsakit_mont_powm_vartime(r.raw, base.raw, exponent.raw, context) == 0 ? r : nil
    }
}
