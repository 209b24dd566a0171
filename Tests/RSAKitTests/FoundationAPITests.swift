import Foundation
import RSAKit
import XCTest

/// `Data` forms of the key, scheme and fingerprint APIs, and Apple's
/// `blockSize`. Each is checked against the `[UInt8]` form it forwards to and against
/// the other side of the operation.
final class FoundationAPITests: XCTestCase {
    func testKeys_FromData_MatchTheByteForms() throws {
        let key = try TestKeys.generated(bits: 1024)
        let pkcs8 = Data(key.pkcs8DERRepresentation)
        XCTAssertEqual(try RSAPrivateKey(derRepresentation: pkcs8), key)
        XCTAssertEqual(try RSAPrivateKey(derRepresentation: pkcs8[...]), key, "a Data slice")
        XCTAssertEqual(try RSAPrivateKey(derRepresentation: key.derRepresentationData), key)
        XCTAssertEqual(key.pkcs8DERRepresentationData, pkcs8)
        XCTAssertEqual(try RSAPrivateKey(pemBytes: Data(key.pkcs8PEMRepresentation.utf8)), key)
        XCTAssertEqual(try RSAPrivateKey(pemBytes: Data(key.pemRepresentation.utf8)), key)
        XCTAssertEqual(try RSAPublicKey(derRepresentation: key.publicKey.derRepresentationData), key.publicKey)
        XCTAssertEqual(try RSAPublicKey(derRepresentation: key.publicKey.pkcs1DERRepresentationData), key.publicKey)
        XCTAssertEqual(try RSAPublicKey(pemBytes: Data(key.publicKey.pemRepresentation.utf8)), key.publicKey)
        XCTAssertThrowsError(try RSAPublicKey(pemBytes: Data([0xFF, 0xFE, 0x00]))) { error in
            guard case .malformedPEM? = error as? RSAError else { return XCTFail("\(error)") }
        }
    }

    func testPrivateKeyRepresentations_ArePKCS1_AndPKCS8IsExplicit() throws {
        let key = try TestKeys.generated(bits: 1024)
        XCTAssertEqual(key.derRepresentation, key.pkcs1DERRepresentation)
        XCTAssertTrue(key.pemRepresentation.hasPrefix("-----BEGIN RSA PRIVATE KEY-----\n"))
        XCTAssertTrue(key.pkcs8PEMRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        XCTAssertNotEqual(key.derRepresentation, key.pkcs8DERRepresentation)
        XCTAssertEqual(try key.derRepresentation(format: .pkcs8), key.pkcs8DERRepresentation)
    }

    func testEncryptDecryptSign_WithData() throws {
        let key = try TestKeys.generated(bits: 1024)
        let message = Data("a message in Data".utf8)
        for padding in [RSAEncryptionPadding.pkcs1v15, .oaep(RSAOAEPParameters())] {
            let ciphertext: Data = try key.publicKey.encrypt(message, padding: padding)
            XCTAssertEqual(ciphertext.count, key.blockSize)
            XCTAssertEqual(try key.decrypt(ciphertext, padding: padding), message)
            XCTAssertEqual(try key.decrypt([UInt8](ciphertext), padding: padding), [UInt8](message))
        }
        let signature: Data = try key.signature(for: message, hash: .sha256, padding: .pss(saltLength: .digestLength))
        XCTAssertEqual(signature.count, key.blockSize)
        XCTAssertTrue(
            key.publicKey.isValidSignature(signature, for: message, hash: .sha256, padding: .pss(saltLength: .auto)))
        XCTAssertFalse(
            key.publicKey.isValidSignature(
                signature, for: message + [0], hash: .sha256, padding: .pss(saltLength: .auto)))
    }

    func testBlockSize_IsModulusByteCount() throws {
        for bits in [1024] {
            let key = try TestKeys.generated(bits: bits)
            XCTAssertEqual(key.blockSize, (bits + 7) / 8)
            XCTAssertEqual(key.publicKey.blockSize, key.modulusByteCount)
        }
    }

    func testFingerprintAndHash_AsData() throws {
        let key = try TestKeys.generated(bits: 1024)
        let fingerprint = key.fingerprint
        XCTAssertEqual(fingerprint.data, Data(fingerprint.bytes))
        XCTAssertEqual(RSAKeyFingerprint(data: fingerprint.data), fingerprint)
        XCTAssertNil(RSAKeyFingerprint(data: fingerprint.data.dropLast()))
        XCTAssertEqual(RSAHashAlgorithm.sha256.hash(key.publicKey.derRepresentationData), fingerprint.data)
    }
}
