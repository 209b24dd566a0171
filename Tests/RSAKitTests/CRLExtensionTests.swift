import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitPKI

/// CRL extensions (RFC 5280 §5.2, NIST PKITS 4.4.10): a CRL with a critical extension that
/// trust evaluation does not process is not used, and the warning names the extension; the
/// CRLs are made by `openssl ca -gencrl` with the extension in the config's [ crl_ext ].
final class CRLExtensionTests: XCTestCase {
    private static let pki = Result { try SeparateCRLKeyPKI() }

    /// The root's CRL (covering "Separate Keys CA", certificate 1 of good.pem's path) made
    /// with `extensions`, and the evaluation of good.pem with it and the CA's own CRL.
    private func evaluate(rootCRL name: String, extensions: String) throws -> (RSATrustEvaluation, X509CRL) {
        let pki = try Self.pki.get()
        try pki.makeCRL(name, signer: "root", key: "root", revoked: [], extensions: extensions)
        var trust = RSATrust(
            certificates: try ["good", "ca-certs", "ca-crls"].map { try pki.certificate($0) }, policy: .basicX509)
        trust.anchorCertificates = [try pki.certificate("root")]
        trust.anchorCertificatesOnly = true
        trust.crls = [try pki.crl("crl-ca"), try pki.crl(name)]
        trust.revocationPolicy = RSARevocationPolicy(
            method: .crl, requirePositiveResponse: true, networkAccessDisabled: true)
        return (trust.evaluate(), try pki.crl(name))
    }

    func testCRL_UnknownCriticalExtension_IsRefusedByName() throws {
        let (evaluation, crl) = try evaluate(
            rootCRL: "crl-root-unknown-critical", extensions: "1.3.6.1.4.1.99999.1 = critical,DER:05:00\n")
        XCTAssertEqual(crl.criticalExtensionOIDs, ["1.3.6.1.4.1.99999.1"])
        XCTAssertEqual(crl.unprocessedCriticalExtensions, ["1.3.6.1.4.1.99999.1"])
        XCTAssertEqual(evaluation.result, .recoverableTrustFailure)
        // The CA's CRL is signed by its separate CRL signer, whose own status needs the
        // refused root CRL: so certificate 0 is unchecked too.
        XCTAssertEqual(
            evaluation.failures.map { "\($0.kind.code)@\($0.chainIndex)" },
            ["revocation-unchecked@0", "revocation-unchecked@1"])
        XCTAssertEqual(evaluation.revocation.map(\.status), [.notChecked, .notChecked])
        XCTAssertTrue(
            evaluation.warnings.contains(
                "CRL of O=RSAKit Tests,CN=Separate Keys Root refused: it has a critical extension rsakit does not "
                    + "process: 1.3.6.1.4.1.99999.1"
            ),
            "\(evaluation.warnings)")
    }

    /// A delta CRL (critical deltaCRLIndicator, RFC 5280 §5.2.4) is processed, but only on top
    /// of a current complete CRL it updates: alone it answers for nothing (PKITS 4.15.1).
    func testCRL_DeltaWithoutItsCompleteCRL_AnswersNothing() throws {
        let (evaluation, crl) = try evaluate(
            rootCRL: "crl-root-delta", extensions: "2.5.29.27 = critical,DER:02:01:01\n")
        XCTAssertEqual(crl.unprocessedCriticalExtensions, [])
        XCTAssertEqual(crl.baseCRLNumber, [0x01])
        XCTAssertEqual(evaluation.revocation.map(\.status), [.notChecked, .notChecked])
        XCTAssertEqual(evaluation.revocation[1].source, "no current CRL of O=RSAKit Tests,CN=Separate Keys Root")
    }

    /// PKITS 4.15.4, 4.15.5 with openssl-made CRLs of the separate-keys CA: a certificate on
    /// hold in the complete CRL (number 1) and released by the delta (number 2, base 1,
    /// removeFromCRL) is good; one revoked by the delta only is revoked; a delta whose base is
    /// newer than the complete CRL is not used.
    func testDeltaCRL_ReleasesAndRevokes() throws {
        let pki = try Self.pki.get()
        let good = "/CN=good.separate.test"
        try pki.makeCRL(
            "crl-ca-hold", signer: "ca-crls", key: "crlsign", revoked: [("1001", "240101000000Z,certificateHold", good)]
        )
        try pki.makeCRL("crl-ca-empty", signer: "ca-crls", key: "crlsign", revoked: [])
        try pki.makeCRL(
            "crl-ca-delta-release", signer: "ca-crls", key: "crlsign",
            revoked: [("1001", "240201000000Z,removeFromCRL", good)],
            extensions: "2.5.29.27 = critical,DER:02:01:01\n", number: "02")
        try pki.makeCRL(
            "crl-ca-delta-revoke", signer: "ca-crls", key: "crlsign",
            revoked: [("1001", "240301000000Z,keyCompromise", good)],
            extensions: "2.5.29.27 = critical,DER:02:01:01\n", number: "02")
        try pki.makeCRL(
            "crl-ca-delta-later-base", signer: "ca-crls", key: "crlsign",
            revoked: [("1001", "240301000000Z,keyCompromise", good)],
            extensions: "2.5.29.27 = critical,DER:02:01:05\n", number: "06")
        XCTAssertEqual(try pki.crl("crl-ca-delta-release").removedFromCRL, [[0x10, 0x01]])
        func status(_ crls: [String]) throws -> RSARevocationCheck.Status? {
            var trust = RSATrust(
                certificates: try ["good", "ca-certs", "ca-crls"].map { try pki.certificate($0) }, policy: .basicX509)
            trust.anchorCertificates = [try pki.certificate("root")]
            trust.anchorCertificatesOnly = true
            trust.crls = try (["crl-root-good"] + crls).map { try pki.crl($0) }
            trust.revocationPolicy = RSARevocationPolicy(
                method: .crl, requirePositiveResponse: true, networkAccessDisabled: true)
            return trust.evaluate().revocation.first?.status
        }
        XCTAssertEqual(try status(["crl-ca-hold"]), .revoked, "on hold")
        XCTAssertEqual(try status(["crl-ca-hold", "crl-ca-delta-release"]), .good, "released by the delta")
        XCTAssertEqual(try status(["crl-ca-empty", "crl-ca-delta-revoke"]), .revoked, "revoked by the delta")
        XCTAssertEqual(
            try status(["crl-ca-empty", "crl-ca-delta-later-base"]), .good, "a delta of a newer base is not used")

        // The keychain keeps one CRL per issuer: a delta is refused, and the complete CRL stays.
        let storePath = TestScratch.directory.appendingPathComponent("delta-store-\(UUID().uuidString)").path
        let store = try RSAKeyStore(path: storePath)
        try store.addCRL(try pki.crl("crl-ca-hold"))
        XCTAssertThrowsError(try store.addCRL(try pki.crl("crl-ca-delta-release"))) { error in
            XCTAssertTrue(
                "\(error)".contains(
                    "is a delta CRL (deltaCRLIndicator, base number 0x01): the keychain keeps complete CRLs only"),
                "\(error)")
        }
        XCTAssertEqual(try store.allCRLs().map(\.crlNumber), [[0x01]])
    }

    /// A non-critical unknown extension, and a critical issuingDistributionPoint whose scope
    /// covers the certificate (onlyContainsCACerts, and "Separate Keys CA" is a CA), leave the
    /// CRL usable for it.
    func testCRL_NonCriticalUnknownAndCriticalIDPInScope_AreUsed() throws {
        let (evaluation, crl) = try evaluate(
            rootCRL: "crl-root-idp-ca",
            extensions:
                "1.3.6.1.4.1.99999.2 = DER:05:00\nissuingDistributionPoint = critical,@idp\n[ idp ]\nonlyCA = TRUE\n")
        XCTAssertEqual(crl.criticalExtensionOIDs, ["2.5.29.28"])
        XCTAssertEqual(crl.unprocessedCriticalExtensions, [])
        XCTAssertEqual(crl.issuingDistributionPoint, IssuingDistributionPoint(onlyContainsCACerts: true))
        XCTAssertEqual(evaluation.revocation[1].status, .good, "\(evaluation.warnings)")
        // The CA's CRL signer (ca-crls.pem, no basicConstraints) is no CA: the root's
        // CA-only CRL leaves it out, so certificate 0's CRL is refused with it.
        XCTAssertEqual(evaluation.revocation[0].status, .notChecked)
        XCTAssertEqual(
            evaluation.warnings,
            [
                "CRL of O=RSAKit Tests,CN=Separate Keys CA refused: the certificate that signed it (Separate Keys "
                    + "CA, serial 11) "
                    + "does not validate: recoverable-trust-failure (certificate 0 (Separate Keys CA): revocation "
                    + "status could not be "
                    + "established: no current CRL of O=RSAKit Tests,CN=Separate Keys Root)"
            ])
    }

    /// RFC 5280 §6.3.3 (b)(2) (PKITS 4.5.5, 4.5.7, 4.14.9, 4.14.11, 4.14.12, 4.14.14): a CRL
    /// whose issuingDistributionPoint leaves the certificate out is not used for it, with
    /// the reason in a warning.
    func testCRL_IssuingDistributionPointOutOfScope_IsNotUsed() throws {
        for (name, section, field, reason) in [
            (
                "crl-root-idp-user", "onlyuser = TRUE\n", IssuingDistributionPoint(onlyContainsUserCerts: true),
                "it covers end-entity certificates only (onlyContainsUserCerts)"
            ),
            (
                "crl-root-idp-aa", "onlyAA = TRUE\n", IssuingDistributionPoint(onlyContainsAttributeCerts: true),
                "it covers attribute certificates only (onlyContainsAttributeCerts)"
            ),
            (
                "crl-root-idp-dp", "fullname = URI:http://crl.separate.test/root.crl\n",
                IssuingDistributionPoint(
                    distributionPoint: DistributionPointName(
                        der: [0xA0, 0x23, 0x86, 0x21] + Array("http://crl.separate.test/root.crl".utf8))),
                "it is the CRL of a distribution point and the certificate names none (cRLDistributionPoints)"
            )
        ] {
            let (evaluation, crl) = try evaluate(
                rootCRL: name, extensions: "issuingDistributionPoint = critical,@idp\n[ idp ]\n" + section)
            XCTAssertEqual(crl.issuingDistributionPoint, field, name)
            XCTAssertEqual(evaluation.revocation[1].status, .notChecked, name)
            XCTAssertTrue(
                evaluation.warnings.contains(
                    "CRL of O=RSAKit Tests,CN=Separate Keys Root not used for certificate 1: \(reason) "
                        + "(issuingDistributionPoint)"
                ),
                "\(name): \(evaluation.warnings)")
        }
    }

    /// IssuingDistributionPoint read from hand-built DER (RFC 5280 §5.2.5): each field by its
    /// context tag, FALSE written out, a broken encoding refused.
    func testIssuingDistributionPoint_Decoding() throws {
        XCTAssertEqual(try IssuingDistributionPoint(der: [0x30, 0x00]), IssuingDistributionPoint())
        XCTAssertEqual(
            try IssuingDistributionPoint(der: [0x30, 0x03, 0x81, 0x01, 0xFF]),
            IssuingDistributionPoint(onlyContainsUserCerts: true))
        XCTAssertEqual(
            try IssuingDistributionPoint(der: [0x30, 0x03, 0x82, 0x01, 0x00]), IssuingDistributionPoint(),
            "an explicit FALSE")
        // distributionPoint [0] { fullName [0] { URI "a" } }, onlySomeReasons [3] BIT STRING, indirectCRL [4] TRUE,
        // onlyContainsAttributeCerts [5] TRUE
        XCTAssertEqual(
            try IssuingDistributionPoint(der: [
                0x30, 0x14, 0xA0, 0x05, 0xA0, 0x03, 0x86, 0x01, 0x61, 0x83, 0x02, 0x07, 0x80,
                0x84, 0x01, 0xFF, 0x85, 0x01, 0xFF, 0x81, 0x01, 0x00
            ]),
            IssuingDistributionPoint(
                distributionPoint: DistributionPointName(der: [0xA0, 0x03, 0x86, 0x01, 0x61]), onlySomeReasons: [],
                indirectCRL: true, onlyContainsAttributeCerts: true))
        // onlySomeReasons keyCompromise and aACompromise: bits 1 and 8 (BIT STRING 07 40 80)
        XCTAssertEqual(
            try IssuingDistributionPoint(der: [0x30, 0x05, 0x83, 0x03, 0x07, 0x40, 0x80]).onlySomeReasons,
            [.keyCompromise, .aACompromise])
        XCTAssertThrowsError(try IssuingDistributionPoint(der: [0x30, 0x05, 0x81, 0x01]))
        XCTAssertThrowsError(try IssuingDistributionPoint(der: [0x04, 0x00]))
    }
}
