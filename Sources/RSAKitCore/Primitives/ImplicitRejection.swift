// The synthetic message of implicit rejection: draft-irtf-cfrg-rsa-guidance §7 ("Implicit
// Rejection for RSA PKCS#1 v1.5"), the algorithm OpenSSL 3.2 and tlslite-ng implement.

/// What RSAES-PKCS1-v1_5 decryption returns instead of an error when the padding is wrong
/// (``RSAPaddingRejection/implicit``): a k-byte pseudo-random string and a length L below
/// k - 10, both derived from the private exponent d and the ciphertext C. The synthetic
/// message is the last L bytes of the string.
///
/// Derivation (every HMAC is HMAC-SHA256; I2OSP(x, 2) is two big-endian octets):
///
///     KDK        = HMAC(key: SHA-256(I2OSP(d, k)), C)                       (32 bytes)
///     PRF(label, bits) = the first bits/8 bytes of
///                  HMAC(KDK, I2OSP(0, 2) || label || I2OSP(bits, 2)) ||
///                  HMAC(KDK, I2OSP(1, 2) || label || I2OSP(bits, 2)) || ...
///     lengths    = PRF("length", 2048): 128 big-endian 16-bit candidates
///     message    = PRF("message", 8k)
///     L          = the last candidate, masked to the bit length of k - 10, that is below
///                  k - 10 (0 when none is)
///
/// Constant-time: no branch or index depends on d, C's decryption, the candidates or L; the
/// only secret-dependent work is HMAC-SHA256 (Nettle) and word masks. I2OSP(d, k) reads every
/// limb of d (`rsakit_i2osp_secret`); only d's limb count, that of n in practice, is public.
/// The buffers holding I2OSP(d, k), its hash and KDK are zeroed before returning.
internal struct ImplicitRejectionFallback {
    /// The pseudo-random string, exactly k bytes (zeroed when the value is wiped).
    var message: [UInt8]
    /// L, 0 ... k - 11, as a word (secret until the decode step selects and declassifies).
    var length: UInt

    /// The 128 length candidates of the draft (MAX_LEN_GEN_TRIES in OpenSSL).
    static let lengthCandidateCount = 128

    /// Derive the fallback for `ciphertext` under the private exponent `d`.
    ///
    /// - Parameters:
    ///   - d: the private exponent as the key holds it (the draft uses the key's d, not an
    ///     equivalent exponent); 0 < d < n.
    ///   - k: the modulus length in octets, 11 ... 8191 (the PRF encodes 8k in 16 bits).
    ///   - ciphertext: C, exactly k bytes.
    /// - Throws: `RSAError.decryptionFailed` when k or the ciphertext length is out of range
    ///   (public facts, checked by the caller before this point).
    init(d: BigNumber, k: Int, ciphertext: [UInt8]) throws {
        guard k >= EMEPKCS1v15.overheadByteCount, k * 8 <= Int(UInt16.max), ciphertext.count == k else {
            throw RSAError.decryptionFailed
        }
        // d < n < 256^k (a validated key), so I2OSP(d, k) cannot overflow.
        var exponent = d.secretBytes(count: k)
        var exponentHash = RSAHashAlgorithm.sha256.hash(exponent)
        wipe(&exponent)
        var kdk = HMACSHA256.authenticationCode(key: exponentHash, ciphertext)
        wipe(&exponentHash)
        defer { wipe(&kdk) }

        var candidates = Self.prf(kdk, label: "length", bitCount: Self.lengthCandidateCount * 16)
        defer { wipe(&candidates) }
        let maximumSeparatorOffset = UInt(k - 10)
        // All ones up to the highest set bit of k - 10 (a public value).
        let mask = (UInt(1) << (UInt.bitWidth - maximumSeparatorOffset.leadingZeroBitCount)) - 1
        var length: UInt = 0
        for i in 0..<Self.lengthCandidateCount {
            let candidate = ((UInt(candidates[2 * i]) << 8) | UInt(candidates[2 * i + 1])) & mask
            // candidate < maximumSeparatorOffset, as a mask: both are below 2^16.
            let below = ~ConstantTime.greaterOrEqual(candidate, maximumSeparatorOffset)
            length = ConstantTime.select(below, candidate, length)
        }
        self.length = length
        self.message = Self.prf(kdk, label: "message", bitCount: 8 * k)
    }

    /// Zero the message and the length.
    mutating func wipeContents() {
        wipe(&message)
        length = 0
    }

    /// The draft's PRF: HMAC-SHA256 in counter mode, `bitCount` / 8 bytes (bitCount a
    /// multiple of 8, at most 65,535).
    static func prf(_ kdk: [UInt8], label: String, bitCount: Int) -> [UInt8] {
        let byteCount = bitCount / 8
        let suffix = Array(label.utf8) + [UInt8(truncatingIfNeeded: bitCount >> 8), UInt8(truncatingIfNeeded: bitCount)]
        var output: [UInt8] = []
        output.reserveCapacity(byteCount + HMACSHA256.tagByteCount)
        var counter = 0
        while output.count < byteCount {
            var block = HMACSHA256.authenticationCode(
                key: kdk, [UInt8(truncatingIfNeeded: counter >> 8), UInt8(truncatingIfNeeded: counter)], suffix)
            output += block
            wipe(&block)
            counter += 1
        }
        let surplus = output.count - byteCount
        for i in byteCount..<output.count { output[i] = 0 }
        output.removeLast(surplus)
        return output
    }
}
