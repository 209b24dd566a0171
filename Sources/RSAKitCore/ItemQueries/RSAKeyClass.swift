#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whether a key store item holds the public or the private half of a key pair
/// (Apple's `kSecAttrKeyClass`: `kSecAttrKeyClassPublic` / `kSecAttrKeyClassPrivate`).
public enum RSAKeyClass: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// A public key item (SPKI PEM on disk).
    case `public`
    /// A private key item (PKCS#8 PEM on disk). Holding it also gives the public key.
    case `private`

    /// "public" or "private" (also the name of the class's folder in the store).
    public var description: String { rawValue }
}
