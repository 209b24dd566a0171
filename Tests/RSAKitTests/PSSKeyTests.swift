import Foundation
import XCTest
import RSAKit
@testable import RSAKitCore

/// Keys with the id-RSASSA-PSS algorithm identifier (RFC 4055 §3.1), as `openssl genpkey
/// -algorithm RSA-PSS` writes them: read, kept to their parameters, written back as they came.
final class PSSKeyTests: XCTestCase {
    typealias F = KeyFormatFixtures

    /// An RSA-PSS key from openssl (1024 bits: generation is the slow part), with the options given.
    private func opensslPSSKey(_ options: [String]) throws -> (privatePath: String, publicPath: String) {
        let privatePath = F.path("pss.pem"), publicPath = F.path("pss-pub.pem")
        try F.opensslChecked(
            ["genpkey", "-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:1024"]
                + options.flatMap { ["-pkeyopt", $0] } + ["-out", privatePath])
        try F.opensslChecked(["pkey", "-in", privatePath, "-pubout", "-out", publicPath])
        return (privatePath, publicPath)
    }

    private static let sha256Options = [
        "rsa_pss_keygen_md:sha256", "rsa_pss_keygen_mgf1_md:sha256", "rsa_pss_keygen_saltlen:32"
    ]

    func testOpenSSLKeyWithParameters_IsReadWithThemAndWrittenBackByteForByte() throws {
        let key = try opensslPSSKey(Self.sha256Options)
        let file = try RSAKeyFile(bytes: try F.readFile(key.privatePath))
        let privateKey = try XCTUnwrap(file.privateKey)
        let restriction = try XCTUnwrap(privateKey.pssRestriction)
        let parameters = try XCTUnwrap(restriction.parameters)
        XCTAssertEqual(parameters.hash, .sha256)
        XCTAssertEqual(parameters.mgf1Hash, .sha256)
        XCTAssertEqual(parameters.saltLength, 32)
        XCTAssertEqual(file.warnings, [])
        // PKCS#8 and SPKI DER identical to openssl's own, so the fingerprint is openssl's SPKI hash.
        let pkcs8 = try F.opensslChecked(["pkcs8", "-topk8", "-nocrypt", "-in", key.privatePath, "-outform", "DER"])
        XCTAssertEqual(privateKey.pkcs8DERRepresentation, pkcs8)
        let spki = try F.opensslChecked(["pkey", "-in", key.privatePath, "-pubout", "-outform", "DER"])
        XCTAssertEqual(privateKey.publicKey.derRepresentation, spki)
        XCTAssertEqual(privateKey.fingerprint.bytes, RSAHashAlgorithm.sha256.hash(spki))
        let publicKey = try RSAPublicKey(
            pemRepresentation: String(decoding: try F.readFile(key.publicPath), as: UTF8.self))
        XCTAssertEqual(publicKey.pssRestriction, restriction)
        // Our own encoding of the same parameters is openssl's algorithm identifier.
        XCTAssertEqual(
            RSAPSSKeyRestriction(parameters: parameters).algorithmIdentifierDER, restriction.algorithmIdentifierDER)
        // The PKCS#1 form has no place for the restriction: it reads back unrestricted.
        XCTAssertNil(try RSAPrivateKey(derRepresentation: privateKey.pkcs1DERRepresentation).pssRestriction)
    }

    func testOpenSSLKeyWithoutParameters_AllowsAnyPSSButNothingElse() throws {
        let key = try opensslPSSKey([])
        let privateKey = try XCTUnwrap(try RSAKeyFile(bytes: try F.readFile(key.privatePath)).privateKey)
        let restriction = try XCTUnwrap(privateKey.pssRestriction)
        XCTAssertNil(restriction.parameters)
        XCTAssertEqual(
            restriction.algorithmIdentifierDER,
            [0x30, 0x0B, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0A])
        let message = Array("any parameters".utf8)
        for (hash, salt) in [(RSAHashAlgorithm.sha1, RSAPSSSaltLength.byteCount(0)), (.sha512, .maximum)] {
            let signature = try privateKey.signature(for: message, hash: hash, padding: .pss(saltLength: salt))
            XCTAssertTrue(
                privateKey.publicKey.isValidSignature(
                    signature, for: message, hash: hash, padding: .pss(saltLength: .auto)))
        }
        assertRestricted(
            try privateKey.signature(for: message, hash: .sha256, padding: .pkcs1v15), "signs with RSASSA-PSS only")
        assertRestricted(try privateKey.publicKey.encrypt(message), "is for signatures only")
        assertRestricted(
            try privateKey.publicKey.encrypt(message, padding: .oaep(RSAOAEPParameters())), "is for signatures only")
        let ciphertext = try privateKey.publicKey.restricted(to: nil).encrypt(message)
        assertRestricted(try privateKey.decrypt(ciphertext), "is for signatures only")
        XCTAssertEqual(try privateKey.restricted(to: nil).decrypt(ciphertext), message)
    }

    func testSignatures_KeepToTheKeyParameters_AndInteroperateWithOpenSSL() throws {
        let key = try opensslPSSKey(Self.sha256Options)
        let privateKey = try XCTUnwrap(try RSAKeyFile(bytes: try F.readFile(key.privatePath)).privateKey)
        let message = Array("restricted to SHA-256, salt at least 32".utf8)
        let messagePath = F.path("message")
        try F.writeFile(messagePath, message)

        // Ours, with the key's parameters, verify with openssl given nothing but the key.
        let signature = try privateKey.signature(for: message, hash: .sha256, padding: .pss(saltLength: .byteCount(32)))
        let signaturePath = F.path("sig")
        try F.writeFile(signaturePath, signature)
        let verified = try F.openssl([
            "dgst", "-sha256", "-verify", key.publicPath, "-signature", signaturePath, messagePath
        ])
        XCTAssertEqual(verified.status, 0, verified.stderr)
        // openssl's, with the key's defaults, verify with the key's parameters.
        let opensslSignature = try F.opensslChecked(["dgst", "-sha256", "-sign", key.privatePath, messagePath])
        XCTAssertTrue(
            privateKey.publicKey.isValidSignature(
                opensslSignature, for: message, hash: .sha256, padding: .pss(saltLength: .byteCount(32))))

        // A longer salt is allowed (the key's is a minimum); a shorter one, another hash,
        // another MGF1 hash, PKCS#1 v1.5 and a recovered salt length are not.
        XCTAssertNoThrow(try privateKey.signature(for: message, hash: .sha256, padding: .pss(saltLength: .maximum)))
        assertRestricted(
            try privateKey.signature(for: message, hash: .sha256, padding: .pss(saltLength: .byteCount(20))),
            "a salt of at least 32 bytes")
        assertRestricted(
            try privateKey.signature(for: message, hash: .sha1, padding: .pss(saltLength: .byteCount(32))),
            "require the hash SHA-256")
        assertRestricted(
            try privateKey.signature(for: message, hash: .sha256, padding: .pssMGF1(.sha1, saltLength: .byteCount(32))),
            "require MGF1-SHA-256")
        assertRestricted(try privateKey.signature(for: message, shake: .shake128), "require the hash SHA-256")
        let publicKey = privateKey.publicKey
        XCTAssertThrowsError(
            try publicKey.pssRestriction!.check(
                hash: .sha256, padding: .pss(saltLength: .auto), encodedBitCount: 1023, verifying: true))
        XCTAssertFalse(
            publicKey.isValidSignature(signature, for: message, hash: .sha256, padding: .pss(saltLength: .auto)))
        XCTAssertFalse(publicKey.isValidSignature(signature, for: message, hash: .sha256, padding: .pkcs1v15))
        // The same numbers without the restriction verify the same signature with `auto`.
        XCTAssertTrue(
            publicKey.restricted(to: nil).isValidSignature(
                signature, for: message, hash: .sha256, padding: .pss(saltLength: .auto)))
    }

    func testParameters_DefaultsAndMalformedOnes() throws {
        // SEQUENCE { id-RSASSA-PSS, SEQUENCE {} }: every parameter at its DEFAULT.
        func spki(algorithm: [UInt8], key: RSAPublicKey) -> [UInt8] {
            DERValue.sequence([
                .encoded(algorithm),
                .bitStringWrapping(KeyEncoder.pkcs1PublicKey(modulus: key.modulus, publicExponent: key.publicExponent))
            ]).encoded()
        }
        let plain = try RSAPublicKey(
            derRepresentation: try F.opensslChecked([
                "pkey", "-in", try F.generatedKey(bits: 1024, exponent: 65537).path, "-pubout", "-outform", "DER"
            ]))
        let oid: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0A]
        let empty = try RSAPublicKey(derRepresentation: spki(algorithm: [0x30, 0x0D] + oid + [0x30, 0x00], key: plain))
        XCTAssertEqual(empty.pssRestriction?.parameters, RSAPSSParameters.defaults)
        XCTAssertEqual(empty.pssRestriction?.description, "RSASSA-PSS (SHA-1, MGF1-SHA-1, salt 20)")
        // trailerField 2 and an unknown hash OID are refused by name.
        let trailer2: [UInt8] = [0x30, 0x12] + oid + [0x30, 0x05, 0xA3, 0x03, 0x02, 0x01, 0x02]
        XCTAssertThrowsError(try RSAPublicKey(derRepresentation: spki(algorithm: trailer2, key: plain))) { error in
            XCTAssertEqual(
                error as? RSAError,
                .unsupportedKeyFormat(
                    reason: "the key's RSASSA-PSS trailerField is 2; only 1 (0xBC, RFC 8017 §9.1.1) exists"))
        }
        let md5: [UInt8] =
            [0x30, 0x1D] + oid + [
                0x30, 0x10, 0xA0, 0x0E, 0x30, 0x0C, 0x06, 0x08, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02, 0x05, 0x05,
                0x00
            ]
        XCTAssertThrowsError(try RSAPublicKey(derRepresentation: spki(algorithm: md5, key: plain))) { error in
            guard case let .unsupportedKeyFormat(reason)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("1.2.840.113549.2.5"), reason)
        }
        // Fields out of order are malformed DER.
        let outOfOrder: [UInt8] =
            [0x30, 0x17] + oid + [0x30, 0x0A, 0xA2, 0x03, 0x02, 0x01, 0x20, 0xA2, 0x03, 0x02, 0x01, 0x20]
        XCTAssertThrowsError(try RSAPublicKey(derRepresentation: spki(algorithm: outOfOrder, key: plain))) { error in
            guard case .malformedDER? = error as? RSAError else { return XCTFail("\(error)") }
        }
    }

    func testPycaKeysAndCertificate() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Fixtures/pyca")
        // MGF1 over another hash than the message's (openssl -text: SHA2-256, MGF1 with SHA2-512, salt 20).
        let diff = try RSAKeyFile(
            bytes: try F.readFile(fixtures.appendingPathComponent("rsa_pss_2048_hash_mask_diff.pem").path))
        XCTAssertEqual(
            diff.publicKey.pssRestriction?.parameters,
            try RSAPSSParameters(hash: .sha256, mgf1Hash: .sha512, saltLength: 20))
        let unrestricted = try RSAKeyFile(
            bytes: try F.readFile(fixtures.appendingPathComponent("rsa_pss_2048.pem").path))
        XCTAssertNotNil(unrestricted.publicKey.pssRestriction)
        XCTAssertNil(unrestricted.publicKey.pssRestriction?.parameters)
        // The certificate's key fingerprint is over its SPKI exactly as encoded (GnuTLS's
        // re-export differs): openssl x509 -pubkey would re-encode too, so the value is
        // the SHA-256 of the SPKI element cut out of the certificate's DER.
        let certificate = try X509Certificate(
            pemRepresentation: String(
                decoding: try F.readFile(fixtures.appendingPathComponent("rsa_pss.pem").path), as: UTF8.self))
        XCTAssertEqual(
            certificate.publicKeyFingerprint?.hexString,
            "61adc0689111bcf87239d0d45e30eb23984475f608fea03f01440120ef8265df")
        let key = try XCTUnwrap(certificate.publicKey)
        XCTAssertEqual(key.fingerprint, certificate.publicKeyFingerprint)
        XCTAssertEqual(key.pssRestriction?.parameters?.hash, .sha256)
    }

    private func assertRestricted<T>(_ expression: @autoclosure () throws -> T, _ fragment: String, line: UInt = #line)
    {
        XCTAssertThrowsError(try expression(), line: line) { error in
            guard case let .keyRestricted(reason)? = error as? RSAError else { return XCTFail("\(error)", line: line) }
            XCTAssertTrue(reason.contains(fragment), reason, line: line)
        }
    }
}
