import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitPKI

/// OCSP revocation checking (RFC 6960) against real `openssl ocsp` responders on
/// 127.0.0.1 (OCSPTestPKI: commands beside it): good, revoked (keyCompromise) and unknown
/// certificates; a forged responder; a responder that does not answer; a size limit; no network.
final class OCSPRevocationTests: XCTestCase {
    private static let shared = OCSPTestPKI.ClassFixture()

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    private func fixture() throws -> (OCSPTestPKI, OCSPTestPKI.Responder) {
        try Self.shared.get()
    }

    private func certificate(_ pki: OCSPTestPKI, _ name: String) throws -> X509Certificate {
        try X509Certificate(pemRepresentation: String(contentsOfFile: pki.path(name + ".pem"), encoding: .utf8))
    }

    private func trust(_ pki: OCSPTestPKI, _ name: String, _ policy: RSARevocationPolicy) throws -> RSATrust {
        var trust = RSATrust(certificates: [try certificate(pki, name)], policy: .basicX509)
        trust.anchorCertificates = [try certificate(pki, "ca")]
        trust.anchorCertificatesOnly = true
        trust.revocationPolicy = policy
        return trust
    }

    func testOCSP_GoodRevokedUnknown_FromTheAIAURL() throws {
        let (pki, responder) = try fixture()
        let policy = RSARevocationPolicy(method: .ocsp)
        XCTAssertEqual(try certificate(pki, "good").gnutlsCertificate().ocspURLs(), [responder.url])

        let good = try trust(pki, "good", policy).evaluate()
        XCTAssertEqual(good.result, .unspecified, "\(good.reasons)")
        XCTAssertEqual(good.revocation.map(\.status), [.good])
        XCTAssertTrue(
            good.revocation[0].source.hasPrefix("OCSP response from \(responder.url), thisUpdate "),
            good.revocation[0].source)
        XCTAssertEqual(good.warnings, [])

        let revoked = try trust(pki, "revoked", policy).evaluate()
        XCTAssertEqual(revoked.result, .fatalTrustFailure)
        XCTAssertEqual(revoked.failures.map(\.kind), [.revoked(date: Date(timeIntervalSince1970: 1_704_067_200))])
        XCTAssertEqual(revoked.revocation.first?.status, .revoked)
        XCTAssertEqual(revoked.revocation.first?.revocationReason, 1)
        XCTAssertEqual(revoked.revocation.first?.revocationReasonName, "keyCompromise")

        let unknown = try trust(pki, "unknown", policy).evaluate()
        XCTAssertEqual(unknown.result, .unspecified, "not positive, but only a warning without requirePositiveResponse")
        XCTAssertEqual(unknown.revocation.map(\.status), [.unknown])
        XCTAssertEqual(unknown.warnings.count, 1)
        XCTAssertTrue(
            unknown.warnings[0].contains("the responder does not know the certificate (unknown)"), unknown.warnings[0])

        var required = policy
        required.requirePositiveResponse = true
        let strict = try trust(pki, "unknown", required).evaluate()
        XCTAssertEqual(strict.result, .recoverableTrustFailure)
        XCTAssertEqual(strict.failures.map(\.kind.code), ["revocation-unchecked"])

        // openssl agrees on each status.
        for (name, expected) in [("good", "good"), ("revoked", "revoked"), ("unknown", "unknown")] {
            let out = try OpenSSL.runAllowingFailure([
                "ocsp", "-issuer", pki.path("ca.pem"), "-cert", pki.path(name + ".pem"),
                "-url", responder.url, "-CAfile", pki.path("ca.pem")
            ])
            XCTAssertTrue(String(decoding: out.stdout, as: UTF8.self).contains(": \(expected)"), name)
        }
    }

    func testOCSP_ForgedResponderRefused_RevokedIsNotBelieved() throws {
        let (pki, _) = try fixture()
        let forged = try pki.startResponder(forged: true)
        defer { forged.stop() }
        var policy = RSARevocationPolicy(method: .ocsp)
        policy.ocspURL = forged.url
        let evaluation = try trust(pki, "revoked", policy).evaluate()
        XCTAssertEqual(evaluation.result, .unspecified)
        XCTAssertEqual(evaluation.revocation.map(\.status), [.notChecked])
        XCTAssertEqual(
            evaluation.revocation[0].source,
            "OCSP response from \(forged.url) refused: the responder certificate is not issued by the certificate's "
                + "issuer"
        )
        policy.requirePositiveResponse = true
        let strict = try trust(pki, "good", policy).evaluate()
        XCTAssertEqual(strict.result, .recoverableTrustFailure)
        XCTAssertEqual(strict.failures.first?.kind, .revocationUnchecked(reason: evaluation.revocation[0].source))
    }

    func testOCSP_NoNetwork_Timeout_SizeLimit_AreCouldNotCheck() throws {
        let (pki, responder) = try fixture()
        var policy = RSARevocationPolicy(method: .ocsp, networkAccessDisabled: true)
        var evaluation = try trust(pki, "revoked", policy).evaluate()
        XCTAssertEqual(evaluation.result, .unspecified)
        XCTAssertEqual(evaluation.revocation.first?.source, "OCSP not asked: network access is disabled")

        let silent = try OCSPTestPKI.silentListener()
        defer { close(silent.fd) }
        policy = RSARevocationPolicy(method: .ocsp)
        policy.ocspURL = "http://127.0.0.1:\(silent.port)"
        policy.ocspTimeout = 1
        let started = Date()
        evaluation = try trust(pki, "revoked", policy).evaluate()
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertEqual(evaluation.revocation.first?.status, .notChecked)
        XCTAssertEqual(
            evaluation.revocation.first?.source,
            "OCSP responder http://127.0.0.1:\(silent.port) did not answer: no answer within 1.0 s (timed out)")

        policy = RSARevocationPolicy(method: .ocsp)
        policy.maximumOCSPResponseByteCount = 100
        evaluation = try trust(pki, "revoked", policy).evaluate()
        XCTAssertEqual(
            evaluation.revocation.first?.source,
            "OCSP responder \(responder.url) did not answer: the response is over 100 bytes")

        policy = RSARevocationPolicy(method: .off)
        XCTAssertEqual(try trust(pki, "revoked", policy).evaluate().revocation, [])
    }

    func testAny_CRLFirstThenOCSP() throws {
        let (pki, _) = try fixture()
        // No CRL of the CA: OCSP answers, and the source says the CRL was missing only when OCSP fails too.
        let evaluation = try trust(pki, "revoked", RSARevocationPolicy(method: .any)).evaluate()
        XCTAssertEqual(evaluation.result, .fatalTrustFailure)
        XCTAssertTrue(evaluation.revocation[0].source.hasPrefix("OCSP response from"), evaluation.revocation[0].source)
        let offline = try trust(pki, "revoked", RSARevocationPolicy(method: .any, networkAccessDisabled: true))
            .evaluate()
        XCTAssertEqual(
            offline.revocation[0].source,
            "OCSP not asked: network access is disabled; no current CRL of CN=RSAKit OCSP Test CA")
    }

    /// A response obtained otherwise (as a TLS server staples it) answers without a request;
    /// one about another certificate is refused by name (CertID).
    func testStapledResponse_AnswersOffline_AnotherCertificatesIsRefused() throws {
        let (pki, responder) = try fixture()
        // openssl ocsp -issuer ca.pem -cert NAME.pem -url URL -CAfile ca.pem -respout NAME.ocsp.der
        func response(_ name: String) throws -> [UInt8] {
            try OpenSSL.run([
                "ocsp", "-issuer", pki.path("ca.pem"), "-cert", pki.path(name + ".pem"), "-url", responder.url,
                "-CAfile", pki.path("ca.pem"), "-respout", pki.path(name + ".ocsp.der")
            ])
            return Array(try Data(contentsOf: URL(fileURLWithPath: pki.path(name + ".ocsp.der"))))
        }
        let offline = RSARevocationPolicy(method: .ocsp, networkAccessDisabled: true)
        var trust = try trust(pki, "revoked", offline)
        trust.stapledOCSPResponse = try response("revoked")
        var evaluation = trust.evaluate()
        XCTAssertEqual(evaluation.result, .fatalTrustFailure)
        XCTAssertTrue(
            evaluation.revocation[0].source.hasPrefix("stapled OCSP response, thisUpdate "),
            evaluation.revocation[0].source)
        XCTAssertEqual(evaluation.revocation[0].revocationReasonName, "keyCompromise")

        trust.stapledOCSPResponse = try response("good")
        evaluation = trust.evaluate()
        XCTAssertEqual(evaluation.revocation[0].status, .notChecked, "good's response says nothing about revoked")
        XCTAssertEqual(
            evaluation.revocation[0].source,
            "OCSP not asked: network access is disabled; stapled OCSP response refused: it is about another "
                + "certificate (CertID)"
        )

        trust.stapledOCSPResponse = Array("not DER".utf8)
        XCTAssertTrue(
            trust.evaluate().revocation[0].source.hasSuffix(
                "stapled OCSP response refused: not an OCSP response GnuTLS can read (7 bytes)"))
    }

    /// The issuer signing directly is accepted; a delegated responder that leaves its
    /// certificate out (-resp_no_certs) cannot be verified and is refused.
    func testOCSP_IssuerSignedAccepted_DelegatedWithoutItsCertificateRefused() throws {
        let (pki, _) = try fixture()
        let direct = try pki.startResponder(signer: "ca", key: "ca.key")
        defer { direct.stop() }
        var policy = RSARevocationPolicy(method: .ocsp)
        policy.ocspURL = direct.url
        let evaluation = try trust(pki, "revoked", policy).evaluate()
        XCTAssertEqual(evaluation.result, .fatalTrustFailure)
        XCTAssertEqual(evaluation.revocation.first?.status, .revoked)

        let bare = try pki.startResponder(signer: "responder", key: "leaf.key", extra: ["-resp_no_certs"])
        defer { bare.stop() }
        policy.ocspURL = bare.url
        let refused = try trust(pki, "revoked", policy).evaluate()
        XCTAssertEqual(refused.revocation.first?.status, .notChecked)
        XCTAssertTrue(
            refused.revocation.first?.source.hasPrefix("OCSP response from \(bare.url) refused: ") ?? false,
            "\(refused.revocation)")
    }

    /// RSAKit's own request (GnuTLS, with a nonce) POSTed through libcurl to the responder,
    /// then judged: the right nonce passes, another nonce is refused; the same response
    /// judged two days later is stale, two days earlier not yet valid.
    func testOCSP_Nonce_And_Freshness() throws {
        let (pki, responder) = try fixture()
        let certificate = try certificate(pki, "good").gnutlsCertificate()
        let issuer = try self.certificate(pki, "ca").gnutlsCertificate()
        let request = try GnuTLSOCSPRequest(certificate: certificate, issuer: issuer)
        XCTAssertFalse(request.nonce.isEmpty)
        let body = try HTTPClient.post(
            url: responder.url, body: request.der, contentType: "application/ocsp-request",
            accept: "application/ocsp-response", timeout: 5, maximumResponseByteCount: 65_536)
        let policy = RSARevocationPolicy(method: .ocsp)
        func judge(nonce: [UInt8], at now: Date) -> OCSPCheck.Answer {
            OCSPCheck.judge(
                body, origin: "test", certificate: certificate, issuer: issuer, nonce: nonce, policy: policy, now: now)
        }
        XCTAssertEqual(judge(nonce: request.nonce, at: Date()).status, .good)
        var other = request.nonce
        other[other.count - 1] ^= 0x01
        XCTAssertEqual(judge(nonce: other, at: Date()).source, "test refused: its nonce is not the request's")
        XCTAssertTrue(
            judge(nonce: request.nonce, at: Date().addingTimeInterval(2 * 86_400)).source.hasPrefix(
                "test refused: stale since "))
        XCTAssertTrue(
            judge(nonce: request.nonce, at: Date().addingTimeInterval(-2 * 86_400)).source.hasPrefix(
                "test refused: not valid before "))
        // Another certificate's CertID.
        let revoked = try self.certificate(pki, "revoked").gnutlsCertificate()
        XCTAssertEqual(
            OCSPCheck.judge(
                body, origin: "test", certificate: revoked, issuer: issuer, nonce: request.nonce, policy: policy,
                now: Date()
            ).source,
            "test refused: it is about another certificate (CertID)")
    }

    /// A revoked intermediate (cACompromise) fails the chain of a leaf it issued; the answer
    /// about the leaf is refused (signed by a responder the leaf's issuer did not delegate).
    func testOCSP_RevokedIntermediate() throws {
        let (pki, _) = try fixture()
        var trust = RSATrust(
            certificates: [try certificate(pki, "subleaf"), try certificate(pki, "sub")], policy: .basicX509)
        trust.anchorCertificates = [try certificate(pki, "ca")]
        trust.anchorCertificatesOnly = true
        trust.revocationPolicy = RSARevocationPolicy(method: .ocsp)
        let evaluation = trust.evaluate()
        XCTAssertEqual(evaluation.result, .fatalTrustFailure, "\(evaluation.reasons)")
        XCTAssertEqual(evaluation.failures.map(\.chainIndex), [1])
        XCTAssertEqual(evaluation.failures.map(\.kind), [.revoked(date: Date(timeIntervalSince1970: 1_717_200_000))])
        XCTAssertEqual(
            evaluation.revocation.map(\.status), [.notChecked, .revoked], "\(evaluation.revocation.map(\.source))")
        // The root's delegated responder answers about the sub CA's leaf too, but it holds no
        // delegation from the sub CA (RFC 6960 §4.2.2.2): refused.
        XCTAssertTrue(
            evaluation.revocation[0].source.hasSuffix(
                "refused: the responder certificate is not issued by the certificate's issuer"),
            evaluation.revocation[0].source)
        XCTAssertEqual(evaluation.revocation[1].revocationReasonName, "cACompromise")
    }

    /// A response is cached in the store until its nextUpdate: with the responder gone (and
    /// the network off) the cached answer is used, checked again; unknown is not cached.
    func testOCSPCache_InTheStore_AnswersAfterTheResponderIsGone() throws {
        let (pki, _) = try fixture()
        let folder = NSTemporaryDirectory() + "rsakit-ocsp-cache-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try RSAKeyStore(path: folder + "/store")
        let responder = try pki.startResponder(signer: "responder", key: "leaf.key")
        var policy = RSARevocationPolicy(method: .ocsp)
        policy.ocspURL = responder.url
        var revoked = try trust(pki, "revoked", policy)
        try revoked.addKeychain(store)
        XCTAssertTrue(revoked.evaluate().revocation[0].source.hasPrefix("OCSP response from \(responder.url)"))
        var unknown = try trust(pki, "unknown", policy)
        try unknown.addKeychain(store)
        XCTAssertEqual(unknown.evaluate().revocation[0].status, .unknown)
        let cached = try FileManager.default.subpathsOfDirectory(atPath: folder + "/store/ocsp").filter {
            $0.hasSuffix(".item")
        }
        XCTAssertEqual(cached.count, 1, "only the revoked answer is cached: \(cached)")
        let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/store/ocsp/" + cached[0])
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        responder.stop()

        revoked.revocationPolicy.networkAccessDisabled = true
        let evaluation = revoked.evaluate()
        XCTAssertEqual(evaluation.result, .fatalTrustFailure)
        XCTAssertTrue(
            evaluation.revocation[0].source.hasPrefix("cached OCSP response, thisUpdate "),
            evaluation.revocation[0].source)
        // Past its nextUpdate (-ndays 1) the cache has nothing.
        XCTAssertNil(
            store.cachedOCSPResponse(
                key: RSAHashAlgorithm.sha256.hash(
                    try certificate(pki, "ca").derRepresentation
                        + (try certificate(pki, "revoked").serialNumber)),
                now: Date().addingTimeInterval(2 * 86_400)))
    }

    /// --fetch-crls: the CRL named by the certificate's distribution point is fetched over
    /// HTTP (python3's http.server on 127.0.0.1) and checked; off by default and offline.
    func testFetchCRLs_FromTheDistributionPoint() throws {
        let (pki, _) = try fixture()
        XCTAssertEqual(
            try certificate(pki, "revoked").gnutlsCertificate().crlDistributionPointURLs(),
            ["http://127.0.0.1:\(pki.crlPort)/ca.crl"])
        let server = try pki.startCRLServer()
        defer { server.send(SIGTERM); _ = try? server.wait(timeout: 2) }
        var policy = RSARevocationPolicy(method: .crl)
        XCTAssertEqual(try trust(pki, "revoked", policy).evaluate().revocation, [], "no fetching unless asked")
        policy.fetchCRLs = true
        let evaluation = try trust(pki, "revoked", policy).evaluate()
        XCTAssertEqual(evaluation.result, .fatalTrustFailure)
        XCTAssertEqual(evaluation.failures.map(\.kind), [.revoked(date: Date(timeIntervalSince1970: 1_704_067_200))])
        XCTAssertTrue(
            evaluation.revocation[0].source.hasSuffix(", fetched from http://127.0.0.1:\(pki.crlPort)/ca.crl"),
            evaluation.revocation[0].source)
        XCTAssertEqual(try trust(pki, "good", policy).evaluate().revocation.map(\.status), [.good])
        policy.networkAccessDisabled = true
        XCTAssertEqual(try trust(pki, "revoked", policy).evaluate().revocation.map(\.status), [.notChecked])
    }
}
