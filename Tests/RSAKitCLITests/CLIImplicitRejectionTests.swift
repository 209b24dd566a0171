import Foundation
import XCTest
import RSAKitTestSupport

/// `rsakit decrypt --raw --implicit-rejection` on the draft's Appendix B vectors, through the
/// built binary: the synthetic message instead of "decryption failed", and the option refused
/// where it has no meaning.
final class CLIImplicitRejectionTests: CLITestCase {
    func testRawDecryptWithImplicitRejectionGivesTheDraftsMessages() throws {
        let set = try ImplicitRejectionVectors.load().sets[0]
        let key = try write(Array(set.privateKeyPEM.utf8), to: "k2048.pem")
        var synthetic = 0
        for vector in set.cases {
            let ciphertext = try ImplicitRejectionVectors.bytes(hex: vector.ciphertext)
            let expected = try ImplicitRejectionVectors.bytes(hex: try XCTUnwrap(vector.message))
            let implicit = try rsakitOK(["decrypt", "--raw", "--implicit-rejection", "--key", key], stdin: ciphertext)
            XCTAssertEqual(implicit.stdout, expected, vector.draft ?? vector.name)
            let explicit = try rsakit(["decrypt", "--raw", "--key", key], stdin: ciphertext)
            if explicit.status == 0 {
                XCTAssertEqual(explicit.stdout, expected, vector.draft ?? vector.name)
            } else {
                assertFailure(explicit, status: 65, contains: "decryption failed")
                synthetic += 1
            }
        }
        XCTAssertEqual(synthetic, 9, "B.1: three valid paddings, nine invalid")
    }

    func testImplicitRejectionNeedsRawPKCS1Blocks() throws {
        let set = try ImplicitRejectionVectors.load().sets[0]
        let key = try write(Array(set.privateKeyPEM.utf8), to: "k2048.pem")
        let ciphertext = try ImplicitRejectionVectors.bytes(hex: set.cases[0].ciphertext)
        assertFailure(
            try rsakit(["decrypt", "--implicit-rejection", "--key", key], stdin: ciphertext),
            status: 64, contains: "--implicit-rejection applies to raw PKCS#1 v1.5 blocks; add --raw")
        assertFailure(
            try rsakit(
                ["decrypt", "--raw", "--padding", "oaep", "--implicit-rejection", "--key", key], stdin: ciphertext),
            status: 64, contains: "--implicit-rejection is defined for PKCS#1 v1.5 only")
        assertFailure(
            try rsakit(["encrypt", "--raw", "--implicit-rejection", "--key", key], stdin: [1, 2, 3]),
            status: 64, contains: "unknown option '--implicit-rejection'")
        XCTAssertTrue(try rsakitOK(["help", "decrypt"]).stdoutText.contains("--implicit-rejection"))
    }
}
