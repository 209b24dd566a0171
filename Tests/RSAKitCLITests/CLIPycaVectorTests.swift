import Foundation
import XCTest
import RSAKitTestSupport

/// pyca/cryptography's vectors (Tests/RSAKitTests/Fixtures/pyca) through the built binary.
final class CLIPycaVectorTests: CLITestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("RSAKitTests/Fixtures/pyca")

    func testImport_RC2CBCEncryptedPKCS8_WithPassin() throws {
        let file = Self.fixtures.appendingPathComponent("rsa-rc2-cbc.pem").path
        // rsakit import --tag t rsa-rc2-cbc.pem --passin "pass:Red Hat Enterprise Linux 7.4"
        let result = try rsakitOK(["import", "--tag", "t", file, "--passin", "pass:Red Hat Enterprise Linux 7.4"])
        XCTAssertTrue(
            result.stdoutText.hasPrefix(
                "imported key pair: tag: t, bits: 2048, fingerprint: SHA256:Qz1jIXKYs14A/Vwn/MJY0YLXe7yEI3gC+NJu1E/7jHA"
            ), result.stdoutText)
        let wrong = try rsakit(["import", "--tag", "u", file, "--passin", "pass:Red Hat Enterprise Linux 7.5"])
        assertFailure(wrong, status: 65, contains: "wrong passphrase for the PKCS#8 EncryptedPrivateKeyInfo")
    }

    func testCertShow_RSAPSSKey_FingerprintsTheSPKIAsEncoded() throws {
        let file = Self.fixtures.appendingPathComponent("rsa_pss.pem").path
        // SHA-256 of the subjectPublicKeyInfo element cut from the certificate's DER
        // (GnuTLS's and openssl's re-encodings of it differ from the bytes).
        let shown = try rsakitOK(["cert", "show", file, "--json"]).stdoutText
        XCTAssertTrue(
            shown.contains(
                #""publicKeyFingerprint" : "61adc0689111bcf87239d0d45e30eb23984475f608fea03f01440120ef8265df""#), shown)
        XCTAssertTrue(shown.contains(#""publicKeyAlgorithm" : "RSA-PSS""#), shown)
    }
}
