/// SHA-256 (FIPS 180-4 §6.2), computed by Nettle: kept for the callers that predate
/// ``RSAHashAlgorithm`` (key fingerprints, the container); it delegates to
/// `RSAHashAlgorithm.sha256`.
///
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
        RSAHashAlgorithm.sha256.hash(bytes)
    }
}
