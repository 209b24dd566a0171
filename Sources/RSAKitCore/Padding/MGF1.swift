// Nested in `RSAHazmat`: a building block, not an encryption or signature API.
extension RSAHazmat {
    /// MGF1, the mask generation function of RFC 8017 Appendix B.2.1, over any
    /// ``RSAHashAlgorithm``:
    ///
    ///     T = Hash(mgfSeed || I2OSP(0, 4)) || Hash(mgfSeed || I2OSP(1, 4)) || ...
    ///     mask = the leading maskLen octets of T
    ///
    /// A pure byte function. Constant-time in the contents of the seed (the hashes are); the
    /// work depends only on the lengths.
    public enum MGF1 {
        /// The mask of `maskLength` octets for `seed`.
        ///
        /// - Parameters:
        ///   - seed: mgfSeed, any length.
        ///   - maskLength: maskLen in octets, 0 ... 2^32 * hLen (RFC 8017 B.2.1 step 1; any
        ///     mask RSAKit asks for is below k octets).
        ///   - hash: the hash function (for OAEP and PSS, chosen separately from the label or
        ///     message hash).
        /// - Returns: exactly `maskLength` bytes.
        public static func mask(seed: [UInt8], length maskLength: Int, hash: RSAHashAlgorithm) -> [UInt8] {
            precondition(maskLength >= 0, "MGF1 mask length must not be negative")
            var prefix = RSAHasher(algorithm: hash)
            prefix.update(seed)
            var mask: [UInt8] = []
            mask.reserveCapacity(maskLength + hash.digestByteCount)
            var counter: UInt32 = 0
            while mask.count < maskLength {
                // Step 3: C = I2OSP(counter, 4); T = T || Hash(mgfSeed || C).
                var block = prefix
                block.update([
                    UInt8(truncatingIfNeeded: counter >> 24), UInt8(truncatingIfNeeded: counter >> 16),
                    UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter)
                ])
                mask += block.finalize()
                counter += 1
            }
            mask.removeLast(mask.count - maskLength)
            return mask
        }

        /// XOR the MGF1 mask of `seed` into `target` in place (the `maskedDB = DB xor dbMask`
        /// step of OAEP and PSS).
        internal static func applyMask(seed: [UInt8], hash: RSAHashAlgorithm, to target: inout [UInt8]) {
            var mask = mask(seed: seed, length: target.count, hash: hash)
            for i in target.indices { target[i] ^= mask[i] }
            wipe(&mask)
        }
    }
}  // extension RSAHazmat
