// Owning wrappers over GnuTLS's PKCS#12 objects (RFC 7292): `gnutls_pkcs12_t` (the PFX,
// its MAC) and `gnutls_pkcs12_bag_t` (SafeContents: certificate, key and encrypted bags).
import RSAKitCore
internal import CGnuTLS

/// One PKCS#12 PFX, freed with the object.
internal final class GnuTLSPKCS12 {
    let handle: gnutls_pkcs12_t

    /// An empty PFX, to fill with bags and export.
    init() throws {
        var handle: gnutls_pkcs12_t?
        try gnutlsCheck(gnutls_pkcs12_init(&handle), "gnutls_pkcs12_init")
        guard let handle else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_pkcs12_init") }
        self.handle = handle
    }

    /// Parse a DER PFX (`gnutls_pkcs12_import`). Verifies nothing.
    convenience init(der: [UInt8]) throws {
        try self.init()
        try withDatum(der) { datum in
            try gnutlsCheck(gnutls_pkcs12_import(handle, datum, GNUTLS_X509_FMT_DER, 0), "gnutls_pkcs12_import")
        }
    }

    deinit {
        gnutls_pkcs12_deinit(handle)
    }

    /// The MAC's digest name and iteration count, or nil when the file has no MAC
    /// (`gnutls_pkcs12_mac_info`).
    func macInfo() throws -> (digest: String, iterations: Int)? {
        var mac: UInt32 = 0, saltSize: UInt32 = 0, iterations: UInt32 = 0
        var oid: UnsafeMutablePointer<CChar>?
        var salt = [UInt8](repeating: 0, count: 256)
        saltSize = UInt32(salt.count)
        let code = salt.withUnsafeMutableBytes {
            gnutls_pkcs12_mac_info(handle, &mac, $0.baseAddress, &saltSize, &iterations, &oid)
        }
        if let oid { rsakit_gnutls_free(oid) }
        // GnuTLS 3.7 reports a missing MacData as GNUTLS_E_INVALID_REQUEST.
        if code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE || code == GNUTLS_E_ASN1_ELEMENT_NOT_FOUND
            || code == GNUTLS_E_INVALID_REQUEST
        {
            return nil
        }
        try gnutlsCheck(code, "gnutls_pkcs12_mac_info")
        let name = gnutls_mac_get_name(gnutls_mac_algorithm_t(mac)).map { String(cString: $0) } ?? "unknown"
        return (name, Int(iterations))
    }

    /// Check the MAC with `passphrase` (`gnutls_pkcs12_verify_mac`; "" is not NULL).
    /// - Throws: `GnuTLSFailure` (GNUTLS_E_MAC_VERIFY_FAILED on mismatch).
    func verifyMAC(passphrase: [UInt8]) throws {
        try withPassphraseCString(passphrase) { password in
            try gnutlsCheck(gnutls_pkcs12_verify_mac(handle, password), "gnutls_pkcs12_verify_mac")
        }
    }

    /// Every top-level bag (AuthenticatedSafe entry), in order.
    func bags() throws -> [GnuTLSPKCS12Bag] {
        var result: [GnuTLSPKCS12Bag] = []
        var index: Int32 = 0
        while index < 1024 {
            let bag = try GnuTLSPKCS12Bag()
            let code = gnutls_pkcs12_get_bag(handle, index, bag.handle)
            if code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { break }
            try gnutlsCheck(code, "gnutls_pkcs12_get_bag")
            result.append(bag)
            index += 1
        }
        return result
    }

    /// Append a bag (`gnutls_pkcs12_set_bag`).
    func add(_ bag: GnuTLSPKCS12Bag) throws {
        try gnutlsCheck(gnutls_pkcs12_set_bag(handle, bag.handle), "gnutls_pkcs12_set_bag")
    }

    /// Compute the MAC: HMAC-SHA256 with a key from the PKCS#12 KDF (`gnutls_pkcs12_generate_mac2`).
    func generateSHA256MAC(passphrase: [UInt8]) throws {
        try withPassphraseCString(passphrase) { password in
            try gnutlsCheck(
                gnutls_pkcs12_generate_mac2(handle, GNUTLS_MAC_SHA256, password), "gnutls_pkcs12_generate_mac2")
        }
    }

    /// The PFX as DER.
    func exportDER() throws -> [UInt8] {
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_pkcs12_export2(handle, GNUTLS_X509_FMT_DER, &datum), "gnutls_pkcs12_export2")
        return takeDatum(&datum)
    }
}

/// One PKCS#12 bag (a SafeContents, or an encrypted one), freed with the object.
internal final class GnuTLSPKCS12Bag {
    let handle: gnutls_pkcs12_bag_t

    /// What one element of a bag holds.
    enum ElementKind {
        case shroudedKey, plainKey, certificate, other
    }

    init() throws {
        var handle: gnutls_pkcs12_bag_t?
        try gnutlsCheck(gnutls_pkcs12_bag_init(&handle), "gnutls_pkcs12_bag_init")
        guard let handle else { throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_pkcs12_bag_init") }
        self.handle = handle
    }

    deinit {
        gnutls_pkcs12_bag_deinit(handle)
    }

    /// Whether the bag is still encrypted (an EncryptedData SafeContents).
    var isEncrypted: Bool {
        gnutls_pkcs12_bag_get_type(handle, 0) == Int32(GNUTLS_BAG_ENCRYPTED.rawValue)
    }

    /// The encryption scheme's description ("PBES2 AES-256-CBC, 2048 iterations") of an encrypted bag.
    func encryptionInfo() -> String? {
        var schema: UInt32 = 0, cipher: UInt32 = 0, saltSize: UInt32 = 0, iterations: UInt32 = 0
        var oid: UnsafeMutablePointer<CChar>?
        var salt = [UInt8](repeating: 0, count: 256)
        saltSize = UInt32(salt.count)
        let code = salt.withUnsafeMutableBytes {
            gnutls_pkcs12_bag_enc_info(handle, &schema, &cipher, $0.baseAddress, &saltSize, &iterations, &oid)
        }
        var oidText: String?
        if let oid { oidText = String(cString: oid); rsakit_gnutls_free(oid) }
        guard code >= 0 else { return oidText.map { "unknown scheme \($0)" } }
        let cipherName =
            gnutls_cipher_get_name(gnutls_cipher_algorithm_t(cipher)).map { String(cString: $0) } ?? "unknown cipher"
        return "\(cipherName), \(iterations) iterations"
    }

    /// Decrypt an encrypted bag in place (`gnutls_pkcs12_bag_decrypt`).
    func decrypt(passphrase: [UInt8]) throws {
        try withPassphraseCString(passphrase) { password in
            try gnutlsCheck(gnutls_pkcs12_bag_decrypt(handle, password), "gnutls_pkcs12_bag_decrypt")
        }
    }

    /// Encrypt the bag with PBES2 AES-256-CBC (`gnutls_pkcs12_bag_encrypt`).
    func encryptPBES2AES256(passphrase: [UInt8]) throws {
        try withPassphraseCString(passphrase) { password in
            try gnutlsCheck(
                gnutls_pkcs12_bag_encrypt(handle, password, GNUTLS_PKCS_PBES2_AES_256.rawValue),
                "gnutls_pkcs12_bag_encrypt")
        }
    }

    /// The number of elements (SafeBags) in a decrypted bag.
    var count: Int { max(0, Int(gnutls_pkcs12_bag_get_count(handle))) }

    /// What element `index` holds.
    func kind(at index: Int) -> ElementKind {
        switch gnutls_pkcs12_bag_get_type(handle, UInt32(index)) {
        case Int32(GNUTLS_BAG_PKCS8_ENCRYPTED_KEY.rawValue): return .shroudedKey
        case Int32(GNUTLS_BAG_PKCS8_KEY.rawValue): return .plainKey
        case Int32(GNUTLS_BAG_CERTIFICATE.rawValue): return .certificate
        default: return .other
        }
    }

    /// Element `index`'s DER: a certificate, a PrivateKeyInfo or an EncryptedPrivateKeyInfo
    /// (GnuTLS lends the bytes; they are copied). Secret for key elements.
    func data(at index: Int) throws -> [UInt8] {
        var datum = gnutls_datum_t()
        try gnutlsCheck(gnutls_pkcs12_bag_get_data(handle, UInt32(index), &datum), "gnutls_pkcs12_bag_get_data")
        guard let bytes = datum.data else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(datum.size)))
    }

    /// Element `index`'s localKeyId attribute (PKCS#9), or nil.
    func keyID(at index: Int) -> [UInt8]? {
        var datum = gnutls_datum_t()
        guard gnutls_pkcs12_bag_get_key_id(handle, UInt32(index), &datum) >= 0, let bytes = datum.data, datum.size > 0
        else { return nil }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(datum.size)))
    }

    /// Element `index`'s friendlyName attribute (PKCS#9, a BMPString), or nil.
    func friendlyName(at index: Int) -> String? {
        var name: UnsafeMutablePointer<CChar>?
        guard gnutls_pkcs12_bag_get_friendly_name(handle, UInt32(index), &name) >= 0, let name else { return nil }
        return String(cString: name)
    }

    /// Add a certificate element holding `der` byte for byte (`gnutls_pkcs12_bag_set_data`,
    /// GNUTLS_BAG_CERTIFICATE) with its attributes; returns its index. Not
    /// `gnutls_pkcs12_bag_set_crt`: that re-encodes the parsed certificate through libtasn1,
    /// which rewrites non-DER details a reader accepted (a BOOLEAN TRUE of 0x01 becomes 0xFF)
    /// and so breaks the issuer's signature over the original bytes.
    @discardableResult
    func addCertificate(der: [UInt8], keyID: [UInt8]?, friendlyName: String?) throws -> Int {
        let index = try withDatum(der) { datum in
            try Int(
                gnutlsCheck(
                    gnutls_pkcs12_bag_set_data(handle, GNUTLS_BAG_CERTIFICATE, datum), "gnutls_pkcs12_bag_set_data"))
        }
        try setAttributes(index, keyID: keyID, friendlyName: friendlyName)
        return index
    }

    /// Add a PKCS#8 shrouded key element, PBES2 AES-256-CBC (`gnutls_pkcs12_bag_set_privkey`).
    @discardableResult
    func addShroudedKey(_ key: GnuTLSPrivateKey, passphrase: [UInt8], keyID: [UInt8]?, friendlyName: String?) throws
        -> Int
    {
        let index = try withPassphraseCString(passphrase) { password in
            try Int(
                gnutlsCheck(
                    gnutls_pkcs12_bag_set_privkey(handle, key.handle, password, GNUTLS_PKCS_PBES2_AES_256.rawValue),
                    "gnutls_pkcs12_bag_set_privkey"))
        }
        try setAttributes(index, keyID: keyID, friendlyName: friendlyName)
        return index
    }

    private func setAttributes(_ index: Int, keyID: [UInt8]?, friendlyName: String?) throws {
        if let keyID {
            try withDatum(keyID) { datum in
                try gnutlsCheck(
                    gnutls_pkcs12_bag_set_key_id(handle, UInt32(index), datum), "gnutls_pkcs12_bag_set_key_id")
            }
        }
        if let friendlyName {
            try gnutlsCheck(
                gnutls_pkcs12_bag_set_friendly_name(handle, UInt32(index), friendlyName),
                "gnutls_pkcs12_bag_set_friendly_name")
        }
    }
}
