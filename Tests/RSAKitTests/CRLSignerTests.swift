import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// CRLs signed by a key other than the one that signed the certificate (RFC 5280 §6.3.3 (f),
/// NIST PKITS 4.4.19-4.4.21), on ``SeparateCRLKeyPKI`` (openssl-made, commands there):
/// accepted when a certificate of the issuer's name with cRLSign signed it and validates to
/// the same anchor, its own revocation included; refused otherwise, by name.
final class CRLSignerTests: XCTestCase {
    private static let pki = Result { try SeparateCRLKeyPKI() }

    private func trust(_ leaf: String, crls: [String], require: Bool = true) throws -> (RSATrust, SeparateCRLKeyPKI) {
        let pki = try Self.pki.get()
        let candidates = ["ca-certs", "ca-crls", "ca-crls-nousage", "ca-crls-self", "ca-crls-other", "other-root"]
        var trust = RSATrust(
            certificates: try ([leaf] + candidates).map { try pki.certificate($0) }, policy: .basicX509)
        trust.anchorCertificates = [try pki.certificate("root")]
        trust.anchorCertificatesOnly = true
        trust.crls = try crls.map { try pki.crl($0) }
        trust.revocationPolicy = RSARevocationPolicy(
            method: .crl, requirePositiveResponse: require, networkAccessDisabled: true)
        return (trust, pki)
    }

    func testCRLSigner_SeparateKey_GoodAndRevokedLeaves() throws {
        let (good, _) = try trust("good", crls: ["crl-ca", "crl-root-good"])
        var evaluation = good.evaluate()
        XCTAssertEqual(evaluation.result, .unspecified, "\(evaluation.failures) \(evaluation.warnings)")
        XCTAssertEqual(
            evaluation.chain.map(\.subjectSummary), ["good.separate.test", "Separate Keys CA", "Separate Keys Root"])
        XCTAssertEqual(evaluation.revocation.map(\.status), [.good, .good])
        XCTAssertTrue(
            evaluation.revocation[0].source.hasSuffix(", signed by the CRL signer Separate Keys CA (serial 11)"),
            evaluation.revocation[0].source)
        XCTAssertFalse(evaluation.revocation[1].source.contains("signed by"), evaluation.revocation[1].source)

        let (revoked, _) = try trust("revoked", crls: ["crl-ca", "crl-root-good"])
        evaluation = revoked.evaluate()
        XCTAssertEqual(evaluation.result, .fatalTrustFailure)
        XCTAssertEqual(evaluation.failures.map { "\($0.kind.code)@\($0.chainIndex)" }, ["revoked@0"])
        XCTAssertEqual(evaluation.failures.first?.kind, .revoked(date: Date(timeIntervalSince1970: 1_704_067_200)))
    }

    /// PKITS 4.4.20/4.4.21: the CRL signer's own certificate is revoked by the root's CRL.
    func testCRLSigner_RevokedSignerIsRefused() throws {
        let (trust, _) = try trust("good", crls: ["crl-ca", "crl-root-signer-revoked"])
        let evaluation = trust.evaluate()
        XCTAssertEqual(evaluation.result, .recoverableTrustFailure)
        XCTAssertEqual(evaluation.failures.map { "\($0.kind.code)@\($0.chainIndex)" }, ["revocation-unchecked@0"])
        XCTAssertEqual(evaluation.revocation.map(\.status), [.notChecked, .good])
        XCTAssertTrue(
            evaluation.warnings.contains {
                $0.hasPrefix(
                    "CRL of O=RSAKit Tests,CN=Separate Keys CA refused: the certificate that signed it (Separate "
                        + "Keys CA, serial 11) does not validate: fatal-trust-failure"
                )
                    && $0.contains("revoked on 2024-02-01T00:00:00Z")
            }, "\(evaluation.warnings)")
    }

    func testCRLSigner_WithoutCRLSignOrUnderAnotherAnchor_IsRefused() throws {
        for (crl, reason) in [
            ("crl-ca-nousage", "(Separate Keys CA, serial 12) has no cRLSign keyUsage"),
            ("crl-ca-other", "(Separate Keys CA, serial 14) does not validate: recoverable-trust-failure")
        ] {
            let (trust, _) = try trust("good", crls: [crl, "crl-root-good"])
            let evaluation = trust.evaluate()
            XCTAssertEqual(evaluation.result, .recoverableTrustFailure, crl)
            XCTAssertEqual(evaluation.revocation.map(\.status), [.notChecked, .good], crl)
            XCTAssertTrue(evaluation.warnings.contains { $0.contains(reason) }, "\(crl): \(evaluation.warnings)")
        }
    }

    /// A signer issued by the CA it signs CRLs for: its own status rests on the CRL it signed,
    /// and that CRL answers for it (RFC 5280 §6.3.3 (f), NIST PKITS 4.14.30: valid). The
    /// search takes a signer whose validation is under way as it is, so the evaluation ends,
    /// with a positive answer required or not.
    func testCRLSigner_SignerCoveredByItsOwnCRL_IsAnsweredByIt() throws {
        let (required, _) = try trust("good", crls: ["crl-ca-self", "crl-root-good"])
        var evaluation = required.evaluate()
        XCTAssertEqual(evaluation.result, .unspecified, "\(evaluation.failures) \(evaluation.warnings)")
        XCTAssertEqual(evaluation.revocation.map(\.status), [.good, .good])
        XCTAssertTrue(
            evaluation.revocation[0].source.hasSuffix("signed by the CRL signer Separate Keys CA (serial 13)"),
            evaluation.revocation[0].source)

        let (lenient, _) = try trust("good", crls: ["crl-ca-self", "crl-root-good"], require: false)
        evaluation = lenient.evaluate()
        XCTAssertEqual(evaluation.result, .unspecified, "\(evaluation.failures)")
        XCTAssertEqual(evaluation.revocation.map(\.status), [.good, .good])
        XCTAssertTrue(
            evaluation.revocation[0].source.hasSuffix("signed by the CRL signer Separate Keys CA (serial 13)"),
            evaluation.revocation[0].source)
    }

    /// openssl verify -extended_crl -crl_check_all agrees: good passes, revoked fails, and a
    /// revoked CRL signer fails ("CRL path validation error"). (Without -extended_crl openssl
    /// 3.0 checks the CRL against the certificate's issuer only, as scripts/pkits.sh runs it.)
    func testCRLSigner_OpenSSLAgrees() throws {
        let pki = try Self.pki.get()
        func verify(_ leaf: String, _ crls: [String]) throws -> Int32 {
            let bundle = try crls.map { try String(contentsOfFile: pki.path($0 + ".pem"), encoding: .utf8) }.joined()
            try Data(bundle.utf8).write(to: URL(fileURLWithPath: pki.path("bundle-\(leaf).pem")))
            let untrusted = try ["ca-certs", "ca-crls"].map {
                try String(contentsOfFile: pki.path($0 + ".pem"), encoding: .utf8)
            }.joined()
            try Data(untrusted.utf8).write(to: URL(fileURLWithPath: pki.path("untrusted.pem")))
            return try OpenSSL.runAllowingFailure([
                "verify", "-extended_crl", "-crl_check_all", "-CAfile", pki.path("root.pem"), "-untrusted",
                pki.path("untrusted.pem"),
                "-CRLfile", pki.path("bundle-\(leaf).pem"), pki.path(leaf + ".pem")
            ]).status
        }
        XCTAssertEqual(try verify("good", ["crl-ca", "crl-root-good"]), 0)
        XCTAssertNotEqual(try verify("revoked", ["crl-ca", "crl-root-good"]), 0)
        XCTAssertNotEqual(try verify("good", ["crl-ca", "crl-root-signer-revoked"]), 0)
    }
}
