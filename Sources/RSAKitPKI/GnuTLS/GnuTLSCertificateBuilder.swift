// PKCS#10 requests (RFC 2986, `gnutls_x509_crq_*`) and self-signed certificates (RFC 5280,
// `gnutls_x509_crt_*`) signed through an external key, as the TLS client signs its
// CertificateVerify. GnuTLS builds and encodes the document and writes its signatureAlgorithm;
// the signature itself is made over the to-be-signed DER by RSACertificateSigner, wherever the
// key lives. GnuTLS hands an RSA external key only a hash, never the message, and a TPM key
// signs PKCS#1 v1.5 only over a message it hashes itself; so GnuTLS signs with a placeholder
// of k zero bytes (an external key that answers only the builder's scheme), and the real
// signature, also k bytes, replaces it in the DER: every length stays as GnuTLS wrote it.
import RSAKitCore
internal import CGnuTLS
#if canImport(Glibc)
import Glibc
#endif

internal enum GnuTLSCertificateBuilder {
    /// What a request and a certificate share: subject, names, key, signature.
    struct Contents {
        /// The subject as an RFC 4514 string (parsed by `gnutls_x509_crq_set_dn`).
        let subject: String
        let alternativeNames: [X509Certificate.SubjectAlternativeName]
        let signer: RSACertificateSigner
        let scheme: RSACertificateSignatureScheme
    }

    /// The fields only a certificate has.
    struct Validity {
        /// 1 to 20 bytes, positive (first byte below 0x80, not a leading zero).
        let serial: [UInt8]
        let notBefore: Int
        let notAfter: Int
        let isCertificateAuthority: Bool
    }

    /// The DER CertificationRequest (RFC 2986 §4): version 0, the subject, the key, an
    /// extensionRequest with the subjectAltNames when there are any, signed by the signer.
    /// - Throws: `RSAError.invalidDistinguishedName`, `RSAError.invalidSubjectAlternativeName`,
    ///   what the signer throws, `GnuTLSFailure`.
    static func request(_ contents: Contents) throws -> [UInt8] {
        var handle: gnutls_x509_crq_t?
        try gnutlsCheck(gnutls_x509_crq_init(&handle), "gnutls_x509_crq_init")
        guard let crq = handle else {
            throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_x509_crq_init")
        }
        defer { gnutls_x509_crq_deinit(crq) }
        // RFC 2986 §4.1: version is 0 (v1); GnuTLS counts from 1.
        try gnutlsCheck(gnutls_x509_crq_set_version(crq, 1), "gnutls_x509_crq_set_version")
        try setDN(contents.subject) { name, error in gnutls_x509_crq_set_dn(crq, name, error) }
        try withPublicKey(contents.signer.publicKey) { key in
            try gnutlsCheck(gnutls_x509_crq_set_pubkey(crq, key), "gnutls_x509_crq_set_pubkey")
        }
        for name in contents.alternativeNames {
            try setAlternativeName(name) { type, data, size in
                gnutls_x509_crq_set_subject_alt_name(crq, type, data, size, UInt32(GNUTLS_FSAN_APPEND))
            }
        }
        try sign(contents, reportingRSAPSS: true) { key, digest, flags in
            gnutls_x509_crq_privkey_sign(crq, key, digest, flags)
        }
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_x509_crq_export2(crq, GNUTLS_X509_FMT_DER, &datum), "gnutls_x509_crq_export2")
        return try signed(takeDatum(&datum), contents)
    }

    /// The DER Certificate (RFC 5280 §4.1), v3, issuer = subject, signed by the subject's key,
    /// with the extensions `openssl req -x509` writes from openssl.cnf's v3_req and v3_ca
    /// sections: subjectKeyIdentifier (SHA-1 of the subjectPublicKey BIT STRING, RFC 5280
    /// §4.2.1.2 method 1), authorityKeyIdentifier (the same keyIdentifier), basicConstraints
    /// (critical; cA true only for a CA), keyUsage (critical: digitalSignature, nonRepudiation,
    /// keyEncipherment; a CA: digitalSignature, keyCertSign, cRLSign), the subjectAltNames.
    /// - Throws: as ``request(_:)``.
    static func selfSigned(_ contents: Contents, _ validity: Validity) throws -> [UInt8] {
        var handle: gnutls_x509_crt_t?
        try gnutlsCheck(gnutls_x509_crt_init(&handle), "gnutls_x509_crt_init")
        guard let crt = handle else {
            throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_x509_crt_init")
        }
        defer { gnutls_x509_crt_deinit(crt) }
        try gnutlsCheck(gnutls_x509_crt_set_version(crt, 3), "gnutls_x509_crt_set_version")
        try setDN(contents.subject) { name, error in gnutls_x509_crt_set_dn(crt, name, error) }
        _ = try validity.serial.withUnsafeBytes { serial in
            try gnutlsCheck(
                gnutls_x509_crt_set_serial(crt, serial.baseAddress, serial.count), "gnutls_x509_crt_set_serial")
        }
        try gnutlsCheck(
            gnutls_x509_crt_set_activation_time(crt, time_t(validity.notBefore)), "gnutls_x509_crt_set_activation_time")
        try gnutlsCheck(
            gnutls_x509_crt_set_expiration_time(crt, time_t(validity.notAfter)), "gnutls_x509_crt_set_expiration_time")
        try withPublicKey(contents.signer.publicKey) { key in
            try gnutlsCheck(gnutls_x509_crt_set_pubkey(crt, key), "gnutls_x509_crt_set_pubkey")
        }
        // RFC 5280 §4.2.1.2 method 1: SHA-1 over the subjectPublicKey BIT STRING's value (the
        // PKCS#1 RSAPublicKey DER), what openssl's "subjectKeyIdentifier=hash" writes.
        // (gnutls_pubkey_get_key_id hashes the whole SubjectPublicKeyInfo instead.)
        let keyID = RSAHashAlgorithm.sha1.hash(contents.signer.publicKey.pkcs1DERRepresentation)
        try withUnsafeBytesChecked(keyID) { pointer, count in
            try gnutlsCheck(
                gnutls_x509_crt_set_subject_key_id(crt, pointer, count), "gnutls_x509_crt_set_subject_key_id")
            try gnutlsCheck(
                gnutls_x509_crt_set_authority_key_id(crt, pointer, count), "gnutls_x509_crt_set_authority_key_id")
        }
        // gnutls_x509_crt_set_basic_constraints and _set_key_usage mark both critical.
        try gnutlsCheck(
            gnutls_x509_crt_set_basic_constraints(crt, validity.isCertificateAuthority ? 1 : 0, -1),
            "gnutls_x509_crt_set_basic_constraints")
        let usage =
            validity.isCertificateAuthority
            ? GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN
            : GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_NON_REPUDIATION | GNUTLS_KEY_KEY_ENCIPHERMENT
        try gnutlsCheck(gnutls_x509_crt_set_key_usage(crt, UInt32(usage)), "gnutls_x509_crt_set_key_usage")
        for name in contents.alternativeNames {
            try setAlternativeName(name) { type, data, size in
                gnutls_x509_crt_set_subject_alt_name(crt, type, data, size, UInt32(GNUTLS_FSAN_APPEND))
            }
        }
        // Self-signed: the issuer is the certificate itself (its subject becomes the issuer).
        try sign(contents) { key, digest, flags in gnutls_x509_crt_privkey_sign(crt, crt, key, digest, flags) }
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_DER, &datum), "gnutls_x509_crt_export2")
        return try signed(takeDatum(&datum), contents)
    }

    /// Parse `name` (RFC 4514) into the document's subject with `set`.
    /// - Throws: `RSAError.invalidDistinguishedName` naming where GnuTLS stopped.
    private static func setDN(
        _ name: String,
        _ set: (UnsafePointer<CChar>, UnsafeMutablePointer<UnsafePointer<CChar>?>) -> Int32
    ) throws {
        guard !name.isEmpty else {
            throw RSAError.invalidDistinguishedName(
                name, reason: "it is empty; give at least one attribute, as \"CN=name\"")
        }
        guard !name.utf8.contains(0) else {
            throw RSAError.invalidDistinguishedName(name, reason: "it contains a NUL character")
        }
        try name.withCString { start in
            var stop: UnsafePointer<CChar>?
            let code = set(start, &stop)
            guard code < 0 else { return }
            var message = String(cString: gnutls_strerror(code)).lowercased()
            while message.hasSuffix(".") { message.removeLast() }
            // GnuTLS points at the attribute it could not read; at the start it knows no better.
            if let stop, stop > start, stop - start < name.utf8.count {
                let rest = String(cString: stop)
                throw RSAError.invalidDistinguishedName(
                    name,
                    reason:
                        "\(message) at \"\(rest)\" (character \(stop - start + 1)); write it as RFC 4514 attributes, "
                        + "as \"CN=host,O=Example,C=GB\""
                )
            }
            throw RSAError.invalidDistinguishedName(
                name, reason: "\(message); write it as RFC 4514 attributes, as \"CN=host,O=Example,C=GB\"")
        }
    }

    /// Add one subjectAltName with `set` (type, data, size).
    private static func setAlternativeName(
        _ name: X509Certificate.SubjectAlternativeName,
        _ set: (gnutls_x509_subject_alt_name_t, UnsafeRawPointer?, UInt32) -> Int32
    ) throws {
        let type: gnutls_x509_subject_alt_name_t
        let bytes: [UInt8]
        switch name {
        case let .dnsName(text): (type, bytes) = (GNUTLS_SAN_DNSNAME, Array(text.utf8))
        case let .emailAddress(text): (type, bytes) = (GNUTLS_SAN_RFC822NAME, Array(text.utf8))
        case let .uri(text): (type, bytes) = (GNUTLS_SAN_URI, Array(text.utf8))
        case let .ipAddress(octets):
            guard octets.count == 4 || octets.count == 16 else {
                throw RSAError.invalidSubjectAlternativeName(
                    name.description, reason: "an IP address is 4 or 16 bytes, not \(octets.count)")
            }
            (type, bytes) = (GNUTLS_SAN_IPADDRESS, octets)
        default:
            throw RSAError.invalidSubjectAlternativeName(
                name.description, reason: "only DNS, IP, email and URI names can be written")
        }
        try withUnsafeBytesChecked(bytes) { pointer, count in
            try gnutlsCheck(set(type, pointer, UInt32(count)), "gnutls_x509_*_set_subject_alt_name")
        }
    }

    /// Run `body` with a GnuTLS public key holding `key` (`gnutls_pubkey_import_rsa_raw`).
    private static func withPublicKey(_ key: RSAPublicKey, _ body: (gnutls_pubkey_t) throws -> Void) throws {
        var handle: gnutls_pubkey_t?
        try gnutlsCheck(gnutls_pubkey_init(&handle), "gnutls_pubkey_init")
        guard let pubkey = handle else {
            throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_pubkey_init")
        }
        defer { gnutls_pubkey_deinit(pubkey) }
        try withDatum(key.modulus) { n in
            try withDatum(key.publicExponent) { e in
                try gnutlsCheck(gnutls_pubkey_import_rsa_raw(pubkey, n, e), "gnutls_pubkey_import_rsa_raw")
            }
        }
        try body(pubkey)
    }

    /// Have GnuTLS sign the document with a placeholder, so that it writes the
    /// signatureAlgorithm (and, for a certificate, the same AlgorithmIdentifier inside the
    /// tbsCertificate) for the scheme. The external key offers only the scheme
    /// (``isScheme(_:_:inputByteCount:)``), checks that GnuTLS asks for exactly it, and answers
    /// with k zero bytes, which ``signed(_:_:)`` replaces with the real signature.
    /// - Parameter reportingRSAPSS: the key says it is GNUTLS_PK_RSA_PSS when the scheme is
    ///   PSS (`gnutls_x509_crq_privkey_sign` takes the scheme from the key, and ignores
    ///   GNUTLS_PRIVKEY_SIGN_FLAG_RSA_PSS; `gnutls_x509_crt_privkey_sign` honours the flag).
    /// - Throws: `RSAError.keyRestricted` (``RSACertificateSigner/checkUsable(with:)``);
    ///   `RSAError.internalError` when GnuTLS asks for another scheme; `GnuTLSFailure`.
    private static func sign(
        _ contents: Contents, reportingRSAPSS: Bool = false,
        _ call: (gnutls_privkey_t, gnutls_digest_algorithm_t, UInt32) -> Int32
    ) throws {
        let scheme = contents.scheme
        try contents.signer.checkUsable(with: scheme)
        var isPSS = false
        if case .pss = scheme { isPSS = true }
        let modulusBitCount = contents.signer.publicKey.modulusBitCount
        let external = GnuTLSExternalKey(
            modulusBitCount: modulusBitCount, reportsRSAPSS: isPSS && reportingRSAPSS,
            offers: { isScheme(scheme, $0, inputByteCount: nil) },
            answer: { algorithm, input in
                guard isScheme(scheme, algorithm, inputByteCount: input.count) else {
                    throw GnuTLSExternalKey.Unsupported(
                        reason: RSAError.internalError(
                            "GnuTLS asked for signature algorithm \(algorithm.rawValue) over \(input.count) "
                                + "bytes, not \(scheme)"))
                }
                return [UInt8](repeating: 0, count: (modulusBitCount + 7) / 8)
            })
        let key = try external.makePrivateKey()
        defer { gnutls_privkey_deinit(key) }
        let algorithm: gnutls_digest_algorithm_t
        switch scheme.hash {
        case .sha384: algorithm = GNUTLS_DIG_SHA384
        case .sha512: algorithm = GNUTLS_DIG_SHA512
        default: algorithm = GNUTLS_DIG_SHA256
        }
        let flags: UInt32 = isPSS ? UInt32(GNUTLS_PRIVKEY_SIGN_FLAG_RSA_PSS.rawValue) : 0
        let code = call(key, algorithm, flags)
        if code < 0 {
            if let error = external.lastError { throw error }
            throw GnuTLSFailure(code: code, function: "signing the document")
        }
    }

    /// Whether GnuTLS's request is `scheme`: for PKCS#1 v1.5, GNUTLS_SIGN_RSA_RAW over the
    /// DigestInfo of the scheme's hash (the DigestInfo prefix and hLen bytes); for PSS, the
    /// scheme's RSA-PSS algorithm over hLen bytes. `inputByteCount` is nil when GnuTLS asks
    /// whether the key offers `algorithm` at all.
    private static func isScheme(
        _ scheme: RSACertificateSignatureScheme, _ algorithm: gnutls_sign_algorithm_t, inputByteCount: Int?
    ) -> Bool {
        let hash = scheme.hash
        switch (scheme, algorithm) {
        case (.pkcs1v15, GNUTLS_SIGN_RSA_RAW):
            return inputByteCount.map {
                $0 == RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: hash).count + hash.digestByteCount
            } ?? true
        case (.pkcs1v15(.sha256), GNUTLS_SIGN_RSA_SHA256), (.pkcs1v15(.sha384), GNUTLS_SIGN_RSA_SHA384),
            (.pkcs1v15(.sha512), GNUTLS_SIGN_RSA_SHA512):
            return inputByteCount == nil
        case (.pss(.sha256), GNUTLS_SIGN_RSA_PSS_SHA256), (.pss(.sha256), GNUTLS_SIGN_RSA_PSS_RSAE_SHA256),
            (.pss(.sha384), GNUTLS_SIGN_RSA_PSS_SHA384), (.pss(.sha384), GNUTLS_SIGN_RSA_PSS_RSAE_SHA384),
            (.pss(.sha512), GNUTLS_SIGN_RSA_PSS_SHA512), (.pss(.sha512), GNUTLS_SIGN_RSA_PSS_RSAE_SHA512):
            return inputByteCount.map { $0 == hash.digestByteCount } ?? true
        default:
            return false
        }
    }

    /// The document with its real signature: `placeholderSigned` is Certificate or
    /// CertificationRequest ::= SEQUENCE { toBeSigned, signatureAlgorithm, signature BIT STRING }
    /// (RFC 5280 §4.1, RFC 2986 §4) whose BIT STRING holds 0x00 and k placeholder bytes; the
    /// signer signs the toBeSigned DER exactly as encoded, and its k bytes take their place.
    /// - Throws: what the signer throws; `RSAError.internalError` when GnuTLS's DER is not
    ///   that shape, or the signature is not k bytes or does not verify.
    private static func signed(_ placeholderSigned: [UInt8], _ contents: Contents) throws -> [UInt8] {
        let k = contents.signer.publicKey.modulusByteCount
        let reader = DERReader(placeholderSigned)
        let parts: [DERElement]
        do {
            let top = try reader.element(at: 0, limit: placeholderSigned.count)
            parts = try reader.sequence(top, what: "signed document")
        } catch {
            throw RSAError.internalError("GnuTLS wrote a document rsakit cannot read: \(error)")
        }
        guard parts.count == 3, parts[2].tag == 0x03, parts[2].content.count == k + 1,
            placeholderSigned[parts[2].content.lowerBound] == 0
        else {
            throw RSAError.internalError(
                "GnuTLS wrote a document that is not SEQUENCE { toBeSigned, algorithm, k-byte signature }")
        }
        let toBeSigned = Array(placeholderSigned[parts[0].offset..<parts[0].end])
        let signature = try contents.signer.signature(for: toBeSigned, scheme: contents.scheme)
        guard signature.count == k else {
            throw RSAError.internalError("the signer returned \(signature.count) bytes, not the modulus length \(k)")
        }
        var document = placeholderSigned
        document.replaceSubrange((parts[2].content.lowerBound + 1)..<parts[2].end, with: signature)
        return document
    }

    /// `bytes`' base address and count (a valid pointer even when empty).
    private static func withUnsafeBytesChecked(_ bytes: [UInt8], _ body: (UnsafeRawPointer, Int) throws -> Void) throws
    {
        var copy = bytes
        if copy.isEmpty { copy.reserveCapacity(1) }
        try copy.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1) else { return }
            try body(base, buffer.count)
        }
    }
}
