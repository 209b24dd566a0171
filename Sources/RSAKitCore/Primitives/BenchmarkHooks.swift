// Entry points for RSAKitBenchmarks only, with `package` access: not API, not stable,
// and unsafe for real use (they skip the protections of the private-key operation).

extension RSAPrivateKey {
    /// The bare CRT exponentiation m = c^d mod n that ``rsadp(_:)`` performs between
    /// blinding and its re-encryption check (RFC 8017 §5.1.2 step 2.b), exactly as RSAKit
    /// runs it, so that the benchmark can time the hot path on its own.
    ///
    /// - Parameter ciphertext: c as big-endian octets, 0 <= c < n.
    /// - Returns: m, exactly k (``modulusByteCount``) bytes.
    /// - Throws: `RSAError.decryptionFailed` unless 0 <= c < n.
    /// - Warning: No blinding and no fault check (the constant-time `mpn_sec_*` path of
    ///   `rsakit_secret.h` without them). For benchmarks only.
    package func unprotectedCRTExponentiationForBenchmarks(_ ciphertext: [UInt8]) throws -> [UInt8] {
        let c = BigNumber(bytes: ciphertext)
        guard c.sign >= 0, c.compare(storage.n) < 0 else { throw RSAError.decryptionFailed }
        let result = storage.secret.unprotectedCRT(try c.bytes(count: modulusByteCount))
        guard result.status == .ok else { throw RSAError.decryptionFailed }
        return result.output
    }
}
