// One conversation with the TPM (CTSS2's rsakit_tpm): open (the SRK as transient parent and a
// salted, bound HMAC session with parameter encryption), at most one loaded key, close (all
// flushed: nothing persistent stays in the TPM). This file turns the TPM's response codes into
// rsakit's errors; the policy (which usage, which scheme) is RSATokenKey+TPM's.

import RSAKitCore
internal import CTSS2

/// An open TPM context. Not thread-safe; closed by ``close()`` or on deinit.
internal final class TPMContext {
    private var handle: OpaquePointer?
    let configuration: RSATPMConfiguration

    /// Load tpm2-tss, reach the TPM through `configuration`'s TCTI and set up the parent and
    /// the session.
    /// - Throws: `RSAError.tpmUnavailable` (tpm2-tss missing, no TPM answering, the owner
    ///   hierarchy has an auth value, the TPM busy); `RSAError.tpmLockedOut`.
    init(_ configuration: RSATPMConfiguration) throws {
        self.configuration = configuration
        try configuration.prepare()
        if let missing = rsakit_tss2_load() {
            throw RSAError.tpmUnavailable(reason: String(cString: missing))
        }
        var opened: OpaquePointer?
        var stage: Int32 = 0
        var ownerAuthSet: Int32 = 0
        let rc = rsakit_tpm_open(configuration.tcti, &opened, &stage, &ownerAuthSet)
        guard rc == 0, let opened else {
            switch Int(stage) {
            case Int(RSAKIT_TPM_STAGE_TCTI), Int(RSAKIT_TPM_STAGE_ESYS):
                throw RSAError.tpmUnavailable(
                    reason:
                        "no TPM answers through TCTI '\(configuration.tcti)' (\(TPMContext.text(rc))); set "
                        + "RSAKIT_TPM_TCTI to reach another"
                )
            case Int(RSAKIT_TPM_STAGE_PRIMARY) where ownerAuthSet != 0:
                throw RSAError.tpmUnavailable(
                    reason:
                        "the TPM's owner hierarchy has an auth value, and rsakit makes its parent key there with "
                        + "the empty one (TCG provisioning guidance): ask the TPM's owner to clear it "
                        + "(tpm2_changeauth -c owner)"
                )
            default:
                throw TPMContext.error(
                    rc, during: stage == RSAKIT_TPM_STAGE_PRIMARY ? "TPM2_CreatePrimary" : "TPM2_StartAuthSession")
            }
        }
        handle = opened
    }

    deinit { close() }

    /// Flush what this context made in the TPM and close the TCTI (once).
    func close() {
        if let handle { rsakit_tpm_close(handle) }
        handle = nil
    }

    private func open() throws -> OpaquePointer {
        guard let handle else { throw RSAError.tpmUnavailable(reason: "the TPM context is closed") }
        return handle
    }

    /// TPM2_Create of a `bits`-bit key with `usage` and `pin` as its authValue.
    /// - Returns: the marshalled TPM2B_PUBLIC and TPM2B_PRIVATE.
    /// - Throws: `RSAError.keySizeUnsupported` when the TPM makes no keys of this size; as
    ///   ``error(_:during:)``.
    func create(usage: RSATPMKeyUsage, bits: Int, pin: RSASecretBytes) throws -> (public: [UInt8], private: [UInt8]) {
        let handle = try open()
        let code: Int32
        switch usage {
        case .sign: code = Int32(RSAKIT_TPM_USAGE_SIGN)
        case .decryptOAEP: code = Int32(RSAKIT_TPM_USAGE_DECRYPT_OAEP_SHA256)
        case .decryptPKCS1v15: code = Int32(RSAKIT_TPM_USAGE_DECRYPT_RSAES)
        }
        let capacity = Int(RSAKIT_TPM_BLOB_CAPACITY)
        var publicBlob = [UInt8](repeating: 0, count: capacity), privateBlob = publicBlob
        var publicLength = 0, privateLength = 0
        let rc = pin.withUnsafeBytes { auth in
            rsakit_tpm_create(
                handle, code, UInt32(bits), auth.baseAddress?.assumingMemoryBound(to: UInt8.self), auth.count,
                &publicBlob, &publicLength, &privateBlob, &privateLength)
        }
        guard rc == 0 else {
            // TPM_RC_VALUE or TPM_RC_KEY_SIZE on keyBits: a TPM without RSA-3072.
            if [0x084, 0x087].contains(TPMContext.baseCode(rc)) {
                throw RSAError.keySizeUnsupported(bits: bits, reason: "this TPM does not make keys of this size")
            }
            throw TPMContext.error(rc, during: "TPM2_Create")
        }
        return (Array(publicBlob.prefix(publicLength)), Array(privateBlob.prefix(privateLength)))
    }

    /// TPM2_Load of `blobs` under the parent, with `pin` as the authValue of later calls;
    /// then checks that the blob's public key is `publicKey` (a store item whose blob and
    /// public key disagree is damaged).
    /// - Throws: `RSAError.tpmKeyLost` when this TPM cannot load the blobs (its storage seed
    ///   changed: cleared, reset or another TPM), or when the blob's public key is not the
    ///   stored one; as ``error(_:during:)``.
    func load(_ blobs: RSATPMKeyBlobs, publicKey: RSAPublicKey, pin: RSASecretBytes) throws {
        let handle = try open()
        guard (try? TPMContext.publicKey(of: blobs.publicBlob)) == publicKey else {
            throw RSAError.tpmKeyLost(reason: "the stored TPM blob is not the stored public key's")
        }
        let rc = pin.withUnsafeBytes { auth in
            rsakit_tpm_load(
                handle, blobs.publicBlob, blobs.publicBlob.count, blobs.privateBlob, blobs.privateBlob.count,
                auth.baseAddress?.assumingMemoryBound(to: UInt8.self), auth.count)
        }
        guard rc == 0 else {
            // TPM_RC_INTEGRITY (the outer HMAC, made with a key from the old seed, fails) and
            // its kin for a private area that no longer decrypts to a matching key.
            if rc & 0xFF_0000 == 0, [0x09F, 0x095, 0x09C, 0x084, 0x0A5].contains(TPMContext.baseCode(rc)) {
                throw RSAError.tpmKeyLost(
                    reason:
                        "this TPM cannot load the key (\(TPMContext.text(rc))): the TPM was cleared, reset or "
                        + "replaced since the key was made, or this is another machine"
                )
            }
            throw TPMContext.error(rc, during: "TPM2_Load")
        }
    }

    /// TPM2_Sign of `digest` with the loaded key.
    /// - Parameters: `scheme` RSAKIT_TPM_ALG_RSASSA or RSAKIT_TPM_ALG_RSAPSS; `hash` a TPM
    ///   hash algorithm id; `digest` hLen bytes.
    /// - Returns: the signature, k bytes.
    /// - Throws: `RSAError.keyRestricted` when the key may not sign, or the TPM does not
    ///   implement the scheme or hash; as ``error(_:during:)``.
    func sign(scheme: UInt16, hash: UInt16, digest: [UInt8]) throws -> [UInt8] {
        let handle = try open()
        var signature = [UInt8](repeating: 0, count: Int(RSAKIT_TPM_BLOCK_CAPACITY))
        var length = 0
        let rc = rsakit_tpm_sign(handle, scheme, hash, digest, digest.count, &signature, &length)
        guard rc == 0 else {
            switch TPMContext.baseCode(rc) {
            case 0x082, 0x09C:  // TPM_RC_ATTRIBUTES, TPM_RC_KEY
                throw RSAError.keyRestricted(reason: "the TPM refuses to sign with this key: it is a decryption key")
            case 0x092, 0x083:  // TPM_RC_SCHEME, TPM_RC_HASH
                throw RSAError.keyRestricted(
                    reason: "this TPM does not sign with this scheme and hash (\(TPMContext.text(rc)))")
            default: break
            }
            throw TPMContext.error(rc, during: "TPM2_Sign")
        }
        return Array(signature.prefix(length))
    }

    /// TPM2_RSA_Decrypt of one k-byte block with the loaded key.
    /// - Parameters: `scheme` RSAKIT_TPM_ALG_OAEP or RSAKIT_TPM_ALG_RSAES; `hash` OAEP's hash.
    /// - Returns: the message.
    /// - Throws: `RSAError.decryptionFailed` for a block whose padding the TPM rejects (one
    ///   opaque error); `RSAError.keyRestricted` for a scheme or usage the key does not have;
    ///   as ``error(_:during:)``.
    func decrypt(scheme: UInt16, hash: UInt16, block: [UInt8]) throws -> [UInt8] {
        let handle = try open()
        var message = [UInt8](repeating: 0, count: Int(RSAKIT_TPM_BLOCK_CAPACITY))
        defer { wipe(&message) }
        var length = 0
        let rc = rsakit_tpm_decrypt(handle, scheme, hash, block, block.count, &message, &length)
        guard rc == 0 else {
            switch TPMContext.baseCode(rc) {
            case 0x084, 0x095, 0x101:
                // TPM_RC_VALUE, TPM_RC_SIZE: the padding did not check. NOTE: libtpms 0.9
                // (swtpm) answers a bad padding with TPM_RC_FAILURE; a TPM really in failure
                // mode would have refused the TPM2_Load before this already.
                throw RSAError.decryptionFailed
            case 0x092:  // TPM_RC_SCHEME
                throw RSAError.keyRestricted(reason: "the TPM refuses this padding: the key decrypts another scheme")
            case 0x082, 0x09C:  // TPM_RC_ATTRIBUTES, TPM_RC_KEY
                throw RSAError.keyRestricted(reason: "the TPM refuses to decrypt with this key: it is a signing key")
            default:
                throw TPMContext.error(rc, during: "TPM2_RSA_Decrypt")
            }
        }
        return Array(message.prefix(length))
    }

    /// The RSA public key a marshalled TPM2B_PUBLIC holds (no TPM needed, but tpm2-tss is
    /// loaded for its unmarshalling).
    /// - Throws: `RSAError.tpmUnavailable` without tpm2-tss; `RSAError.malformedKey` for a bad blob.
    static func publicKey(of blob: [UInt8]) throws -> RSAPublicKey {
        if let missing = rsakit_tss2_load() { throw RSAError.tpmUnavailable(reason: String(cString: missing)) }
        var modulus = [UInt8](repeating: 0, count: Int(RSAKIT_TPM_BLOCK_CAPACITY))
        var length = 0
        var exponent: UInt32 = 0, attributes: UInt32 = 0
        var scheme: UInt16 = 0, hash: UInt16 = 0
        guard
            rsakit_tpm_public_describe(
                blob, blob.count, &modulus, &length, &exponent, &attributes, &scheme, &hash) == 0
        else {
            throw RSAError.malformedKey(reason: "not a TPM2B_PUBLIC of an RSA key")
        }
        let e = exponent == 0 ? 65537 : UInt64(exponent)
        let eBytes = (0..<8).reversed().map { UInt8(truncatingIfNeeded: e >> (8 * UInt64($0))) }.drop { $0 == 0 }
        return try RSAPublicKey(modulus: Array(modulus.prefix(length)), publicExponent: Array(eBytes))
    }

    // MARK: Response codes

    /// A TPM (layer 0) response code's base: format-1 codes carry a handle, session or
    /// parameter number in bits 6 and 8-11 (TPM 2.0 part 2 §6.6).
    static func baseCode(_ rc: UInt32) -> UInt32 {
        guard rc & 0xFF_0000 == 0 else { return rc }
        return rc & 0x80 != 0 ? rc & 0xBF : rc
    }

    /// tpm2-tss's text for `rc`, with its hex value.
    static func text(_ rc: UInt32) -> String {
        String(cString: rsakit_tpm_rc_text(rc)) + ", 0x" + String(rc, radix: 16)
    }

    /// The error for a response code no caller gave a meaning of its own.
    static func error(_ rc: UInt32, during command: String) -> RSAError {
        switch baseCode(rc) {
        case 0x921:  // TPM_RC_LOCKOUT
            return .tpmLockedOut
        case 0x08E, 0x0A2:  // TPM_RC_AUTH_FAIL, TPM_RC_BAD_AUTH: the authValue (PIN) is wrong
            return .tokenPINIncorrect
        case 0x922, 0x908, 0x90A:  // TPM_RC_RETRY, TPM_RC_YIELDED, TPM_RC_TESTING
            return .tpmUnavailable(reason: "the TPM is busy (\(text(rc))): try again")
        case 0x902, 0x903:  // TPM_RC_OBJECT_MEMORY, TPM_RC_SESSION_MEMORY
            return .tpmUnavailable(
                reason:
                    "the TPM has no room for another object or session (\(text(rc))): use the resource manager "
                    + "(device:/dev/tpmrm0) or tpm2-abrmd"
            )
        default:
            if rc & 0xFF_0000 == 0xA_0000 {  // the TCTI layer: the connection to the TPM failed
                return .tpmUnavailable(reason: "the connection to the TPM failed during \(command) (\(text(rc)))")
            }
            return .tpmUnavailable(reason: "\(command) failed: \(text(rc))")
        }
    }
}
