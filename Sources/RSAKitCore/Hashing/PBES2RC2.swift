internal import CNettle
internal import CRSAKitShims

// NOTE: PBKDF2 and RC2 live here because Sources/RSAKit/Hashing/ is the one folder that
// imports CNettle; Encoding/EncryptedPrivateKeys.swift calls them for PBES2 with RC2-CBC,
// which GnuTLS cannot decrypt. Read only: RSAKit never writes RC2.

/// PBKDF2 (RFC 8018 §5.2) and RC2-CBC decryption (RFC 2268, RFC 8018 §B.2.3), computed by
/// Nettle (`nettle_pbkdf2_hmac_*` from <nettle/pbkdf2.h>, `nettle_arctwo_*` from
/// <nettle/arctwo.h>). Nettle's RC2 uses table look-ups indexed by key bytes (not
/// constant-time); it serves only to read old key files.
internal enum NettlePBES2 {
    /// The PBKDF2 pseudo-random functions Nettle offers (RFC 8018 §B.1).
    enum PRF {
        case hmacSHA1, hmacSHA256, hmacSHA384, hmacSHA512
    }

    /// DK = PBKDF2(PRF, P, S, c, dkLen) (RFC 8018 §5.2).
    /// - Parameters:
    ///   - password: P, any bytes (not normalised).
    ///   - salt: S, any length.
    ///   - iterations: c, at least 1.
    ///   - keyByteCount: dkLen in bytes, 1...128 here.
    /// - Returns: `keyByteCount` bytes, zeroed when released.
    static func pbkdf2(_ prf: PRF, password: [UInt8], salt: [UInt8], iterations: Int, keyByteCount: Int) -> SecretBytes
    {
        precondition(iterations >= 1 && keyByteCount >= 1)
        let key = SecretBytes(count: keyByteCount)
        password.withUnsafeBufferPointer { p in
            salt.withUnsafeBufferPointer { s in
                switch prf {
                case .hmacSHA1:
                    nettle_pbkdf2_hmac_sha1(
                        p.count, p.baseAddress, UInt32(iterations), s.count, s.baseAddress, keyByteCount,
                        key.baseAddress)
                case .hmacSHA256:
                    nettle_pbkdf2_hmac_sha256(
                        p.count, p.baseAddress, UInt32(iterations), s.count, s.baseAddress, keyByteCount,
                        key.baseAddress)
                case .hmacSHA384:
                    nettle_pbkdf2_hmac_sha384(
                        p.count, p.baseAddress, UInt32(iterations), s.count, s.baseAddress, keyByteCount,
                        key.baseAddress)
                case .hmacSHA512:
                    nettle_pbkdf2_hmac_sha512(
                        p.count, p.baseAddress, UInt32(iterations), s.count, s.baseAddress, keyByteCount,
                        key.baseAddress)
                }
            }
        }
        return key
    }

    /// RC2 in CBC mode, decrypting, then the PKCS#5 padding removed (RFC 8018 §6.2.2 steps
    /// 4-5): the last octet p must be 1...8 and the last p octets all equal p.
    ///
    /// `C = C_1 || ... || C_n`, `M_i = RC2-Decrypt(K, C_i) XOR C_{i-1}`, `C_0 = IV`.
    /// - Parameters:
    ///   - key: 1...128 bytes.
    ///   - effectiveKeyBits: RC2's effective key bits (RFC 2268 §2), 1...1024.
    ///   - iv: 8 bytes.
    ///   - ciphertext: a non-zero multiple of 8 bytes.
    /// - Returns: the message without padding (secret: the caller wipes it), or nil when the
    ///   lengths or the padding are wrong (the wrong key, in practice).
    static func rc2CBCDecrypt(key: SecretBytes, effectiveKeyBits: Int, iv: [UInt8], ciphertext: [UInt8]) -> [UInt8]? {
        let block = Int(ARCTWO_BLOCK_SIZE)
        guard (1...128).contains(key.count), (1...1024).contains(effectiveKeyBits), iv.count == block,
            !ciphertext.isEmpty, ciphertext.count % block == 0
        else { return nil }
        let context = UnsafeMutablePointer<arctwo_ctx>.allocate(capacity: 1)
        context.initialize(to: arctwo_ctx())
        defer {
            rsakit_secure_zero(UnsafeMutableRawPointer(context), MemoryLayout<arctwo_ctx>.size)
            context.deallocate()
        }
        key.withBytes { nettle_arctwo_set_key_ekb(context, $0.count, $0.baseAddress, UInt32(effectiveKeyBits)) }
        var plain = [UInt8](repeating: 0, count: ciphertext.count)
        ciphertext.withUnsafeBufferPointer { source in
            plain.withUnsafeMutableBufferPointer { destination in
                nettle_arctwo_decrypt(context, source.count, destination.baseAddress, source.baseAddress)
            }
        }
        for index in plain.indices {
            plain[index] ^= index < block ? iv[index] : ciphertext[index - block]
        }
        // PS = p copies of p, 1 <= p <= 8; every byte is examined whatever p is.
        let pad = Int(plain[plain.count - 1])
        var bad = pad == 0 || pad > block ? 1 : 0
        for offset in 1...block where offset <= pad {
            bad |= plain[plain.count - offset] == UInt8(truncatingIfNeeded: pad) ? 0 : 1
        }
        guard bad == 0 else {
            wipe(&plain)
            return nil
        }
        let message = Array(plain[..<(plain.count - pad)])
        wipe(&plain)
        return message
    }
}
