// The hazardous-materials namespace: raw RSA and the padding building blocks.

/// Hazardous materials: raw RSAEP/RSADP (RFC 8017 §5.1) and the padding building blocks
/// (EME-PKCS1-v1_5, EME-OAEP, EMSA-PKCS1-v1_5, EMSA-PSS, MGF1; RFC 8017 §7-9 and B.2.1).
///
/// Everything here is correct and tested, but none of it is an encryption or a signature
/// scheme by itself: raw RSA without padding is deterministic and malleable, and a padding
/// decoder used as a decryption oracle (answering "good padding" / "bad padding") breaks
/// RSA (Bleichenbacher 1998, Manger 2001). Use ``RSAPublicKey/encrypt(_:padding:random:)-([UInt8],_,_)``,
/// ``RSAPrivateKey/decrypt(_:padding:)-([UInt8],_)``, the signature calls, or ``RSAMessage`` unless you
/// are implementing a protocol that needs the raw pieces (and you know why).
///
/// The name follows `cryptography.io`'s `hazmat` layer and swift-crypto's `Insecure`
/// namespace: code that reaches in here says so at the call site, and autocomplete next to
/// `encrypt` shows only the safe calls.
public enum RSAHazmat {
    /// RSAEP (RFC 8017 §5.1.1): c = m^e mod n, no padding.
    ///
    /// - Parameters:
    ///   - message: the message representative m, big-endian octets (any length; leading
    ///     zeros ignored).
    ///   - key: the public key (n, e).
    /// - Returns: c, I2OSP'd to exactly k bytes.
    /// - Throws: `RSAError.messageRepresentativeOutOfRange` unless 0 <= m < n.
    /// - Note: Variable time (GMP `mpz_powm`); every input is public.
    public static func rsaep(_ message: [UInt8], key: RSAPublicKey) throws -> [UInt8] {
        try key.rsaep(message)
    }

    /// RSADP (RFC 8017 §5.1.2, CRT form): m = c^d mod n, no padding check.
    ///
    /// - Parameters:
    ///   - ciphertext: the ciphertext representative c, big-endian octets (length not
    ///     checked here).
    ///   - key: the private key.
    ///   - random: source of the blinding factor (default: `getrandom`).
    /// - Returns: m, I2OSP'd to exactly k bytes (leading zeros kept).
    /// - Throws: `RSAError.decryptionFailed` unless 0 <= c < n; `RSAError.internalError`
    ///   if the re-encryption check fails (a fault, never caused by the input).
    /// - Note: Constant-time exponentiations on a blinded base (GMP's `mpn_sec_powm`, or the
    ///   IFMA or ADX kernel where the CPU has it: ``RSAKitEngine/privateKeyPath``), the result
    ///   checked before it is returned. The output is unpadded: returning it, or anything
    ///   computed from it, to whoever sent `ciphertext` is a decryption oracle.
    public static func rsadp(
        _ ciphertext: [UInt8], key: RSAPrivateKey, random: RSARandomSource = SystemRandomSource()
    ) throws -> [UInt8] {
        try key.rsadp(ciphertext, random: random)
    }
}

// Short internal names, so RSAKit's own code reads as before; not part of the public API.
package typealias EMEPKCS1v15 = RSAHazmat.EMEPKCS1v15
typealias EMEOAEP = RSAHazmat.EMEOAEP
package typealias EMSAPKCS1v15 = RSAHazmat.EMSAPKCS1v15
typealias EMSAPSS = RSAHazmat.EMSAPSS
typealias MGF1 = RSAHazmat.MGF1
