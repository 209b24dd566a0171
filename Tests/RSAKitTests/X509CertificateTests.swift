import Foundation
import XCTest
import RSAKit
@testable import RSAKitPKI
import RSAKitTestSupport

/// X509Certificate against the real openssl: every field compared with what
/// `openssl x509` prints for the same file. Fixtures: ``TestPKI`` and the self-signed
/// certificates made below (commands beside them).
final class X509CertificateTests: XCTestCase {
    private func opensslField(_ file: String, _ arguments: [String]) throws -> String {
        let text = String(decoding: try OpenSSL.run(["x509", "-in", file, "-noout"] + arguments), as: UTF8.self)
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `openssl req -x509 -new -key leaf.key -subj SUBJECT -days 30 -out NAME.pem` (self-signed).
    private func selfSigned(_ subject: String, _ pki: TestPKI, extensions: [String] = [], utf8: Bool = false) throws
        -> (path: String, certificate: X509Certificate)
    {
        let file = pki.path("self-\(UUID().uuidString).pem")
        try OpenSSL.run(
            ["req", "-x509", "-new", "-key", pki.leafKey, "-subj", subject, "-days", "30", "-out", file]
                + (utf8 ? ["-utf8"] : []) + extensions.flatMap { ["-addext", $0] })
        let certificate = try X509Certificate.certificates(
            from: [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))))
        XCTAssertEqual(certificate.count, 1)
        return (file, certificate[0])
    }

    func testCertificate_FieldsMatchOpenSSL() throws {
        let pki = try TestPKI.shared()
        let file = pki.path("server.pem")
        let certificate = try pki.certificate("server")
        XCTAssertEqual("subject=" + certificate.subject, try opensslField(file, ["-subject", "-nameopt", "RFC2253"]))
        XCTAssertEqual("issuer=" + certificate.issuer, try opensslField(file, ["-issuer", "-nameopt", "RFC2253"]))
        XCTAssertEqual(certificate.subject, "O=RSAKit Tests,CN=server.rsakit.test")
        XCTAssertEqual(certificate.issuer, "O=RSAKit Tests,CN=RSAKit Test Intermediate")
        XCTAssertEqual(certificate.subjectSummary, "server.rsakit.test")
        XCTAssertEqual("serial=" + certificate.serialNumberHex.uppercased(), try opensslField(file, ["-serial"]))
        XCTAssertEqual(certificate.serialNumber, [0x5E, 0x5E, 0x01])
        XCTAssertEqual(certificate.version, 3)

        // Dates: `openssl x509 -dates` prints "notAfter=Mar  5 10:00:00 2029 GMT".
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy 'GMT'"
        func date(_ line: String) -> Date? {
            formatter.date(
                from: line.split(separator: "=", maxSplits: 1)[1].split(separator: " ").joined(separator: " "))
        }
        XCTAssertEqual(certificate.notValidAfter, date(try opensslField(file, ["-enddate"])))
        XCTAssertEqual(certificate.notValidBefore, date(try opensslField(file, ["-startdate"])))
        XCTAssertTrue(certificate.isValid(at: Date()))

        // Fingerprint: "sha256 Fingerprint=AB:CD:...".
        let fingerprint = try opensslField(file, ["-fingerprint", "-sha256"])
        XCTAssertEqual(
            fingerprint.split(separator: "=")[1].replacingOccurrences(of: ":", with: "").lowercased(),
            certificate.fingerprintHex)
        XCTAssertEqual(certificate.fingerprint.count, 32)

        // The public key is the leaf key; its fingerprint is the key's SPKI SHA-256.
        let keyFile = try RSAKeyFile(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: pki.leafKey))))
        XCTAssertEqual(certificate.publicKey, keyFile.publicKey)
        XCTAssertEqual(certificate.publicKeyFingerprint, keyFile.publicKey.fingerprint)
        let spki = try OpenSSL.run(["x509", "-in", file, "-noout", "-pubkey"])
        let spkiDER = try OpenSSL.run(["pkey", "-pubin", "-outform", "DER"], input: spki)
        XCTAssertEqual(certificate.publicKeyFingerprint?.bytes, RSAHashAlgorithm.sha256.hash(spkiDER))
        XCTAssertEqual(certificate.publicKeyBitCount, 2048)
        XCTAssertEqual(certificate.publicKeyAlgorithmName, "RSA")
        XCTAssertEqual(certificate.signatureAlgorithmName, "RSA-SHA256")

        XCTAssertEqual(certificate.keyUsage, [.digitalSignature, .keyEncipherment])
        XCTAssertEqual(certificate.keyUsage?.description, "Digital Signature, Key Encipherment")
        XCTAssertEqual(certificate.extendedKeyUsage, [.serverAuth])
        XCTAssertEqual(
            certificate.subjectAlternativeNames,
            [.dnsName("server.rsakit.test"), .dnsName("*.wild.rsakit.test"), .ipAddress([127, 0, 0, 1])])
        XCTAssertEqual(
            certificate.subjectAlternativeNames.map(\.description),
            ["DNS:server.rsakit.test", "DNS:*.wild.rsakit.test", "IP Address:127.0.0.1"])
        XCTAssertEqual(certificate.basicConstraints?.isCertificateAuthority, false)
        XCTAssertEqual(certificate.criticalExtensionOIDs, ["2.5.29.15"])
        XCTAssertFalse(certificate.isSelfIssued)

        let intermediate = try pki.certificate("intermediate")
        XCTAssertEqual(
            intermediate.basicConstraints,
            X509Certificate.BasicConstraints(isCertificateAuthority: true, pathLengthConstraint: 0, isCritical: true))
        XCTAssertEqual(intermediate.keyUsage, [.keyCertSign, .cRLSign])
        XCTAssertNil(intermediate.extendedKeyUsage)
        XCTAssertTrue(try pki.certificate("root").isSelfIssued)
        XCTAssertEqual(try pki.certificate("client").subjectAlternativeNames, [.emailAddress("client@rsakit.test")])
    }

    func testCertificate_DERAndPEMRoundTrip() throws {
        let pki = try TestPKI.shared()
        // openssl x509 -in server.pem -outform DER
        let der = try OpenSSL.run(["x509", "-in", pki.path("server.pem"), "-outform", "DER"])
        let fromDER = try X509Certificate(derRepresentation: der)
        XCTAssertEqual(fromDER.derRepresentation, der)
        XCTAssertEqual(fromDER, try pki.certificate("server"))
        XCTAssertEqual(try X509Certificate(pemRepresentation: fromDER.pemRepresentation), fromDER)
        // openssl reads rsakit's PEM back to the same DER.
        XCTAssertEqual(try OpenSSL.run(["x509", "-outform", "DER"], input: Array(fromDER.pemRepresentation.utf8)), der)
        XCTAssertEqual(try X509Certificate.certificates(from: der), [fromDER])
        // Two DER certificates back to back.
        let rootDER = try OpenSSL.run(["x509", "-in", pki.path("root.pem"), "-outform", "DER"])
        XCTAssertEqual(
            try X509Certificate.certificates(from: der + rootDER).map(\.subjectSummary),
            ["server.rsakit.test", "RSAKit Test Root CA"])
    }

    func testCertificates_ReadsABundleWithTextBetweenBlocks() throws {
        let pki = try TestPKI.shared()
        let bundle =
            "Bag Attributes\n    friendlyName: x\n" + (try pki.read("server.pem")) + "subject=junk\r\n"
            + (try pki.read("chain.pem")).replacingOccurrences(of: "\n", with: "\r\n")
        let certificates = try X509Certificate.certificates(from: Array(bundle.utf8))
        XCTAssertEqual(
            certificates.map(\.subjectSummary),
            ["server.rsakit.test", "RSAKit Test Intermediate", "RSAKit Test Root CA"])
        // A key file is not a certificate; the error says what was found.
        XCTAssertThrowsError(
            try X509Certificate.certificates(from: [UInt8](try Data(contentsOf: URL(fileURLWithPath: pki.leafKey))))
        ) { error in
            XCTAssertEqual(
                error as? RSAError,
                .malformedCertificate(reason: "no CERTIFICATE block found (blocks: \"PRIVATE KEY\")"))
        }
    }

    func testCertificate_RejectsDamagedInput() throws {
        let pki = try TestPKI.shared()
        let der = try OpenSSL.run(["x509", "-in", pki.path("server.pem"), "-outform", "DER"])
        for (name, bytes) in [
            ("empty", []), ("truncated", Array(der.dropLast(10))), ("trailing", der + [0]),
            ("text", Array("hello".utf8)), ("inner damage", Array(der[0..<4]) + [0x02] + Array(der[5...]))
        ] {
            XCTAssertThrowsError(try X509Certificate.certificates(from: bytes), name) { error in
                guard case .malformedCertificate = error as? RSAError else {
                    return XCTFail("\(name): \(error)")
                }
            }
        }
        XCTAssertThrowsError(
            try X509Certificate(pemRepresentation: "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n")
        ) { error in
            guard case .malformedPEM = error as? RSAError else { return XCTFail("\(error)") }
        }
    }

    func testSubjectSummary_FollowsApple() throws {
        let pki = try TestPKI.shared()
        // The common name, unescaped (RFC 4514 escapes the comma in the subject string).
        let escaped = try selfSigned("/CN=Montague, Romeo/O=Verona", pki)
        XCTAssertEqual(escaped.certificate.subjectSummary, "Montague, Romeo")
        XCTAssertEqual(escaped.certificate.subject, "O=Verona,CN=Montague\\, Romeo")
        XCTAssertEqual(
            "subject=" + escaped.certificate.subject,
            try opensslField(escaped.path, ["-subject", "-nameopt", "RFC2253"]))
        // UTF-8 common name: openssl req -utf8 -x509 -new -key leaf.key -subj "/CN=Jürgen Müller".
        XCTAssertEqual(try selfSigned("/CN=Jürgen Müller", pki, utf8: true).certificate.subjectSummary, "Jürgen Müller")
        // No CN: the e-mail address, then O, then OU.
        XCTAssertEqual(
            try selfSigned("/O=Capulet/emailAddress=juliet@capulet.test", pki).certificate.subjectSummary,
            "juliet@capulet.test")
        XCTAssertEqual(try selfSigned("/O=Capulet/OU=Household", pki).certificate.subjectSummary, "Capulet")
        XCTAssertEqual(try selfSigned("/OU=Household/L=Verona", pki).certificate.subjectSummary, "Household")
        XCTAssertEqual(try selfSigned("/C=IT/L=Verona", pki).certificate.subjectSummary, "L=Verona,C=IT")
        // An rfc822Name subjectAltName counts as the e-mail address.
        XCTAssertEqual(
            try selfSigned("/O=Montague", pki, extensions: ["subjectAltName=email:romeo@montague.test"]).certificate
                .subjectSummary,
            "romeo@montague.test")
    }
}
