import Foundation
import XCTest
import RSAKitTestSupport
import RSAKit

/// The certificate builders in the library: what a built certificate holds when read back,
/// the signer check, and the subjectAltName parser. (openssl checks the same documents from
/// the command line in CLICertificateRequestTests.)
final class CertificateRequestTests: XCTestCase {
    func testSelfSigned_ReadsBackWithItsFieldsAndKey() throws {
        let key = try TestKeys.generated(bits: 1024)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let names = try ["DNS:a.example", "IP:192.0.2.1", "IP:::1", "email:x@example.com", "URI:urn:example:1"]
            .map { try X509Certificate.SubjectAlternativeName(parsing: $0) }
        let certificate = try X509Certificate.selfSigned(
            subject: "CN=Builder Test,O=RSAKit", alternativeNames: names, validityDays: 10, notValidBefore: start,
            isCertificateAuthority: true, signer: RSACertificateSigner(privateKey: key))
        XCTAssertEqual(certificate.publicKey, key.publicKey)
        XCTAssertEqual(certificate.subjectAlternativeNames, names)
        XCTAssertEqual(certificate.basicConstraints?.isCertificateAuthority, true)
        XCTAssertEqual(certificate.basicConstraints?.isCritical, true)
        XCTAssertEqual(certificate.notValidBefore, start)
        XCTAssertEqual(certificate.notValidAfter, start.addingTimeInterval(10 * 86_400))
        XCTAssertEqual(certificate.subjectSummary, "Builder Test")
        XCTAssertEqual(
            names.map(\.description),
            [
                "DNS:a.example", "IP Address:192.0.2.1", "IP Address:0:0:0:0:0:0:0:1",
                "email:x@example.com", "URI:urn:example:1"
            ])
        XCTAssertThrowsError(
            try X509Certificate.selfSigned(
                subject: "CN=x", validityDays: 0, signer: RSACertificateSigner(privateKey: key))
        ) {
            XCTAssertEqual($0 as? RSAError, .invalidAttribute(reason: "the validity must be 1 to 36500 days, not 0"))
        }
    }

    func testRequest_SignerForAnotherKeyIsCaught() throws {
        let key = try TestKeys.generated(bits: 1024)
        let other = try TestKeys.generated(bits: 1024, exponent: 3)
        let lying = RSACertificateSigner(publicKey: other.publicKey) { message, hash, padding in
            try key.signature(for: message, hash: hash, padding: padding)
        }
        XCTAssertThrowsError(try RSACertificateRequest(subject: "CN=x", signer: lying)) {
            XCTAssertEqual(
                $0 as? RSAError,
                .internalError("the signer's signature does not verify with its public key (is it the same key?)"))
        }
        // A signer's own error reaches the caller unchanged.
        let failing = RSACertificateSigner(publicKey: key.publicKey) { _, _, _ in throw RSAError.tokenPINIncorrect }
        XCTAssertThrowsError(try RSACertificateRequest(subject: "CN=x", signer: failing)) {
            XCTAssertEqual($0 as? RSAError, .tokenPINIncorrect)
        }
        XCTAssertThrowsError(
            try RSACertificateRequest(
                subject: "CN=x", signer: RSACertificateSigner(privateKey: key), scheme: .pkcs1v15(.sha1))
        ) {
            guard case .keyRestricted? = $0 as? RSAError else { return XCTFail("\($0)") }
        }
        // The signer gets the whole certificationRequestInfo (RFC 2986 §4.1), the request's
        // first element, and the scheme asked for.
        let seen = LockedList()
        let recording = RSACertificateSigner(publicKey: key.publicKey) { message, hash, padding in
            seen.append("\(message.count) \(hash.rawValue) \(padding)")
            seen.append(message.map { String(format: "%02x", $0) }.joined())
            return try key.signature(for: message, hash: hash, padding: padding)
        }
        let recorded = try RSACertificateRequest(subject: "CN=x", signer: recording, scheme: .pkcs1v15(.sha512))
        let info = try XCTUnwrap(seen.values.last)
        XCTAssertTrue(seen.values.first?.hasSuffix(" sha512 PKCS#1 v1.5") == true, "\(seen.values)")
        XCTAssertTrue(recorded.derRepresentation.map { String(format: "%02x", $0) }.joined().contains(info))
        XCTAssertTrue(info.hasPrefix("30"))
        let request = try RSACertificateRequest(
            subject: "CN=x", signer: RSACertificateSigner(privateKey: key), scheme: .pss(.sha384))
        XCTAssertTrue(request.pemRepresentation.hasPrefix("-----BEGIN CERTIFICATE REQUEST-----\n"))
        XCTAssertEqual(request.publicKey, key.publicKey)
    }

    func testAlternativeNameParsing_RefusesWhatIsNotAName() {
        for text in [
            "DNS:", "DNS:bad name", "DNS:a..b", "DNS:-ok.but\u{e9}", "IP:1.2.3", "IP:fe80::1::2", "email:noat",
            "email:a@b@c", "URI:no-scheme", "URI:https://a b", "dirName:CN=x", "plain"
        ] {
            XCTAssertThrowsError(try X509Certificate.SubjectAlternativeName(parsing: text), text) {
                guard case let .invalidSubjectAlternativeName(name, _)? = $0 as? RSAError else {
                    return XCTFail("\(text): \($0)")
                }
                XCTAssertEqual(name, text)
            }
        }
        XCTAssertEqual(
            try X509Certificate.SubjectAlternativeName(parsing: "dns:*.Example.COM"), .dnsName("*.Example.COM"))
        XCTAssertEqual(
            try X509Certificate.SubjectAlternativeName(parsing: "ip:2001:db8::7"),
            .ipAddress([0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [7]))
    }
}
