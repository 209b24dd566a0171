/// An RSA private key in the CRT form of RFC 8017 §3.2 (second representation):
/// n, e, d, p, q, dP = d mod (p - 1), dQ = d mod (q - 1), qInv = q^-1 mod p, and for a
/// multi-prime key (version 1) the ``otherPrimeInfos`` (r_i, d_i, t_i), i = 3 ... u.
///
/// A value type: copies share one immutable storage object, whose limbs are zeroed
/// when the last copy goes away. Private-key operations (``decrypt(_:)-([UInt8])``, ``RSAHazmat/rsadp(_:key:random:)``)
/// are constant-time (GMP's `mpn_sec_*` layer), blinded and checked by re-encryption,
/// with the CRT over every prime.
///
/// Every instance has passed the checks of ``KeyValidationFailure``.
public struct RSAPrivateKey: Sendable, CustomStringConvertible {
    internal let storage: PrivateKeyStorage

    /// The public half (n, e), with the key's ``RSAPublicKey/pssRestriction`` if it has one.
    public internal(set) var publicKey: RSAPublicKey

    /// Build a private key from its big-endian components, as found in PKCS#1
    /// `RSAPrivateKey` (RFC 8017 Appendix A.1.2). Leading zero octets are ignored.
    ///
    /// - Parameters:
    ///   - modulus: n. - publicExponent: e. - privateExponent: d.
    ///   - prime1: p. - prime2: q. - exponent1: dP. - exponent2: dQ. - coefficient: qInv.
    /// - Throws: `RSAError.invalidKey` naming the first relation that fails: n odd and > 1;
    ///   e odd, >= 3 and < n; p, q > 1 and distinct; p * q = n;
    ///   e * d = 1 mod lcm(p - 1, q - 1); 0 < dP < p - 1 with e * dP = 1 mod (p - 1);
    ///   likewise dQ; 0 < qInv < p with qInv * q = 1 mod p.
    ///   Primality of p and q is not tested. Validation is not constant-time; it runs once.
    public init(
        modulus: [UInt8], publicExponent: [UInt8], privateExponent: [UInt8],
        prime1: [UInt8], prime2: [UInt8], exponent1: [UInt8], exponent2: [UInt8],
        coefficient: [UInt8]
    ) throws {
        try self.init(
            n: BigNumber(bytes: modulus), e: BigNumber(bytes: publicExponent),
            d: BigNumber(bytes: privateExponent),
            p: BigNumber(bytes: prime1), q: BigNumber(bytes: prime2),
            dP: BigNumber(bytes: exponent1), dQ: BigNumber(bytes: exponent2),
            qInv: BigNumber(bytes: coefficient))
    }

    internal init(
        n: BigNumber, e: BigNumber, d: BigNumber, p: BigNumber, q: BigNumber,
        dP: BigNumber, dQ: BigNumber, qInv: BigNumber, otherPrimes: [OtherPrime] = []
    ) throws {
        let publicKey = try RSAPublicKey(n: n, e: e)
        if otherPrimes.isEmpty {
            try RSAPrivateKey.validate(n: n, e: e, d: d, p: p, q: q, dP: dP, dQ: dQ, qInv: qInv)
        } else {
            try RSAPrivateKey.validateMultiPrime(
                n: n, e: e, d: d, p: p, q: q, dP: dP, dQ: dQ,
                qInv: qInv, otherPrimes: otherPrimes)
        }
        self.publicKey = publicKey
        self.storage = try PrivateKeyStorage(
            n: n, e: e, d: d, p: p, q: q, dP: dP, dQ: dQ,
            qInv: qInv, otherPrimes: otherPrimes)
    }

    /// Build the key from two primes and e, computing d = e^-1 mod lcm(p - 1, q - 1),
    /// dP, dQ and qInv (FIPS 186-5 A.1.1 / RFC 8017 §3.2), then validating.
    /// - Throws: `RSAError.invalidKey` when e is not invertible or the result fails validation.
    internal init(p: BigNumber, q: BigNumber, e: BigNumber) throws {
        let pMinus1 = p - 1
        let qMinus1 = q - 1
        let lambda = pMinus1.lcm(qMinus1)
        guard let d = e.inverseVarTime(modulo: lambda) else {
            throw RSAError.invalidKey(.privateExponentMismatch)
        }
        guard let qInv = q.inverseVarTime(modulo: p) else {
            throw RSAError.invalidKey(.crtCoefficientMismatch)
        }
        try self.init(
            n: p * q, e: e, d: d, p: p, q: q,
            dP: d.mod(pMinus1), dQ: d.mod(qMinus1), qInv: qInv)
    }

    internal static func validate(
        n: BigNumber, e: BigNumber, d: BigNumber, p: BigNumber, q: BigNumber,
        dP: BigNumber, dQ: BigNumber, qInv: BigNumber
    ) throws {
        guard p.compare(1) > 0, q.compare(1) > 0 else { throw RSAError.invalidKey(.primeTooSmall) }
        guard p != q else { throw RSAError.invalidKey(.primesEqual) }
        guard p * q == n else { throw RSAError.invalidKey(.primeProductMismatch) }
        let pMinus1 = p - 1
        let qMinus1 = q - 1
        // RFC 8017 §3.2: e * d = 1 mod lambda(n), lambda(n) = lcm(p - 1, q - 1).
        // (A d computed modulo phi(n), as older OpenSSL did, satisfies this too.)
        let lambda = pMinus1.lcm(qMinus1)
        guard d.sign > 0, (e * d).mod(lambda).compare(1) == 0 else {
            throw RSAError.invalidKey(.privateExponentMismatch)
        }
        try validateCRTValues(e: e, p: p, q: q, dP: dP, dQ: dQ, qInv: qInv)
    }

    /// The CRT values of the first two primes (RFC 8017 §3.2), for two-prime and multi-prime
    /// keys alike: e * dP = 1 mod (p - 1) with 0 < dP < p - 1, likewise dQ for q, and
    /// q * qInv = 1 mod p with 0 < qInv < p. The same arithmetic as the rest of `validate`
    /// (run when a key is made or loaded, not on each private-key operation).
    /// - Throws: `RSAError.invalidKey` with `.firstCRTExponentMismatch`,
    ///   `.secondCRTExponentMismatch` or `.crtCoefficientMismatch`, checked in that order.
    internal static func validateCRTValues(
        e: BigNumber, p: BigNumber, q: BigNumber, dP: BigNumber, dQ: BigNumber, qInv: BigNumber
    ) throws {
        let pMinus1 = p - 1, qMinus1 = q - 1
        guard dP.sign > 0, dP.compare(pMinus1) < 0, (e * dP).mod(pMinus1).compare(1) == 0 else {
            throw RSAError.invalidKey(.firstCRTExponentMismatch)
        }
        guard dQ.sign > 0, dQ.compare(qMinus1) < 0, (e * dQ).mod(qMinus1).compare(1) == 0 else {
            throw RSAError.invalidKey(.secondCRTExponentMismatch)
        }
        guard qInv.sign > 0, qInv.compare(p) < 0, (q * qInv).mod(p).compare(1) == 0 else {
            throw RSAError.invalidKey(.crtCoefficientMismatch)
        }
    }

    /// The bit length of n.
    public var modulusBitCount: Int { publicKey.modulusBitCount }
    /// k, the length of n in octets (the block size).
    public var modulusByteCount: Int { publicKey.modulusByteCount }
    /// k - 11, the most plaintext bytes per EME-PKCS1-v1_5 block.
    public var maximumMessageByteCount: Int { publicKey.maximumMessageByteCount }

    /// n, minimal big-endian octets.
    public var modulus: [UInt8] { storage.n.minimalBytes }
    /// e, minimal big-endian octets.
    public var publicExponent: [UInt8] { storage.e.minimalBytes }
    /// d, minimal big-endian octets. Secret: the caller owns the copy and should wipe it.
    public var privateExponent: [UInt8] { storage.d.minimalBytes }
    /// p (PKCS#1 `prime1`), minimal big-endian octets. Secret.
    public var prime1: [UInt8] { storage.p.minimalBytes }
    /// q (PKCS#1 `prime2`), minimal big-endian octets. Secret.
    public var prime2: [UInt8] { storage.q.minimalBytes }
    /// dP (PKCS#1 `exponent1`), minimal big-endian octets. Secret.
    public var exponent1: [UInt8] { storage.dP.minimalBytes }
    /// dQ (PKCS#1 `exponent2`), minimal big-endian octets. Secret.
    public var exponent2: [UInt8] { storage.dQ.minimalBytes }
    /// qInv (PKCS#1 `coefficient`), minimal big-endian octets. Secret.
    public var coefficient: [UInt8] { storage.qInv.minimalBytes }

    /// Never prints secret material.
    public var description: String { "RSAPrivateKey(\(modulusBitCount) bits)" }
}

extension RSAPrivateKey: Equatable {
    /// Component-wise equality of (n, e, d, p, q, dP, dQ, qInv) and of every
    /// otherPrimeInfo (r_i, d_i, t_i). Not constant-time.
    public static func == (a: RSAPrivateKey, b: RSAPrivateKey) -> Bool {
        let x = a.storage, y = b.storage
        return x.n == y.n && x.e == y.e && x.d == y.d && x.p == y.p && x.q == y.q
            && x.dP == y.dP && x.dQ == y.dQ && x.qInv == y.qInv
            && x.otherPrimes.count == y.otherPrimes.count
            && zip(x.otherPrimes, y.otherPrimes).allSatisfy {
                $0.prime == $1.prime && $0.exponent == $1.exponent && $0.coefficient == $1.coefficient
            }
    }
}
