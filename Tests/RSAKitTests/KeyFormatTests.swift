import Foundation
import XCTest
import RSAKit

/// PKCS#1, SPKI and PKCS#8 round trips, refusals, normalisation, fingerprints, SHA-256,
/// and the Wycheproof PKCS#8/PEM private keys.
final class KeyFormatTests: XCTestCase {
    typealias F = KeyFormatFixtures

    // MARK: Round trips

    func testRoundTrip_EveryFormatDERAndPEM_AllSizesAndExponents() throws {
        for (name, key) in try F.roundTripKeys() {
            let publicKey = key.publicKey
            for format in [RSAKeyFormat.pkcs1, .pkcs8] {
                let der = try key.derRepresentation(format: format)
                let pem = try key.pemRepresentation(format: format)
                XCTAssertEqual(try RSAPrivateKey(derRepresentation: der), key, "\(name) \(format) DER")
                XCTAssertEqual(try RSAPrivateKey(pemRepresentation: pem), key, "\(name) \(format) PEM")
                for (bytes, isPEM) in [(der, false), (Array(pem.utf8), true)] {
                    let file = try RSAKeyFile(bytes: bytes)
                    XCTAssertEqual(file.privateKey, key, "\(name) \(format)")
                    XCTAssertEqual(file.format, format, "\(name) \(format)")
                    XCTAssertEqual(file.isPEM, isPEM, "\(name) \(format)")
                    XCTAssertEqual(file.warnings, [], "\(name) \(format)")
                    XCTAssertEqual(file.publicKey, publicKey, "\(name) \(format)")
                }
                // Writing again gives the same bytes.
                XCTAssertEqual(
                    try RSAPrivateKey(derRepresentation: der).derRepresentation(format: format), der,
                    "\(name) \(format)")
            }
            for format in [RSAKeyFormat.pkcs1, .spki] {
                let der = try publicKey.derRepresentation(format: format)
                let pem = try publicKey.pemRepresentation(format: format)
                XCTAssertEqual(try RSAPublicKey(derRepresentation: der), publicKey, "\(name) \(format) DER")
                XCTAssertEqual(try RSAPublicKey(pemRepresentation: pem), publicKey, "\(name) \(format) PEM")
                for (bytes, isPEM) in [(der, false), (Array(pem.utf8), true)] {
                    let file = try RSAKeyFile(bytes: bytes)
                    guard case let .publicKey(read) = file.key else {
                        XCTFail("\(name) \(format): not public"); continue
                    }
                    XCTAssertEqual(read, publicKey, "\(name) \(format)")
                    XCTAssertEqual(file.format, format, "\(name) \(format)")
                    XCTAssertEqual(file.isPEM, isPEM, "\(name) \(format)")
                    XCTAssertEqual(file.warnings, [], "\(name) \(format)")
                }
                XCTAssertEqual(
                    try RSAPublicKey(derRepresentation: der).derRepresentation(format: format), der, "\(name) \(format)"
                )
            }
            // The key still works after a round trip.
            let reread = try RSAPrivateKey(derRepresentation: key.pkcs8DERRepresentation)
            let message = Array("round trip \(name)".utf8)
            XCTAssertEqual(try reread.decrypt(try publicKey.encrypt(message)), message, name)
        }
    }

    func testWrite_SPKIAndPKCS8Framing() throws {
        let key = F.rsakitKey  // 1024 bits, e = 65537
        let spki = key.publicKey.derRepresentation
        // SEQUENCE { SEQUENCE { rsaEncryption, NULL }, BIT STRING { 00, RSAPublicKey } } (RFC 3279 §2.3.1).
        XCTAssertEqual(
            Array(spki.prefix(22)),
            [
                0x30, 0x81, 0x9F, 0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7,
                0x0D, 0x01, 0x01, 0x01, 0x05, 0x00, 0x03, 0x81, 0x8D, 0x00
            ])
        XCTAssertEqual(Array(spki[22...]), key.publicKey.pkcs1DERRepresentation)
        // RSAPublicKey: modulus with its 0x00 sign octet, e = 65537 as 02 03 01 00 01.
        let pkcs1 = key.publicKey.pkcs1DERRepresentation
        XCTAssertEqual(Array(pkcs1.prefix(7)), [0x30, 0x81, 0x89, 0x02, 0x81, 0x81, 0x00])
        XCTAssertEqual(Array(pkcs1.suffix(5)), [0x02, 0x03, 0x01, 0x00, 0x01])
        // PrivateKeyInfo: version 0, the algorithm, then the RSAPrivateKey in an OCTET STRING.
        let pkcs8 = key.pkcs8DERRepresentation
        let inner = key.pkcs1DERRepresentation
        XCTAssertEqual(
            Array(pkcs8[4..<22]),
            [
                0x02, 0x01, 0x00, 0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7,
                0x0D, 0x01, 0x01, 0x01, 0x05, 0x00
            ])
        XCTAssertEqual(Array(pkcs8.suffix(inner.count)), inner)
        XCTAssertEqual(Array(inner[4..<7]), [0x02, 0x01, 0x00], "RSAPrivateKey version 0")
    }

    func testWrite_WrongFormatForKeyKind_Throws() {
        let key = F.rsakitKey
        XCTAssertThrowsError(try key.derRepresentation(format: .spki))
        XCTAssertThrowsError(try key.publicKey.pemRepresentation(format: .pkcs8))
    }

    // MARK: Normalisation

    func testImport_ModulusWithLeadingZeroIsTheSameKey() throws {
        let key = F.rsakitKey.publicKey
        let padded = try RSAPublicKey(modulus: [0, 0] + key.modulus, publicExponent: [0] + key.publicExponent)
        XCTAssertEqual(padded, key)
        XCTAssertEqual(padded.modulusByteCount, 128)
        XCTAssertEqual(padded.derRepresentation, key.derRepresentation)
        XCTAssertEqual(padded.fingerprint, key.fingerprint)
    }

    // MARK: Refusals

    func testDecode_MultiPrimeVersion1_ValidatesOtherPrimeInfos() {
        let key = F.rsakitKey
        // version 1 with an otherPrimeInfos SEQUENCE (RFC 8017 A.1.2) whose numbers are not
        // a real third prime: loaded, then refused by validation (the product is not n).
        let components = [
            key.modulus, key.publicExponent, key.privateExponent, key.prime1, key.prime2,
            key.exponent1, key.exponent2, key.coefficient
        ].map(F.integer)
        let other = F.sequence(F.sequence(F.integer([7]), F.integer([3]), F.integer([5])))
        let der = F.tlv(0x30, F.integer([1]) + components.flatMap { $0 } + other)
        XCTAssertThrowsError(try RSAPrivateKey(derRepresentation: der)) { error in
            XCTAssertEqual(error as? RSAError, .invalidKey(.multiPrimeProductMismatch))
        }
        // Version 1 without otherPrimeInfos, and an empty otherPrimeInfos, are malformed.
        let missing = F.tlv(0x30, F.integer([1]) + components.flatMap { $0 })
        XCTAssertThrowsError(try RSAPrivateKey(derRepresentation: missing)) { error in
            guard case let .malformedDER(reason, _)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("has no otherPrimeInfos"), reason)
        }
        let empty = F.tlv(0x30, F.integer([1]) + components.flatMap { $0 } + F.sequence())
        XCTAssertThrowsError(try RSAPrivateKey(derRepresentation: empty)) { error in
            guard case let .malformedDER(reason, _)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("otherPrimeInfos is empty"), reason)
        }
        // Version 0 with an extra field is malformed, not multi-prime.
        let extra = F.tlv(0x30, F.integer([0]) + components.flatMap { $0 } + other)
        XCTAssertThrowsError(try RSAPrivateKey(derRepresentation: extra)) { error in
            guard case let .malformedDER(reason, _)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("version 0 has 10 fields"), reason)
        }
    }

    func testDecode_CertificateShape_IsRefused() {
        let tbs = F.sequence(
            F.tlv(0xA0, F.integer([2])), F.integer([1]), F.sequence(), F.sequence(), F.sequence(), F.sequence(),
            F.sequence())
        let der = F.sequence(tbs, F.sequence(), F.tlv(0x03, [0x00, 0x01]))
        XCTAssertThrowsError(try RSAKeyFile(bytes: der)) { error in
            XCTAssertEqual(error as? RSAError, .unsupportedKeyFormat(reason: RSAKeyFile.certificateReason))
        }
    }

    func testDecode_WrongKind_IsAMismatchNotACorruption() {
        let key = F.rsakitKey
        XCTAssertThrowsError(try RSAPublicKey(derRepresentation: key.pkcs1DERRepresentation)) { error in
            XCTAssertEqual(
                error as? RSAError,
                .keyTypeMismatch(expected: "a public key", found: "a private key (PKCS#1 RSAPrivateKey)"))
        }
        XCTAssertThrowsError(try RSAPrivateKey(derRepresentation: key.publicKey.derRepresentation)) { error in
            XCTAssertEqual(
                error as? RSAError,
                .keyTypeMismatch(expected: "a private key", found: "a public key (SubjectPublicKeyInfo)"))
        }
    }

    func testDecode_InconsistentPrivateKey_IsInvalid() {
        let key = F.rsakitKey
        var components = [
            key.modulus, key.publicExponent, key.privateExponent, key.prime1, key.prime2,
            key.exponent1, key.exponent2, key.coefficient
        ]
        components[7][components[7].count - 1] ^= 1  // qInv off by one bit
        let der = F.tlv(0x30, F.integer([0]) + components.map(F.integer).flatMap { $0 })
        XCTAssertThrowsError(try RSAPrivateKey(derRepresentation: der)) { error in
            XCTAssertEqual(error as? RSAError, .invalidKey(.crtCoefficientMismatch))
        }
    }

    func testDecode_OversizedModulus_IsRefused() {
        var modulus = [UInt8](repeating: 0xFF, count: 16384 / 8 + 1)
        modulus[0] = 0x01
        let der = F.sequence(F.integer(modulus), F.integer([0x01, 0x00, 0x01]))
        XCTAssertThrowsError(try RSAPublicKey(derRepresentation: der)) { error in
            guard case let .keySizeUnsupported(bits, _)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertEqual(bits, 16385)
        }
    }

    // MARK: PKCS#8 optional fields (RFC 5208 attributes, RFC 5958 publicKey)

    func testDecode_PKCS8WithAttributesAndPublicKey() throws {
        let key = F.rsakitKey
        let attributes = F.tlv(
            0xA0,
            F.sequence(
                F.tlv(0x06, [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x14]),
                F.tlv(0x31, F.tlv(0x1E, Array("rsakit".utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }))))
        let privateKey = F.tlv(0x04, key.pkcs1DERRepresentation)
        let v0 = F.tlv(0x30, F.integer([0]) + F.rsaEncryptionAlgorithm + privateKey + attributes)
        XCTAssertEqual(try RSAPrivateKey(derRepresentation: v0), key)
        let publicField = F.tlv(0x81, [0x00] + key.publicKey.pkcs1DERRepresentation)
        let v1 = F.tlv(0x30, F.integer([1]) + F.rsaEncryptionAlgorithm + privateKey + attributes + publicField)
        XCTAssertEqual(try RSAPrivateKey(derRepresentation: v1), key)
        let v1NoAttributes = F.tlv(0x30, F.integer([1]) + F.rsaEncryptionAlgorithm + privateKey + publicField)
        XCTAssertEqual(try RSAPrivateKey(derRepresentation: v1NoAttributes), key)
        // A publicKey that is not this key's.
        let otherPublic = F.tlv(0x81, [0x00] + F.sequence(F.integer(key.modulus), F.integer([3])))
        let mismatched = F.tlv(0x30, F.integer([1]) + F.rsaEncryptionAlgorithm + privateKey + otherPublic)
        XCTAssertThrowsError(try RSAPrivateKey(derRepresentation: mismatched)) { error in
            XCTAssertEqual(
                error as? RSAError, .malformedKey(reason: "the PKCS#8 publicKey field does not match the private key"))
        }
        // publicKey is only allowed in version 1.
        let v0WithPublic = F.tlv(0x30, F.integer([0]) + F.rsaEncryptionAlgorithm + privateKey + publicField)
        XCTAssertThrowsError(try RSAPrivateKey(derRepresentation: v0WithPublic))
    }

    // MARK: Fingerprints

    func testFingerprint_FormsAndParsing() throws {
        let key = F.rsakitKey.publicKey
        let fingerprint = key.fingerprint
        XCTAssertEqual(fingerprint.bytes, RSAHashAlgorithm.sha256.hash(key.derRepresentation))
        XCTAssertEqual(fingerprint.bytes.count, 32)
        let hex = fingerprint.hexString
        XCTAssertEqual(hex.count, 64)
        XCTAssertTrue(hex.allSatisfy { "0123456789abcdef".contains($0) }, hex)
        let base64 = fingerprint.base64String
        XCTAssertTrue(base64.hasPrefix("SHA256:"))
        XCTAssertEqual(base64.count, 7 + 43)
        XCTAssertFalse(base64.contains("="))
        XCTAssertEqual(fingerprint.description, base64)
        // Both forms parse back, and so do the usual variants.
        XCTAssertEqual(RSAKeyFingerprint(string: hex), fingerprint)
        XCTAssertEqual(RSAKeyFingerprint(string: hex.uppercased()), fingerprint)
        XCTAssertEqual(RSAKeyFingerprint(string: "  \(base64)\n"), fingerprint)
        XCTAssertEqual(RSAKeyFingerprint(string: base64 + "="), fingerprint)
        let colons = stride(from: 0, to: 64, by: 2).map { String(Array(hex)[$0..<($0 + 2)]) }.joined(separator: ":")
        XCTAssertEqual(RSAKeyFingerprint(string: colons), fingerprint)
        // Not fingerprints.
        XCTAssertNil(RSAKeyFingerprint(string: String(hex.dropLast(2))))
        XCTAssertNil(RSAKeyFingerprint(string: String(hex.dropLast()) + "g"))
        XCTAssertNil(RSAKeyFingerprint(string: String(base64.dropLast(4))))
        XCTAssertNil(RSAKeyFingerprint(string: "MD5:" + base64.dropFirst(7)))
        XCTAssertNil(RSAKeyFingerprint(string: ""))
        XCTAssertNil(RSAKeyFingerprint(bytes: [1, 2, 3]))
        // A different key has a different fingerprint; a private key shares its public key's.
        XCTAssertNotEqual(try RSAPublicKey(modulus: key.modulus, publicExponent: [3]).fingerprint, fingerprint)
        XCTAssertEqual(F.rsakitKey.fingerprint, fingerprint)
    }

    /// FIPS 180-4 / NIST CSRC example values for SHA-256 ("abc", the empty string and the
    /// 448-bit two-block message), computed here by Nettle.
    func testSHA256_NISTExamples() {
        XCTAssertEqual(
            F.hex(RSAHashAlgorithm.sha256.hash(Array("abc".utf8))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(
            F.hex(RSAHashAlgorithm.sha256.hash([])), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(
            F.hex(RSAHashAlgorithm.sha256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    // MARK: Wycheproof

    private struct WycheproofFile: Decodable {
        struct Group: Decodable {
            struct PrivateKey: Decodable {
                let modulus, publicExponent, privateExponent, prime1, prime2, exponent1, exponent2, coefficient: String
            }
            let privateKey: PrivateKey
            let privateKeyPkcs8: String
            let privateKeyPem: String
            let keySize: Int
            let tests: [Test]
        }
        struct Test: Decodable { let tcId: Int }
        let testGroups: [Group]
    }

    /// `privateKeyPkcs8` (hex DER) and `privateKeyPem` of each group in the RSAES-PKCS1-v1_5
    /// decryption files parse to the key given by the `privateKey` components (hex,
    /// big-endian two's complement), and rsakit writes the same PKCS#8 back.
    func testWycheproof_PrivateKeyPkcs8AndPemMatchTheComponents() throws {
        var groups = 0
        for size in [2048, 3072, 4096] {
            let file = try JSONDecoder().decode(
                WycheproofFile.self, from: try Vectors.load("rsa_pkcs1_\(size)_test.json"))
            for (index, group) in file.testGroups.enumerated() {
                let context = "rsa_pkcs1_\(size)_test.json group \(index) (tcId \(group.tests.first?.tcId ?? -1)...)"
                let c = group.privateKey
                let expected = try RSAPrivateKey(
                    modulus: F.hexBytes(c.modulus), publicExponent: F.hexBytes(c.publicExponent),
                    privateExponent: F.hexBytes(c.privateExponent), prime1: F.hexBytes(c.prime1),
                    prime2: F.hexBytes(c.prime2), exponent1: F.hexBytes(c.exponent1),
                    exponent2: F.hexBytes(c.exponent2), coefficient: F.hexBytes(c.coefficient))
                XCTAssertEqual(expected.modulusBitCount, group.keySize, context)
                let pkcs8 = F.hexBytes(group.privateKeyPkcs8)
                XCTAssertEqual(try RSAPrivateKey(derRepresentation: pkcs8), expected, context)
                XCTAssertEqual(try RSAPrivateKey(pemRepresentation: group.privateKeyPem), expected, context)
                let file = try RSAKeyFile(bytes: Array(group.privateKeyPem.utf8))
                XCTAssertEqual(file.format, .pkcs8, context)
                XCTAssertEqual(file.warnings, [], context)
                XCTAssertEqual(expected.pkcs8DERRepresentation, pkcs8, context)
                XCTAssertEqual(expected.pkcs8PEMRepresentation, group.privateKeyPem, context)
                groups += 1
            }
        }
        XCTAssertGreaterThan(groups, 0)
    }
}
