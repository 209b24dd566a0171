// PKCS#12 (RFC 7292) identities: read with the MAC verified first, written as OpenSSL 3.0's
// `openssl pkcs12 -export` writes them. The analogue of Apple's SecPKCS12Import, which
// returns the identity (key + certificate), the chain and the label.

/// The contents of a PKCS#12 (.p12 / .pfx) file: one private key, its certificate (the
/// leaf), the other certificates (the chain) and the friendly name.
import RSAKitCore

public struct RSAPKCS12: Sendable {
    /// The private key (SecIdentityCopyPrivateKey).
    public let privateKey: RSAPrivateKey
    /// The certificate whose public key is the private key's (SecIdentityCopyCertificate).
    public let certificate: X509Certificate
    /// The other certificates, ordered from the leaf's issuer upwards where they chain
    /// (issuer name = the previous certificate's subject), then any that do not chain, in
    /// file order.
    public let chain: [X509Certificate]
    /// The friendlyName attribute (PKCS#9) of the key, else of the leaf certificate
    /// (the guide's kSecImportItemLabel); nil when neither has one.
    public let friendlyName: String?
    /// The MAC, as "SHA256, 2048 iterations"; nil when the file has none.
    public let macDescription: String?
    /// The trust object of the imported identity (Apple's kSecImportItemTrust): the leaf,
    /// then ``chain``, under the Basic X.509 policy with the system anchors. Add anchors
    /// (a private PKI's root, the store's trust settings) and call ``RSATrust/evaluate()``.
    public var trust: RSATrust { RSATrust(certificates: [certificate] + chain, policy: .basicX509) }
    /// ``trust`` evaluated when the file was read, at that time, with the system anchors only
    /// (certificates in the file are not anchors because they are there).
    public let trustEvaluation: RSATrustEvaluation
    /// Warnings, lower-case sentences: no MAC ("the file has no MAC: its integrity was not
    /// checked"), a private key or certificates stored unencrypted, ignored elements.
    public let warnings: [String]

    /// The largest file accepted, in bytes (16 MiB).
    public static let maximumByteCount = 16 << 20

    /// What error messages call the file.
    static let name = "PKCS#12 file"

    /// Read a PKCS#12 file (DER): the MAC is verified first (`gnutls_pkcs12_verify_mac`;
    /// `gnutls_pkcs12_simple_parse` would not check it), then the bags are decrypted by
    /// GnuTLS (PBES2/PBKDF2 with AES, the PKCS#12 PBE schemes with 3DES, RC2, RC4) and the
    /// key and certificates parsed by RSAKit.
    ///
    /// - Parameter passphrase: the passphrase's bytes; `[]` is the empty passphrase "",
    ///   which is not "no passphrase" (NULL) to PKCS#12.
    /// - Throws: `RSAError.passphraseIncorrect(what: "PKCS#12 file")` when the passphrase
    ///   does not verify the MAC nor decrypt the contents; `RSAError.pkcs12IntegrityCheckFailed`
    ///   when it decrypts the contents but the MAC does not match (an altered file);
    ///   `RSAError.pkcs12Unusable(reason:)` for a file that is not PKCS#12, holds no private
    ///   key or several, or no certificate for the key; `RSAError.unsupportedKeyFormat` for a
    ///   non-RSA key; `RSAError.malformedCertificate`; `RSAError.passphraseUnusable`.
    public init(derRepresentation der: [UInt8], passphrase: [UInt8]) throws {
        guard der.count <= RSAPKCS12.maximumByteCount else {
            throw RSAError.pkcs12Unusable(
                reason: "input of \(der.count) bytes is larger than the \(RSAPKCS12.maximumByteCount)-byte limit")
        }
        guard !der.isEmpty else { throw RSAError.pkcs12Unusable(reason: "the input is empty") }
        if PEMDocument.containsBeginLine(der) {
            throw RSAError.pkcs12Unusable(
                reason: "this is PEM text, not a DER PKCS#12 file (a .p12 or .pfx file is binary)")
        }
        let pfx: GnuTLSPKCS12
        let bags: [GnuTLSPKCS12Bag]
        let mac: (digest: String, iterations: Int)?
        do {
            pfx = try GnuTLSPKCS12(der: der)
            mac = try pfx.macInfo()
            bags = try pfx.bags()
        } catch let failure as GnuTLSFailure {
            throw RSAError.pkcs12Unusable(
                reason: "not a PKCS#12 file GnuTLS can read (\(failure.message.lowercased()))")
        }
        var warnings: [String] = []
        // GnuTLS says "no MAC" for a MacData it cannot read, too: a DER PFX with a third
        // element (macData, RFC 7292 §4) must have a MAC GnuTLS read.
        if mac == nil, let top = try? DERReader(der).element(at: 0, limit: der.count),
            let fields = try? DERReader(der).children(of: top), fields.count >= 3
        {
            throw RSAError.pkcs12Unusable(
                reason: "its MAC could not be read by GnuTLS, so its integrity cannot be checked")
        }
        if mac != nil {
            do {
                try pfx.verifyMAC(passphrase: passphrase)
            } catch let failure as GnuTLSFailure {
                throw RSAPKCS12.diagnoseMACFailure(failure, bags: bags, passphrase: passphrase)
            }
        } else {
            warnings.append("the file has no MAC: its integrity was not checked")
        }
        macDescription = mac.map { "\($0.digest), \($0.iterations) iterations" }

        var keys: [(key: RSAPrivateKey, keyID: [UInt8]?, name: String?)] = []
        var certificates: [(certificate: X509Certificate, keyID: [UInt8]?, name: String?)] = []
        var plainCertificates = false
        for bag in bags {
            let wasEncrypted = bag.isEncrypted
            if wasEncrypted {
                do {
                    try bag.decrypt(passphrase: passphrase)
                } catch let failure as GnuTLSFailure {
                    if GnuTLSPrivateKey.isUnsupportedScheme(failure) {
                        throw RSAError.pkcs12Unusable(
                            reason:
                                "its contents are encrypted with a scheme GnuTLS does not support "
                                + "(\(bag.encryptionInfo() ?? failure.message))"
                        )
                    }
                    throw RSAError.passphraseIncorrect(what: RSAPKCS12.name)
                }
            }
            for index in 0..<bag.count {
                switch bag.kind(at: index) {
                case .shroudedKey:
                    var bytes = try RSAPKCS12.element(bag, index)
                    defer { wipe(&bytes) }
                    let file: RSAKeyFile
                    do {
                        file = try RSAKeyFile(bytes: bytes, passphrase: passphrase)
                    } catch RSAError.passphraseIncorrect {
                        throw RSAError.passphraseIncorrect(what: RSAPKCS12.name)
                    }
                    if let key = file.privateKey {
                        keys.append((key, bag.keyID(at: index), bag.friendlyName(at: index)))
                    }
                case .plainKey:
                    var bytes = try RSAPKCS12.element(bag, index)
                    defer { wipe(&bytes) }
                    if let key = try RSAKeyFile(bytes: bytes).privateKey {
                        keys.append((key, bag.keyID(at: index), bag.friendlyName(at: index)))
                    }
                    if !wasEncrypted { warnings.append("the private key is stored unencrypted in the file") }
                case .certificate:
                    let certificate = try X509Certificate(derRepresentation: try RSAPKCS12.element(bag, index))
                    certificates.append((certificate, bag.keyID(at: index), bag.friendlyName(at: index)))
                    if !wasEncrypted { plainCertificates = true }
                case .other:
                    warnings.append("an element other than a key or certificate (a CRL or secret bag) was ignored")
                }
            }
        }
        if plainCertificates { warnings.append("the certificates are stored unencrypted in the file") }

        guard keys.count == 1, let key = keys.first else {
            throw RSAError.pkcs12Unusable(
                reason: keys.isEmpty
                    ? "it holds no private key (\(certificates.count) "
                        + "certificate\(certificates.count == 1 ? "" : "s") only); import certificates with `cert add`"
                    : "it holds \(keys.count) private keys; rsakit imports one identity per file")
        }
        // The certificate for the key: the same SPKI, or (an RSA-PSS key, whose identifier
        // GnuTLS re-encoded) the same numbers and PSS parameters.
        let fingerprint = key.key.fingerprint
        func holdsKey(_ certificate: X509Certificate) -> Bool {
            if certificate.publicKeyFingerprint == fingerprint { return true }
            guard let restriction = key.key.pssRestriction, let certified = certificate.publicKey else { return false }
            return certified == key.key.publicKey && certified.pssRestriction?.parameters == restriction.parameters
        }
        guard
            let leafIndex = certificates.firstIndex(where: { holdsKey($0.certificate) })
                ?? certificates.firstIndex(where: { key.keyID != nil && $0.keyID == key.keyID })
        else {
            throw RSAError.pkcs12Unusable(
                reason: certificates.isEmpty
                    ? "it holds a private key but no certificate"
                    : "none of its \(certificates.count) certificates is for its private key")
        }
        let leaf = certificates[leafIndex]
        guard holdsKey(leaf.certificate) else {
            throw RSAError.pkcs12Unusable(
                reason: "the certificate with the key's localKeyId holds a different public key")
        }
        // An RSA-PSS key takes its certificate's algorithm identifier, bytes and all (the key
        // came through GnuTLS's decryption, which re-encodes it); the parameters are the same.
        if let restriction = leaf.certificate.publicKey?.pssRestriction,
            restriction.parameters == key.key.pssRestriction?.parameters
        {
            privateKey = key.key.restricted(to: restriction)
        } else {
            privateKey = key.key
        }
        certificate = leaf.certificate
        friendlyName = key.name ?? leaf.name
        var others = certificates.enumerated().filter { $0.offset != leafIndex }.map(\.element.certificate)
        chain = RSAPKCS12.order(others: &others, from: leaf.certificate)
        self.warnings = warnings
        trustEvaluation = RSATrust(certificates: [leaf.certificate] + chain, policy: .basicX509).evaluate()
    }

    private static func element(_ bag: GnuTLSPKCS12Bag, _ index: Int) throws -> [UInt8] {
        do {
            return try bag.data(at: index)
        } catch let failure as GnuTLSFailure {
            throw RSAError.pkcs12Unusable(reason: "an element could not be read (\(failure.message.lowercased()))")
        }
    }

    /// The MAC did not verify: a wrong passphrase, or an altered file? When the passphrase
    /// decrypts the encrypted contents, it is right and the file was altered.
    private static func diagnoseMACFailure(_ failure: GnuTLSFailure, bags: [GnuTLSPKCS12Bag], passphrase: [UInt8])
        -> RSAError
    {
        guard failure.code == GnuTLSFailure.macVerifyFailed else {
            if GnuTLSPrivateKey.isUnusablePassphrase(failure) {
                return .passphraseUnusable(reason: "GnuTLS refuses it as a password string (not valid UTF-8)")
            }
            return .pkcs12Unusable(reason: "its MAC could not be checked (\(failure.message.lowercased()))")
        }
        var encryptedParts = 0
        for bag in bags {
            if bag.isEncrypted {
                encryptedParts += 1
                guard (try? bag.decrypt(passphrase: passphrase)) != nil else { return .passphraseIncorrect(what: name) }
            }
            for index in 0..<bag.count where bag.kind(at: index) == .shroudedKey {
                encryptedParts += 1
                guard var bytes = try? bag.data(at: index) else { continue }
                defer { wipe(&bytes) }
                guard (try? RSAKeyFile(bytes: bytes, passphrase: passphrase)) != nil else {
                    return .passphraseIncorrect(what: name)
                }
            }
        }
        if encryptedParts == 0 {
            // Nothing encrypted to tell the two apart by.
            return .passphraseIncorrect(
                what: "\(name) (its MAC does not match: the passphrase is wrong, or the file was altered)")
        }
        return .pkcs12IntegrityCheckFailed
    }

    /// The certificates that chain up from `leaf`, in order, then the rest in file order.
    static func order(others: inout [X509Certificate], from leaf: X509Certificate) -> [X509Certificate] {
        var chain: [X509Certificate] = []
        var current = leaf
        while !current.isSelfIssued, let next = others.firstIndex(where: { $0.subject == current.issuer }) {
            current = others.remove(at: next)
            chain.append(current)
        }
        return chain + others
    }
}

extension RSAPKCS12 {
    /// Write a PKCS#12 file as OpenSSL 3.0's `openssl pkcs12 -export` does by default:
    /// the certificates in one PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC) EncryptedData bag,
    /// the key in a PBES2 AES-256-CBC shrouded key bag, a localKeyId (SHA-1 of the leaf
    /// certificate) and the friendly name on key and leaf, and an HMAC-SHA256 MAC. Made
    /// by GnuTLS (its PBKDF2 iteration count, 600,000 in 3.7.9); `openssl pkcs12` and curl
    /// read it.
    ///
    /// - Parameters:
    ///   - privateKey: the key; `certificate` must hold its public key.
    ///   - chain: further certificates, written after the leaf in this order.
    ///   - friendlyName: the label, or nil for none.
    ///   - passphrase: not empty, no NUL byte; RSAKit's copies are wiped.
    /// - Returns: the DER PFX. Every certificate is stored byte for byte as its
    ///   `derRepresentation` (never re-encoded, so issuers' signatures still verify).
    /// - Throws: `RSAError.keyTypeMismatch` when the certificate is not the key's,
    ///   `RSAError.passphraseUnusable`, `RSAError.internalError` when GnuTLS fails.
    public static func derRepresentation(
        privateKey: RSAPrivateKey, certificate: X509Certificate,
        chain: [X509Certificate] = [], friendlyName: String? = nil,
        passphrase: [UInt8]
    ) throws -> [UInt8] {
        guard certificate.publicKeyFingerprint == privateKey.fingerprint else {
            throw RSAError.keyTypeMismatch(
                expected: "the certificate of the private key",
                found: "a certificate for another key (\(certificate.subjectSummary))")
        }
        guard !passphrase.isEmpty else {
            throw RSAError.passphraseUnusable(reason: "an empty passphrase does not protect the key")
        }
        var keyDER = privateKey.pkcs8DERRepresentation
        defer { wipe(&keyDER) }
        do {
            // localKeyId: SHA-1 of the leaf's DER, as OpenSSL writes it (a label, not a security use).
            let keyID = RSAHashAlgorithm.sha1.hash(certificate.derRepresentation)
            let certificates = try GnuTLSPKCS12Bag()
            try certificates.addCertificate(
                der: certificate.derRepresentation, keyID: keyID, friendlyName: friendlyName)
            for member in chain {
                try certificates.addCertificate(der: member.derRepresentation, keyID: nil, friendlyName: nil)
            }
            try certificates.encryptPBES2AES256(passphrase: passphrase)
            let keyBag = try GnuTLSPKCS12Bag()
            try keyBag.addShroudedKey(
                try GnuTLSPrivateKey.plain(der: keyDER), passphrase: passphrase,
                keyID: keyID, friendlyName: friendlyName)
            let pfx = try GnuTLSPKCS12()
            try pfx.add(certificates)
            try pfx.add(keyBag)
            try pfx.generateSHA256MAC(passphrase: passphrase)
            return try pfx.exportDER()
        } catch let failure as GnuTLSFailure {
            if GnuTLSPrivateKey.isUnusablePassphrase(failure) {
                throw RSAError.passphraseUnusable(reason: "GnuTLS refuses it as a password string (not valid UTF-8)")
            }
            throw RSAError.internalError("GnuTLS could not write the PKCS#12 file: \(failure)")
        }
    }
}
