// An owning wrapper over GnuTLS's `gnutls_x509_crt_t` (RFC 5280 certificates): import
// from DER, and the getters X509Certificate reads once when it is made.
import RSAKitCore
internal import CGnuTLS
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One parsed X.509 certificate, freed (`gnutls_x509_crt_deinit`) with the object.
package final class GnuTLSCertificate {
    /// The GnuTLS handle; valid for the object's lifetime. Used by the other GnuTLS files.
    let handle: gnutls_x509_crt_t

    /// Parse one DER certificate (exactly one `Certificate` SEQUENCE, RFC 5280 §4.1).
    /// - Throws: `GnuTLSFailure` when GnuTLS rejects the encoding.
    package init(der: [UInt8]) throws {
        var handle: gnutls_x509_crt_t?
        try gnutlsCheck(gnutls_x509_crt_init(&handle), "gnutls_x509_crt_init")
        guard let handle else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_x509_crt_init") }
        self.handle = handle
        try withDatum(der) { datum in
            try gnutlsCheck(gnutls_x509_crt_import(handle, datum, GNUTLS_X509_FMT_DER), "gnutls_x509_crt_import")
        }
    }

    deinit {
        gnutls_x509_crt_deinit(handle)
    }

    /// The certificate re-encoded as DER by GnuTLS.
    func exportDER() throws -> [UInt8] {
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_x509_crt_export2(handle, GNUTLS_X509_FMT_DER, &datum), "gnutls_x509_crt_export2")
        return takeDatum(&datum)
    }

    /// The subject DN as an RFC 4514 string (`gnutls_x509_crt_get_dn3`, flags 0).
    func subjectDN() throws -> String {
        var datum = gnutls_datum_t()
        let code = gnutls_x509_crt_get_dn3(handle, &datum, 0)
        if code == GNUTLS_E_ASN1_ELEMENT_NOT_FOUND || code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { return "" }
        try gnutlsCheck(code, "gnutls_x509_crt_get_dn3")
        return String(decoding: takeDatum(&datum), as: UTF8.self)
    }

    /// The issuer DN as an RFC 4514 string (`gnutls_x509_crt_get_issuer_dn3`).
    func issuerDN() throws -> String {
        var datum = gnutls_datum_t()
        let code = gnutls_x509_crt_get_issuer_dn3(handle, &datum, 0)
        if code == GNUTLS_E_ASN1_ELEMENT_NOT_FOUND || code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { return "" }
        try gnutlsCheck(code, "gnutls_x509_crt_get_issuer_dn3")
        return String(decoding: takeDatum(&datum), as: UTF8.self)
    }

    /// Every value of the subject attribute `oid` ("2.5.4.3" for commonName), in DER
    /// order, each as the DER TLV of its AttributeValue (`gnutls_x509_crt_get_dn_by_oid`
    /// with the raw flag; GnuTLS's text form is RFC 4514-escaped).
    func subjectAttributeValues(oid: String) throws -> [[UInt8]] {
        var values: [[UInt8]] = []
        var index: UInt32 = 0
        while index < 64 {
            let value = try gnutlsSizedQuery("gnutls_x509_crt_get_dn_by_oid") { buffer, size in
                gnutls_x509_crt_get_dn_by_oid(handle, oid, index, 1, buffer, size)
            }
            guard let value else { break }
            values.append(value)
            index += 1
        }
        return values
    }

    /// The serial number's INTEGER content octets as encoded (`gnutls_x509_crt_get_serial`).
    func serial() throws -> [UInt8] {
        try gnutlsSizedQuery("gnutls_x509_crt_get_serial") { buffer, size in
            gnutls_x509_crt_get_serial(handle, buffer, size)
        } ?? []
    }

    /// notBefore, seconds since 1970 (`gnutls_x509_crt_get_activation_time`; -1 on error).
    var activationTime: Int { Int(gnutls_x509_crt_get_activation_time(handle)) }
    /// notAfter, seconds since 1970 (`gnutls_x509_crt_get_expiration_time`; -1 on error).
    var expirationTime: Int { Int(gnutls_x509_crt_get_expiration_time(handle)) }

    /// The X.509 version (1, 2 or 3).
    var version: Int { Int(gnutls_x509_crt_get_version(handle)) }

    /// The subject public key's algorithm and size in bits.
    func publicKeyAlgorithm() -> (isRSA: Bool, name: String, bitCount: Int) {
        var bits: UInt32 = 0
        let algorithm = gnutls_x509_crt_get_pk_algorithm(handle, &bits)
        let name =
            algorithm > 0
            ? gnutls_pk_get_name(gnutls_pk_algorithm_t(UInt32(algorithm))).map { String(cString: $0) } : nil
        let isRSA = algorithm == Int32(GNUTLS_PK_RSA.rawValue) || algorithm == Int32(GNUTLS_PK_RSA_PSS.rawValue)
        return (isRSA, name ?? "unknown", Int(bits))
    }

    /// The RSA modulus and public exponent (big-endian, as GnuTLS gives them), for an
    /// rsaEncryption key (`gnutls_x509_crt_get_pk_rsa_raw`).
    func rsaPublicComponents() throws -> (modulus: [UInt8], exponent: [UInt8]) {
        var m = gnutls_datum_t(), e = gnutls_datum_t()
        try gnutlsCheck(gnutls_x509_crt_get_pk_rsa_raw(handle, &m, &e), "gnutls_x509_crt_get_pk_rsa_raw")
        return (takeDatum(&m), takeDatum(&e))
    }

    /// The signature algorithm's GnuTLS name ("RSA-SHA256"), or nil when unknown to GnuTLS.
    func signatureAlgorithmName() -> String? {
        let algorithm = gnutls_x509_crt_get_signature_algorithm(handle)
        guard algorithm > 0 else { return nil }
        return gnutls_sign_get_name(gnutls_sign_algorithm_t(UInt32(algorithm))).map { String(cString: $0) }
    }

    /// The signature algorithm's OID (dotted), even when GnuTLS does not know it.
    func signatureAlgorithmOID() throws -> String? {
        try gnutlsSizedQuery("gnutls_x509_crt_get_signature_oid", isString: true) { buffer, size in
            gnutls_x509_crt_get_signature_oid(handle, buffer?.assumingMemoryBound(to: CChar.self), size)
        }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The keyUsage bits in GnuTLS's numbering (`GNUTLS_KEY_*`), or nil without the extension.
    func keyUsage() throws -> (bits: UInt32, critical: Bool)? {
        var usage: UInt32 = 0, critical: UInt32 = 0
        let code = gnutls_x509_crt_get_key_usage(handle, &usage, &critical)
        if code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { return nil }
        try gnutlsCheck(code, "gnutls_x509_crt_get_key_usage")
        return (usage, critical != 0)
    }

    /// The extendedKeyUsage OIDs in order, or nil without the extension.
    func keyPurposeOIDs() throws -> [String]? {
        var oids: [String] = []
        var index: UInt32 = 0
        while index < 64 {
            var critical: UInt32 = 0
            let oid = try gnutlsSizedQuery("gnutls_x509_crt_get_key_purpose_oid", isString: true) { buffer, size in
                gnutls_x509_crt_get_key_purpose_oid(handle, index, buffer, size, &critical)
            }
            guard let oid else { break }
            oids.append(String(decoding: oid, as: UTF8.self))
            index += 1
        }
        return index == 0 ? nil : oids
    }

    /// The subjectAltName entries: GnuTLS type (`GNUTLS_SAN_*`) and value bytes (text for
    /// names, 4 or 16 octets for IP addresses).
    func subjectAltNames() throws -> [(type: UInt32, value: [UInt8])] {
        var names: [(type: UInt32, value: [UInt8])] = []
        var index: UInt32 = 0
        while index < 256 {
            var type: UInt32 = 0, critical: UInt32 = 0
            var size = 0
            var code = gnutls_x509_crt_get_subject_alt_name2(handle, index, nil, &size, &type, &critical)
            if code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { break }
            if code != GNUTLS_E_SHORT_MEMORY_BUFFER && code < 0 {
                // An entry GnuTLS cannot read (for example an unusual otherName): skip it.
                index += 1
                continue
            }
            var buffer = [UInt8](repeating: 0, count: size + 1)
            size = buffer.count
            code = buffer.withUnsafeMutableBytes {
                gnutls_x509_crt_get_subject_alt_name2(handle, index, $0.baseAddress, &size, &type, &critical)
            }
            if code >= 0 {
                buffer.removeSubrange(min(size, buffer.count)...)
                if type != UInt32(GNUTLS_SAN_IPADDRESS.rawValue), buffer.last == 0 { buffer.removeLast() }
                names.append((type, buffer))
            }
            index += 1
        }
        return names
    }

    /// basicConstraints: cA and pathLenConstraint (nil when absent), or nil without the extension.
    func basicConstraints() throws -> (isCA: Bool, pathLength: Int?, critical: Bool)? {
        var critical: UInt32 = 0, ca: UInt32 = 0
        var pathLength: Int32 = -1
        let code = gnutls_x509_crt_get_basic_constraints(handle, &critical, &ca, &pathLength)
        if code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { return nil }
        try gnutlsCheck(code, "gnutls_x509_crt_get_basic_constraints")
        return (ca != 0, pathLength >= 0 ? Int(pathLength) : nil, critical != 0)
    }

    /// Every extension's OID and criticality, in order.
    func extensions() throws -> [(oid: String, critical: Bool)] {
        try gnutlsExtensionInfo("gnutls_x509_crt_get_extension_info") { index, buffer, size, critical in
            gnutls_x509_crt_get_extension_info(handle, index, buffer, size, critical)
        }
    }

    /// The extnValue content (the extension's own DER) of the first extension with `oid`
    /// (`gnutls_x509_crt_get_extension_data2`); nil when the certificate has none.
    func extensionValue(oid: String) throws -> [UInt8]? {
        guard let index = try extensions().firstIndex(where: { $0.oid == oid }) else { return nil }
        var datum = gnutls_datum_t()
        try gnutlsCheck(
            gnutls_x509_crt_get_extension_data2(handle, UInt32(index), &datum), "gnutls_x509_crt_get_extension_data2")
        return takeDatum(&datum)
    }

    /// Whether `hostname` matches the certificate's DNS/IP subjectAltNames, or its CN when
    /// it has none (RFC 6125, `gnutls_x509_crt_check_hostname2`, wildcards in the leftmost
    /// label only).
    func matchesHostname(_ hostname: String) -> Bool {
        gnutls_x509_crt_check_hostname2(handle, hostname, 0) != 0
    }

    /// Whether the certificate allows `purposeOID` (`gnutls_x509_crt_check_key_purpose`;
    /// a certificate without extendedKeyUsage allows every purpose, as RFC 5280 §4.2.1.12 says).
    func allowsKeyPurpose(_ purposeOID: String) -> Bool {
        gnutls_x509_crt_check_key_purpose(handle, purposeOID, 0) != 0
    }
}

extension GnuTLSCertificate {
    /// The SubjectPublicKeyInfo DER (RFC 5280 §4.1.2.7), as GnuTLS re-encodes it
    /// (`gnutls_pubkey_import_x509`, `gnutls_pubkey_export2`).
    func subjectPublicKeyInfoDER() throws -> [UInt8] {
        var key: gnutls_pubkey_t?
        try gnutlsCheck(gnutls_pubkey_init(&key), "gnutls_pubkey_init")
        guard let key else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_pubkey_init") }
        defer { gnutls_pubkey_deinit(key) }
        try gnutlsCheck(gnutls_pubkey_import_x509(key, handle, 0), "gnutls_pubkey_import_x509")
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_pubkey_export2(key, GNUTLS_X509_FMT_DER, &datum), "gnutls_pubkey_export2")
        return takeDatum(&datum)
    }
}

extension GnuTLSCertificate {
    /// The caIssuers URIs of the authorityInfoAccess extension (RFC 5280 §4.2.2.1), in order.
    func caIssuersURLs() -> [String] {
        authorityInfoAccessURLs(GNUTLS_IA_CAISSUERS_URI)
    }

    /// The URIs of one access method of the authorityInfoAccess extension (RFC 5280
    /// §4.2.2.1: GNUTLS_IA_OCSP_URI or GNUTLS_IA_CAISSUERS_URI), in order; the other
    /// methods' entries are skipped.
    func authorityInfoAccessURLs(_ method: gnutls_info_access_what_t) -> [String] {
        var urls: [String] = []
        var seq: UInt32 = 0
        while seq < 64 {
            var datum = gnutls_datum_t()
            let code = gnutls_x509_crt_get_authority_info_access(handle, seq, Int32(method.rawValue), &datum, nil)
            seq += 1
            if code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { break }
            guard code == 0 else { continue }  // another access method
            urls.append(String(decoding: takeDatum(&datum), as: UTF8.self))
        }
        return urls
    }

    /// The DER of every certificate in a PKCS#7 SignedData (a certs-only ".p7c", RFC 5280
    /// §4.2.2.1), DER or PEM ("-----BEGIN PKCS7-----"), in order (`gnutls_pkcs7_import`).
    /// - Throws: `GnuTLSFailure` when GnuTLS cannot read it.
    static func certificatesDER(pkcs7 bytes: [UInt8]) throws -> [[UInt8]] {
        var pkcs7: gnutls_pkcs7_t?
        try gnutlsCheck(gnutls_pkcs7_init(&pkcs7), "gnutls_pkcs7_init")
        guard let pkcs7 else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_pkcs7_init") }
        defer { gnutls_pkcs7_deinit(pkcs7) }
        let isPEM = bytes.starts(with: Array("-----BEGIN".utf8))
        try bytes.withUnsafeBytes { raw in
            var datum = gnutls_datum_t(
                data: UnsafeMutablePointer(mutating: raw.bindMemory(to: UInt8.self).baseAddress),
                size: UInt32(raw.count))
            try gnutlsCheck(
                gnutls_pkcs7_import(pkcs7, &datum, isPEM ? GNUTLS_X509_FMT_PEM : GNUTLS_X509_FMT_DER),
                "gnutls_pkcs7_import")
        }
        let count = try gnutlsCheck(gnutls_pkcs7_get_crt_count(pkcs7), "gnutls_pkcs7_get_crt_count")
        return try (0..<UInt32(count)).map { index in
            var datum = gnutls_datum_t()
            try gnutlsCheck(gnutls_pkcs7_get_crt_raw2(pkcs7, index, &datum), "gnutls_pkcs7_get_crt_raw2")
            return takeDatum(&datum)
        }
    }
}
