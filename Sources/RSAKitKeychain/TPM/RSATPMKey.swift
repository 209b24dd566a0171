// What a store keeps of a key in the TPM: its one usage and the TPM's two blobs. The blobs are
// the TPM's own (marshalled TPM2B_PUBLIC and TPM2B_PRIVATE, the private area encrypted by the
// TPM to its storage key): useless on another TPM, and after this TPM is cleared.

import RSAKitCore

/// What a key in the TPM may do, fixed in the TPM object when it is made (its
/// `objectAttributes` and RSA scheme): Apple's `kSecAttrCanSign` or `kSecAttrCanDecrypt`,
/// never both.
///
/// TPM 2.0 allows a key to both sign and decrypt only with a NULL scheme, and a NULL scheme
/// lets TPM2_RSA_Decrypt do raw RSA: such a key would sign and decrypt anything for whoever
/// holds its PIN and blob, whatever program they use. So a key rsakit makes has one usage,
/// and the TPM itself refuses the other.
public enum RSATPMKeyUsage: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Signing (TPMA_OBJECT_SIGN_ENCRYPT set, DECRYPT clear, scheme NULL): TPM2_Sign with
    /// RSASSA-PKCS1-v1_5 or RSASSA-PSS over SHA-1, SHA-256, SHA-384 or SHA-512. The TPM
    /// refuses TPM2_RSA_Decrypt with it.
    case sign
    /// Decryption with RSAES-OAEP, SHA-256 for the label hash and MGF1, empty label
    /// (TPMA_OBJECT_DECRYPT set, SIGN_ENCRYPT clear, scheme OAEP-SHA-256). The default.
    case decryptOAEP = "decrypt-oaep"
    /// Decryption with RSAES-PKCS1-v1_5 (scheme RSAES). The TPM checks the padding inside and
    /// answers a bad one with an error of its own: rsakit's implicit rejection and
    /// constant-time padding check do not apply. Prefer ``decryptOAEP``.
    case decryptPKCS1v15 = "decrypt-pkcs1"

    /// True for ``sign`` (Apple's `kSecAttrCanSign`).
    public var canSign: Bool { self == .sign }
    /// True for the decryption usages (Apple's `kSecAttrCanDecrypt`).
    public var canDecrypt: Bool { self != .sign }

    /// The one encryption padding a decryption key takes (nil for ``sign``): RSAES-OAEP with
    /// SHA-256, MGF1-SHA-256 and an empty label, or RSAES-PKCS1-v1_5.
    public var decryptionPadding: RSAEncryptionPadding? {
        switch self {
        case .sign: return nil
        case .decryptOAEP: return .oaep(RSAOAEPParameters(hash: .sha256, mgf1Hash: .sha256, label: []))
        case .decryptPKCS1v15: return .pkcs1v15
        }
    }

    /// "sign", "decrypt (RSAES-OAEP SHA-256)" or "decrypt (RSAES-PKCS1-v1_5)".
    public var description: String {
        switch self {
        case .sign: return "sign"
        case .decryptOAEP: return "decrypt (RSAES-OAEP SHA-256)"
        case .decryptPKCS1v15: return "decrypt (RSAES-PKCS1-v1_5)"
        }
    }
}

/// A key in the TPM as the store keeps it: its usage, the TPM's blobs and what rsakit learned
/// of it at creation. Not secret (the private blob is encrypted by the TPM, and only that TPM,
/// with the key's PIN, can use it), and not portable.
public struct RSATPMKeyBlobs: Sendable, Hashable, Codable {
    /// The usage fixed in the TPM object.
    public let usage: RSATPMKeyUsage
    /// The marshalled TPM2B_PUBLIC (what `tpm2_create -u` writes and `tpm2_load -u` reads).
    public let publicBlob: [UInt8]
    /// The marshalled TPM2B_PRIVATE, encrypted by the TPM to its storage key (what
    /// `tpm2_create -r` writes and `tpm2_load -r` reads).
    public let privateBlob: [UInt8]
    /// For a ``RSATPMKeyUsage/sign`` key: whether this TPM's RSASSA-PSS uses a salt as long as
    /// the hash (as TLS 1.3 requires), found at creation by one signature checked with the
    /// public key. False for a decryption key.
    public let signsPSSWithDigestLengthSalt: Bool

    /// Blobs from their parts (``RSATokenKey/generateInTPM(_:bits:usage:pin:)`` makes them).
    public init(usage: RSATPMKeyUsage, publicBlob: [UInt8], privateBlob: [UInt8], signsPSSWithDigestLengthSalt: Bool) {
        self.usage = usage
        self.publicBlob = publicBlob
        self.privateBlob = privateBlob
        self.signsPSSWithDigestLengthSalt = signsPSSWithDigestLengthSalt
    }

    private enum CodingKeys: String, CodingKey {
        case usage, publicBlob = "public", privateBlob = "private", pssSaltIsHashLength
    }

    /// Decodes the record: the blobs as base64 text.
    /// - Throws: `DecodingError` for a missing field or bad base64.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        usage = try c.decode(RSATPMKeyUsage.self, forKey: .usage)
        func blob(_ key: CodingKeys) throws -> [UInt8] {
            let text = try c.decode(String.self, forKey: key)
            guard let bytes = try? Base64.decode(Array(text.utf8), strict: true), !bytes.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "bad base64")
            }
            return bytes
        }
        publicBlob = try blob(.publicBlob)
        privateBlob = try blob(.privateBlob)
        signsPSSWithDigestLengthSalt = try c.decode(Bool.self, forKey: .pssSaltIsHashLength)
    }

    /// Encodes the record, the blobs as base64 text.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(usage, forKey: .usage)
        try c.encode(Base64.encode(publicBlob), forKey: .publicBlob)
        try c.encode(Base64.encode(privateBlob), forKey: .privateBlob)
        try c.encode(signsPSSWithDigestLengthSalt, forKey: .pssSaltIsHashLength)
    }
}
