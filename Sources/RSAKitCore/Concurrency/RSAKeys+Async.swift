#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Async forms of the slow key calls: key generation (0.2-0.7 s at 3072 bits, seconds at
// 4096 and above) runs in RSAKit's bounded pool (RSABlockingWork), off the cooperative pool,
// and honours cancellation. Each is spelled apart from its synchronous form (an initialiser,
// or the synchronous name with `Async`), so that `try await` picks it even in top-level code.

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
    public init(
        bitCount: Int, publicExponent: UInt64 = 65_537,
        random: RSARandomSource = SystemRandomSource()
    ) async throws {
        self = try await RSAPrivateKey.generateAsync(bitCount: bitCount, publicExponent: publicExponent, random: random)
    }

    /// The async form of ``generate(bitCount:publicExponent:random:progress:)`` (FIPS 186-5
    /// A.1.3), run in RSAKit's bounded pool of threads (at most the processor count plus
    /// two, however many calls wait), never on the cooperative pool. Apple's Security has no
    /// async `SecKeyCreateRandomKey`; this is what an app would wrap it in a task for.
    ///
    /// Cancelling the awaiting task stops the prime search at its next candidate, or drops
    /// the call before it starts while it waits for a thread.
    /// - Parameters:
    ///   - bitCount: nlen, the exact bit length of n, 1024 ... 16384.
    ///   - publicExponent: e, odd and >= 3 (default 65537).
    ///   - random: the source of every candidate (default: the OS generator).
    /// - Returns: the new key; its modulus has exactly `bitCount` bits.
    /// - Throws: `CancellationError` when the task is cancelled; every error of the
    ///   synchronous form (`RSAError.keySizeUnsupported`, `.publicExponentUnsupported`,
    ///   `.keyGenerationFailed`).
    public static func generateAsync(
        bitCount: Int, publicExponent: UInt64 = 65_537,
        random: RSARandomSource = SystemRandomSource()
    ) async throws -> RSAPrivateKey {
        try await RSABlockingWork.run { flag in
            try RSAPrivateKey.cancellingKeyGeneration {
                try RSAPrivateKey.generate(
                    bitCount: bitCount, publicExponent: publicExponent,
                    random: random
                ) { _ in !flag.isCancelled }
            }
        }
    }

    /// Run a key generation whose progress closure stops it on cancellation, and report that
    /// stop as Swift concurrency does, with `CancellationError`.
    package static func cancellingKeyGeneration<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch RSAError.keyGenerationCancelled {
            throw CancellationError()
        }
    }
}
