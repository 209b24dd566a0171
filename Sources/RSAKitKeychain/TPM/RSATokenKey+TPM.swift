// Keys in this machine's TPM, the Linux counterpart of Apple's kSecAttrTokenIDSecureEnclave,
// behind the same calls as keys on a PKCS#11 token (RSATokenKey): the reference says which.
//
// The TPM is spoken to through tpm2-tss's ESAPI (TPMContext over CTSS2). Each key has ONE usage
// fixed in the TPM object (RSATPMKeyUsage): a signing key cannot decrypt and a decryption key
// has its scheme fixed, so the TPM does no raw RSA for anyone, whatever program they use. The
// key's blobs live in the store's private item; nothing is kept in the TPM between commands.

import RSAKitCore
import RSAKitPKI
internal import CTSS2

extension RSATokenKey {
    /// The modulus sizes a TPM key may have: 2048, and 3072 where the TPM supports it
    /// (TPM 2.0 chips made since about 2020; swtpm does).
    public static let tpmModulusBitCounts = [2048, 3072]

    /// The longest PIN a TPM key takes, in bytes: its authValue is at most the size of its
    /// name algorithm's digest (SHA-256).
    public static let tpmMaximumPINByteCount = 32

    /// Generate a key pair inside this machine's TPM with one usage: TPM2_Create under the
    /// SRK (an ECC P-256 primary key the TPM derives from its storage seed, made for the call
    /// and flushed after it), in a salted HMAC session with parameter encryption, so the PIN
    /// does not cross the bus in clear. The private key never leaves the TPM unwrapped
    /// (fixedTPM, fixedParent), e = 65537, and the key is subject to the TPM's
    /// dictionary-attack protection.
    ///
    /// For a ``RSATPMKeyUsage/sign`` key, one RSASSA-PSS signature is made and checked with
    /// salt = hLen, and the answer kept in the blobs (TLS 1.3 needs that salt; older TPMs use
    /// the maximum).
    ///
    /// Nothing is written anywhere: the caller stores the result
    /// (``RSAKeyStore/addTokenKeyPair(_:tag:label:replace:)``); nothing stays in the TPM.
    ///
    /// - Parameters:
    ///   - configuration: the TCTI (``RSAKeyStore/tpmConfiguration``).
    ///   - bits: 2048 or 3072 (``tpmModulusBitCounts``).
    ///   - usage: what the key may do, fixed in the TPM (default RSAES-OAEP SHA-256 decryption).
    ///   - pin: the key's PIN (its authValue, at most ``tpmMaximumPINByteCount`` bytes), or nil
    ///     for none.
    /// - Returns: the key, ``RSATokenReference/tpmKey`` holding its blobs.
    /// - Throws: `RSAError.keySizeUnsupported` for another size, or one the TPM refuses;
    ///   `RSAError.invalidAttribute` for a PIN that is too long; `RSAError.tpmUnavailable`,
    ///   `RSAError.tpmLockedOut`.
    public static func generateInTPM(
        _ configuration: RSATPMConfiguration, bits: Int, usage: RSATPMKeyUsage = .decryptOAEP, pin: RSASecretBytes?
    ) throws -> RSATokenKey {
        guard tpmModulusBitCounts.contains(bits) else {
            throw RSAError.keySizeUnsupported(bits: bits, reason: "a TPM key is 2048 or 3072 bits")
        }
        let auth = pin ?? RSASecretBytes(zeroedCount: 0)
        guard auth.count <= tpmMaximumPINByteCount else {
            throw RSAError.invalidAttribute(reason: "a TPM key's PIN is at most \(tpmMaximumPINByteCount) bytes")
        }
        let context = try TPMContext(configuration)
        defer { context.close() }
        let made = try context.create(usage: usage, bits: bits, pin: auth)
        let publicKey = try TPMContext.publicKey(of: made.public)
        var pssGood = false
        if usage == .sign {
            let probe = RSATPMKeyBlobs(
                usage: usage, publicBlob: made.public, privateBlob: made.private, signsPSSWithDigestLengthSalt: false)
            try context.load(probe, publicKey: publicKey, pin: auth)
            let digest = RSAHashAlgorithm.sha256.hash(
                Array("rsakit: does this TPM sign RSA-PSS with salt = hLen?".utf8))
            do {
                let signature = try context.sign(
                    scheme: UInt16(RSAKIT_TPM_ALG_RSAPSS), hash: UInt16(RSAKIT_TPM_ALG_SHA256), digest: digest)
                pssGood = publicKey.isValidSignature(
                    signature, forDigest: digest, hash: .sha256, padding: .pss(saltLength: .digestLength))
            } catch let error as RSAError {
                // A TPM without RSASSA-PSS answers with an error: no PSS. A lockout (or a TPM
                // gone) says nothing about PSS, and is reported rather than recorded as "no".
                switch error {
                case .tpmLockedOut, .tokenPINIncorrect, .tpmUnavailable: throw error
                default: pssGood = false
                }
            }
        }
        let blobs = RSATPMKeyBlobs(
            usage: usage, publicBlob: made.public, privateBlob: made.private, signsPSSWithDigestLengthSalt: pssGood)
        return RSATokenKey(
            reference: RSATokenReference(tpmKey: blobs, requiresPIN: pin != nil), publicKey: publicKey,
            tpm: configuration)
    }

    /// A TPM context with this key loaded under `pin`.
    /// - Throws: `RSAError.tpmUnavailable` when the key is not in a TPM or has no configuration;
    ///   the context's errors (``TPMContext``).
    internal func openTPMKey(pin: RSASecretBytes) throws -> TPMKeySession {
        guard let blobs = reference.tpmKey else {
            throw RSAError.tpmUnavailable(reason: "the key is not in a TPM")
        }
        guard let tpm else {
            throw RSAError.tpmUnavailable(
                reason:
                    "the key refers to a TPM but no TPM configuration was given (RSAKeyStore.tokenKey(tag:) sets it)")
        }
        return try TPMKeySession(key: self, blobs: blobs, configuration: tpm, pin: pin)
    }

    /// For a key in the TPM, check that it may sign with `padding` over `hash` (its usage, the
    /// hash, PSS's salt), without touching the TPM; nothing for a key on a token. Lets a caller
    /// refuse before asking for a PIN.
    /// - Throws: `RSAError.keyRestricted` saying why not.
    package func checkTPMSigning(hash: RSAHashAlgorithm, padding: RSASignaturePadding) throws {
        if let blobs = reference.tpmKey { _ = try TPMKeySession.signingScheme(blobs, hash: hash, padding: padding) }
    }

    /// For a key in the TPM, check that it decrypts `padding` (nil: only that it decrypts at
    /// all), without touching the TPM; nothing for a key on a token.
    /// - Throws: `RSAError.keyRestricted` saying why not.
    package func checkTPMDecryption(padding: RSAEncryptionPadding?) throws {
        guard let blobs = reference.tpmKey else { return }
        guard blobs.usage.canDecrypt else { throw RSATokenKey.tpmUsageRefusal(blobs.usage, wanted: "decryption") }
        if let padding { _ = try TPMKeySession.decryptionScheme(blobs, padding: padding) }
    }

    /// Why a TPM key refuses an operation of the other usage, or another padding: one line,
    /// said before the TPM is touched.
    static func tpmUsageRefusal(_ usage: RSATPMKeyUsage, wanted: String) -> RSAError {
        switch usage {
        case .sign:
            return .keyRestricted(
                reason:
                    "this TPM key can only sign (its usage, fixed in the TPM): \(wanted) needs a TPM key made with "
                    + "usage decrypt")
        case .decryptOAEP, .decryptPKCS1v15:
            if wanted == "signing" {
                return .keyRestricted(
                    reason:
                        "this TPM key can only decrypt (its usage, fixed in the TPM): signing needs a TPM key made "
                        + "with usage sign")
            }
            let scheme =
                usage == .decryptOAEP ? "RSAES-OAEP with SHA-256 (MGF1-SHA-256, no label)" : "RSAES-PKCS1-v1_5"
            return .keyRestricted(
                reason: "this TPM key decrypts \(scheme) only (its scheme, fixed in the TPM), not \(wanted)")
        }
    }
}

/// A TPM context holding one key, for a run of operations under one PIN (a TLS handshake, a
/// container's blocks). The policy lives here: which usage and scheme a call needs, checked
/// before the TPM is asked; the TPM refuses the rest itself.
internal final class TPMKeySession {
    let key: RSATokenKey
    let blobs: RSATPMKeyBlobs
    private let context: TPMContext

    init(key: RSATokenKey, blobs: RSATPMKeyBlobs, configuration: RSATPMConfiguration, pin: RSASecretBytes) throws {
        self.key = key
        self.blobs = blobs
        guard pin.count <= RSATokenKey.tpmMaximumPINByteCount else { throw RSAError.tokenPINIncorrect }
        context = try TPMContext(configuration)
        do {
            try context.load(blobs, publicKey: key.publicKey, pin: pin)
        } catch {
            context.close()
            throw error
        }
    }

    /// The TPM's id of `hash` (SHA-1 and SHA-2 only: what TPMs implement), or nil.
    static func tpmHash(_ hash: RSAHashAlgorithm) -> UInt16? {
        switch hash {
        case .sha1: return UInt16(RSAKIT_TPM_ALG_SHA1)
        case .sha256: return UInt16(RSAKIT_TPM_ALG_SHA256)
        case .sha384: return UInt16(RSAKIT_TPM_ALG_SHA384)
        case .sha512: return UInt16(RSAKIT_TPM_ALG_SHA512)
        default: return nil
        }
    }

    /// Check that this key may sign with `padding` over a `hash` digest, before the TPM is
    /// touched. - Returns: the TPM's scheme and hash ids.
    /// - Throws: `RSAError.keyRestricted` saying why not.
    static func signingScheme(_ blobs: RSATPMKeyBlobs, hash: RSAHashAlgorithm, padding: RSASignaturePadding) throws
        -> (scheme: UInt16, hash: UInt16)
    {
        guard blobs.usage == .sign else { throw RSATokenKey.tpmUsageRefusal(blobs.usage, wanted: "signing") }
        guard let tpmHash = tpmHash(hash) else {
            throw RSAError.keyRestricted(
                reason:
                    "a key in the TPM signs with SHA-1 or SHA-2 (SHA-256, SHA-384, SHA-512), not \(hash.displayName)")
        }
        switch padding {
        case .pkcs1v15:
            return (UInt16(RSAKIT_TPM_ALG_RSASSA), tpmHash)
        case let .pss(saltLength), let .pssMGF1(_, saltLength):
            var mgfHash = hash
            if case let .pssMGF1(named, _) = padding { mgfHash = named }
            // The TPM's RSASSA-PSS (TPM2_Sign) fixes MGF1 to the message hash, and a FIPS TPM
            // the salt to hLen (TPM 2.0 part 1 §B.7).
            var isDigestLength = false
            if case .digestLength = saltLength { isDigestLength = true }
            if case let .byteCount(n) = saltLength, n == hash.digestByteCount { isDigestLength = true }
            guard isDigestLength, mgfHash == hash else {
                throw RSAError.keyRestricted(
                    reason:
                        "a key in the TPM signs RSA-PSS only with a salt as long as the hash and MGF1 with the same "
                        + "hash (salt length 'digest')")
            }
            guard blobs.signsPSSWithDigestLengthSalt else {
                throw RSAError.keyRestricted(
                    reason:
                        "this TPM does not make RSA-PSS signatures with a salt as long as the hash (TLS 1.3 needs "
                        + "them; older TPMs use the maximum salt), and a TPM key does no raw RSA to make them "
                        + "otherwise: use PKCS#1 v1.5, or a key in the store")
            }
            return (UInt16(RSAKIT_TPM_ALG_RSAPSS), tpmHash)
        }
    }

    /// Check that this key decrypts `padding`. - Returns: the TPM's scheme and hash ids.
    /// - Throws: `RSAError.keyRestricted` saying why not.
    static func decryptionScheme(_ blobs: RSATPMKeyBlobs, padding: RSAEncryptionPadding) throws
        -> (scheme: UInt16, hash: UInt16)
    {
        guard blobs.usage.canDecrypt else { throw RSATokenKey.tpmUsageRefusal(blobs.usage, wanted: "decryption") }
        guard padding == blobs.usage.decryptionPadding else {
            let wanted: String
            switch padding {
            case .pkcs1v15: wanted = "RSAES-PKCS1-v1_5"
            case let .oaep(p):
                wanted =
                    "RSAES-OAEP with \(p.hash.displayName)"
                    + (p.mgf1Hash != p.hash ? " and MGF1-\(p.mgf1Hash.displayName)" : "")
                    + (p.label.isEmpty ? "" : " and a label")
            }
            throw RSATokenKey.tpmUsageRefusal(blobs.usage, wanted: wanted)
        }
        return blobs.usage == .decryptOAEP
            ? (UInt16(RSAKIT_TPM_ALG_OAEP), UInt16(RSAKIT_TPM_ALG_SHA256))
            : (UInt16(RSAKIT_TPM_ALG_RSAES), UInt16(RSAKIT_TPM_ALG_NULL))
    }

    /// TPM2_Sign over `digest` (hLen bytes of `hash`). - Returns: S, k bytes.
    func signature(forDigest digest: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding) throws -> [UInt8] {
        guard digest.count == hash.digestByteCount else {
            throw RSAError.digestLengthMismatch(byteCount: digest.count, expected: hash.digestByteCount)
        }
        let (scheme, tpmHash) = try TPMKeySession.signingScheme(blobs, hash: hash, padding: padding)
        return try context.sign(scheme: scheme, hash: tpmHash, digest: digest)
    }

    /// RSASSA-PKCS1-v1_5 over a DER DigestInfo T (what GnuTLS hands for TLS 1.2 client
    /// signatures, and PKCS#11's CKM_RSA_PKCS): T is parsed into the hash and digest (RFC 8017
    /// §9.2 step 2 read backwards) and signed with TPM2_Sign and RSASSA, which rebuilds the
    /// same T. No raw RSA: anything but the DigestInfo of a SHA-1 or SHA-2 digest is refused.
    /// - Throws: `RSAError.keyRestricted` for any other input; as the digest form.
    func signature(forDigestInfo digestInfo: [UInt8]) throws -> [UInt8] {
        for hash in [RSAHashAlgorithm.sha256, .sha384, .sha512, .sha1] where digestInfo.count > hash.digestByteCount {
            let digest = Array(digestInfo.suffix(hash.digestByteCount))
            if (try? EMSAPKCS1v15.digestInfo(digest: digest, hash: hash)) == digestInfo {
                return try signature(forDigest: digest, hash: hash, padding: .pkcs1v15)
            }
        }
        throw RSAError.keyRestricted(
            reason:
                "a key in the TPM signs PKCS#1 v1.5 only over the DigestInfo of a SHA-1 or SHA-2 digest; anything "
                + "else would need raw RSA, which TPM keys do not do")
    }

    /// TPM2_RSA_Decrypt of one k-byte block. - Returns: the message.
    /// - Throws: `RSAError.decryptionFailed` (one opaque error for a padding the TPM rejects).
    func decrypt(_ block: [UInt8], padding: RSAEncryptionPadding) throws -> [UInt8] {
        let k = key.publicKey.modulusByteCount
        guard block.count == k else { throw RSAError.ciphertextLengthInvalid(byteCount: block.count, blockSize: k) }
        let (scheme, hash) = try TPMKeySession.decryptionScheme(blobs, padding: padding)
        return try context.decrypt(scheme: scheme, hash: hash, block: block)
    }

    /// Flush the key, the session and the parent from the TPM (once).
    func close() { context.close() }
}
