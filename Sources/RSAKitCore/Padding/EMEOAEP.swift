// Nested in `RSAHazmat`: a building block, not an encryption or signature API.
extension RSAHazmat {
    /// EME-OAEP encoding and decoding (RFC 8017 §7.1.1 step 2, §7.1.2 step 3) as pure byte
    /// functions, independent of keys:
    ///
    ///     DB = lHash || PS || 0x01 || M                 (k - hLen - 1 octets, PS all zero)
    ///     maskedDB   = DB   xor MGF1(seed, k - hLen - 1)
    ///     maskedSeed = seed xor MGF1(maskedDB, hLen)
    ///     EM = 0x00 || maskedSeed || maskedDB           (k octets)
    ///
    /// with lHash = Hash(L), seed hLen random octets, hLen the OAEP hash's length and MGF1 over
    /// the MGF1 hash.
    public enum EMEOAEP {
        /// Encode `message` into an EM of exactly `encodedLength` (k) octets.
        ///
        /// - Parameters:
        ///   - message: M, at most k - 2 hLen - 2 bytes (may be empty).
        ///   - encodedLength: k, the modulus length in octets.
        ///   - parameters: the hashes and the label.
        ///   - random: source of the hLen-octet seed.
        /// - Returns: EM, exactly `encodedLength` bytes, EM[0] = 0x00.
        /// - Throws: `RSAError.keyTooSmallForPadding` when k < 2 hLen + 2 (no message fits);
        ///   `RSAError.messageTooLong(byteCount:maximum:)` when mLen > k - 2 hLen - 2 (step 1.b).
        public static func encode(
            _ message: [UInt8], encodedLength k: Int, parameters: RSAOAEPParameters,
            random: RSARandomSource = SystemRandomSource()
        ) throws -> [UInt8] {
            let hLen = parameters.hash.digestByteCount
            guard k >= parameters.overheadByteCount else {
                throw RSAError.keyTooSmallForPadding(
                    modulusByteCount: k, minimumByteCount: parameters.overheadByteCount, padding: parameters.description
                )
            }
            let maximum = k - parameters.overheadByteCount
            guard message.count <= maximum else {
                throw RSAError.messageTooLong(byteCount: message.count, maximum: maximum)
            }
            // Steps 2.a-c: DB = lHash || PS || 0x01 || M.
            var db = parameters.hash.hash(parameters.label)
            db += [UInt8](repeating: 0, count: k - message.count - 2 * hLen - 2)
            db.append(0x01)
            db += message
            // Step 2.d: a random seed of hLen octets.
            var seed = random.bytes(hLen)
            // Steps 2.e-h: maskedDB, then maskedSeed.
            MGF1.applyMask(seed: seed, hash: parameters.mgf1Hash, to: &db)
            MGF1.applyMask(seed: db, hash: parameters.mgf1Hash, to: &seed)
            // Step 2.i: EM = 0x00 || maskedSeed || maskedDB.
            let em = [0x00] + seed + db
            wipe(&seed)
            wipe(&db)
            return em
        }

        /// Decode an EM and return M.
        ///
        /// The checks of RFC 8017 §7.1.2 step 3.g (Y = 0x00, lHash' = lHash, PS all zero and
        /// ended by 0x01) are combined with masks over every octet of DB, without branching on
        /// its contents or indexing by a secret value (Manger's attack needs Y's test to be
        /// indistinguishable from the others, and it is). M is then moved to the front of the
        /// k - 2 hLen - 2 octets that may hold it by a constant-time shift (log2 passes of
        /// conditional moves over the whole range), so the copy never indexes by the secret
        /// separator position. Only the single final verdict, and for a good EM the length of M,
        /// are revealed (declassified for the valgrind harness, then branched on).
        ///
        /// - Parameters:
        ///   - em: EM, k octets.
        ///   - parameters: the hashes and the label used to encode.
        /// - Returns: M, between 0 and k - 2 hLen - 2 bytes.
        /// - Throws: `RSAError.decryptionFailed` for every failure, whichever check failed,
        ///   including k < 2 hLen + 2 (step 1.c).
        /// - Note: Constant-time in the contents of `em` except for the length of the result;
        ///   checked under valgrind by Tests/ConstantTimeHarness (scripts/constant-time.sh).
        public static func decode(_ em: [UInt8], parameters: RSAOAEPParameters) throws -> [UInt8] {
            guard em.count >= parameters.overheadByteCount else { throw RSAError.decryptionFailed }
            var decoded = decodeMasked(em, parameters: parameters)
            defer { decoded.wipeContents() }
            // The single verdict, then (for a good EM) the length of M: what RSAES-OAEP reveals.
            ConstantTimeAudit.declassify(&decoded.good)
            if decoded.good == 0 {
                throw RSAError.decryptionFailed
            }
            ConstantTimeAudit.declassify(&decoded.length)
            return Array(decoded.buffer[0..<Int(decoded.length)])
        }

        /// ``decode(_:parameters:)`` without revealing anything: every check of RFC 8017 §7.1.2
        /// step 3 folded into one mask, and M moved to the front of a (k - 2 hLen - 2)-byte buffer.
        /// - Parameter em: EM, at least `parameters.overheadByteCount` octets (public; checked by
        ///   the caller).
        static func decodeMasked(_ em: [UInt8], parameters: RSAOAEPParameters) -> MaskedMessage {
            let hLen = parameters.hash.digestByteCount
            precondition(em.count >= parameters.overheadByteCount, "EM shorter than 2 hLen + 2")

            // Step 3.a: lHash.
            let lHash = parameters.hash.hash(parameters.label)
            // Steps 3.b-f: Y || maskedSeed || maskedDB, unmask the seed, then DB.
            var seed = Array(em[1...hLen])
            var db = Array(em[(hLen + 1)...])
            defer { wipe(&seed); wipe(&db) }
            MGF1.applyMask(seed: db, hash: parameters.mgf1Hash, to: &seed)
            MGF1.applyMask(seed: seed, hash: parameters.mgf1Hash, to: &db)
            if let probe = ConstantTimeAudit.oaepDecodeProbe { db.withUnsafeBytes { probe($0.baseAddress, $0.count) } }

            // The octets after lHash' that may hold M: DB[hLen + 1 ..< dbLen] (public bounds).
            let maximum = db.count - hLen - 1
            var good: UInt = 0
            var psLength: UInt = 0
            var message = [UInt8](repeating: 0, count: maximum)
            em.withUnsafeBufferPointer { em in
                db.withUnsafeBufferPointer { db in
                    message.withUnsafeMutableBufferPointer { out in
                        // Step 3.g, every check folded into `good` (all-ones while everything holds).
                        good = ConstantTime.isZero(em[0])  // Y = 0x00
                        var difference: UInt8 = 0
                        for i in 0..<hLen { difference |= db[i] ^ lHash[i] }  // lHash' = lHash
                        good &= ConstantTime.isZero(difference)
                        // DB[hLen...] = PS || 0x01 || M: the first non-zero octet must be 0x01;
                        // psLength counts the zeros before it.
                        var lookingForSeparator = ConstantTime.allOnes
                        var invalid: UInt = 0
                        for i in hLen..<db.count {
                            let isOne = ConstantTime.equal(db[i], 0x01)
                            let isZero = ConstantTime.isZero(db[i])
                            psLength &+= lookingForSeparator & isZero & 1
                            invalid |= lookingForSeparator & ~isOne & ~isZero
                            lookingForSeparator &= ~isOne
                        }
                        // NOTE: through ConstantTimeAudit.opaque, so that the optimiser cannot
                        // turn the AND of the verdict into a branch (see EMEPKCS1v15.decode).
                        good = ConstantTimeAudit.opaque(good & ~lookingForSeparator & ~invalid)
                        psLength &= good  // 0 for a bad EM: the shift below stays in range
                        // M = out[psLength ..< maximum]: shifted to the front without an address
                        // that depends on psLength.
                        for i in 0..<maximum { out[i] = db[hLen + 1 + i] }
                        ConstantTime.shiftLeft(out, by: psLength)
                    }
                }
            }
            return MaskedMessage(good: good, buffer: message, length: (UInt(maximum) &- psLength) & good)
        }

    }
}  // extension RSAHazmat
