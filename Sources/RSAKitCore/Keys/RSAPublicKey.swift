/// An RSA public key (n, e), RFC 8017 §3.1.
///
/// A value type: copies share immutable GMP storage. Constructed only through
/// validating initialisers, so every instance satisfies: n odd, n > 1, e odd,
/// 3 <= e < n.
///
/// The block size k (``modulusByteCount``) is derived from the bit length of n, never
/// from how many bytes the modulus was given in: a modulus with a leading 0x00 octet
/// is the same key.
public struct RSAPublicKey: Sendable, Hashable, CustomStringConvertible {
    internal let n: BigNumber
    internal let e: BigNumber

    /// The bit length of the modulus n (for example 2048; 2047 and 2049 are possible).
    public let modulusBitCount: Int

    /// The RSASSA-PSS restriction of a key read with the id-RSASSA-PSS algorithm identifier
    /// (RFC 4055 §3.1), nil for an rsaEncryption key (any use). See ``RSAPSSKeyRestriction``;
    /// set one with ``restricted(to:)``. Not part of equality: the same n and e are equal keys.
    public internal(set) var pssRestriction: RSAPSSKeyRestriction?

    /// k, the length of n in octets: ceil(modulusBitCount / 8) (RFC 8017 §2). This is the
    /// block size that `SecKeyGetBlockSize` reports: every ciphertext block is exactly k bytes.
    public var modulusByteCount: Int { (modulusBitCount + 7) / 8 }

    /// k - 11: the most plaintext bytes one EME-PKCS1-v1_5 block carries
    /// (RFC 8017 §7.2.1 step 1). 0 for keys too small for the padding (k < 11).
    public var maximumMessageByteCount: Int { max(0, modulusByteCount - 11) }

    /// Build a public key from its big-endian components.
    ///
    /// - Parameters:
    ///   - modulus: n as big-endian octets of any length; leading zero octets are ignored.
    ///   - publicExponent: e as big-endian octets; leading zero octets are ignored.
    /// - Throws: `RSAError.invalidKey` with `.modulusEven`, `.modulusTooSmall`,
    ///   `.publicExponentEven`, `.publicExponentTooSmall` or
    ///   `.publicExponentNotLessThanModulus`.
    public init(modulus: [UInt8], publicExponent: [UInt8]) throws {
        try self.init(n: BigNumber(bytes: modulus), e: BigNumber(bytes: publicExponent))
    }

    internal init(n: BigNumber, e: BigNumber) throws {
        try RSAPublicKey.validate(n: n, e: e)
        self.n = n
        self.e = e
        self.modulusBitCount = n.bitCount
    }

    internal static func validate(n: BigNumber, e: BigNumber) throws {
        guard n.compare(1) > 0 else { throw RSAError.invalidKey(.modulusTooSmall) }
        guard n.isOdd else { throw RSAError.invalidKey(.modulusEven) }
        guard e.compare(3) >= 0 else { throw RSAError.invalidKey(.publicExponentTooSmall) }
        guard e.isOdd else { throw RSAError.invalidKey(.publicExponentEven) }
        guard e.compare(n) < 0 else { throw RSAError.invalidKey(.publicExponentNotLessThanModulus) }
    }

    /// n as minimal big-endian octets (no leading zero octet; modulusByteCount long).
    public var modulus: [UInt8] { n.minimalBytes }

    /// e as minimal big-endian octets (65537 is `[0x01, 0x00, 0x01]`).
    public var publicExponent: [UInt8] { e.minimalBytes }

    /// Equal when n and e are equal (whatever leading zeros they were given with, and
    /// whatever ``pssRestriction`` they carry).
    public static func == (a: RSAPublicKey, b: RSAPublicKey) -> Bool {
        a.n == b.n && a.e == b.e
    }

    /// Hashes the minimal encodings of n and e.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(modulus)
        hasher.combine(publicExponent)
    }

    /// "RSAPublicKey(2048 bits, e = 65537)".
    public var description: String {
        "RSAPublicKey(\(modulusBitCount) bits, e = \(e.uintValue.map(String.init) ?? "large"))"
    }
}
