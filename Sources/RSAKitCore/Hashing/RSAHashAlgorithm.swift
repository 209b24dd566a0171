internal import CNettle

/// The hash functions RSAKit's schemes use (OAEP, MGF1, PKCS#1 v1.5 and PSS signatures),
/// each computed by Nettle, never by RSAKit's own code.
///
/// The raw value is the CLI name (`rsakit sign --hash sha512-256`). SHA-1, SHA-2 are FIPS
/// 180-4; SHA-512/224 and SHA-512/256 are FIPS 180-4 §6.7-6.8; SHA3 is FIPS 202.
/// Nettle's hashes have no data-dependent branches or table lookups, so hashing secret
/// data (the OAEP seed, for example) is constant-time in its contents.
public enum RSAHashAlgorithm: String, Sendable, Hashable, CaseIterable {
    case sha1
    case sha224
    case sha256
    case sha384
    case sha512
    case sha512_224 = "sha512-224"
    case sha512_256 = "sha512-256"
    case sha3_224 = "sha3-224"
    case sha3_256 = "sha3-256"
    case sha3_384 = "sha3-384"
    case sha3_512 = "sha3-512"

    /// Parse a hash name in any common spelling, case-insensitively: "sha256", "SHA-256",
    /// "sha-256", "SHA256"; "sha512-256", "SHA-512/256", "sha512_256"; "sha3-256",
    /// "SHA3-256", "sha3_256". Returns nil for anything else (MD5, SHAKE...).
    public init?(name: String) {
        // Keep letters and digits only: "SHA-512/256" -> "sha512256", "sha3-256" -> "sha3256".
        let folded = String(name.lowercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber) })
        guard let match = Self.allCases.first(where: { $0.foldedName == folded }) else { return nil }
        self = match
    }

    private var foldedName: String { rawValue.filter { $0.isLetter || $0.isNumber } }

    /// The conventional display name ("SHA-256", "SHA-512/256", "SHA3-256").
    public var displayName: String {
        switch self {
        case .sha1: return "SHA-1"
        case .sha224: return "SHA-224"
        case .sha256: return "SHA-256"
        case .sha384: return "SHA-384"
        case .sha512: return "SHA-512"
        case .sha512_224: return "SHA-512/224"
        case .sha512_256: return "SHA-512/256"
        case .sha3_224: return "SHA3-224"
        case .sha3_256: return "SHA3-256"
        case .sha3_384: return "SHA3-384"
        case .sha3_512: return "SHA3-512"
        }
    }

    /// hLen: the digest length in bytes (20 for SHA-1, 32 for SHA-256, 28 for SHA-512/224...).
    public var digestByteCount: Int { Int(nettle.digest_size) }

    /// The hash of `bytes`, in one call.
    ///
    /// - Parameter bytes: the message, any length (including empty).
    /// - Returns: the digest, exactly ``digestByteCount`` bytes.
    public func hash(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = RSAHasher(algorithm: self)
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Nettle's descriptor (`const struct nettle_hash`, <nettle/nettle-meta.h>).
    internal var nettle: nettle_hash {
        switch self {
        case .sha1: return nettle_sha1
        case .sha224: return nettle_sha224
        case .sha256: return nettle_sha256
        case .sha384: return nettle_sha384
        case .sha512: return nettle_sha512
        case .sha512_224: return nettle_sha512_224
        case .sha512_256: return nettle_sha512_256
        case .sha3_224: return nettle_sha3_224
        case .sha3_256: return nettle_sha3_256
        case .sha3_384: return nettle_sha3_384
        case .sha3_512: return nettle_sha3_512
        }
    }

    /// The content octets of the hash's OBJECT IDENTIFIER: SHA-1 1.3.14.3.2.26 (RFC 3279
    /// §2.2.1); SHA-2 and SHA-3 2.16.840.1.101.3.4.2.{1-10} (NIST CSOR, RFC 5754 §2).
    internal var objectIdentifier: [UInt8] {
        let arc: UInt8
        switch self {
        case .sha1: return [0x2B, 0x0E, 0x03, 0x02, 0x1A]
        case .sha256: arc = 1
        case .sha384: arc = 2
        case .sha512: arc = 3
        case .sha224: arc = 4
        case .sha512_224: arc = 5
        case .sha512_256: arc = 6
        case .sha3_224: arc = 7
        case .sha3_256: arc = 8
        case .sha3_384: arc = 9
        case .sha3_512: arc = 10
        }
        return [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, arc]
    }

    /// The hash whose OBJECT IDENTIFIER has these content octets, nil for another.
    internal init?(objectIdentifier content: some Collection<UInt8>) {
        guard let match = Self.allCases.first(where: { $0.objectIdentifier.elementsEqual(content) }) else { return nil }
        self = match
    }
}
