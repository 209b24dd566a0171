// TEMPORARY: the agreed `schemes` API (COMMON.md), PKCS#1 v1.5 only, so that the Messages
// layer builds before branch `schemes` is merged. Deleted in the merge of `schemes`.

/// Hash algorithms (stand-in until the schemes branch lands).
public enum RSAHashAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// SHA-1.
    case sha1, sha224, sha256, sha384, sha512
    /// SHA-512/224 and SHA-512/256.
    case sha512_224 = "sha512-224", sha512_256 = "sha512-256"
    /// SHA-3.
    case sha3_224 = "sha3-224", sha3_256 = "sha3-256", sha3_384 = "sha3-384", sha3_512 = "sha3-512"

    /// Digest length in bytes.
    public var digestByteCount: Int {
        switch self {
        case .sha1: return 20
        case .sha224, .sha512_224, .sha3_224: return 28
        case .sha256, .sha512_256, .sha3_256: return 32
        case .sha384, .sha3_384: return 48
        case .sha512, .sha3_512: return 64
        }
    }

    /// Parse a CLI name.
    public init?(name: String) {
        let n = name.lowercased()
        self.init(rawValue: n.hasPrefix("sha-") ? "sha" + n.dropFirst(4) : n)
    }
}

/// Encryption padding (stand-in).
public enum RSAEncryptionPadding: Sendable, Hashable {
    /// RSAES-PKCS1-v1_5.
    case pkcs1v15
    /// RSAES-OAEP.
    case oaep(RSAOAEPParameters)
}

/// OAEP parameters (stand-in).
public struct RSAOAEPParameters: Sendable, Hashable {
    /// The OAEP hash.
    public var hash: RSAHashAlgorithm
    /// The MGF1 hash.
    public var mgf1Hash: RSAHashAlgorithm
    /// The label.
    public var label: [UInt8]
    /// Parameters.
    public init(hash: RSAHashAlgorithm = .sha256, mgf1Hash: RSAHashAlgorithm? = nil, label: [UInt8] = []) {
        self.hash = hash
        self.mgf1Hash = mgf1Hash ?? hash
        self.label = label
    }
}

extension RSAPublicKey {
    /// Stand-in.
    public func encrypt(_ message: [UInt8], padding: RSAEncryptionPadding, random: RSARandomSource = SystemRandomSource()) throws -> [UInt8] {
        guard case .pkcs1v15 = padding else { throw RSAError.internalError("OAEP not merged yet") }
        return try encrypt(message, random: random)
    }

    /// Stand-in.
    public func maximumMessageByteCount(padding: RSAEncryptionPadding) -> Int {
        switch padding {
        case .pkcs1v15: return maximumMessageByteCount
        case let .oaep(p): return max(0, modulusByteCount - 2 * p.hash.digestByteCount - 2)
        }
    }
}

extension RSAPrivateKey {
    /// Stand-in.
    public func decrypt(_ ciphertext: [UInt8], padding: RSAEncryptionPadding) throws -> [UInt8] {
        guard case .pkcs1v15 = padding else { throw RSAError.internalError("OAEP not merged yet") }
        return try decrypt(ciphertext)
    }
}
