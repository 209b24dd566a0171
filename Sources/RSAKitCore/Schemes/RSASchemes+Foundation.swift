// Foundation forms of the scheme calls that Encoding/RSAKeys+Foundation.swift does not
// already cover: PKCS#1 v1.5 one-block encryption and decryption without a
// padding argument, decryption with an explicit random source, signatures over digests,
// DigestInfos and SHAKE, and the OAEP label. Operations take `Data` and return `Data`
// (a `Data` parameter, not `some DataProtocol`, so that `encrypt(Array(...))` keeps
// meaning the `[UInt8]` form). Each forwards to the `[UInt8]` form documented beside it;
// behaviour, errors and constant-time status are that form's.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAPublicKey {
    /// RSAES-PKCS1-V1_5-ENCRYPT of one block (``encrypt(_:random:)-([UInt8],_)``) for `Data` input.
    /// - Parameters:
    ///   - message: M, 0 to k - 11 bytes.
    ///   - random: source of the padding string PS.
    /// - Returns: exactly k bytes.
    /// - Throws: `RSAError.messageTooLong(byteCount:maximum:)`, `RSAError.keyRestricted`.
    public func encrypt(_ message: Data, random: RSARandomSource = SystemRandomSource()) throws -> Data {
        Data(try encrypt([UInt8](message), random: random))
    }

    /// Signature verification over a digest (``isValidSignature(_:forDigest:hash:padding:)-([UInt8],[UInt8],_,_)``)
    /// for `Data` input.
    /// - Parameters:
    ///   - signature: S, exactly k bytes (any other length is invalid).
    ///   - digest: Hash(M), `hash.digestByteCount` bytes.
    ///   - hash: the message hash.
    ///   - padding: the scheme, and for PSS the salt length to require (or `.auto`).
    /// - Returns: true only for a valid signature. Never throws. Public data only; not constant-time.
    public func isValidSignature(
        _ signature: Data, forDigest digest: Data, hash: RSAHashAlgorithm, padding: RSASignaturePadding
    ) -> Bool {
        isValidSignature([UInt8](signature), forDigest: [UInt8](digest), hash: hash, padding: padding)
    }

    /// RSASSA-PKCS1-v1_5 verification over a ready-made T
    /// (``isValidSignature(_:forDigestInfo:)-([UInt8],[UInt8])``) for `Data` input.
    /// - Returns: true only for a valid signature of exactly k bytes. Never throws.
    public func isValidSignature(_ signature: Data, forDigestInfo digestInfo: Data) -> Bool {
        isValidSignature([UInt8](signature), forDigestInfo: [UInt8](digestInfo))
    }

    /// RSASSA-PSS verification with SHAKE (``isValidSignature(_:for:shake:saltLength:)-([UInt8],[UInt8],_,_)``)
    /// for `Data` input.
    /// - Returns: true only for a valid signature of exactly k bytes. Never throws.
    public func isValidSignature(
        _ signature: Data, for message: Data, shake: RSAPSSSHAKE, saltLength: RSAPSSSaltLength = .digestLength
    ) -> Bool {
        isValidSignature([UInt8](signature), for: [UInt8](message), shake: shake, saltLength: saltLength)
    }
}

extension RSAPrivateKey {
    /// RSAES-PKCS1-V1_5-DECRYPT of one k-byte block (``decrypt(_:)-([UInt8])``) for `Data` input.
    /// Constant-time, blinded and checked as the `[UInt8]` form.
    /// - Returns: M, 0 to k - 11 bytes.
    /// - Throws: `RSAError.decryptionFailed` (opaque) for every failure; `RSAError.keyRestricted`.
    public func decrypt(_ ciphertext: Data) throws -> Data {
        Data(try decrypt([UInt8](ciphertext)))
    }

    /// ``decrypt(_:)-(Data)`` with an explicit random source for the blinding factor.
    /// - Throws: as ``decrypt(_:)-([UInt8])``.
    public func decrypt(_ ciphertext: Data, random: RSARandomSource) throws -> Data {
        Data(try decrypt([UInt8](ciphertext), random: random))
    }

    /// RSAES-PKCS1-V1_5-DECRYPT with explicit or implicit rejection
    /// (``decrypt(_:rejection:random:)-([UInt8],_,_)``) for `Data` input.
    /// - Returns: M, or with `.implicit` and a bad padding the synthetic message (0 to k - 11 bytes).
    /// - Throws: as the `[UInt8]` form.
    public func decrypt(
        _ ciphertext: Data, rejection: RSAPaddingRejection, random: RSARandomSource = SystemRandomSource()
    ) throws -> Data {
        Data(try decrypt([UInt8](ciphertext), rejection: rejection, random: random))
    }

    /// RSAES decryption of one k-byte block with an explicit random source for the blinding
    /// factor (``decrypt(_:padding:random:)-([UInt8],_,_)``) for `Data` input.
    /// - Throws: `RSAError.decryptionFailed` (opaque) for every failure; `RSAError.keyRestricted`.
    public func decrypt(_ ciphertext: Data, padding: RSAEncryptionPadding, random: RSARandomSource) throws -> Data {
        Data(try decrypt([UInt8](ciphertext), padding: padding, random: random))
    }

    /// A signature over a digest (``signature(forDigest:hash:padding:random:)-([UInt8],_,_,_)``)
    /// for `Data` input.
    /// - Parameters:
    ///   - digest: Hash(M), exactly `hash.digestByteCount` bytes.
    ///   - hash: the hash that made `digest`.
    ///   - padding: PKCS#1 v1.5 or PSS.
    ///   - random: source of the PSS salt and of the blinding factor.
    /// - Returns: S, exactly k bytes.
    /// - Throws: every error of the `[UInt8]` form (`RSAError.digestLengthMismatch`,
    ///   `RSAError.keyTooSmallForPadding`, `RSAError.saltLengthInvalid`, `RSAError.keyRestricted`).
    public func signature(
        forDigest digest: Data, hash: RSAHashAlgorithm, padding: RSASignaturePadding,
        random: RSARandomSource = SystemRandomSource()
    ) throws -> Data {
        Data(try signature(forDigest: [UInt8](digest), hash: hash, padding: padding, random: random))
    }

    /// RSASSA-PKCS1-v1_5 over a ready-made T (``signature(forDigestInfo:random:)-([UInt8],_)``)
    /// for `Data` input.
    /// - Parameters:
    ///   - digestInfo: T, at most k - 11 bytes; used as given.
    ///   - random: source of the blinding factor.
    /// - Returns: S, exactly k bytes.
    /// - Throws: `RSAError.keyTooSmallForPadding`, `RSAError.keyRestricted`.
    public func signature(forDigestInfo digestInfo: Data, random: RSARandomSource = SystemRandomSource()) throws -> Data
    {
        Data(try signature(forDigestInfo: [UInt8](digestInfo), random: random))
    }

    /// RSASSA-PSS with SHAKE128 or SHAKE256 (``signature(for:shake:saltLength:random:)-([UInt8],_,_,_)``)
    /// for `Data` input.
    /// - Returns: S, exactly k bytes.
    /// - Throws: `RSAError.saltLengthInvalid`, `RSAError.keyTooSmallForPadding`, `RSAError.keyRestricted`.
    public func signature(
        for message: Data, shake: RSAPSSSHAKE, saltLength: RSAPSSSaltLength = .digestLength,
        random: RSARandomSource = SystemRandomSource()
    ) throws -> Data {
        Data(try signature(for: [UInt8](message), shake: shake, saltLength: saltLength, random: random))
    }
}

extension RSAOAEPParameters {
    /// OAEP parameters with the label L held in `Data`; see
    /// ``init(hash:mgf1Hash:label:)-(_,_,[UInt8])``.
    /// - Parameters:
    ///   - hash: the OAEP hash (default SHA-256).
    ///   - mgf1Hash: the MGF1 hash; nil (the default) means the same as `hash`.
    ///   - label: L, any length.
    public init(hash: RSAHashAlgorithm = .sha256, mgf1Hash: RSAHashAlgorithm? = nil, label: Data) {
        self.init(hash: hash, mgf1Hash: mgf1Hash, label: [UInt8](label))
    }
}
