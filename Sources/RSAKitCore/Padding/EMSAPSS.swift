// Nested in `RSAHazmat`: a building block, not an encryption or signature API.
extension RSAHazmat {
    /// EMSA-PSS (RFC 8017 §9.1) as pure byte functions, independent of keys:
    ///
    ///     M' = 0x00 x 8 || mHash || salt
    ///     H  = Hash(M')
    ///     DB = PS || 0x01 || salt                        (emLen - hLen - 1 octets, PS zero)
    ///     EM = (DB xor MGF(H, emLen - hLen - 1)) || H || 0xBC
    ///
    /// with the top 8 emLen - emBits bits of EM cleared, emBits = modBits - 1 and emLen =
    /// ceil(emBits / 8) (one octet less than k when modBits = 1 mod 8). MGF is MGF1 over a hash
    /// chosen separately, or SHAKE for RFC 8702.
    public enum EMSAPSS {
        /// EMSA-PSS-ENCODE (RFC 8017 §9.1.1) from a digest, with MGF1.
        ///
        /// - Parameters:
        ///   - digest: mHash = Hash(M), exactly hLen bytes of `hash`.
        ///   - encodedBitCount: emBits, the modulus bit length minus one.
        ///   - hash: the message hash (also the hash of M').
        ///   - mgf1Hash: the hash inside MGF1 (usually `hash`).
        ///   - saltLength: sLen in octets, 0 ... emLen - hLen - 2.
        ///   - random: source of the salt.
        /// - Returns: EM, exactly ceil(emBits / 8) bytes.
        /// - Throws: `RSAError.digestLengthMismatch`; `RSAError.saltLengthInvalid` for a negative
        ///   sLen or one past emLen - hLen - 2 (step 3); `RSAError.keyTooSmallForPadding` when
        ///   even an empty salt does not fit.
        public static func encode(
            digest: [UInt8], encodedBitCount: Int, hash: RSAHashAlgorithm, mgf1Hash: RSAHashAlgorithm,
            saltLength: Int, random: RSARandomSource = SystemRandomSource()
        ) throws -> [UInt8] {
            try encode(
                digest: digest, encodedBitCount: encodedBitCount, functions: .mgf1(hash, mgf1Hash),
                saltLength: saltLength, random: random)
        }

        /// EMSA-PSS-VERIFY (RFC 8017 §9.1.2) with MGF1.
        ///
        /// - Parameters:
        ///   - digest: mHash, hLen bytes (another length is simply inconsistent).
        ///   - encoded: EM, ceil(emBits / 8) bytes.
        ///   - encodedBitCount: emBits.
        ///   - hash, mgf1Hash: as for ``encode(digest:encodedBitCount:hash:mgf1Hash:saltLength:random:)``.
        ///   - saltLength: sLen, or nil to accept any salt length (recovered from DB, as
        ///     OpenSSL's `rsa_pss_saltlen:auto`).
        /// - Returns: true for "consistent", false for "inconsistent".
        /// - Note: Works on public data (signature verification); not constant-time.
        public static func verify(
            digest: [UInt8], encoded: [UInt8], encodedBitCount: Int, hash: RSAHashAlgorithm,
            mgf1Hash: RSAHashAlgorithm, saltLength: Int?
        ) -> Bool {
            verify(
                digest: digest, encoded: encoded, encodedBitCount: encodedBitCount,
                functions: .mgf1(hash, mgf1Hash), saltLength: saltLength)
        }

        /// emLen - hLen - 2: the longest salt that fits (`rsa_pss_saltlen:max`).
        public static func maximumSaltLength(encodedBitCount: Int, digestByteCount hLen: Int) -> Int {
            (encodedBitCount + 7) / 8 - hLen - 2
        }

        // MARK: - Over either kind of hash and mask function

        /// The hash and mask generation function of one PSS instance.
        internal enum Functions {
            /// Hash for mHash and H; MGF1 over the second hash (RFC 8017 B.2.1).
            case mgf1(RSAHashAlgorithm, RSAHashAlgorithm)
            /// SHAKE for mHash and H (32 or 64 octets) and as the MGF (RFC 8702 §3.1).
            case shake(RSAPSSSHAKE)

            var digestByteCount: Int {
                switch self {
                case let .mgf1(hash, _): return hash.digestByteCount
                case let .shake(shake): return shake.digestByteCount
                }
            }

            func hash(_ bytes: [UInt8]) -> [UInt8] {
                switch self {
                case let .mgf1(hash, _): return hash.hash(bytes)
                case let .shake(shake): return shake.hash(bytes)
                }
            }

            func mask(seed: [UInt8], length: Int) -> [UInt8] {
                switch self {
                case let .mgf1(_, mgf1Hash): return MGF1.mask(seed: seed, length: length, hash: mgf1Hash)
                case let .shake(shake): return shake.output(seed, byteCount: length)
                }
            }

            var description: String {
                switch self {
                case let .mgf1(hash, mgf1Hash): return "PSS \(hash.displayName) with MGF1-\(mgf1Hash.displayName)"
                case let .shake(shake): return "PSS \(shake.rawValue.uppercased())"
                }
            }
        }

        internal static func encode(
            digest mHash: [UInt8], encodedBitCount emBits: Int, functions: Functions, saltLength sLen: Int,
            random: RSARandomSource
        ) throws -> [UInt8] {
            let hLen = functions.digestByteCount
            let emLen = (emBits + 7) / 8
            guard mHash.count == hLen else {
                throw RSAError.digestLengthMismatch(byteCount: mHash.count, expected: hLen)
            }
            // Step 3: emLen >= hLen + sLen + 2.
            guard emLen >= hLen + 2 else {
                throw RSAError.keyTooSmallForPadding(
                    modulusByteCount: emLen, minimumByteCount: hLen + 2, padding: functions.description)
            }
            let maximum = emLen - hLen - 2
            guard sLen >= 0, sLen <= maximum else {
                throw RSAError.saltLengthInvalid(byteCount: sLen, maximum: maximum)
            }
            // Steps 4-6: salt, M' = 0x00 x 8 || mHash || salt, H = Hash(M').
            var salt = random.bytes(sLen)
            defer { wipe(&salt) }
            let h = functions.hash([UInt8](repeating: 0, count: 8) + mHash + salt)
            // Steps 7-10: DB = PS || 0x01 || salt, maskedDB = DB xor MGF(H, emLen - hLen - 1).
            var db = [UInt8](repeating: 0, count: emLen - sLen - hLen - 2) + [0x01] + salt
            let dbMask = functions.mask(seed: h, length: db.count)
            for i in db.indices { db[i] ^= dbMask[i] }
            // Step 11: clear the leftmost 8 emLen - emBits bits.
            db[0] &= UInt8(0xFF >> (8 * emLen - emBits))
            // Step 12: EM = maskedDB || H || 0xBC.
            return db + h + [0xBC]
        }

        internal static func verify(
            digest mHash: [UInt8], encoded em: [UInt8], encodedBitCount emBits: Int, functions: Functions,
            saltLength: Int?
        ) -> Bool {
            let hLen = functions.digestByteCount
            let emLen = (emBits + 7) / 8
            guard mHash.count == hLen, em.count == emLen, emLen >= hLen + 2 else { return false }
            // Step 3: emLen >= hLen + sLen + 2.
            if let saltLength, saltLength < 0 || emLen < hLen + saltLength + 2 { return false }
            // Step 4: the rightmost octet is 0xBC.
            guard em[emLen - 1] == 0xBC else { return false }
            // Steps 5-6: maskedDB || H; the leftmost 8 emLen - emBits bits of maskedDB are zero.
            var db = Array(em[0..<(emLen - hLen - 1)])
            let h = Array(em[(emLen - hLen - 1)..<(emLen - 1)])
            let topMask = UInt8(0xFF >> (8 * emLen - emBits))
            guard db[0] & ~topMask == 0 else { return false }
            // Steps 7-9: DB = maskedDB xor MGF(H, emLen - hLen - 1), top bits cleared.
            let dbMask = functions.mask(seed: h, length: db.count)
            for i in db.indices { db[i] ^= dbMask[i] }
            db[0] &= topMask
            // Step 10: DB = PS (zeros) || 0x01 || salt, with PS of the expected length (or any).
            guard let separator = db.firstIndex(where: { $0 != 0 }), db[separator] == 0x01 else { return false }
            if let saltLength, separator != emLen - hLen - saltLength - 2 { return false }
            // Steps 11-14: salt, M', H' = Hash(M'), H == H'.
            let salt = Array(db[(separator + 1)...])
            return functions.hash([UInt8](repeating: 0, count: 8) + mHash + salt) == h
        }
    }
}  // extension RSAHazmat
