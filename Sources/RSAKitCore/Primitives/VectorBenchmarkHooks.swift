// Entry points for RSAKitBenchmarks only, with `package` access: not API, not stable.

/// Which vector-kernel implementation a benchmark key copy runs.
package enum RSABenchmarkVectorImplementation: String, Sendable, CaseIterable {
    /// The portable radix-2^52 reference (scalar products): every CPU.
    case reference
    /// The AVX-512 IFMA kernel: only where ``RSAKitEngine/cpuSupportsIFMA``.
    case ifma
}

extension RSAPrivateKey {
    /// A copy of this key whose private operations run on `implementation` of the vector
    /// kernel, whatever the dispatch chose; nil when it cannot attach on this machine (IFMA
    /// without the CPU, a prime above 2048 bits).
    /// - Throws: `RSAError.internalError` if the constant-time form cannot be rebuilt.
    package func withVectorKernelForBenchmarks(_ implementation: RSABenchmarkVectorImplementation) throws
        -> RSAPrivateKey?
    {
        try withVectorKernel(implementation == .ifma ? .ifma : .reference)
    }

    /// RSADP (RFC 8017 §5.1.2, blinded, checked) on 1 to 8 ciphertext representatives at
    /// once: one call of the kernel seam (the multi-buffer kernel for 3 to 8 of them).
    /// - Parameter ciphertexts: c_j as exactly k big-endian bytes each.
    /// - Returns: m_j, exactly k bytes each.
    /// - Throws: `RSAError.decryptionFailed` when some c_j >= n; `RSAError.internalError`
    ///   when a check fails.
    package func rsadpBatchForBenchmarks(_ ciphertexts: [[UInt8]]) throws -> [[UInt8]] {
        try rsadp(batch: ciphertexts, random: SystemRandomSource())
    }
}
