// An owning wrapper over GnuTLS's `gnutls_x509_privkey_t`, used for what RSAKit does not
// do itself: decrypting encrypted PKCS#8 (RFC 5208 §6, PBES1/PBES2 of RFC 8018, the
// PKCS#12 PBE schemes) and OpenSSL's legacy "Proc-Type: 4,ENCRYPTED" PEM, and writing
// PBES2. The plain key GnuTLS hands back is parsed by RSAKit's own DER reader.
import RSAKitCore
internal import CGnuTLS

/// One private key inside GnuTLS, zeroed and freed (`gnutls_x509_privkey_deinit`) with the object.
internal final class GnuTLSPrivateKey {
    let handle: gnutls_x509_privkey_t

    private init() throws {
        var handle: gnutls_x509_privkey_t?
        try gnutlsCheck(gnutls_x509_privkey_init(&handle), "gnutls_x509_privkey_init")
        guard let handle else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_x509_privkey_init") }
        self.handle = handle
    }

    deinit {
        gnutls_x509_privkey_deinit(handle)
    }

    /// Decrypt a DER `EncryptedPrivateKeyInfo` (`gnutls_x509_privkey_import_pkcs8`).
    /// - Throws: `GnuTLSFailure` (GNUTLS_E_DECRYPTION_FAILED for a wrong passphrase,
    ///   GNUTLS_E_UNKNOWN_CIPHER_TYPE for a scheme GnuTLS lacks), `RSAError.passphraseUnusable`.
    static func decryptPKCS8(der: [UInt8], passphrase: [UInt8]) throws -> GnuTLSPrivateKey {
        let key = try GnuTLSPrivateKey()
        try withPassphraseCString(passphrase) { password in
            try withDatum(der) { datum in
                try gnutlsCheck(
                    gnutls_x509_privkey_import_pkcs8(key.handle, datum, GNUTLS_X509_FMT_DER, password, 0),
                    "gnutls_x509_privkey_import_pkcs8")
            }
        }
        return key
    }

    /// Decrypt OpenSSL's legacy encrypted PEM ("Proc-Type: 4,ENCRYPTED", "DEK-Info: ...",
    /// key from the passphrase by EVP_BytesToKey with MD5) with `gnutls_x509_privkey_import_openssl`.
    /// - Parameter pem: the whole PEM block, headers included.
    static func decryptOpenSSLPEM(_ pem: [UInt8], passphrase: [UInt8]) throws -> GnuTLSPrivateKey {
        let key = try GnuTLSPrivateKey()
        try withPassphraseCString(passphrase) { password in
            try withDatum(pem) { datum in
                try gnutlsCheck(
                    gnutls_x509_privkey_import_openssl(key.handle, datum, password),
                    "gnutls_x509_privkey_import_openssl")
            }
        }
        return key
    }

    /// Load a plain key from DER (PKCS#1 RSAPrivateKey or PKCS#8 PrivateKeyInfo).
    static func plain(der: [UInt8]) throws -> GnuTLSPrivateKey {
        let key = try GnuTLSPrivateKey()
        try withDatum(der) { datum in
            try gnutlsCheck(
                gnutls_x509_privkey_import(key.handle, datum, GNUTLS_X509_FMT_DER), "gnutls_x509_privkey_import")
        }
        return key
    }

    /// The key as unencrypted PKCS#8 `PrivateKeyInfo` DER. Secret: the caller wipes it.
    func plainPKCS8DER() throws -> [UInt8] {
        var datum = gnutls_datum_t()
        try gnutlsCheck(
            gnutls_x509_privkey_export2_pkcs8(handle, GNUTLS_X509_FMT_DER, nil, GNUTLS_PKCS_PLAIN.rawValue, &datum),
            "gnutls_x509_privkey_export2_pkcs8")
        return takeDatum(&datum)
    }

    /// The key as PBES2 `EncryptedPrivateKeyInfo` DER (RFC 8018 §6.2): PBKDF2 with
    /// HMAC-SHA256 and GnuTLS's iteration count (600,000 in GnuTLS 3.7.9), AES-256-CBC.
    func pbes2AES256DER(passphrase: [UInt8]) throws -> [UInt8] {
        try withPassphraseCString(passphrase) { password in
            var datum = gnutls_datum_t()
            try gnutlsCheck(
                gnutls_x509_privkey_export2_pkcs8(
                    handle, GNUTLS_X509_FMT_DER, password,
                    GNUTLS_PKCS_PBES2_AES_256.rawValue, &datum),
                "gnutls_x509_privkey_export2_pkcs8")
            return takeDatum(&datum)
        }
    }

    /// The GnuTLS error codes that mean "the passphrase did not decrypt this": the cipher's
    /// padding check failed, or the decrypted bytes are not DER (a wrong key that happened
    /// to leave valid padding, about 1 in 256 tries).
    static func isWrongPassphrase(_ failure: GnuTLSFailure) -> Bool {
        failure.isDecryptionFailure || failure.code == GNUTLS_E_ASN1_DER_ERROR
            || failure.code == GNUTLS_E_ASN1_TAG_ERROR || failure.code == GNUTLS_E_ASN1_GENERIC_ERROR
            || failure.code == GNUTLS_E_ASN1_DER_OVERFLOW || failure.code == GNUTLS_E_ASN1_ELEMENT_NOT_FOUND
            || failure.code == GNUTLS_E_ASN1_TYPE_ANY_ERROR || failure.code == GNUTLS_E_ASN1_SYNTAX_ERROR
            || failure.code == GNUTLS_E_ASN1_VALUE_NOT_FOUND || failure.code == GNUTLS_E_ASN1_VALUE_NOT_VALID
            || failure.code == GNUTLS_E_PK_INVALID_PRIVKEY
    }

    /// Whether GnuTLS lacks the cipher or scheme.
    static func isUnsupportedScheme(_ failure: GnuTLSFailure) -> Bool {
        failure.code == GNUTLS_E_UNKNOWN_CIPHER_TYPE || failure.code == GNUTLS_E_UNKNOWN_HASH_ALGORITHM
            || failure.code == GNUTLS_E_UNKNOWN_ALGORITHM || failure.code == GNUTLS_E_UNIMPLEMENTED_FEATURE
    }

    /// Whether GnuTLS refused the passphrase itself (not valid UTF-8 for its PRECIS
    /// normalisation of PBES2 passwords).
    static func isUnusablePassphrase(_ failure: GnuTLSFailure) -> Bool {
        failure.code == GNUTLS_E_INVALID_PASSWORD_STRING
    }
}
