import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// X509Certificate.issuerDER, subjectDER and serialNumberDER (the PKCS#11 module's
/// CKA_ISSUER, CKA_SUBJECT, CKA_SERIAL_NUMBER) against the elements `openssl asn1parse` finds
/// in the same DER: TBSCertificate's children at depth 2 are [0] version, serialNumber,
/// signature, issuer, validity, subject (RFC 5280 §4.1).
final class X509EncodedFieldsTests: XCTestCase {
    /// The depth-2 elements of `openssl asn1parse -inform DER` as byte ranges of `der`
    /// (its lines read "  OFFSET:d=DEPTH  hl=HEADER l=LENGTH ...").
    private func tbsChildren(_ der: [UInt8]) throws -> [ArraySlice<UInt8>] {
        let text = String(decoding: try OpenSSL.run(["asn1parse", "-inform", "DER"], input: der), as: UTF8.self)
        return text.split(separator: "\n").compactMap { line -> ArraySlice<UInt8>? in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "=" }).map(String.init)
            guard fields.count >= 7, fields[1] == "d", fields[2] == "2", fields[3] == "hl", fields[5] == "l",
                let offset = Int(fields[0]), let header = Int(fields[4]), let length = Int(fields[6])
            else { return nil }
            return der[offset..<(offset + header + length)]
        }
    }

    func testEncodedFields_AreTheElementsOpenSSLFinds() throws {
        let pki = try TestPKI.shared()
        for name in ["server", "root", "intermediate"] {
            let certificate = try pki.certificate(name)
            let children = try tbsChildren(certificate.derRepresentation)
            // v3 certificates: [0] version first, so serial, signature, issuer, validity, subject follow.
            XCTAssertEqual(children.first?.first, 0xA0, name)
            XCTAssertEqual(certificate.serialNumberDER.map { ArraySlice($0) }, children[1], name)
            XCTAssertEqual(certificate.issuerDER.map { ArraySlice($0) }, children[3], name)
            XCTAssertEqual(certificate.subjectDER.map { ArraySlice($0) }, children[5], name)
        }
        let server = try pki.certificate("server")
        XCTAssertEqual(server.serialNumberDER, [0x02, 0x03, 0x5E, 0x5E, 0x01])
        // The issuer's subject is the issued certificate's issuer, byte for byte.
        XCTAssertEqual(try pki.certificate("intermediate").subjectDER, server.issuerDER)
        let root = try pki.certificate("root")
        XCTAssertEqual(root.subjectDER, root.issuerDER)
    }
}
