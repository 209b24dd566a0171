import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// Files other tools accept (or refuse), from pyca/cryptography's test vectors
/// (Tests/RSAKitTests/Fixtures/pyca, see the README there): rsakit must agree with openssl.
final class PycaVectorTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/pyca")
    static let rc2Passphrase = "Red Hat Enterprise Linux 7.4"

    func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
    }

    func testRC2CBC_PBES2_DecryptsToTheKeyOpenSSLReads() throws {
        let path = Self.fixtures.appendingPathComponent("rsa-rc2-cbc.pem").path
        let file = try RSAKeyFile(bytes: try fixture("rsa-rc2-cbc.pem"), passphrase: Array(Self.rc2Passphrase.utf8))
        let key = try XCTUnwrap(file.privateKey)
        XCTAssertEqual(
            file.encryption?.description, "PBES2: PBKDF2-HMAC-SHA1, 2048 iterations, RC2-CBC (128-bit effective key)")
        XCTAssertEqual(file.structureName, "PKCS#8 EncryptedPrivateKeyInfo")
        XCTAssertEqual(key.publicKey.modulusBitCount, 2048)
        // openssl pkey -provider legacy -provider default -in rsa-rc2-cbc.pem -passin pass:... -noout -modulus
        let output = try OpenSSL.run([
            "rsa", "-provider", "legacy", "-provider", "default", "-in", path,
            "-passin", "pass:" + Self.rc2Passphrase, "-noout", "-modulus"
        ])
        let text = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(text.hasPrefix("Modulus=DCA44607EAF135B5"), text)
        let modulusHex = key.publicKey.modulus.map { String(format: "%02X", $0) }.joined()
        XCTAssertEqual("Modulus=" + modulusHex, text)
    }

    func testRC2CBC_PBES2_WrongPassphraseIsPassphraseIncorrect() throws {
        let bytes = try fixture("rsa-rc2-cbc.pem")
        for wrong in ["Red Hat Enterprise Linux 7.5", "", "x", "red hat enterprise linux 7.4"] {
            XCTAssertThrowsError(try RSAKeyFile(bytes: bytes, passphrase: Array(wrong.utf8)), wrong) { error in
                XCTAssertEqual(error as? RSAError, .passphraseIncorrect(what: "PKCS#8 EncryptedPrivateKeyInfo"), wrong)
            }
        }
        XCTAssertThrowsError(try RSAKeyFile(bytes: bytes)) { error in
            XCTAssertEqual(error as? RSAError, .passphraseNeeded(what: "PKCS#8 EncryptedPrivateKeyInfo"))
        }
    }

    func testCertificate_FifteenCharacterUTCTime_IsRefused() throws {
        // openssl x509 -noout -dates prints "notAfter=Bad time value" for this file.
        let text = String(decoding: try fixture("badasn1time.pem"), as: UTF8.self)
        XCTAssertThrowsError(try X509Certificate(pemRepresentation: text)) { error in
            XCTAssertEqual(
                error as? RSAError,
                .malformedCertificate(
                    reason:
                        "its notAfter time \"19020701025736Z\" (15 characters) is not of the form UTCTime "
                        + "YYMMDDHHMMSSZ (13 characters, RFC 5280 §4.1.2.5) (PEM block 1, \"CERTIFICATE\" at "
                        + "line 1)"
                ))
        }
    }

    func testCertificate_NonMinimalKeyUsageBitString_IsReadAsOpenSSLDoes() throws {
        // Key Usage extnValue 03 05 00 B0 00 00 00: trailing zero octets, not minimal DER.
        // openssl x509 -text: "Digital Signature, Key Encipherment, Data Encipherment".
        let certificate = try X509Certificate(derRepresentation: try fixture("alternate-rsa-sha1-oid.der"))
        XCTAssertEqual(certificate.keyUsage, [.digitalSignature, .keyEncipherment, .dataEncipherment])
        XCTAssertEqual(certificate.commonNames, ["VPS1"])
        XCTAssertEqual(certificate.notValidAfter, Date(timeIntervalSince1970: 1_218_965_333))
    }
}
