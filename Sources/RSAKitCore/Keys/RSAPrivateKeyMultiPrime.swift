// Multi-prime keys (RFC 8017 §3.2 with u > 2; PKCS#1 RSAPrivateKey version 1 with
// otherPrimeInfos): construction, validation and the components. Decryption and signing
// use the same constant-time path as two-prime keys, with the CRT over every prime.

extension RSAPrivateKey {
    /// One `OtherPrimeInfo` of a multi-prime key (RFC 8017 Appendix A.1.2), big-endian
    /// minimal octets: prime r_i, exponent d_i = d mod (r_i - 1), coefficient
    /// t_i = (r_1 * ... * r_(i-1))^-1 mod r_i, for i = 3 ... u. Secret.
    public struct OtherPrimeInfo: Sendable, Equatable {
        /// r_i.
        public var prime: [UInt8]
        /// d_i.
        public var exponent: [UInt8]
        /// t_i.
        public var coefficient: [UInt8]

        /// The three components (leading zero octets ignored).
        public init(prime: [UInt8], exponent: [UInt8], coefficient: [UInt8]) {
            self.prime = prime; self.exponent = exponent; self.coefficient = coefficient
        }
    }

    /// Build a multi-prime private key from its big-endian components, as found in PKCS#1
    /// `RSAPrivateKey` version 1 (RFC 8017 Appendix A.1.2). With `otherPrimeInfos` empty
    /// this is the two-prime initialiser.
    ///
    /// - Throws: `RSAError.invalidKey` naming the first relation that fails (RFC 8017
    ///   §3.2): those of the two-prime key for p, q, dP, dQ, qInv (d is checked modulo
    ///   lcm(r_1 - 1, ..., r_u - 1)); at most 16 primes (`tooManyPrimes`); every r_i > 1 and
    ///   distinct (`otherPrimeInvalid`); the product of all primes is n
    ///   (`multiPrimeProductMismatch`); 0 < d_i < r_i - 1 with e d_i = 1 mod (r_i - 1)
    ///   (`otherPrimeExponentMismatch`); 0 < t_i < r_i with t_i r_1 ... r_(i-1) = 1 mod r_i
    ///   (`otherPrimeCoefficientMismatch`). Primality is not tested. Not constant-time; it
    ///   runs once.
    public init(
        modulus: [UInt8], publicExponent: [UInt8], privateExponent: [UInt8],
        prime1: [UInt8], prime2: [UInt8], exponent1: [UInt8], exponent2: [UInt8],
        coefficient: [UInt8], otherPrimeInfos: [OtherPrimeInfo]
    ) throws {
        try self.init(
            n: BigNumber(bytes: modulus), e: BigNumber(bytes: publicExponent),
            d: BigNumber(bytes: privateExponent),
            p: BigNumber(bytes: prime1), q: BigNumber(bytes: prime2),
            dP: BigNumber(bytes: exponent1), dQ: BigNumber(bytes: exponent2),
            qInv: BigNumber(bytes: coefficient),
            otherPrimes: otherPrimeInfos.map {
                OtherPrime(
                    prime: BigNumber(bytes: $0.prime), exponent: BigNumber(bytes: $0.exponent),
                    coefficient: BigNumber(bytes: $0.coefficient))
            })
    }

    /// The otherPrimeInfos of a multi-prime key (r_3 ... r_u), empty for a two-prime key.
    /// Secret: the caller owns the copies.
    public var otherPrimeInfos: [OtherPrimeInfo] {
        storage.otherPrimes.map {
            OtherPrimeInfo(
                prime: $0.prime.minimalBytes, exponent: $0.exponent.minimalBytes,
                coefficient: $0.coefficient.minimalBytes)
        }
    }

    /// u, the number of primes (2 for a two-prime key).
    public var primeCount: Int { 2 + storage.otherPrimes.count }

    /// RFC 8017 §3.2 for u > 2 primes.
    internal static func validateMultiPrime(
        n: BigNumber, e: BigNumber, d: BigNumber, p: BigNumber, q: BigNumber,
        dP: BigNumber, dQ: BigNumber, qInv: BigNumber, otherPrimes: [OtherPrime]
    ) throws {
        let u = 2 + otherPrimes.count
        guard u <= 16 else { throw RSAError.invalidKey(.tooManyPrimes(count: u)) }
        guard p.compare(1) > 0, q.compare(1) > 0 else { throw RSAError.invalidKey(.primeTooSmall) }
        guard p != q else { throw RSAError.invalidKey(.primesEqual) }
        var earlier = [p, q]
        for (offset, other) in otherPrimes.enumerated() {
            guard other.prime.compare(1) > 0, !earlier.contains(other.prime) else {
                throw RSAError.invalidKey(.otherPrimeInvalid(index: offset + 3))
            }
            earlier.append(other.prime)
        }
        guard earlier.dropFirst().reduce(p, { $0 * $1 }) == n else {
            throw RSAError.invalidKey(.multiPrimeProductMismatch)
        }
        // e d = 1 mod lambda(n) = lcm(r_1 - 1, ..., r_u - 1).
        let lambda = earlier.dropFirst().reduce(p - 1) { $0.lcm($1 - 1) }
        guard d.sign > 0, (e * d).mod(lambda).compare(1) == 0 else {
            throw RSAError.invalidKey(.privateExponentMismatch)
        }
        try validateCRTValues(e: e, p: p, q: q, dP: dP, dQ: dQ, qInv: qInv)
        var product = p * q
        for (offset, other) in otherPrimes.enumerated() {
            let index = offset + 3
            let r = other.prime, rMinus1 = other.prime - 1
            guard other.exponent.sign > 0, other.exponent.compare(rMinus1) < 0,
                (e * other.exponent).mod(rMinus1).compare(1) == 0
            else {
                throw RSAError.invalidKey(.otherPrimeExponentMismatch(index: index))
            }
            guard other.coefficient.sign > 0, other.coefficient.compare(r) < 0,
                (product * other.coefficient).mod(r).compare(1) == 0
            else {
                throw RSAError.invalidKey(.otherPrimeCoefficientMismatch(index: index))
            }
            product = product * r
        }
    }
}
