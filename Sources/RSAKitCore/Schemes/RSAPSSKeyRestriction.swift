// Keys restricted to RSASSA-PSS: the id-RSASSA-PSS algorithm identifier (RFC 4055 §3.1,
// RFC 8017 Appendix A.2.3) that `openssl genpkey -algorithm RSA-PSS` writes, and the rules
// that keep such a key to the signatures its parameters allow.

/// The RSASSA-PSS parameters an id-RSASSA-PSS key carries (RFC 8017 A.2.3, `RSASSA-PSS-params`):
/// the message hash, the MGF1 hash and the salt length. The trailer field is always 1 (0xBC).
public struct RSAPSSParameters: Sendable, Hashable, CustomStringConvertible {
    /// The message hash (`hashAlgorithm`; DEFAULT SHA-1).
    public let hash: RSAHashAlgorithm
    /// The hash of MGF1, the only mask generation function RFC 8017 defines
    /// (`maskGenAlgorithm`; DEFAULT MGF1 with SHA-1).
    public let mgf1Hash: RSAHashAlgorithm
    /// The salt length in bytes (`saltLength`; DEFAULT 20). For a key, the least salt length
    /// a signature may use, as OpenSSL reads it (EVP_PKEY-RSA(7): "minimum salt length").
    public let saltLength: Int

    /// Parameters as given.
    /// - Parameters:
    ///   - hash: the message hash.
    ///   - mgf1Hash: the MGF1 hash (default: the message hash).
    ///   - saltLength: bytes, 0 or more.
    /// - Throws: `RSAError.saltLengthInvalid` for a negative salt length.
    public init(hash: RSAHashAlgorithm, mgf1Hash: RSAHashAlgorithm? = nil, saltLength: Int) throws {
        guard saltLength >= 0 else { throw RSAError.saltLengthInvalid(byteCount: saltLength, maximum: Int.max) }
        self.hash = hash
        self.mgf1Hash = mgf1Hash ?? hash
        self.saltLength = saltLength
    }

    /// RFC 8017's DEFAULT values: SHA-1, MGF1 with SHA-1, salt 20.
    public static let defaults = try! RSAPSSParameters(hash: .sha1, saltLength: 20)

    /// The signature padding these parameters name: PSS with exactly ``saltLength`` bytes of salt.
    public var padding: RSASignaturePadding {
        mgf1Hash == hash
            ? .pss(saltLength: .byteCount(saltLength)) : .pssMGF1(mgf1Hash, saltLength: .byteCount(saltLength))
    }

    /// "SHA-256, MGF1-SHA-256, salt 32".
    public var description: String {
        "\(hash.displayName), MGF1-\(mgf1Hash.displayName), salt \(saltLength)"
    }
}

/// What an id-RSASSA-PSS key (OID 1.2.840.113549.1.1.10) allows: RSASSA-PSS signatures only,
/// with the parameters it carries when it carries any (RFC 4055 §3.1; RFC 8017 A.2.3).
///
/// A key read from a SubjectPublicKeyInfo or PKCS#8 PrivateKeyInfo with this OID carries a
/// restriction (``RSAPublicKey/pssRestriction``); its SPKI and PKCS#8 encodings write the
/// algorithm identifier back byte for byte, and its fingerprint is over that SPKI. Such a key
/// is refused (`RSAError.keyRestricted`) for encryption, decryption and PKCS#1 v1.5
/// signatures, and for PSS with other hashes or a shorter salt than its parameters give, as
/// OpenSSL 3 refuses them.
public struct RSAPSSKeyRestriction: Sendable, Hashable, CustomStringConvertible {
    /// The parameters, or nil when the algorithm identifier has none (any PSS parameters).
    public let parameters: RSAPSSParameters?
    /// The DER AlgorithmIdentifier, SEQUENCE { id-RSASSA-PSS, RSASSA-PSS-params OPTIONAL },
    /// exactly as it was read (or, for ``init(parameters:)``, as DER writes it: DEFAULT
    /// values left out).
    public let algorithmIdentifierDER: [UInt8]

    /// A restriction to these parameters (nil: PSS with any parameters), encoded in DER.
    public init(parameters: RSAPSSParameters?) {
        self.parameters = parameters
        self.algorithmIdentifierDER = PSSKeyAlgorithm.encode(parameters)
    }

    internal init(parameters: RSAPSSParameters?, algorithmIdentifierDER: [UInt8]) {
        self.parameters = parameters
        self.algorithmIdentifierDER = algorithmIdentifierDER
    }

    /// "RSASSA-PSS (SHA-256, MGF1-SHA-256, salt 32)" or "RSASSA-PSS (any parameters)".
    public var description: String {
        "RSASSA-PSS (\(parameters.map(\.description) ?? "any parameters"))"
    }

    /// Check a signature scheme against the restriction.
    ///
    /// - Parameters:
    ///   - hash: the message hash of the signature.
    ///   - padding: the scheme and salt length. With parameters: the hash and MGF1 hash must be
    ///     theirs, and the salt (digest, max or a number, worked out for `encodedBitCount`)
    ///     at least theirs; `.auto` is refused on verification (OpenSSL: "cannot use
    ///     autodetected salt length" with a restricted key).
    ///   - encodedBitCount: emBits = modulus bits - 1 (to evaluate `.maximum`).
    ///   - verifying: whether the check is for a verification.
    /// - Throws: `RSAError.keyRestricted(reason:)` naming the key's parameters.
    public func check(hash: RSAHashAlgorithm, padding: RSASignaturePadding, encodedBitCount: Int, verifying: Bool)
        throws
    {
        let salt: RSAPSSSaltLength
        let mgf1: RSAHashAlgorithm
        switch padding {
        case .pkcs1v15:
            throw RSAError.keyRestricted(reason: "an \(self) key signs with RSASSA-PSS only, not PKCS#1 v1.5")
        case let .pss(saltLength): (salt, mgf1) = (saltLength, hash)
        case let .pssMGF1(mgf1Hash, saltLength): (salt, mgf1) = (saltLength, mgf1Hash)
        }
        guard let parameters else { return }
        guard hash == parameters.hash else {
            throw RSAError.keyRestricted(
                reason:
                    "the key's RSASSA-PSS parameters require the hash \(parameters.hash.displayName) "
                    + "(\(parameters)); \(hash.displayName) was asked for"
            )
        }
        guard mgf1 == parameters.mgf1Hash else {
            throw RSAError.keyRestricted(
                reason:
                    "the key's RSASSA-PSS parameters require MGF1-\(parameters.mgf1Hash.displayName) "
                    + "(\(parameters)); MGF1-\(mgf1.displayName) was asked for"
            )
        }
        if salt == .auto && verifying {
            throw RSAError.keyRestricted(
                reason:
                    "the key's RSASSA-PSS parameters fix the salt length at \(parameters.saltLength) or more; a "
                    + "recovered ('auto') salt length is not allowed with it"
            )
        }
        let bytes = salt.signingValue(digestByteCount: hash.digestByteCount, encodedBitCount: encodedBitCount)
        guard bytes >= parameters.saltLength else {
            throw RSAError.keyRestricted(
                reason:
                    "the key's RSASSA-PSS parameters require a salt of at least \(parameters.saltLength) bytes "
                    + "(\(parameters)); \(bytes) was asked for"
            )
        }
    }

    /// The error for an encryption or decryption with a PSS-restricted key.
    internal var encryptionRefusal: RSAError {
        .keyRestricted(
            reason: "an \(self) key (id-RSASSA-PSS, RFC 4055) is for signatures only; it cannot encrypt or decrypt")
    }
}

extension RSAPSSKeyRestriction {
    /// Check an RSASSA-PSS signature with SHAKE (RFC 8702) against the restriction: allowed
    /// only for a key without parameters (RFC 4055's parameters name SHA-1 and SHA-2 only).
    /// - Throws: `RSAError.keyRestricted(reason:)`.
    public func checkSHAKE(_ shake: RSAPSSSHAKE) throws {
        guard let parameters else { return }
        throw RSAError.keyRestricted(
            reason:
                "the key's RSASSA-PSS parameters require the hash \(parameters.hash.displayName) (\(parameters)); "
                + "\(shake.rawValue.uppercased()) was asked for"
        )
    }
}

extension RSAPublicKey {
    /// The same key with another restriction: an id-RSASSA-PSS key (`restriction` given) as
    /// `openssl genpkey -algorithm RSA-PSS` makes, or an unrestricted rsaEncryption key (nil).
    /// Its SPKI encoding, PEM and fingerprint change with it; n and e do not.
    public func restricted(to restriction: RSAPSSKeyRestriction?) -> RSAPublicKey {
        var copy = self
        copy.pssRestriction = restriction
        return copy
    }

    /// Throws the refusal for encryption when the key is restricted to PSS.
    internal func requireEncryptionAllowed() throws {
        if let pssRestriction { throw pssRestriction.encryptionRefusal }
    }
}

extension RSAPrivateKey {
    /// The key's restriction (that of ``publicKey``), nil for an rsaEncryption key.
    public var pssRestriction: RSAPSSKeyRestriction? { publicKey.pssRestriction }

    /// The same key with another restriction (see ``RSAPublicKey/restricted(to:)``); the
    /// secret storage is shared, not copied. PKCS#8 encodings carry the restriction, PKCS#1
    /// ones cannot.
    public func restricted(to restriction: RSAPSSKeyRestriction?) -> RSAPrivateKey {
        var copy = self
        copy.publicKey = publicKey.restricted(to: restriction)
        return copy
    }
}
