// Hooks for the valgrind constant-time harness (Tests/ConstantTimeHarness) only, behind
// `package` access: not API, not stable. They change no value; they tell
// valgrind's memcheck which bytes are secret.

/// Memcheck client requests for the constant-time harness (no-ops outside valgrind).
package enum RSAKitConstantTimeHarness {
    /// True when the client requests were compiled in (valgrind/memcheck.h was present).
    public static var isAvailable: Bool { ConstantTimeAudit.isAvailable }

    /// True when the process runs under valgrind.
    public static var isRunningOnValgrind: Bool { ConstantTimeAudit.isRunningOnValgrind }

    /// Mark `bytes` undefined (secret).
    public static func poison(_ bytes: UnsafeRawBufferPointer) { ConstantTimeAudit.poison(bytes) }

    /// Mark `bytes` defined (revealed).
    public static func declassify(_ bytes: UnsafeRawBufferPointer) { ConstantTimeAudit.declassify(bytes) }

    /// Have every later EME-OAEP decode call `probe` with the unmasked DB (pointer, byte
    /// count) before its checks: the harness's planted branch in the OAEP path. Call once,
    /// before any decryption; there is no detaching.
    public static func attachOAEPDecodeProbe(_ probe: @convention(c) (UnsafeRawPointer?, Int) -> Void) {
        ConstantTimeAudit.oaepDecodeProbe = probe
    }
}

extension RSAPrivateKey {
    /// Mark every secret of the key undefined for memcheck: in the constant-time form the
    /// primes, d_i, the coefficients and the products of primes (see
    /// `rsakit_sec_key_poison`; `keepGMPTableLimbs` as there), and the limbs of the
    /// `BigNumber` components d, p, q, dP, dQ, qInv and every otherPrimeInfo (the mpz
    /// reference path's view).
    package func poisonSecretsForHarness(keepGMPTableLimbs: Bool = true) {
        let key = storage
        key.secret.poisonForHarness(keepGMPTableLimbs: keepGMPTableLimbs)
        var numbers = [key.d, key.p, key.q, key.dP, key.dQ, key.qInv]
        for other in key.otherPrimes { numbers += [other.prime, other.exponent, other.coefficient] }
        for number in numbers { number.poisonLimbsForHarness() }
    }

    /// Run `body` with the `rsakit_sec_key *` of this key (to attach a test kernel through
    /// `rsakit_sec_key_set_kernel`, rsakit_secret.h). The key must not be in use elsewhere.
    package func withConstantTimeKeyHandleForHarness<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R {
        try storage.secret.withHandle(body)
    }
}

extension RSAPrivateKey {
    /// RSADP's batch entry point (1 to 8 blocks of this key in one call to the C layer).
    /// - Throws: as ``rsadp(_:random:)``.
    package func rsadpBatchForHarness(_ ciphertexts: [[UInt8]], random: RSARandomSource) throws -> [[UInt8]] {
        try rsadp(batch: ciphertexts, random: random)
    }
}
