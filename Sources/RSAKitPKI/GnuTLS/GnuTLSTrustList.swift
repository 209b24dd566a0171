// An owning wrapper over GnuTLS's `gnutls_x509_trust_list_t` and its chain verification
// (RFC 5280 §6: signatures, basic constraints, key usage of CAs, name constraints,
// algorithm strength). Time checks are always disabled here: GnuTLS 3.7 has no per-call
// verification time, and its clock is process-wide, so RSATrust checks every date itself.
import RSAKitCore
internal import CGnuTLS

/// The GNUTLS_CERT_* status bits RSATrust tells apart, as plain values for the X509 folder.
internal struct GnuTLSVerifyStatus: OptionSet {
    let rawValue: UInt32
    static let invalid = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_INVALID.rawValue)
    static let revoked = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_REVOKED.rawValue)
    static let signerNotFound = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_SIGNER_NOT_FOUND.rawValue)
    static let signerNotCA = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_SIGNER_NOT_CA.rawValue)
    static let insecureAlgorithm = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_INSECURE_ALGORITHM.rawValue)
    static let notActivated = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_NOT_ACTIVATED.rawValue)
    static let expired = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_EXPIRED.rawValue)
    static let signatureFailure = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_SIGNATURE_FAILURE.rawValue)
    static let signerConstraintsFailure = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_SIGNER_CONSTRAINTS_FAILURE.rawValue)
    static let purposeMismatch = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_PURPOSE_MISMATCH.rawValue)
    static let unexpectedOwner = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_UNEXPECTED_OWNER.rawValue)
    static let unknownCriticalExtensions = GnuTLSVerifyStatus(rawValue: GNUTLS_CERT_UNKNOWN_CRIT_EXTENSIONS.rawValue)

    /// GnuTLS's own sentence for the bits (`gnutls_certificate_verification_status_print`).
    var gnutlsDescription: String {
        var datum = gnutls_datum_t()
        guard gnutls_certificate_verification_status_print(rawValue, GNUTLS_CRT_X509, &datum, 0) >= 0 else { return "" }
        return String(decoding: takeDatum(&datum), as: UTF8.self)
    }
}

/// A set of trust anchors, freed (with the certificates GnuTLS copied in) with the object.
internal final class GnuTLSTrustList {
    let handle: gnutls_x509_trust_list_t

    /// The flags every verification uses: no time checks (RSATrust checks dates itself
    /// against its own verify date), no CRL checks (no CRLs are loaded).
    private static let verifyFlags =
        GNUTLS_VERIFY_DISABLE_TIME_CHECKS.rawValue
        | GNUTLS_VERIFY_DISABLE_TRUSTED_TIME_CHECKS.rawValue | GNUTLS_VERIFY_DISABLE_CRL_CHECKS.rawValue

    init() throws {
        var handle: gnutls_x509_trust_list_t?
        try gnutlsCheck(gnutls_x509_trust_list_init(&handle, 0), "gnutls_x509_trust_list_init")
        guard let handle else {
            throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_x509_trust_list_init")
        }
        self.handle = handle
    }

    deinit {
        gnutls_x509_trust_list_deinit(handle, 1)
    }

    /// Add the anchors of a PEM bundle file (`gnutls_x509_trust_list_add_trust_file`).
    /// - Returns: how many certificates were added.
    @discardableResult
    func addAnchors(pemFile path: String) throws -> Int {
        Int(
            try gnutlsCheck(
                gnutls_x509_trust_list_add_trust_file(handle, path, nil, GNUTLS_X509_FMT_PEM, 0, 0),
                "gnutls_x509_trust_list_add_trust_file"))
    }

    /// Add one anchor from its DER (`gnutls_x509_trust_list_add_trust_mem`; GnuTLS keeps a copy).
    func addAnchor(der: [UInt8]) throws {
        try withDatum(der) { datum in
            try gnutlsCheck(
                gnutls_x509_trust_list_add_trust_mem(handle, datum, nil, GNUTLS_X509_FMT_DER, 0, 0),
                "gnutls_x509_trust_list_add_trust_mem")
        }
    }

    /// The anchor that issued `certificate` (or `certificate` itself when it is an anchor),
    /// as DER; nil when the list has none (`gnutls_x509_trust_list_get_issuer`, a copy).
    func anchorDER(issuing certificate: GnuTLSCertificate) throws -> [UInt8]? {
        var issuer: gnutls_x509_crt_t?
        let code = gnutls_x509_trust_list_get_issuer(handle, certificate.handle, &issuer, UInt32(GNUTLS_TL_GET_COPY))
        guard code >= 0, let issuer else { return nil }
        defer { gnutls_x509_crt_deinit(issuer) }
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_x509_crt_export2(issuer, GNUTLS_X509_FMT_DER, &datum), "gnutls_x509_crt_export2")
        return takeDatum(&datum)
    }

    /// Verify `chain` (leaf first) against the anchors, without time checks
    /// (`gnutls_x509_trust_list_verify_crt2`).
    func verify(_ chain: [GnuTLSCertificate]) throws -> GnuTLSVerifyStatus {
        var handles: [gnutls_x509_crt_t?] = chain.map(\.handle)
        var status: UInt32 = 0
        _ = try handles.withUnsafeMutableBufferPointer { buffer in
            try gnutlsCheck(
                gnutls_x509_trust_list_verify_crt2(
                    handle, buffer.baseAddress, UInt32(buffer.count), nil, 0,
                    GnuTLSTrustList.verifyFlags, &status, nil),
                "gnutls_x509_trust_list_verify_crt2")
        }
        return GnuTLSVerifyStatus(rawValue: status)
    }

    /// Verify one link: `certificate` signed by `issuer`, taken as trusted: the signature,
    /// the issuer's CA rights (basicConstraints cA, keyUsage keyCertSign), the algorithms
    /// (`gnutls_x509_crt_verify`, no time checks).
    static func verifyLink(_ certificate: GnuTLSCertificate, issuer: GnuTLSCertificate) throws -> GnuTLSVerifyStatus {
        var issuers: [gnutls_x509_crt_t?] = [issuer.handle]
        var status: UInt32 = 0
        _ = try issuers.withUnsafeMutableBufferPointer { buffer in
            try gnutlsCheck(
                gnutls_x509_crt_verify(certificate.handle, buffer.baseAddress, 1, verifyFlags, &status),
                "gnutls_x509_crt_verify")
        }
        return GnuTLSVerifyStatus(rawValue: status)
    }

    /// Whether `certificate`'s signature verifies under its own public key (a self-signed
    /// certificate, RFC 5280 §3.2): ``signatureVerifies(_:tbsCertificate:key:)`` with its own key.
    /// (`gnutls_x509_crt_verify`
    /// with the certificate as its own issuer checks CA rights first and accepts a
    /// certificate for being in its issuer list.)
    static func isSelfSigned(_ certificate: GnuTLSCertificate, tbsCertificate: [UInt8]) throws -> Bool {
        try signatureVerifies(certificate, tbsCertificate: tbsCertificate, key: certificate)
    }

    /// Whether `certificate`'s signature verifies under `key`'s public key over
    /// `tbsCertificate` (its DER, from the caller), with the certificate's signature algorithm
    /// (`gnutls_pubkey_verify_data2`, flags 0: an algorithm GnuTLS deems insecure fails). No
    /// name, CA or date check.
    static func signatureVerifies(
        _ certificate: GnuTLSCertificate, tbsCertificate: [UInt8], key holder: GnuTLSCertificate
    ) throws -> Bool {
        let algorithm = gnutls_x509_crt_get_signature_algorithm(certificate.handle)
        let signature = gnutlsExactSizedQuery { buffer, size in
            gnutls_x509_crt_get_signature(certificate.handle, buffer?.assumingMemoryBound(to: CChar.self), size)
        }
        guard algorithm > 0, let signature else { return false }
        return try publicKeyVerifies(holder, algorithm: algorithm, data: tbsCertificate, signature: signature)
    }

    /// Whether `signature` over `data` verifies under the public key of `holder` with the
    /// signature algorithm `algorithm` (a `gnutls_sign_algorithm_t` value;
    /// `gnutls_pubkey_verify_data2`, flags 0).
    static func publicKeyVerifies(_ holder: GnuTLSCertificate, algorithm: Int32, data: [UInt8], signature: [UInt8])
        throws -> Bool
    {
        var key: gnutls_pubkey_t?
        try gnutlsCheck(gnutls_pubkey_init(&key), "gnutls_pubkey_init")
        guard let key else { return false }
        defer { gnutls_pubkey_deinit(key) }
        guard algorithm > 0, gnutls_pubkey_import_x509(key, holder.handle, 0) >= 0 else { return false }
        return withDatum(data) { dataDatum in
            withDatum(signature) { signatureDatum in
                gnutls_pubkey_verify_data2(
                    key, gnutls_sign_algorithm_t(UInt32(algorithm)), 0, dataDatum, signatureDatum) >= 0
            }
        }
    }

    /// Whether `issuer`'s subject is `certificate`'s issuer name (`gnutls_x509_crt_check_issuer`).
    static func isIssuer(_ issuer: GnuTLSCertificate, of certificate: GnuTLSCertificate) -> Bool {
        gnutls_x509_crt_check_issuer(certificate.handle, issuer.handle) != 0
    }
}
