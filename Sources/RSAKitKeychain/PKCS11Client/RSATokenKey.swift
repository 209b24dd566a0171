// Keys on a PKCS#11 token: the private operations run on the token, the
// private key value never enters rsakit's memory (except, once, for an imported key).

import RSAKitCore
import RSAKitPKI
internal import CP11Kit

/// Where a token key lives: the module, the token and the object's CKA_ID, as a key store
/// item records it (``RSAKeyItemAttributes/token``).
public struct RSATokenReference: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The PKCS#11 module's file, loaded with `dlopen`.
    public let modulePath: String
    /// The token label (CK_TOKEN_INFO.label, space padding removed).
    public let tokenLabel: String
    /// The token serial number (CK_TOKEN_INFO.serialNumber, space padding removed).
    public let tokenSerial: String
    /// CKA_ID of the private and public key objects, as lower-case hex (2 digits a byte).
    public let objectIDHex: String

    /// For a key in this machine's TPM (``RSATokenKey/generateInTPM(_:bits:usage:pin:)``): its
    /// usage and the TPM's blobs, kept in the store's private item; nil for a key on a token.
    public let tpmKey: RSATPMKeyBlobs?
    /// True for a key in this machine's TPM (``tpmKey`` is set); false for a key on a token.
    public var isTPM: Bool { tpmKey != nil }
    /// False when the key was given no PIN (a TPM key made without one: the empty authValue,
    /// and no prompt is needed); true otherwise.
    public let requiresPIN: Bool

    /// A reference to a key on a PKCS#11 token (the store builds these; public for tools and tests).
    public init(modulePath: String, tokenLabel: String, tokenSerial: String, objectID: [UInt8]) {
        self.modulePath = modulePath
        self.tokenLabel = tokenLabel
        self.tokenSerial = tokenSerial
        self.objectIDHex = RSATokenReference.hex(objectID)
        self.tpmKey = nil
        self.requiresPIN = true
    }

    /// A reference to a key in the TPM: its blobs, and whether it has a PIN. The token fields
    /// are empty, and ``objectIDHex`` is the first 8 bytes of the SHA-256 of the public blob
    /// (a short name to tell keys apart).
    public init(tpmKey: RSATPMKeyBlobs, requiresPIN: Bool) {
        self.modulePath = ""
        self.tokenLabel = ""
        self.tokenSerial = ""
        self.objectIDHex = RSATokenReference.hex(Array(RSAHashAlgorithm.sha256.hash(tpmKey.publicBlob).prefix(8)))
        self.tpmKey = tpmKey
        self.requiresPIN = requiresPIN
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private enum CodingKeys: String, CodingKey {
        case modulePath, tokenLabel, tokenSerial, objectIDHex, tpm, pinRequired
    }

    /// Decodes an item's record; `tpm` (the blobs) and `pinRequired` are present for a TPM key only.
    /// - Throws: `DecodingError` for a missing field or a damaged TPM record.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        modulePath = try c.decode(String.self, forKey: .modulePath)
        tokenLabel = try c.decode(String.self, forKey: .tokenLabel)
        tokenSerial = try c.decode(String.self, forKey: .tokenSerial)
        objectIDHex = try c.decode(String.self, forKey: .objectIDHex)
        tpmKey = try c.decodeIfPresent(RSATPMKeyBlobs.self, forKey: .tpm)
        requiresPIN = try c.decodeIfPresent(Bool.self, forKey: .pinRequired) ?? true
    }

    /// Encodes the record; `tpm` and `pinRequired` are written only for a TPM key, so an
    /// ordinary token item's bytes are what they were.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(modulePath, forKey: .modulePath)
        try c.encode(tokenLabel, forKey: .tokenLabel)
        try c.encode(tokenSerial, forKey: .tokenSerial)
        try c.encode(objectIDHex, forKey: .objectIDHex)
        if let tpmKey {
            try c.encode(tpmKey, forKey: .tpm)
            try c.encode(requiresPIN, forKey: .pinRequired)
        }
    }

    /// CKA_ID as bytes (empty when ``objectIDHex`` is not hex, which a damaged item may hold).
    public var objectID: [UInt8] {
        let digits = Array(objectIDHex.utf8)
        guard digits.count % 2 == 0 else { return [] }
        var out: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16) else { return [] }
            out.append(byte)
        }
        return out
    }

    /// The token as a `pkcs11:` URI (token and serial, the module as `module-path`).
    public var uri: RSATokenURI {
        RSATokenURI(modulePath: modulePath, tokenLabel: tokenLabel, tokenSerial: tokenSerial, objectID: objectID)
    }

    /// "token LABEL (serial S), id HEX", or "tpm (USAGE), id HEX" for a TPM key.
    public var description: String {
        if let tpmKey { return "tpm (\(tpmKey.usage)), id \(objectIDHex)" }
        return "token \(tokenLabel) (serial \(tokenSerial)), id \(objectIDHex)"
    }
}

/// An RSA key pair whose private half is on a PKCS#11 token.
///
/// Private operations (``signature(for:hash:padding:pin:)-([UInt8],_,_,_)``, ``decrypt(_:padding:pin:)-([UInt8],_,_)``)
/// open a session, log in with the PIN, run C_Sign or C_Decrypt on the token and log out:
/// the private key value stays on the token (CKA_SENSITIVE true, CKA_EXTRACTABLE false).
/// Public operations use ``publicKey``, read from the token's CKA_MODULUS and
/// CKA_PUBLIC_EXPONENT, with rsakit's own engine. Constant-time status: whatever the token
/// gives; rsakit handles no secret besides the PIN (zeroed after use by its owner,
/// ``RSASecretBytes``) and the decrypted plaintext.
public struct RSATokenKey: Sendable {
    /// Where the private key is.
    public let reference: RSATokenReference
    /// The public key, as the token reports it.
    public let publicKey: RSAPublicKey

    /// For a TPM key (``RSATokenReference/isTPM``): the TCTI its operations use
    /// (``RSAKeyStore/tokenKey(tag:)`` sets it); nil otherwise.
    public let tpm: RSATPMConfiguration?

    /// A key from a stored reference (no token access). A TPM key needs `tpm`.
    public init(reference: RSATokenReference, publicKey: RSAPublicKey, tpm: RSATPMConfiguration? = nil) {
        self.reference = reference
        self.publicKey = publicKey
        self.tpm = tpm
    }

    /// Generate a key pair on the token named by `uri` (C_GenerateKeyPair,
    /// CKM_RSA_PKCS_KEY_PAIR_GEN, e = 65537; CKA_TOKEN, CKA_PRIVATE and CKA_SENSITIVE true,
    /// CKA_EXTRACTABLE false; CKA_ID and CKA_LABEL on both halves).
    ///
    /// - Parameters:
    ///   - uri: the token (its `id=`, when given, becomes CKA_ID; else 16 random bytes).
    ///   - bits: the modulus size in bits (the token decides what it accepts; 2048 to 4096 are usual).
    ///   - label: CKA_LABEL of both objects (the application tag is a good choice).
    ///   - pin: the token's user PIN.
    /// - Returns: the new key.
    /// - Throws: `RSAError.tokenUnavailable` (module, token or object missing);
    ///   `RSAError.tokenPINIncorrect`; `RSAError.tokenOperationFailed` (for example
    ///   CKR_KEY_SIZE_RANGE).
    public static func generate(on uri: RSATokenURI, bits: Int, label: String, pin: RSASecretBytes) throws
        -> RSATokenKey
    {
        let id = uri.objectID ?? RSATokenKey.randomID()
        let session = try TokenSession(uri: uri, pin: pin)
        defer { session.close() }
        let publicKey = try session.generateKeyPair(bits: bits, id: id, label: label)
        return RSATokenKey(
            reference: RSATokenReference(
                modulePath: uri.modulePath, tokenLabel: session.tokenLabel, tokenSerial: session.tokenSerial,
                objectID: id),
            publicKey: publicKey)
    }

    /// Place an existing private key on the token named by `uri` (C_CreateObject with n, e,
    /// d, p, q, dP, dQ, qInv; CKA_SENSITIVE true, CKA_EXTRACTABLE false) and its public half
    /// next to it. The key WAS in this process's memory: the template copies are zeroed, but
    /// the caller's `key` and the file it came from are the caller's to destroy.
    ///
    /// - Parameters: as ``generate(on:bits:label:pin:)``, with `key` instead of a size.
    /// - Returns: the key as it now lives on the token.
    /// - Throws: as ``generate(on:bits:label:pin:)``; `RSAError.keyRestricted` for an
    ///   RSASSA-PSS key (its restriction cannot be recorded on the token).
    public static func importKey(_ key: RSAPrivateKey, to uri: RSATokenURI, label: String, pin: RSASecretBytes) throws
        -> RSATokenKey
    {
        guard key.pssRestriction == nil else {
            throw RSAError.keyRestricted(reason: "an RSASSA-PSS key's restriction cannot be kept on a token")
        }
        let id = uri.objectID ?? RSATokenKey.randomID()
        let session = try TokenSession(uri: uri, pin: pin)
        defer { session.close() }
        try session.importKeyPair(key, id: id, label: label)
        return RSATokenKey(
            reference: RSATokenReference(
                modulePath: uri.modulePath, tokenLabel: session.tokenLabel, tokenSerial: session.tokenSerial,
                objectID: id),
            publicKey: key.publicKey)
    }

    /// Sign `message` on the token (RFC 8017 §8): RSASSA-PKCS1-v1_5 as CKM_RSA_PKCS over
    /// the DigestInfo rsakit builds, RSASSA-PSS as CKM_RSA_PKCS_PSS over the digest (MGF1
    /// with the message hash, or the one ``RSASignaturePadding/pssMGF1(_:saltLength:)`` names).
    ///
    /// - Parameters: `message` any length; `hash` SHA-1 or SHA-2 for PSS (PKCS#11 names no
    ///   other MGF1 hashes), any for PKCS#1 v1.5; `pin` the user PIN.
    /// - Returns: the signature, k bytes.
    /// - Throws: the session's errors (see ``generate(on:bits:label:pin:)``);
    ///   `RSAError.keyRestricted` for a PSS hash PKCS#11 cannot name; `RSAError.saltLengthInvalid`.
    ///
    /// A key in the TPM (``RSATokenReference/tpmKey``) signs with TPM2_Sign, RSASSA or
    /// RSAPSS over the digest, in the TPM; it must have usage ``RSATPMKeyUsage/sign``, a
    /// SHA-1 or SHA-2 hash and, for PSS, salt = hLen (`RSAError.keyRestricted` otherwise,
    /// before the TPM is touched). The TPM's errors: `RSAError.tpmUnavailable`,
    /// `RSAError.tpmLockedOut`, `RSAError.tpmKeyLost`, `RSAError.tokenPINIncorrect`.
    public func signature(
        for message: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding, pin: RSASecretBytes
    ) throws -> [UInt8] {
        try signature(forDigest: hash.hash(message), hash: hash, padding: padding, pin: pin)
    }

    /// ``signature(for:hash:padding:pin:)-([UInt8],_,_,_)`` over a digest already computed.
    /// - Parameter digest: `hash`'s output (hLen bytes).
    /// - Throws: `RSAError.digestLengthMismatch` for a digest of another length; as the
    ///   message form otherwise.
    public func signature(
        forDigest digest: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding, pin: RSASecretBytes
    ) throws -> [UInt8] {
        guard digest.count == hash.digestByteCount else {
            throw RSAError.digestLengthMismatch(byteCount: digest.count, expected: hash.digestByteCount)
        }
        if let blobs = reference.tpmKey {
            // The usage and scheme are checked before the TPM is reached.
            _ = try TPMKeySession.signingScheme(blobs, hash: hash, padding: padding)
            let session = try openTPMKey(pin: pin)
            defer { session.close() }
            return try session.signature(forDigest: digest, hash: hash, padding: padding)
        }
        let (mechanism, parameter, input) = try signingMechanism(forDigest: digest, hash: hash, padding: padding)
        return try withPrivateKey(pin: pin) { session, object in
            try session.run(
                .sign, mechanism: mechanism, parameter: parameter, object: object, input: input,
                outputCapacity: publicKey.modulusByteCount)
        }
    }

    /// The C_SignInit mechanism, its parameter bytes and the C_Sign input for a signature
    /// over `digest` (hLen bytes, checked by the caller): CKM_RSA_PKCS over the DigestInfo
    /// (RFC 8017 §9.2 steps 1-2 done here), or CKM_RSA_PKCS_PSS over the digest with a
    /// CK_RSA_PKCS_PSS_PARAMS.
    /// - Throws: `RSAError.keyRestricted` for a PSS hash PKCS#11 cannot name;
    ///   `RSAError.saltLengthInvalid`.
    internal func signingMechanism(forDigest digest: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding)
        throws
        -> (mechanism: CK_MECHANISM_TYPE, parameter: [UInt8]?, input: [UInt8])
    {
        switch padding {
        case .pkcs1v15:
            return (CK_MECHANISM_TYPE(CKM_RSA_PKCS), nil, try EMSAPKCS1v15.digestInfo(digest: digest, hash: hash))
        case let .pss(saltLength), let .pssMGF1(_, saltLength):
            var mgfHash = hash
            if case let .pssMGF1(named, _) = padding { mgfHash = named }
            guard let (hashMechanism, _) = RSATokenKey.mechanisms(hash), let (_, mgf) = RSATokenKey.mechanisms(mgfHash)
            else {
                throw RSAError.keyRestricted(
                    reason: "PKCS#11 has no RSA-PSS mechanism parameters for \(hash.displayName)")
            }
            let hLen = hash.digestByteCount
            let emLen = (publicKey.modulusBitCount - 1 + 7) / 8
            let sLen: Int
            switch saltLength {
            case .digestLength: sLen = hLen
            case .maximum, .auto: sLen = emLen - hLen - 2
            case let .byteCount(n): sLen = n
            }
            guard sLen >= 0, sLen <= emLen - hLen - 2 else {
                throw RSAError.saltLengthInvalid(byteCount: sLen, maximum: max(0, emLen - hLen - 2))
            }
            var params = CK_RSA_PKCS_PSS_PARAMS(hashAlg: hashMechanism, mgf: mgf, sLen: CK_ULONG(sLen))
            return (CK_MECHANISM_TYPE(CKM_RSA_PKCS_PSS), withUnsafeBytes(of: &params) { Array($0) }, digest)
        }
    }

    /// Decrypt one k-byte block on the token: C_Decrypt with CKM_RSA_PKCS (RSAES-PKCS1-v1_5)
    /// or CKM_RSA_PKCS_OAEP (MGF1 with the OAEP hash, SHA-1 or SHA-2; an empty label or the
    /// one given).
    ///
    /// - Returns: the message, at most k - 11 (PKCS#1 v1.5) or k - 2hLen - 2 (OAEP) bytes.
    /// - Throws: `RSAError.decryptionFailed` for any padding failure the token reports (one
    ///   opaque error; whether the token's own check is constant-time is the token's matter);
    ///   `RSAError.ciphertextLengthInvalid` for a block that is not k bytes; the session's errors.
    public func decrypt(_ ciphertext: [UInt8], padding: RSAEncryptionPadding, pin: RSASecretBytes) throws -> [UInt8] {
        try decrypt(blocks: [ciphertext], padding: padding, pin: pin)[0]
    }

    /// ``decrypt(_:padding:pin:)-([UInt8],_,_)`` for several blocks in one login.
    internal func decrypt(blocks: [[UInt8]], padding: RSAEncryptionPadding, pin: RSASecretBytes) throws -> [[UInt8]] {
        let k = publicKey.modulusByteCount
        for block in blocks where block.count != k {
            throw RSAError.ciphertextLengthInvalid(byteCount: block.count, blockSize: k)
        }
        if let blobs = reference.tpmKey {
            _ = try TPMKeySession.decryptionScheme(blobs, padding: padding)
            let session = try openTPMKey(pin: pin)
            defer { session.close() }
            return try blocks.map { try session.decrypt($0, padding: padding) }
        }
        let mechanism: CK_MECHANISM_TYPE
        var parameter: [UInt8]? = nil
        switch padding {
        case .pkcs1v15:
            mechanism = CK_MECHANISM_TYPE(CKM_RSA_PKCS)
        case let .oaep(oaep):
            (mechanism, parameter) = try RSATokenKey.oaepMechanism(oaep)
        }
        return try withPrivateKey(pin: pin) { session, object in
            try blocks.map {
                try session.run(
                    .decrypt, mechanism: mechanism, parameter: parameter, object: object, input: $0, outputCapacity: k)
            }
        }
    }

    /// A logged-in session and the private key object; checks that the token's key is still
    /// the one the reference's public key names (a token re-initialised with other keys under
    /// the same id would otherwise sign with the wrong key).
    internal func withPrivateKey<R>(pin: RSASecretBytes, _ body: (TokenSession, CK_OBJECT_HANDLE) throws -> R) throws
        -> R
    {
        let (session, object) = try openPrivateKey(pin: pin)
        defer { session.close() }
        return try body(session, object)
    }

    /// ``withPrivateKey(pin:_:)`` without the scope: the caller closes the session
    /// (``TokenSigner`` keeps it open for a TLS handshake).
    internal func openPrivateKey(pin: RSASecretBytes) throws -> (TokenSession, CK_OBJECT_HANDLE) {
        if reference.isTPM {
            throw RSAError.tpmUnavailable(reason: "a key in the TPM has no PKCS#11 session (openTPMKey opens it)")
        }
        let uri = RSATokenURI(
            modulePath: reference.modulePath, tokenLabel: reference.tokenLabel, tokenSerial: reference.tokenSerial)
        let session = try TokenSession(uri: uri, pin: pin)
        do {
            let object = try session.findObject(class: CK_OBJECT_CLASS(CKO_PRIVATE_KEY), id: reference.objectID)
            guard try session.publicKey(of: object) == publicKey else {
                throw RSAError.tokenUnavailable(
                    reason:
                        "the key with id \(reference.objectIDHex) on token '\(reference.tokenLabel)' is not the "
                        + "stored key"
                )
            }
            return (session, object)
        } catch {
            session.close()
            throw error
        }
    }

    /// CKM_RSA_PKCS_OAEP and its CK_RSA_PKCS_OAEP_PARAMS bytes for `oaep`.
    /// - Throws: `RSAError.keyRestricted` for a hash PKCS#11 cannot name, or a label.
    static func oaepMechanism(_ oaep: RSAOAEPParameters) throws -> (CK_MECHANISM_TYPE, [UInt8]) {
        // NOTE: a label would need its bytes kept alive behind pSourceData; rsakit's
        // container uses none, so a label is refused rather than half-supported.
        guard let (hashMechanism, _) = mechanisms(oaep.hash), let (_, mgf) = mechanisms(oaep.mgf1Hash),
            oaep.label.isEmpty
        else {
            throw RSAError.keyRestricted(reason: "OAEP on a token takes SHA-1 or SHA-2 hashes and no label")
        }
        var params = CK_RSA_PKCS_OAEP_PARAMS(
            hashAlg: hashMechanism, mgf: mgf, source: CK_RSA_PKCS_OAEP_SOURCE_TYPE(CKZ_DATA_SPECIFIED),
            pSourceData: nil, ulSourceDataLen: 0)
        return (CK_MECHANISM_TYPE(CKM_RSA_PKCS_OAEP), withUnsafeBytes(of: &params) { Array($0) })
    }

    /// The PKCS#11 hash mechanism and MGF1 constant of `hash` (nil for hashes PKCS#11 v2.40
    /// does not name for MGF1).
    private static func mechanisms(_ hash: RSAHashAlgorithm) -> (CK_MECHANISM_TYPE, CK_RSA_PKCS_MGF_TYPE)? {
        switch hash {
        case .sha1: return (CK_MECHANISM_TYPE(CKM_SHA_1), CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA1))
        case .sha224: return (CK_MECHANISM_TYPE(CKM_SHA224), CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA224))
        case .sha256: return (CK_MECHANISM_TYPE(CKM_SHA256), CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA256))
        case .sha384: return (CK_MECHANISM_TYPE(CKM_SHA384), CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA384))
        case .sha512: return (CK_MECHANISM_TYPE(CKM_SHA512), CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA512))
        default: return nil
        }
    }

    /// 16 random bytes for CKA_ID.
    static func randomID() -> [UInt8] {
        SystemRandomSource().bytes(16)
    }
}
