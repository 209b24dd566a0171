// A token key logged in for the length of a TLS handshake: the TLS client's external-key
// callback (GnuTLSExternalKey) signs through it, so the CertificateVerify signature is made
// by C_Sign on the token. The session is opened (and the PIN checked) before the handshake
// starts, so a wrong PIN or a missing token is reported as itself, not as a handshake failure.

import RSAKitCore
import RSAKitPKI
internal import CP11Kit

/// One logged-in session on the token holding ``key``'s private half, for signing.
/// Not thread-safe: GnuTLS calls the signer on the thread running the handshake.
package final class TokenSigner {
    /// The key the session signs with.
    let key: RSATokenKey
    private let session: TokenSession
    private let object: CK_OBJECT_HANDLE
    private var closed = false

    /// Open a session on `key`'s token, log in with `pin`, find the private key object and
    /// check that its public half is `key.publicKey`.
    /// - Throws: `RSAError.tokenUnavailable` (module, token or object missing, or another
    ///   key under the id); `RSAError.tokenPINIncorrect`; `RSAError.tokenOperationFailed`.
    package init(key: RSATokenKey, pin: RSASecretBytes) throws {
        self.key = key
        (session, object) = try key.openPrivateKey(pin: pin)
    }

    deinit { close() }

    /// RSASSA-PKCS1-v1_5 over a ready-made T (the DER DigestInfo GnuTLS built for
    /// GNUTLS_SIGN_RSA_RAW): CKM_RSA_PKCS, which pads T as RFC 8017 §9.2 steps 3-5 and
    /// applies RSASP1 on the token.
    /// - Parameter digestInfo: T, at most k - 11 bytes (the token refuses longer input).
    /// - Returns: S, k bytes.
    /// - Throws: `RSAError.keyRestricted` for a key in the TPM (no raw RSA, so no signature
    ///   over a ready DigestInfo); `RSAError.keyTooSmallForPadding` when T is longer than k - 11; the
    ///   session's errors (`RSAError.tokenUnavailable` after ``close()``).
    package func signature(forDigestInfo digestInfo: [UInt8]) throws -> [UInt8] {
        if key.tpm != nil { throw RSAError.keyRestricted(reason: RSATokenKey.tpmDigestInfoReason) }
        let k = key.publicKey.modulusByteCount
        guard digestInfo.count <= k - 11 else {
            throw RSAError.keyTooSmallForPadding(
                modulusByteCount: k, minimumByteCount: digestInfo.count + 11, padding: "RSASSA-PKCS1-v1_5")
        }
        return try sign(mechanism: CK_MECHANISM_TYPE(CKM_RSA_PKCS), parameter: nil, input: digestInfo)
    }

    /// RSASSA-PSS or RSASSA-PKCS1-v1_5 over `digest` (see
    /// ``RSATokenKey/signature(forDigest:hash:padding:pin:)-([UInt8],_,_,_)``) in this session.
    /// - Returns: S, k bytes.
    /// - Throws: as that method.
    package func signature(forDigest digest: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding) throws
        -> [UInt8]
    {
        guard digest.count == hash.digestByteCount else {
            throw RSAError.digestLengthMismatch(byteCount: digest.count, expected: hash.digestByteCount)
        }
        let (mechanism, parameter, input) = try key.signingMechanism(forDigest: digest, hash: hash, padding: padding)
        return try sign(mechanism: mechanism, parameter: parameter, input: input)
    }

    /// Log out, close the session and finalise the module (once; later signatures throw).
    package func close() {
        guard !closed else { return }
        closed = true
        session.close()
    }

    private func sign(mechanism: CK_MECHANISM_TYPE, parameter: [UInt8]?, input: [UInt8]) throws -> [UInt8] {
        guard !closed else {
            throw RSAError.tokenUnavailable(reason: "the session on token '\(key.reference.tokenLabel)' is closed")
        }
        return try key.tpmSigningErrors {
            try session.run(
                .sign, mechanism: mechanism, parameter: parameter, object: object, input: input,
                outputCapacity: key.publicKey.modulusByteCount)
        }
    }
}
