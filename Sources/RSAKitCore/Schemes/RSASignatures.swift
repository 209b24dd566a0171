// RSASSA-PKCS1-v1_5 and RSASSA-PSS (RFC 8017 §8): SecKeyCreateSignature /
// SecKeyVerifySignature, over a message or over a digest.

extension RSAPrivateKey {
    /// Sign a message: hash it with `hash`, then ``signature(forDigest:hash:padding:random:)-([UInt8],_,_,_)``.
    ///
    /// - Parameters:
    ///   - message: M, any length.
    ///   - hash: the message hash (also PSS's M' hash and, for ``RSASignaturePadding/pss(saltLength:)``, MGF1's).
    ///   - padding: PKCS#1 v1.5 or PSS.
    ///   - random: source of the PSS salt and of the blinding factor (the OS generator by default).
    /// - Returns: the signature S, exactly k (``modulusByteCount``) bytes.
    /// - Throws: as ``signature(forDigest:hash:padding:random:)-([UInt8],_,_,_)``.
    public func signature(
        for message: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding,
        random: RSARandomSource = SystemRandomSource()
    ) throws -> [UInt8] {
        try signature(forDigest: hash.hash(message), hash: hash, padding: padding, random: random)
    }

    /// RSASSA-PKCS1-V1_5-SIGN or RSASSA-PSS-SIGN (RFC 8017 §8.2.1, §8.1.1) over an already
    /// computed digest (what `openssl pkeyutl -sign` does with `-pkeyopt digest:H`).
    ///
    /// - Parameters:
    ///   - digest: Hash(M), exactly `hash.digestByteCount` bytes.
    ///   - hash: the hash that made `digest`.
    ///   - padding: PKCS#1 v1.5 or PSS (salt length: digest, max or a number).
    ///   - random: source of the PSS salt and of the blinding factor.
    /// - Returns: S, exactly k bytes, leading zeros kept.
    /// - Throws: `RSAError.digestLengthMismatch`; `RSAError.keyTooSmallForPadding` when the
    ///   modulus cannot hold the encoding (for example SHA-512 PSS on a 1024-bit key with
    ///   salt = digest); `RSAError.saltLengthInvalid`; `RSAError.keyRestricted` when an
    ///   id-RSASSA-PSS key's parameters forbid the scheme
    ///   (``RSAPSSKeyRestriction/check(hash:padding:encodedBitCount:verifying:)``).
    /// - Note: RSASP1 is the blinded, constant-time CRT operation with its re-encryption check
    ///   (``RSAHazmat/rsadp(_:key:random:)``); a fault gives `RSAError.internalError`, never a bad signature.
    public func signature(
        forDigest digest: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding,
        random: RSARandomSource = SystemRandomSource()
    ) throws -> [UInt8] {
        try pssRestriction?.check(hash: hash, padding: padding, encodedBitCount: modulusBitCount - 1, verifying: false)
        switch padding {
        case .pkcs1v15:
            let em = try EMSAPKCS1v15.encode(digest: digest, hash: hash, encodedLength: modulusByteCount)
            return try rsasp1(em, random: random)
        case let .pss(saltLength):
            return try pssSignature(
                digest: digest, functions: .mgf1(hash, hash), saltLength: saltLength, random: random)
        case let .pssMGF1(mgf1Hash, saltLength):
            return try pssSignature(
                digest: digest, functions: .mgf1(hash, mgf1Hash), saltLength: saltLength, random: random)
        }
    }

    /// RSASSA-PKCS1-v1_5 over a ready-made T (RFC 8017 §9.2 steps 3-5, then RSASP1): for TLS,
    /// where GnuTLS hands over the DER DigestInfo (GNUTLS_SIGN_RSA_RAW), or the 36-octet
    /// MD5 || SHA-1 of TLS 1.0/1.1.
    ///
    /// - Parameters:
    ///   - digestInfo: T, at most k - 11 bytes; used as given (not parsed).
    ///   - random: source of the blinding factor.
    /// - Returns: S, exactly k bytes.
    /// - Throws: `RSAError.keyTooSmallForPadding` when T is longer than k - 11;
    ///   `RSAError.keyRestricted` for an id-RSASSA-PSS key.
    public func signature(forDigestInfo digestInfo: [UInt8], random: RSARandomSource = SystemRandomSource()) throws
        -> [UInt8]
    {
        if let pssRestriction {
            try pssRestriction.check(
                hash: .sha256, padding: .pkcs1v15, encodedBitCount: modulusBitCount - 1, verifying: false)
        }
        let em = try EMSAPKCS1v15.encode(digestInfo: digestInfo, encodedLength: modulusByteCount)
        return try rsasp1(em, random: random)
    }

    /// RSASSA-PSS with SHAKE128 or SHAKE256 (RFC 8702 §3.1): mHash = SHAKE(M) of 32 or 64
    /// octets, MGF = SHAKE.
    ///
    /// - Parameters:
    ///   - message: M, any length.
    ///   - shake: SHAKE128 or SHAKE256.
    ///   - saltLength: RFC 8702 requires the digest length (32 or 64), the default.
    ///   - random: source of the salt and of the blinding factor.
    /// - Returns: S, exactly k bytes.
    /// - Throws: `RSAError.saltLengthInvalid`, `RSAError.keyTooSmallForPadding`;
    ///   `RSAError.keyRestricted` for an id-RSASSA-PSS key with parameters (they name SHA-1 or SHA-2).
    public func signature(
        for message: [UInt8], shake: RSAPSSSHAKE, saltLength: RSAPSSSaltLength = .digestLength,
        random: RSARandomSource = SystemRandomSource()
    ) throws -> [UInt8] {
        try pssRestriction?.checkSHAKE(shake)
        return try pssSignature(
            digest: shake.hash(message), functions: .shake(shake), saltLength: saltLength, random: random)
    }

    private func pssSignature(
        digest: [UInt8], functions: EMSAPSS.Functions, saltLength: RSAPSSSaltLength, random: RSARandomSource
    ) throws -> [UInt8] {
        // RFC 8017 §8.1.1 step 1: emBits = modBits - 1.
        let emBits = modulusBitCount - 1
        let sLen = saltLength.signingValue(digestByteCount: functions.digestByteCount, encodedBitCount: emBits)
        let em = try EMSAPSS.encode(
            digest: digest, encodedBitCount: emBits, functions: functions, saltLength: sLen, random: random)
        return try rsasp1(em, random: random)
    }

    /// RSASP1 (RFC 8017 §5.2.1) on an encoded message EM < n, I2OSP'd to k octets.
    private func rsasp1(_ em: [UInt8], random: RSARandomSource) throws -> [UInt8] {
        // Both encodings keep EM below n (a leading 0x00, or emBits < modBits), so the range
        // check inside RSADP cannot fail; a fault in the CRT is caught by its re-encryption.
        // rsadp returns exactly k octets (I2OSP with leading zeros kept).
        return try rsadp(em, random: random)
    }
}

extension RSAPublicKey {
    /// Verify a signature on a message: hash it, then
    /// ``isValidSignature(_:forDigest:hash:padding:)-([UInt8],[UInt8],_,_)``.
    ///
    /// - Parameters:
    ///   - signature: S, exactly k bytes (any other length is invalid).
    ///   - message: M.
    ///   - hash, padding: as used to sign (PSS: `.auto` accepts any salt length).
    /// - Returns: true only for a valid signature.
    public func isValidSignature(
        _ signature: [UInt8], for message: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding
    ) -> Bool {
        isValidSignature(signature, forDigest: hash.hash(message), hash: hash, padding: padding)
    }

    /// RSASSA-PKCS1-V1_5-VERIFY or RSASSA-PSS-VERIFY (RFC 8017 §8.2.2, §8.1.2) over a digest.
    ///
    /// PKCS#1 v1.5 re-encodes the expected EM and compares it whole (no DigestInfo parsing;
    /// a DigestInfo without the NULL parameters is refused). PSS checks every step of §9.1.2.
    ///
    /// - Parameters:
    ///   - signature: S, exactly k bytes (step 1); S >= n is invalid (RSAVP1 step 1).
    ///   - digest: Hash(M), `hash.digestByteCount` bytes (another length is invalid).
    ///   - hash: the message hash.
    ///   - padding: the scheme, and for PSS the salt length to require (or `.auto`).
    /// - Returns: true only for a valid signature. Never throws: every failure is "invalid",
    ///   a scheme an id-RSASSA-PSS key's parameters forbid too (check first with
    ///   ``RSAPSSKeyRestriction/check(hash:padding:encodedBitCount:verifying:)`` for the reason).
    /// - Note: Public data only; not constant-time.
    public func isValidSignature(
        _ signature: [UInt8], forDigest digest: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding
    ) -> Bool {
        if let pssRestriction {
            guard
                (try? pssRestriction.check(
                    hash: hash, padding: padding, encodedBitCount: modulusBitCount - 1, verifying: true)) != nil
            else {
                return false
            }
        }
        switch padding {
        case .pkcs1v15:
            guard let em = rsavp1(signature, encodedLength: modulusByteCount) else { return false }
            return EMSAPKCS1v15.verify(encoded: em, digest: digest, hash: hash)
        case let .pss(saltLength):
            return isValidPSS(signature, digest: digest, functions: .mgf1(hash, hash), saltLength: saltLength)
        case let .pssMGF1(mgf1Hash, saltLength):
            return isValidPSS(signature, digest: digest, functions: .mgf1(hash, mgf1Hash), saltLength: saltLength)
        }
    }

    /// Verify an RSASSA-PKCS1-v1_5 signature over a ready-made T (the counterpart of
    /// ``RSAPrivateKey/signature(forDigestInfo:random:)-([UInt8],_)``).
    /// - Returns: true only when S^e mod n is exactly 0x00 0x01 0xFF.. 0x00 T; false for an
    ///   id-RSASSA-PSS key.
    public func isValidSignature(_ signature: [UInt8], forDigestInfo digestInfo: [UInt8]) -> Bool {
        guard pssRestriction == nil else { return false }
        guard let em = rsavp1(signature, encodedLength: modulusByteCount) else { return false }
        return EMSAPKCS1v15.verify(encoded: em, digestInfo: digestInfo)
    }

    /// Verify an RSASSA-PSS signature with SHAKE128 or SHAKE256 (RFC 8702 §3.1).
    /// - Parameter saltLength: `.digestLength` (RFC 8702's value, the default), a number, or `.auto`.
    /// - Returns: true only for a valid signature; false for an id-RSASSA-PSS key with parameters.
    public func isValidSignature(
        _ signature: [UInt8], for message: [UInt8], shake: RSAPSSSHAKE, saltLength: RSAPSSSaltLength = .digestLength
    ) -> Bool {
        if let pssRestriction, (try? pssRestriction.checkSHAKE(shake)) == nil { return false }
        return isValidPSS(signature, digest: shake.hash(message), functions: .shake(shake), saltLength: saltLength)
    }

    private func isValidPSS(
        _ signature: [UInt8], digest: [UInt8], functions: EMSAPSS.Functions, saltLength: RSAPSSSaltLength
    ) -> Bool {
        let emBits = modulusBitCount - 1
        let emLen = (emBits + 7) / 8
        // §8.1.2 step 2.c: EM = I2OSP(m, emLen); m >= 256^emLen is invalid.
        guard let em = rsavp1(signature, encodedLength: emLen) else { return false }
        let sLen = saltLength.verifyingValue(digestByteCount: functions.digestByteCount, encodedBitCount: emBits)
        return EMSAPSS.verify(
            digest: digest, encoded: em, encodedBitCount: emBits, functions: functions, saltLength: sLen)
    }

    /// RSAVP1 (RFC 8017 §5.2.2) after the length check of §8.x.2 step 1: m = s^e mod n as
    /// `encodedLength` octets, or nil when |S| != k, s >= n, or m does not fit.
    private func rsavp1(_ signature: [UInt8], encodedLength: Int) -> [UInt8]? {
        guard signature.count == modulusByteCount,
            let m = try? rsaep(BigNumber(bytes: signature))
        else { return nil }
        return try? m.bytes(count: encodedLength)
    }
}
