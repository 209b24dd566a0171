import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitPKI
@testable import RSAKitKeychain

/// `fetchIssuers` (RFC 5280 §4.2.2.1 caIssuers): a leaf sent without its intermediate
/// validates when the intermediate is fetched from the leaf's authorityInfoAccess, from a
/// real HTTP server on 127.0.0.1 (python3's http.server) serving openssl-made files.
final class IssuerFetchingTests: XCTestCase {
    private func trust(_ pki: OCSPTestPKI, _ name: String, fetch: Bool, noNetwork: Bool = false) throws -> RSATrust {
        var trust = RSATrust(
            certificates: [
                try X509Certificate(pemRepresentation: String(contentsOfFile: pki.path(name + ".pem"), encoding: .utf8))
            ],
            policy: .basicX509)
        trust.anchorCertificates = [
            try X509Certificate(pemRepresentation: String(contentsOfFile: pki.path("ca.pem"), encoding: .utf8))
        ]
        trust.anchorCertificatesOnly = true
        var policy = RSARevocationPolicy(method: .off, networkAccessDisabled: noNetwork)
        policy.fetchIssuers = fetch
        trust.revocationPolicy = policy
        return trust
    }

    func testFetchIssuers_DERAndPKCS7_FromCAIssuers() throws {
        let pki = try OCSPTestPKI()
        let server = try pki.startCRLServer()
        defer { server.send(SIGTERM); _ = try? server.wait(timeout: 2) }
        let unfetched = try trust(pki, "aia-cer", fetch: false).evaluate()
        XCTAssertEqual(unfetched.result, .recoverableTrustFailure, "no fetching unless asked")
        XCTAssertEqual(unfetched.failures.map(\.kind.code), ["unknown-issuer"])
        for name in ["aia-cer", "aia-p7c"] {
            let evaluation = try trust(pki, name, fetch: true).evaluate()
            XCTAssertEqual(evaluation.result, .unspecified, "\(name): \(evaluation.failures) \(evaluation.warnings)")
            XCTAssertEqual(
                evaluation.chain.map(\.subjectSummary),
                ["\(name).ocsp.test", "RSAKit OCSP Sub CA", "RSAKit OCSP Test CA"])
        }
        let disabled = try trust(pki, "aia-cer", fetch: true, noNetwork: true).evaluate()
        XCTAssertEqual(disabled.failures.map(\.kind.code), ["unknown-issuer"], "never with the network disabled")
    }

    /// A URL that serves something else, or nothing: the evaluation fails as without fetching,
    /// and the warning says why.
    func testFetchIssuers_NothingThere_IsAWarning() throws {
        let pki = try OCSPTestPKI()
        let evaluation = try trust(pki, "aia-cer", fetch: true).evaluate()  // no server running
        XCTAssertEqual(evaluation.failures.map(\.kind.code), ["unknown-issuer"])
        XCTAssertTrue(
            evaluation.warnings.contains {
                $0.hasPrefix("issuer of certificate 0 not fetched from http://127.0.0.1:\(pki.crlPort)/sub.cer: ")
            },
            "\(evaluation.warnings)")
        XCTAssertThrowsError(try RSATrust.certificates(fetched: Array("not a certificate".utf8)))
    }
}
