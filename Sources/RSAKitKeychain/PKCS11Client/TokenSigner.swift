// A token key logged in for the length of a TLS handshake: the TLS client's external-key
// callback (GnuTLSExternalKey) signs through it, so the CertificateVerify signature is made
// by C_Sign on the token, or TPM2_Sign for a key in the TPM. The session is opened (and the
// PIN checked) before the handshake starts, so a wrong PIN or a missing token is reported as
// itself, not as a handshake failure.

import RSAKitCore
import RSAKitPKI
internal import CP11Kit

/// One logged-in session on the token holding ``key``'s private half (or a TPM context with
/// the key loaded), for signing.
/// Not thread-safe: GnuTLS calls the signer on the thread running the handshake.
package final class TokenSigner {
    /// The key the session signs with.
    let key: RSATokenKey
    private enum Backend {
        case token(TokenSession, CK_OBJECT_HANDLE)
        case tpm(TPMKeySession)
    }
    private let backend: Backend
    private var closed = false

    /// Open a session on `key`'s token, log in with `pin`, find the private key object and
    /// check that its public half is `key.publicKey`; for a key in the TPM, open the TPM and
    /// load the key (a key that cannot sign is refused here, before the handshake).
    /// - Throws: `RSAError.tokenUnavailable` (module, token or object missing, or another
    ///   key under the id); `RSAError.tokenPINIncorrect`; `RSAError.tokenOperationFailed`;
    ///   for a TPM key `RSAError.keyRestricted` and the TPM's errors.
    package init(key: RSATokenKey, pin: RSASecretBytes) throws {
        self.key = key
        if let blobs = key.reference.tpmKey {
            guard blobs.usage.canSign else { throw RSATokenKey.tpmUsageRefusal(blobs.usage, wanted: "signing") }
            backend = .tpm(try key.openTPMKey(pin: pin))
        } else {
            let (session, object) = try key.openPrivateKey(pin: pin)
            backend = .token(session, object)
        }
    }

    deinit { close() }

    /// RSASSA-PKCS1-v1_5 over a ready-made T (the DER DigestInfo GnuTLS built for
    /// GNUTLS_SIGN_RSA_RAW): CKM_RSA_PKCS, which pads T as RFC 8017 §9.2 steps 3-5 and
    /// applies RSASP1 on the token.
    /// - Parameter digestInfo: T, at most k - 11 bytes (the token refuses longer input).
    /// - Returns: S, k bytes.
    /// A key in the TPM parses T into its hash and digest and signs with TPM2_Sign and
    /// RSASSA (no raw RSA): T must be the DigestInfo of a SHA-1 or SHA-2 digest.
    /// - Throws: `RSAError.keyRestricted` for a TPM key and any other T;
    ///   `RSAError.keyTooSmallForPadding` when T is longer than k - 11; the
    ///   session's errors (`RSAError.tokenUnavailable` after ``close()``).
    package func signature(forDigestInfo digestInfo: [UInt8]) throws -> [UInt8] {
        if case let .tpm(session) = backend {
            try checkOpen()
            return try session.signature(forDigestInfo: digestInfo)
        }
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
        if case let .tpm(session) = backend {
            try checkOpen()
            return try session.signature(forDigest: digest, hash: hash, padding: padding)
        }
        let (mechanism, parameter, input) = try key.signingMechanism(forDigest: digest, hash: hash, padding: padding)
        return try sign(mechanism: mechanism, parameter: parameter, input: input)
    }

    /// Log out, close the session and finalise the module, or flush the TPM's objects (once;
    /// later signatures throw).
    package func close() {
        guard !closed else { return }
        closed = true
        switch backend {
        case let .token(session, _): session.close()
        case let .tpm(session): session.close()
        }
    }

    private func checkOpen() throws {
        guard !closed else {
            throw RSAError.tokenUnavailable(reason: "the session on token '\(key.reference.tokenLabel)' is closed")
        }
    }

    private func sign(mechanism: CK_MECHANISM_TYPE, parameter: [UInt8]?, input: [UInt8]) throws -> [UInt8] {
        try checkOpen()
        guard case let .token(session, object) = backend else {
            throw RSAError.tokenUnavailable(reason: "not a token session")
        }
        return try session.run(
            .sign, mechanism: mechanism, parameter: parameter, object: object, input: input,
            outputCapacity: key.publicKey.modulusByteCount)
    }
}
