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
        XCTAssertTrue(result.stdoutText.hasPrefix("imported key pair: tag: t, bits: 2048, fingerprint: SHA256:Qz1jIXKYs14A/Vwn/MJY0YLXe7yEI3gC+NJu1E/7jHA"), result.stdoutText)
        let wrong = try rsakit(["import", "--tag", "u", file, "--passin", "pass:Red Hat Enterprise Linux 7.5"])
        assertFailure(wrong, status: 65, contains: "wrong passphrase for the PKCS#8 EncryptedPrivateKeyInfo")
    }
}
