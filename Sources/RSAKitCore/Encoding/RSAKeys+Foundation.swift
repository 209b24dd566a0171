// Foundation forms of the key and scheme APIs: parsers accept any
// `DataProtocol`; operations take `Data` and return `Data` (a `Data` parameter, not
// `some DataProtocol`, so that `encrypt(Array(...))` keeps meaning the `[UInt8]` form).
// Each forwards to the `[UInt8]` form documented beside it; behaviour, errors and
// constant-time status are that form's.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAPublicKey {
    /// Read a public key from DER (PKCS#1 `RSAPublicKey` or SPKI); see ``init(derRepresentation:)-([UInt8])``.
    /// - Parameter derRepresentation: exactly one DER structure, any `DataProtocol` (`Data`, a slice).
    /// - Throws: every error of the `[UInt8]` form.
    public init(derRepresentation: some DataProtocol) throws {
        try self.init(derRepresentation: [UInt8](derRepresentation))
    }

    /// Read a public key from PEM bytes (UTF-8 text, as read from a file).
    /// - Throws: `RSAError.malformedPEM` (line 1) for non-UTF-8 bytes, and every error of
    ///   ``init(pemRepresentation:)``.
    public init(pemBytes: some DataProtocol) throws {
        guard let text = String(bytes: [UInt8](pemBytes), encoding: .utf8) else {
            throw RSAError.malformedPEM(reason: "the bytes are not UTF-8 text", line: 1)
        }
        try self.init(pemRepresentation: text)
    }

    /// SubjectPublicKeyInfo DER (``derRepresentation``) as `Data`.
    public var derRepresentationData: Data { Data(derRepresentation) }

    /// PKCS#1 `RSAPublicKey` DER (``pkcs1DERRepresentation``) as `Data`.
    public var pkcs1DERRepresentationData: Data { Data(pkcs1DERRepresentation) }

    /// RSAES encryption of one block (``encrypt(_:padding:random:)-([UInt8],_,_)``) for `Data` input.
    /// - Returns: exactly k bytes.
    /// - Throws: `RSAError.messageTooLong(byteCount:maximum:)`, `RSAError.keySizeUnsupported`.
    public func encrypt(
        _ message: Data, padding: RSAEncryptionPadding, random: RSARandomSource = SystemRandomSource()
    ) throws -> Data {
        Data(try encrypt([UInt8](message), padding: padding, random: random))
    }

    /// Signature verification (``isValidSignature(_:for:hash:padding:)``) for `Data` input.
    /// - Returns: true only for a valid signature of exactly k bytes. Never throws.
    public func isValidSignature(
        _ signature: Data, for message: Data, hash: RSAHashAlgorithm,
        padding: RSASignaturePadding
    ) -> Bool {
        isValidSignature([UInt8](signature), for: [UInt8](message), hash: hash, padding: padding)
    }

    /// Apple's word for k: the modulus length in bytes, which is also the length of every
    /// ciphertext block and signature (`SecKeyGetBlockSize`). Same as ``modulusByteCount``.
    public var blockSize: Int { modulusByteCount }
}

extension RSAPrivateKey {
    /// Read a private key from DER (PKCS#1 or unencrypted PKCS#8); see
    /// ``init(derRepresentation:)-([UInt8])``.
    /// - Parameter derRepresentation: exactly one DER structure, any `DataProtocol`. The
    ///   internal copy is wiped after parsing (best effort); the caller owns its `Data`.
    /// - Throws: every error of the `[UInt8]` form.
    public init(derRepresentation: some DataProtocol) throws {
        var bytes = [UInt8](derRepresentation)
        defer { wipe(&bytes) }
        try self.init(derRepresentation: bytes)
    }

    /// Read a private key from PEM bytes (UTF-8 text, as read from a file).
    /// - Throws: `RSAError.malformedPEM` (line 1) for non-UTF-8 bytes, and every error of
    ///   ``init(pemRepresentation:)``.
    public init(pemBytes: some DataProtocol) throws {
        var bytes = [UInt8](pemBytes)
        defer { wipe(&bytes) }
        guard let text = String(bytes: bytes, encoding: .utf8) else {
            throw RSAError.malformedPEM(reason: "the bytes are not UTF-8 text", line: 1)
        }
        try self.init(pemRepresentation: text)
    }

    /// PKCS#1 `RSAPrivateKey` DER (``derRepresentation``) as `Data`. Secret.
    public var derRepresentationData: Data { Data(pkcs1DERRepresentation) }

    /// PKCS#8 `PrivateKeyInfo` DER (``pkcs8DERRepresentation``) as `Data`. Secret.
    public var pkcs8DERRepresentationData: Data { Data(pkcs8DERRepresentation) }

    /// RSAES decryption of one k-byte block (``decrypt(_:padding:)-([UInt8],_)``) for `Data` input.
    /// Constant-time and blinded as the `[UInt8]` form.
    /// - Throws: `RSAError.ciphertextLengthInvalid`; `RSAError.decryptionFailed` (opaque).
    public func decrypt(_ ciphertext: Data, padding: RSAEncryptionPadding) throws -> Data {
        Data(try decrypt([UInt8](ciphertext), padding: padding))
    }

    /// A signature (``signature(for:hash:padding:random:)``) over `Data` input.
    /// - Returns: exactly k bytes.
    /// - Throws: every error of the `[UInt8]` form.
    public func signature(
        for message: Data, hash: RSAHashAlgorithm, padding: RSASignaturePadding,
        random: RSARandomSource = SystemRandomSource()
    ) throws -> Data {
        Data(try signature(for: [UInt8](message), hash: hash, padding: padding, random: random))
    }

    /// Apple's word for k (``RSAPublicKey/blockSize``).
    public var blockSize: Int { modulusByteCount }
}

extension RSAKeyFingerprint {
    /// The 32 digest bytes as `Data`.
    public var data: Data { Data(bytes) }

    /// A fingerprint from 32 digest bytes in any `DataProtocol`; nil for another length.
    public init?(data: some DataProtocol) {
        self.init(bytes: [UInt8](data))
    }
}

extension RSAHashAlgorithm {
    /// The digest of `data` (``hash(_:)``) as `Data`.
    public func hash(_ data: Data) -> Data {
        Data(hash([UInt8](data)))
    }
}

// The remaining key constructors and encodings that take bytes.

extension RSAPublicKey {
    /// Build a public key from big-endian components held in `Data` (or any `DataProtocol`);
    /// see ``init(modulus:publicExponent:)-([UInt8],[UInt8])``.
    /// - Parameters:
    ///   - modulus: n as big-endian octets of any length; leading zero octets are ignored.
    ///   - publicExponent: e as big-endian octets; leading zero octets are ignored.
    /// - Throws: `RSAError.invalidKey`, as the `[UInt8]` form.
    public init(modulus: some DataProtocol, publicExponent: some DataProtocol) throws {
        try self.init(modulus: [UInt8](modulus), publicExponent: [UInt8](publicExponent))
    }
}

extension RSAPrivateKey {
    /// Build a private key from big-endian components held in `Data` (or any
    /// `DataProtocol`), as found in PKCS#1 `RSAPrivateKey`; see
    /// ``init(modulus:publicExponent:privateExponent:prime1:prime2:exponent1:exponent2:coefficient:)-([UInt8],[UInt8],[UInt8],[UInt8],[UInt8],[UInt8],[UInt8],[UInt8])``.
    /// RSAKit's copies of the secret components are wiped (best effort); the caller owns its own.
    /// - Throws: `RSAError.invalidKey` naming the first relation that fails, as the `[UInt8]` form.
    public init(
        modulus: some DataProtocol, publicExponent: some DataProtocol, privateExponent: some DataProtocol,
        prime1: some DataProtocol, prime2: some DataProtocol, exponent1: some DataProtocol,
        exponent2: some DataProtocol, coefficient: some DataProtocol
    ) throws {
        try self.init(
            modulus: modulus, publicExponent: publicExponent, privateExponent: privateExponent,
            prime1: prime1, prime2: prime2, exponent1: exponent1, exponent2: exponent2,
            coefficient: coefficient, otherPrimeInfos: [])
    }

    /// Build a multi-prime private key from big-endian components held in `Data` (or any
    /// `DataProtocol`); see
    /// ``init(modulus:publicExponent:privateExponent:prime1:prime2:exponent1:exponent2:coefficient:otherPrimeInfos:)-([UInt8],[UInt8],[UInt8],[UInt8],[UInt8],[UInt8],[UInt8],[UInt8],_)``.
    /// With `otherPrimeInfos` empty this is the two-prime initialiser. RSAKit's copies of the
    /// secret components are wiped (best effort).
    /// - Throws: `RSAError.invalidKey` naming the first relation that fails, as the `[UInt8]` form.
    public init(
        modulus: some DataProtocol, publicExponent: some DataProtocol, privateExponent: some DataProtocol,
        prime1: some DataProtocol, prime2: some DataProtocol, exponent1: some DataProtocol,
        exponent2: some DataProtocol, coefficient: some DataProtocol, otherPrimeInfos: [OtherPrimeInfo]
    ) throws {
        var secrets = [
            [UInt8](privateExponent), [UInt8](prime1), [UInt8](prime2),
            [UInt8](exponent1), [UInt8](exponent2), [UInt8](coefficient)
        ]
        defer { for index in secrets.indices { wipe(&secrets[index]) } }
        try self.init(
            modulus: [UInt8](modulus), publicExponent: [UInt8](publicExponent),
            privateExponent: secrets[0], prime1: secrets[1], prime2: secrets[2],
            exponent1: secrets[3], exponent2: secrets[4], coefficient: secrets[5],
            otherPrimeInfos: otherPrimeInfos)
    }
}

extension RSAPrivateKey.OtherPrimeInfo {
    /// The three components held in `Data` (or any `DataProtocol`), big-endian; leading zero
    /// octets ignored. See ``init(prime:exponent:coefficient:)-([UInt8],[UInt8],[UInt8])``.
    public init(prime: some DataProtocol, exponent: some DataProtocol, coefficient: some DataProtocol) {
        self.init(prime: [UInt8](prime), exponent: [UInt8](exponent), coefficient: [UInt8](coefficient))
    }
}

extension RSAKeyFile {
    /// Read a key from the bytes of a file held in `Data` (as `Data(contentsOf:)` reads it);
    /// see ``init(bytes:)-([UInt8])``. RSAKit's copy is wiped after parsing (best effort).
    /// - Parameter bytes: PEM or DER, at most ``maximumByteCount`` bytes, in any `DataProtocol`.
    /// - Throws: every error of the `[UInt8]` form.
    public init(bytes: some DataProtocol) throws {
        var copy = [UInt8](bytes)
        defer { wipe(&copy) }
        try self.init(bytes: copy)
    }

    /// Whether `bytes` held in `Data` hold an encrypted private key; see ``isEncrypted(_:)-([UInt8])``.
    public static func isEncrypted(_ bytes: some DataProtocol) -> Bool {
        var copy = [UInt8](bytes)
        defer { wipe(&copy) }
        return isEncrypted(copy)
    }
}
