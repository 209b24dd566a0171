import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitPKI

/// CRL distribution points (RFC 5280 §6.3.3 (b) and (d), NIST PKITS 4.14): a CRL whose
/// issuingDistributionPoint names a distribution point answers only for certificates that
/// name it, onlySomeReasons CRLs answer together or not at all, and an indirect CRL answers
/// for the certificates whose cRLDistributionPoints name its issuer. The certificates and CRLs
/// are made by the real `openssl` (SeparateCRLKeyPKI: dp.pem and dp-indirect.pem).
final class DistributionPointTests: XCTestCase {
    private static let pki = Result { try SeparateCRLKeyPKI() }
    private static let rest =
        "affiliationChanged, superseded, cessationOfOperation, certificateHold, privilegeWithdrawn, aACompromise"

    /// Evaluate `leaf` (issued by the separate-keys CA) with the root's empty CRL and `crls`
    /// (made first: name, signer, key, revoked serials, [ crl_ext ] lines).
    private func evaluate(_ leaf: String, crls: [(String, String, String, [String], String)]) throws
        -> RSATrustEvaluation
    {
        let pki = try Self.pki.get()
        for (name, signer, key, serials, extensions) in crls {
            try pki.makeCRL(
                name, signer: signer, key: key,
                revoked: serials.map { ($0, "240301000000Z", "/CN=\(leaf).separate.test") },
                extensions: extensions)
        }
        var trust = RSATrust(
            certificates: try [leaf, "ca-certs", "ca-crls"].map { try pki.certificate($0) }, policy: .basicX509)
        trust.anchorCertificates = [try pki.certificate("root")]
        trust.anchorCertificatesOnly = true
        trust.crls = try (["crl-root-good"] + crls.map(\.0)).map { try pki.crl($0) }
        trust.revocationPolicy = RSARevocationPolicy(
            method: .crl, requirePositiveResponse: true, networkAccessDisabled: true)
        return trust.evaluate()
    }

    private func idp(_ url: String, _ more: String = "") -> String {
        "issuingDistributionPoint = critical,@idp\n[ idp ]\nfullname = URI:\(url)\n" + more
    }

    /// The certificate's cRLDistributionPoints as read: one point, its fullName URI, no
    /// reasons; dp-indirect.pem's with the root's name as cRLIssuer.
    func testCertificateDistributionPoints_AreRead() throws {
        let pki = try Self.pki.get()
        let url = Array(SeparateCRLKeyPKI.distributionPointURL.utf8)
        // fullName [0] { uniformResourceIdentifier [6] "http://..." }
        XCTAssertEqual(
            try pki.certificate("dp").crlDistributionPoints(),
            [
                CRLDistributionPoint(
                    name: DistributionPointName(der: [0xA0, UInt8(url.count + 2), 0x86, UInt8(url.count)] + url),
                    reasons: nil, crlIssuer: nil)
            ])
        let indirect = try XCTUnwrap(try pki.certificate("dp-indirect").crlDistributionPoints()?.first)
        let root = try X509Name(der: try XCTUnwrap(try pki.certificate("root").subjectDER))
        XCTAssertEqual(indirect.crlIssuer?.count, 1)
        XCTAssertTrue(indirect.crlIssuer?.first?.matches(.directoryName(root)) == true)
        XCTAssertEqual(
            try indirect.name?.names(crlIssuer: nil),
            [.uniformResourceIdentifier(SeparateCRLKeyPKI.indirectDistributionPointURL)])
        XCTAssertNil(try pki.certificate("good").crlDistributionPoints())
    }

    /// PKITS 4.14.1 / 4.14.3: the CA's CRL for the certificate's distribution point is used;
    /// one for another distribution point is not, and the status is then unknown.
    func testDistributionPointName_MatchesOrExcludes() throws {
        let matching = try evaluate(
            "dp", crls: [("crl-dp-same", "ca-crls", "crlsign", ["1003"], idp(SeparateCRLKeyPKI.distributionPointURL))])
        XCTAssertEqual(matching.revocation.first?.status, .revoked, "\(matching.warnings)")
        XCTAssertEqual(matching.result, .fatalTrustFailure)

        let other = try evaluate(
            "dp", crls: [("crl-dp-other", "ca-crls", "crlsign", ["1003"], idp("http://crl.separate.test/other.crl"))])
        XCTAssertEqual(other.revocation.first?.status, .notChecked)
        XCTAssertTrue(
            other.warnings.contains(
                "CRL of O=RSAKit Tests,CN=Separate Keys CA not used for certificate 0: its distribution point is "
                    + "none of "
                    + "the certificate's (cRLDistributionPoints) (issuingDistributionPoint)"), "\(other.warnings)")
    }

    /// PKITS 4.14.15-4.14.19: a CRL covering some reasons alone leaves the status unknown;
    /// with a CRL for the other reasons it is good, or revoked when that one lists it.
    func testOnlySomeReasons_CoverTogether() throws {
        let url = SeparateCRLKeyPKI.distributionPointURL
        let key = (
            "crl-dp-key", "ca-crls", "crlsign", [String](), idp(url, "onlysomereasons = keyCompromise,CACompromise\n")
        )
        let alone = try evaluate("dp", crls: [key])
        XCTAssertEqual(alone.revocation.first?.status, .notChecked)
        XCTAssertEqual(
            alone.revocation.first?.source.hasPrefix(
                "no current CRL of O=RSAKit Tests,CN=Separate Keys CA covers \(Self.rest) (onlySomeReasons); CRL of "),
            true,
            alone.revocation.first?.source ?? "")

        let restReasons =
            "onlysomereasons = "
            + "affiliationChanged,superseded,cessationOfOperation,certificateHold,privilegeWithdrawn,AACompromise\n"
        let both = try evaluate("dp", crls: [key, ("crl-dp-rest", "ca-crls", "crlsign", [], idp(url, restReasons))])
        XCTAssertEqual(both.revocation.first?.status, .good, "\(both.warnings)")
        XCTAssertEqual(both.result, .unspecified)

        let revoked = try evaluate(
            "dp", crls: [key, ("crl-dp-rest-revoked", "ca-crls", "crlsign", ["1003"], idp(url, restReasons))])
        XCTAssertEqual(revoked.revocation.first?.status, .revoked)
        XCTAssertTrue(
            revoked.revocation.first?.source.hasSuffix(", for \(Self.rest)") == true,
            revoked.revocation.first?.source ?? "")
    }

    /// PKITS 4.14.22-4.14.35: the root's indirect CRL answers for dp-indirect.pem (its cRLIssuer
    /// is the root); the CA's own CRL does not; an entry without certificateIssuer belongs to
    /// the root, not to the CA; without indirectCRL the root's CRL is not used.
    func testIndirectCRL_AnswersForTheNamedIssuer() throws {
        let url = SeparateCRLKeyPKI.indirectDistributionPointURL
        let indirect = try evaluate(
            "dp-indirect",
            crls: [
                ("crl-indirect", "root", "root", [], idp(url, "indirectCRL = TRUE\n")),
                ("crl-ca-for-indirect", "ca-crls", "crlsign", ["1004"], "")
            ])
        XCTAssertEqual(indirect.revocation.first?.status, .good, "\(indirect.warnings)")
        XCTAssertEqual(indirect.revocation.first?.source.hasPrefix("CRL of O=RSAKit Tests,CN=Separate Keys Root"), true)
        XCTAssertTrue(
            indirect.warnings.contains(
                "CRL of O=RSAKit Tests,CN=Separate Keys CA not used for certificate 0: no distribution point of "
                    + "the certificate (cRLDistributionPoints) names this CRL's issuer (issuingDistributionPoint)"),
            "\(indirect.warnings)")

        let rootEntry = try evaluate(
            "dp-indirect",
            crls: [("crl-indirect-root-entry", "root", "root", ["1004"], idp(url, "indirectCRL = TRUE\n"))])
        XCTAssertEqual(try Self.pki.get().crl("crl-indirect-root-entry").entryIssuers?.count, 1)
        XCTAssertEqual(
            rootEntry.revocation.first?.status, .good, "an entry of the root's own certificates: \(rootEntry.warnings)")

        let notIndirect = try evaluate("dp-indirect", crls: [("crl-not-indirect", "root", "root", [], idp(url))])
        XCTAssertEqual(notIndirect.revocation.first?.status, .notChecked)
    }

    /// An indirect CRL's entries read from hand-built DER (RFC 5280 §5.3.3): an entry's
    /// certificateIssuer carries over to the entries after it.
    func testIndirectCRLEntries_CertificateIssuerCarriesOver() throws {
        let name = try XCTUnwrap(try Self.pki.get().certificate("root").subjectDER)
        let time = DERValue.encoded([0x17, 0x0D] + Array("240101000000Z".utf8))
        let issuerExtension = DERValue.sequence([
            .objectIdentifier([0x55, 0x1D, 0x1D]), .encoded([0x01, 0x01, 0xFF]),
            .octetStringWrapping(.sequence([.explicit(4, .encoded(name))]))
        ])
        let entries = DERValue.sequence([
            .sequence([.unsignedInteger([1]), time]),
            .sequence([.unsignedInteger([2]), time, .sequence([issuerExtension])]),
            .sequence([.unsignedInteger([3]), time])
        ])
        let algorithm = DERValue.sequence([
            .objectIdentifier([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B]), .null
        ])
        let tbs = DERValue.sequence([.unsignedInteger([1]), algorithm, .encoded(name), time, time, entries])
        let der = DERValue.sequence([tbs, algorithm, .encoded([0x03, 0x01, 0x00])]).encoded()
        let read = try IndirectCRLEntry.entries(of: der)
        XCTAssertEqual(read.map(\.serialNumberContents), [[1], [2], [3]])
        XCTAssertEqual(read.map(\.certificateIssuer), [nil, name, name])
    }
}
