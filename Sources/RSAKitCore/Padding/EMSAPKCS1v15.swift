// Nested in `RSAHazmat`: a building block, not an encryption or signature API.
extension RSAHazmat {
    /// EMSA-PKCS1-v1_5 (RFC 8017 §9.2) as a pure byte function, independent of keys:
    ///
    ///     T  = DigestInfo ::= SEQUENCE { AlgorithmIdentifier { OID, NULL }, OCTET STRING H }
    ///     EM = 0x00 || 0x01 || PS || 0x00 || T           (PS: at least 8 octets 0xFF)
    ///
    /// Verification re-encodes and compares (RFC 8017 §8.2.2 step 3), so no DER parser ever
    /// sees attacker bytes: BER variants, a missing NULL, trailing garbage are all rejected.
    public enum EMSAPKCS1v15 {
        /// The fixed overhead around T: 0x00, 0x01, 8 octets of PS, 0x00.
        public static let overheadByteCount = 11

        /// The DER prefix of the DigestInfo for `hash` (everything before the hLen digest
        /// octets), with the NULL parameters RFC 8017 §9.2 note 1 lists (and OpenSSL writes for
        /// SHA-3 too). OIDs: SHA-1 1.3.14.3.2.26; SHA-2 and SHA-3 2.16.840.1.101.3.4.2.{1-10}.
        public static func digestInfoPrefix(for hash: RSAHashAlgorithm) -> [UInt8] {
            let hLen = UInt8(hash.digestByteCount)
            let oid = hash.objectIdentifier
            // SEQUENCE { SEQUENCE { OID, NULL }, OCTET STRING (hLen) }: every length is short-form.
            let algorithm = [0x30, UInt8(oid.count + 4), 0x06, UInt8(oid.count)] + oid + [0x05, 0x00]
            return [0x30, UInt8(algorithm.count + 2) + hLen] + algorithm + [0x04, hLen]
        }

        /// T, the DER DigestInfo of an already computed digest.
        /// - Throws: `RSAError.digestLengthMismatch` unless `digest` is hLen bytes.
        public static func digestInfo(digest: [UInt8], hash: RSAHashAlgorithm) throws -> [UInt8] {
            guard digest.count == hash.digestByteCount else {
                throw RSAError.digestLengthMismatch(byteCount: digest.count, expected: hash.digestByteCount)
            }
            return digestInfoPrefix(for: hash) + digest
        }

        /// EMSA-PKCS1-V1_5-ENCODE (RFC 8017 §9.2) from a digest.
        ///
        /// - Parameters:
        ///   - digest: H = Hash(M), exactly hLen bytes.
        ///   - hash: the hash that made it (names the DigestInfo).
        ///   - encodedLength: emLen = k, the modulus length in octets.
        /// - Returns: EM, exactly `encodedLength` bytes.
        /// - Throws: `RSAError.digestLengthMismatch`; `RSAError.keyTooSmallForPadding` when
        ///   emLen < tLen + 11 (step 3, "intended encoded message length too short").
        public static func encode(digest: [UInt8], hash: RSAHashAlgorithm, encodedLength: Int) throws -> [UInt8] {
            try encode(
                digestInfo: digestInfo(digest: digest, hash: hash), encodedLength: encodedLength,
                padding: "PKCS#1 v1.5 signatures with \(hash.displayName)")
        }

        /// Steps 2-5 over any T (the DER DigestInfo, or what TLS hands over as T).
        ///
        /// - Throws: `RSAError.keyTooSmallForPadding` when emLen < tLen + 11.
        public static func encode(digestInfo t: [UInt8], encodedLength emLen: Int) throws -> [UInt8] {
            try encode(digestInfo: t, encodedLength: emLen, padding: "PKCS#1 v1.5 signatures")
        }

        /// The verification step of RFC 8017 §8.2.2 step 3-4 on bytes: true exactly when
        /// `encoded` equals EMSA-PKCS1-V1_5-ENCODE(digest) (any other length, a BER variant, a
        /// DigestInfo without NULL, a short PS: false).
        ///
        /// - Parameters:
        ///   - encoded: EM, emLen = k octets (from RSAVP1).
        ///   - digest: the expected Hash(M).
        ///   - hash: the expected hash.
        /// - Note: Public data only; the comparison is nevertheless over all octets.
        public static func verify(encoded: [UInt8], digest: [UInt8], hash: RSAHashAlgorithm) -> Bool {
            guard let expected = try? encode(digest: digest, hash: hash, encodedLength: encoded.count) else {
                return false
            }
            return equalBytes(expected, encoded)
        }

        /// ``verify(encoded:digest:hash:)`` over a ready-made T.
        public static func verify(encoded: [UInt8], digestInfo t: [UInt8]) -> Bool {
            guard let expected = try? encode(digestInfo: t, encodedLength: encoded.count) else { return false }
            return equalBytes(expected, encoded)
        }

        private static func equalBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
            guard a.count == b.count else { return false }
            var difference: UInt8 = 0
            for i in a.indices { difference |= a[i] ^ b[i] }
            return difference == 0
        }

        private static func encode(digestInfo t: [UInt8], encodedLength emLen: Int, padding: String) throws -> [UInt8] {
            guard emLen >= t.count + overheadByteCount else {
                throw RSAError.keyTooSmallForPadding(
                    modulusByteCount: emLen, minimumByteCount: t.count + overheadByteCount, padding: padding)
            }
            // EM = 0x00 || 0x01 || PS (0xFF...) || 0x00 || T
            return [0x00, 0x01] + [UInt8](repeating: 0xFF, count: emLen - t.count - 3) + [0x00] + t
        }
    }
}  // extension RSAHazmat
