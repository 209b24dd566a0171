#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Async forms of the slow key and store calls (issue 28): key generation (0.2-0.7 s at 3072
// bits, seconds at 4096 and above) and opening a protected store (Argon2id at the store's
// cost) run off the cooperative pool (RSABlockingWork) and honour cancellation. Each is
// spelled apart from its synchronous form (an initialiser, a URL), so that `try await` picks
// it even in top-level code.

extension RSAPrivateKey {
    /// Generate a key pair off the cooperative pool, as
    /// ``generate(bitCount:publicExponent:random:progress:)`` does (FIPS 186-5 A.1.3), in the
    /// manner of swift-crypto's `PrivateKey(keySize:)`.
    ///
    /// Cancelling the awaiting task stops the prime search at its next candidate.
    /// - Parameters:
    ///   - bitCount: nlen, the exact bit length of n, 1024 ... 16384.
    ///   - publicExponent: e, odd and >= 3 (default 65537).
    ///   - random: the source of every candidate (default: the OS generator).
    /// - Throws: `CancellationError` when the task is cancelled; every error of the
    ///   synchronous form (`RSAError.keySizeUnsupported`, `.publicExponentUnsupported`,
    ///   `.keyGenerationFailed`).
    public init(bitCount: Int, publicExponent: UInt64 = 65_537,
                random: RSARandomSource = SystemRandomSource()) async throws {
        self = try await RSABlockingWork.run { flag in
            do {
                return try RSAPrivateKey.generate(bitCount: bitCount, publicExponent: publicExponent,
                                                  random: random) { _ in !flag.isCancelled }
            } catch RSAError.keyGenerationCancelled {
                throw CancellationError()
            }
        }
    }
}
