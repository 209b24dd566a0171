internal import CNettle

/// SHA-256 (FIPS 180-4 §6.2), computed by Nettle (`nettle_sha256_*` from <nettle/sha2.h>).
///
/// RSAKit does not implement hash functions itself; this is a thin one-shot wrapper used
/// for key fingerprints (``RSAKeyFingerprint``) and the container format.
/// Not a secret-dependent operation in RSAKit's use (it hashes public keys); Nettle's
/// SHA-256 has no data-dependent branches or table lookups.
public enum SHA256 {
    /// The digest length in bytes (32).
    public static let digestByteCount = 32

    /// SHA-256 of `bytes`.
    ///
    /// - Parameter bytes: the message, any length (including empty).
    /// - Returns: the 32-byte digest.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var context = sha256_ctx()
        nettle_sha256_init(&context)
        bytes.withUnsafeBufferPointer { buffer in
            nettle_sha256_update(&context, buffer.count, buffer.baseAddress)
        }
        var digest = [UInt8](repeating: 0, count: digestByteCount)
        digest.withUnsafeMutableBufferPointer { buffer in
            // NOTE: Nettle 3.8 takes the output length; Nettle 3.10 dropped that parameter.
            nettle_sha256_digest(&context, buffer.count, buffer.baseAddress)
        }
        return digest
    }
}
