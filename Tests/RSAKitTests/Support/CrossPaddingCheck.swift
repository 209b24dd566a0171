import XCTest
import RSAKit
@testable import RSAKitCore

/// Assert that the RSAES-OAEP block `ciphertext` does not decrypt under RSAES-PKCS1-v1_5, with
/// the one exception the encoding allows.
///
/// An OAEP encoding EM is 0x00 || maskedSeed || maskedDB: random-looking bytes after the first.
/// About one block in 400 is therefore also a valid EME-PKCS1-v1_5 block (EM[1] = 0x02 and a zero
/// byte after at least eight non-zero ones, RFC 8017 §7.2.2 step 3), and v1.5 decoding rightly
/// succeeds. This reads EM with RSADP and then requires exactly that: for such a block, v1.5
/// decoding gives the bytes after the zero; for any other, the opaque `.decryptionFailed`.
func assertPKCS1v15RejectsOAEPBlock(
    _ ciphertext: [UInt8], key: RSAPrivateKey, _ message: String,
    file: StaticString = #filePath, line: UInt = #line
) throws {
    let encoded = try key.rsadp(ciphertext)
    var payload: [UInt8]?
    if encoded.count >= 11, encoded[0] == 0x00, encoded[1] == 0x02,
        let separator = encoded[2...].firstIndex(of: 0x00), separator >= 10
    {
        payload = Array(encoded[(separator + 1)...])
    }
    if let payload {
        XCTAssertEqual(
            try key.decrypt(ciphertext, padding: .pkcs1v15), payload,
            "\(message): EM is also a valid PKCS#1 v1.5 block", file: file, line: line)
    } else {
        XCTAssertThrowsError(try key.decrypt(ciphertext, padding: .pkcs1v15), file: file, line: line) {
            XCTAssertEqual(
                $0 as? RSAError, .decryptionFailed, "\(message) decrypted as PKCS#1 v1.5", file: file, line: line)
        }
    }
}
