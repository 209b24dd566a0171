import XCTest
import RSAKit
@testable import RSAKitPKI

/// Serial numbers in a CRL are compared as the signed INTEGERs they encode (RFC 5280
/// §4.1.2.2 allows negative serials; NIST PKITS 4.4.14 "Valid Negative Serial Number" and
/// 4.4.15): 0x00FF (255) and 0xFF (-1) are different certificates, while an octet that only
/// extends the sign (X.690 §8.3.2) does not change the value.
final class CRLSerialNumberTests: XCTestCase {
    func testMinimalTwosComplement_DropsOnlySignExtension() {
        XCTAssertEqual(Array(X509CRL.minimalTwosComplement([0x00, 0xFF])), [0x00, 0xFF], "255 keeps its 0x00")
        XCTAssertEqual(Array(X509CRL.minimalTwosComplement([0xFF])), [0xFF], "-1")
        XCTAssertEqual(Array(X509CRL.minimalTwosComplement([0xFF, 0xFF])), [0xFF], "-1 with a redundant 0xFF")
        XCTAssertEqual(Array(X509CRL.minimalTwosComplement([0x00, 0x7F])), [0x7F], "127 with a redundant 0x00")
        XCTAssertEqual(Array(X509CRL.minimalTwosComplement([0xFF, 0x7F])), [0xFF, 0x7F], "-129 keeps its 0xFF")
        XCTAssertEqual(Array(X509CRL.minimalTwosComplement([0x00, 0x00, 0x80])), [0x00, 0x80], "128")
        XCTAssertEqual(Array(X509CRL.minimalTwosComplement([0x00])), [0x00], "zero stays one octet")
        XCTAssertNotEqual(X509CRL.minimalTwosComplement([0x00, 0xFF]), X509CRL.minimalTwosComplement([0xFF]))
    }
}
