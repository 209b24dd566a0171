import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// RSATrust against the fixtures of ``TestPKI`` (made by openssl, commands there), each
/// with its result and reason; `openssl verify` is asked about the same files and must agree
/// on pass or fail.
final class TrustEvaluationTests: XCTestCase {
    private func trust(
        _ names: [String], _ pki: TestPKI, policy: RSATrustPolicy = .basicX509,
        anchors: [String] = ["root"]
    ) throws -> RSATrust {
        var trust = RSATrust(certificates: try names.map { try pki.certificate($0) }, policy: policy)
        trust.anchorCertificates = try anchors.map { try pki.certificate($0) }
        trust.anchorCertificatesOnly = true
        return trust
    }

    private func assertFailures(
        _ evaluation: RSATrustEvaluation, _ result: RSATrustResult, _ expected: [(String, Int)],
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(evaluation.result, result, "\(evaluation.failures)", file: file, line: line)
        XCTAssertEqual(
            evaluation.failures.map { "\($0.kind.code)@\($0.chainIndex)" }, expected.map { "\($0.0)@\($0.1)" },
            file: file, line: line)
    }

    /// `openssl verify -CAfile root.pem -untrusted intermediate.pem [-purpose P] [-verify_hostname H] FILE`.
    private func opensslVerifies(_ pki: TestPKI, _ name: String, _ extra: [String] = []) throws -> Bool {
        try OpenSSL.runAllowingFailure(
            ["verify", "-CAfile", pki.path("root.pem"), "-untrusted", pki.path("intermediate.pem")]
                + extra + [pki.path(name + ".pem")]
        ).status == 0
    }

    func testServerChain_Unspecified_AndProceedWhenUserTrusted() throws {
        let pki = try TestPKI.shared()
        var trust = try trust(["server", "intermediate"], pki, policy: .sslServer(hostname: "server.rsakit.test"))
        var evaluation = trust.evaluate()
        assertFailures(evaluation, .unspecified, [])
        XCTAssertEqual(
            evaluation.chain.map(\.subjectSummary),
            ["server.rsakit.test", "RSAKit Test Intermediate", "RSAKit Test Root CA"])
        XCTAssertEqual(evaluation.anchor, try pki.certificate("root"))
        XCTAssertTrue(evaluation.result.isTrusted)
        XCTAssertTrue(
            try opensslVerifies(pki, "server", ["-purpose", "sslserver", "-verify_hostname", "server.rsakit.test"]))
        // The user marked the root trusted (cert add --trust): proceed.
        trust.userTrustedFingerprints = [try pki.certificate("root").fingerprint]
        evaluation = trust.evaluate()
        assertFailures(evaluation, .proceed, [])
        XCTAssertTrue(evaluation.isUserTrusted)
        // Wildcard and IP subjectAltNames; the chain in any order.
        for host in ["a.wild.rsakit.test", "127.0.0.1"] {
            assertFailures(
                try self.trust(["server", "root", "intermediate"], pki, policy: .sslServer(hostname: host)).evaluate(),
                .unspecified, [])
        }
    }

    func testWrongHostname_IsRecoverable() throws {
        let pki = try TestPKI.shared()
        for host in ["other.rsakit.test", "a.b.wild.rsakit.test", "127.0.0.2"] {
            let evaluation = try trust(["server", "intermediate"], pki, policy: .sslServer(hostname: host)).evaluate()
            assertFailures(evaluation, .recoverableTrustFailure, [("hostname-mismatch", 0)])
            XCTAssertEqual(evaluation.failures.first?.kind, .hostnameMismatch(hostname: host))
        }
        XCTAssertFalse(try opensslVerifies(pki, "server", ["-verify_hostname", "other.rsakit.test"]))
    }

    func testWrongExtendedKeyUsage_IsRecoverable() throws {
        let pki = try TestPKI.shared()
        assertFailures(
            try trust(["wrong-eku", "intermediate"], pki, policy: .sslServer(hostname: "codesign.rsakit.test"))
                .evaluate(),
            .recoverableTrustFailure, [("purpose-mismatch", 0)])
        assertFailures(try trust(["wrong-eku", "intermediate"], pki).evaluate(), .unspecified, [])
        // The client leaf: fine for SSL client, not for SSL server; the server leaf the other way round.
        assertFailures(try trust(["client", "intermediate"], pki, policy: .sslClient).evaluate(), .unspecified, [])
        let clientAsServer = try trust(["client", "intermediate"], pki, policy: .sslServer(hostname: nil)).evaluate()
        assertFailures(clientAsServer, .recoverableTrustFailure, [("purpose-mismatch", 0)])
        // Without a hostname the names were not checked: said in the warnings.
        XCTAssertEqual(clientAsServer.warnings, [RSATrust.noHostnameWarning])
        XCTAssertEqual(
            try trust(["server", "intermediate"], pki, policy: .sslServer(hostname: "server.rsakit.test")).evaluate()
                .warnings, [])
        XCTAssertEqual(clientAsServer.failures.first?.kind, .purposeMismatch(required: .serverAuth))
        assertFailures(
            try trust(["server", "intermediate"], pki, policy: .sslClient).evaluate(), .recoverableTrustFailure,
            [("purpose-mismatch", 0)])
        XCTAssertFalse(try opensslVerifies(pki, "wrong-eku", ["-purpose", "sslserver"]))
        XCTAssertTrue(try opensslVerifies(pki, "client", ["-purpose", "sslclient"]))
    }

    func testExpiredLeaf_IsRecoverable_AndUnspecifiedAtADateInsideItsValidity() throws {
        let pki = try TestPKI.shared()
        var trust = try trust(["expired", "intermediate"], pki)
        let evaluation = trust.evaluate()
        assertFailures(evaluation, .recoverableTrustFailure, [("expired", 0)])
        let failure = try XCTUnwrap(evaluation.failures.first)
        let notAfter = try XCTUnwrap(ISO8601DateFormatter().date(from: "2021-01-01T00:00:00Z"))
        XCTAssertEqual(failure.kind, .expired(notAfter: notAfter))
        let suggested = try XCTUnwrap(failure.suggestedVerifyDate)
        XCTAssertEqual(suggested, ISO8601DateFormatter().date(from: "2020-12-31T00:00:00Z"))
        XCTAssertEqual(
            failure.description,
            "certificate 0 (expired.rsakit.test): expired at 2021-01-01T00:00:00Z (notAfter); a verify date of "
                + "2020-12-31T00:00:00Z would evaluate it"
        )
        XCTAssertFalse(try opensslVerifies(pki, "expired"))
        // The guide's recovery: change the verify date and evaluate again.
        trust.verifyDate = suggested
        assertFailures(trust.evaluate(), .unspecified, [])
        trust.verifyDate = try XCTUnwrap(ISO8601DateFormatter().date(from: "2020-06-15T12:00:00Z"))
        assertFailures(trust.evaluate(), .unspecified, [])
        // openssl agrees at that time: openssl verify -attime 1592222400 ...
        XCTAssertTrue(try opensslVerifies(pki, "expired", ["-attime", "1592222400"]))
        // Before the CAs' validity (2019-01-01), every certificate is not yet valid.
        trust.verifyDate = try XCTUnwrap(ISO8601DateFormatter().date(from: "2018-06-01T00:00:00Z"))
        assertFailures(
            trust.evaluate(), .recoverableTrustFailure,
            [("not-yet-valid", 0), ("not-yet-valid", 1), ("not-yet-valid", 2)])
    }

    func testNotYetValidLeaf_IsRecoverable() throws {
        let pki = try TestPKI.shared()
        var trust = try trust(["not-yet-valid", "intermediate"], pki)
        let evaluation = trust.evaluate()
        assertFailures(evaluation, .recoverableTrustFailure, [("not-yet-valid", 0)])
        XCTAssertEqual(
            evaluation.failures.first?.kind,
            .notYetValid(notBefore: try pki.certificate("not-yet-valid").notValidBefore))
        trust.verifyDate = try XCTUnwrap(evaluation.failures.first?.suggestedVerifyDate)
        assertFailures(trust.evaluate(), .unspecified, [])
        XCTAssertFalse(try opensslVerifies(pki, "not-yet-valid"))
    }

    func testUntrustedRoot_AndMissingIssuer_AreRecoverable() throws {
        let pki = try TestPKI.shared()
        assertFailures(
            try trust(["untrusted-leaf", "untrusted-root"], pki).evaluate(), .recoverableTrustFailure,
            [("untrusted-root", 1)])
        let missing = try trust(["untrusted-leaf"], pki).evaluate()
        assertFailures(missing, .recoverableTrustFailure, [("unknown-issuer", 0)])
        XCTAssertEqual(missing.failures.first?.kind, .unknownIssuer(issuer: "O=Elsewhere,CN=RSAKit Untrusted Root"))
        // A missing intermediate.
        assertFailures(try trust(["server"], pki).evaluate(), .recoverableTrustFailure, [("unknown-issuer", 0)])
        // Given as an anchor, the untrusted root makes it pass.
        assertFailures(try trust(["untrusted-leaf"], pki, anchors: ["untrusted-root"]).evaluate(), .unspecified, [])
        XCTAssertFalse(try opensslVerifies(pki, "untrusted-leaf"))
    }

    /// Pinning the server's own certificate, as Apple allows: a leaf given as the
    /// only anchor, or marked trusted by the user, is the chain's anchor.
    func testPinnedLeaf_AsAnchorOrUserTrusted_IsTrusted() throws {
        let pki = try TestPKI.shared()
        let server = try pki.certificate("server")
        var pinned = try trust(["server"], pki, policy: .sslServer(hostname: "server.rsakit.test"), anchors: ["server"])
        var evaluation = pinned.evaluate()
        assertFailures(evaluation, .unspecified, [])
        XCTAssertEqual(evaluation.chain, [server])
        XCTAssertEqual(evaluation.anchor, server)
        // The policy still applies to a pinned leaf: its name, its dates.
        pinned.policy = .sslServer(hostname: "other.rsakit.test")
        assertFailures(pinned.evaluate(), .recoverableTrustFailure, [("hostname-mismatch", 0)])
        assertFailures(
            try trust(["expired"], pki, anchors: ["expired"]).evaluate(), .recoverableTrustFailure, [("expired", 0)])
        // Another leaf of the same issuer is not trusted by the pin.
        assertFailures(
            try trust(["client"], pki, anchors: ["server"]).evaluate(), .recoverableTrustFailure,
            [("unknown-issuer", 0)])

        // userTrustedFingerprints holding the leaf: proceed, as its doc comment says.
        var userTrusted = try trust(
            ["server", "intermediate"], pki, policy: .sslServer(hostname: "server.rsakit.test"), anchors: [])
        userTrusted.userTrustedFingerprints = [server.fingerprint]
        evaluation = userTrusted.evaluate()
        assertFailures(evaluation, .proceed, [])
        XCTAssertEqual(evaluation.chain, [server])
        XCTAssertTrue(evaluation.isUserTrusted)
        // A pinned intermediate anchors the chain there.
        evaluation = try trust(["server", "intermediate"], pki, anchors: ["intermediate"]).evaluate()
        assertFailures(evaluation, .unspecified, [])
        XCTAssertEqual(evaluation.chain.map(\.subjectSummary), ["server.rsakit.test", "RSAKit Test Intermediate"])
        // openssl agrees with -partial_chain (a non-self-signed anchor).
        XCTAssertEqual(
            try OpenSSL.runAllowingFailure([
                "verify", "-partial_chain", "-CAfile", pki.path("server.pem"),
                pki.path("server.pem")
            ]).status, 0)
    }

    /// Subject equal to issuer, signed by another key, is not a self-signed root.
    func testSameNameSignedByAnotherKey_IsNotCalledAnUntrustedRoot() throws {
        let pki = try TestPKI.shared()
        let alone = try trust(["same-name"], pki).evaluate()
        assertFailures(alone, .recoverableTrustFailure, [("self-signature-invalid", 0)])
        XCTAssertTrue(
            alone.failures[0].message.contains("does not verify under its own key"), alone.failures[0].message)
        // With its signer (same name, another key) in the pool, the chain goes on to it.
        let withSigner = try trust(["same-name", "same-name-signer"], pki).evaluate()
        assertFailures(withSigner, .recoverableTrustFailure, [("untrusted-root", 1)])
        XCTAssertEqual(withSigner.chain.count, 2)
        assertFailures(try trust(["same-name"], pki, anchors: ["same-name-signer"]).evaluate(), .unspecified, [])
        // openssl refuses it too, and trusts it under its signer.
        XCTAssertNotEqual(
            try OpenSSL.runAllowingFailure(["verify", "-CAfile", pki.path("root.pem"), pki.path("same-name.pem")])
                .status, 0)
        XCTAssertEqual(
            try OpenSSL.runAllowingFailure([
                "verify", "-CAfile", pki.path("same-name-signer.pem"),
                pki.path("same-name.pem")
            ]).status, 0)
    }

    func testTamperedSignature_IsFatal() throws {
        let pki = try TestPKI.shared()
        let evaluation = try trust(["tampered", "intermediate"], pki).evaluate()
        assertFailures(evaluation, .fatalTrustFailure, [("bad-signature", 0)])
        XCTAssertFalse(try opensslVerifies(pki, "tampered"))
    }

    func testIssuerNotCA_IsFatal() throws {
        let pki = try TestPKI.shared()
        let evaluation = try trust(["non-ca-issued", "server", "intermediate"], pki).evaluate()
        assertFailures(evaluation, .fatalTrustFailure, [("issuer-not-ca", 1)])
        XCTAssertEqual(evaluation.failures.first?.certificate, try pki.certificate("server"))
        // openssl verify -CAfile root.pem -untrusted intermediate.pem+server.pem non-ca-issued.pem
        try pki.write(try pki.read("intermediate.pem") + pki.read("server.pem"), to: "untrusted-with-server.pem")
        XCTAssertNotEqual(
            try OpenSSL.runAllowingFailure([
                "verify", "-CAfile", pki.path("root.pem"), "-untrusted", pki.path("untrusted-with-server.pem"),
                pki.path("non-ca-issued.pem")
            ]).status, 0)
    }

    func testDistrustedCertificate_IsDeny() throws {
        let pki = try TestPKI.shared()
        var trust = try trust(["server", "intermediate"], pki)
        trust.userDistrustedFingerprints = [try pki.certificate("intermediate").fingerprint]
        trust.userTrustedFingerprints = [try pki.certificate("root").fingerprint]
        assertFailures(trust.evaluate(), .deny, [("distrusted", 1)])
    }

    func testNothingToEvaluate_IsInvalid() {
        let evaluation = RSATrust(certificates: [], policy: .basicX509).evaluate()
        XCTAssertEqual(evaluation.result, .invalid)
        XCTAssertTrue(evaluation.failures.isEmpty)
    }

    func testSystemAnchors() throws {
        let pki = try TestPKI.shared()
        guard let bundle = try? Data(contentsOf: URL(fileURLWithPath: RSATrust.systemAnchorsPath)) else {
            throw XCTSkip("no system CA bundle at \(RSATrust.systemAnchorsPath)")
        }
        // The test root is not a system anchor.
        var trust = RSATrust(
            certificates: [try pki.certificate("server"), try pki.certificate("intermediate")], policy: .basicX509)
        let evaluation = trust.evaluate()
        XCTAssertEqual(evaluation.warnings, [])
        assertFailures(evaluation, .recoverableTrustFailure, [("unknown-issuer", 1)])
        // Given as an anchor beside the system's, it passes.
        trust.anchorCertificates = [try pki.certificate("root")]
        assertFailures(trust.evaluate(), .unspecified, [])
        // A system root evaluates as unspecified by itself; with anchors-only and no anchors, it is an untrusted root.
        let systemRoot = try XCTUnwrap(
            X509Certificate.certificates(from: [UInt8](bundle)).first(where: { $0.isValid(at: Date()) }))
        var system = RSATrust(certificates: [systemRoot], policy: .basicX509)
        assertFailures(system.evaluate(), .unspecified, [])
        system.anchorCertificatesOnly = true
        assertFailures(system.evaluate(), .recoverableTrustFailure, [("untrusted-root", 0)])
    }

    /// Intermediates are searched in the store (SecTrust searches the keychains): the chain
    /// server -> intermediate -> root builds from the server certificate alone once the
    /// intermediate is stored, without the intermediate becoming trusted by being there.
    func testStoredIntermediateCompletesTheChain_ButIsNotAnAnchor() throws {
        let pki = try TestPKI.shared()
        let folder = NSTemporaryDirectory() + "rsakit-trust-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try RSAKeyStore(path: folder + "/store", createIfMissing: true)
        var trust = try trust(["server"], pki)
        assertFailures(trust.evaluate(), .recoverableTrustFailure, [("unknown-issuer", 0)])
        try store.addCertificate(try pki.certificate("intermediate"))
        try trust.addKeychain(store)
        let evaluation = trust.evaluate()
        assertFailures(evaluation, .unspecified, [])
        XCTAssertEqual(
            evaluation.chain.map(\.subjectSummary),
            ["server.rsakit.test", "RSAKit Test Intermediate", "RSAKit Test Root CA"])
        // Stored, not trusted: with no anchor for it, the intermediate alone anchors nothing.
        var withoutRoot = try self.trust(["server"], pki, anchors: [])
        try withoutRoot.addKeychain(store)
        XCTAssertEqual(withoutRoot.evaluate().result, .recoverableTrustFailure)
        XCTAssertFalse(withoutRoot.evaluate().failures.isEmpty)
    }

    /// Two paths to two roots: the intermediate issued by the root (not an anchor here) and
    /// the same intermediate cross-signed by the cross root (the anchor). The first path
    /// fails; the second is tried and validates, and the evaluation names it.
    func testCrossSignedAlternativePathIsTriedWhenTheFirstFails() throws {
        let pki = try TestPKI.shared()
        let trust = try trust(["server", "intermediate", "intermediate-cross"], pki, anchors: ["cross-root"])
        let evaluation = trust.evaluate()
        assertFailures(evaluation, .unspecified, [])
        XCTAssertEqual(
            evaluation.chain.map(\.subjectSummary),
            ["server.rsakit.test", "RSAKit Test Intermediate", "RSAKit Cross Root"])
        XCTAssertEqual(evaluation.chain[1], try pki.certificate("intermediate-cross"))
        // The same with the root as anchor picks the first path.
        let direct = try self.trust(["server", "intermediate-cross", "intermediate"], pki, anchors: ["root"]).evaluate()
        assertFailures(direct, .unspecified, [])
        XCTAssertEqual(direct.chain.last, try pki.certificate("root"))
        // With neither anchor, the first path's failure is the answer, as before.
        let neither = try self.trust(["server", "intermediate", "intermediate-cross"], pki, anchors: ["untrusted-root"])
            .evaluate()
        XCTAssertEqual(neither.result, .recoverableTrustFailure)
        XCTAssertEqual(neither.chain[1], try pki.certificate("intermediate"))
        // openssl agrees: it finds the cross path only when given the cross-signed certificate.
        let viaCross = try OpenSSL.runAllowingFailure([
            "verify", "-CAfile", pki.path("cross-root.pem"), "-untrusted",
            pki.path("intermediate-cross.pem"), pki.path("server.pem")
        ])
        XCTAssertEqual(viaCross.status, 0)
    }

    private func crl(_ name: String, _ pki: TestPKI) throws -> X509CRL {
        try XCTUnwrap(try X509CRL.crls(from: Array(try pki.read(name + ".pem").utf8)).first)
    }

    /// Revocation by CRL: a current CRL of the intermediate that lists the server
    /// certificate makes the evaluation fail, fatally, with its revocation date; one that does
    /// not gives "good"; a stale or forged CRL is refused with a warning ("not checked").
    /// openssl verify -crl_check agrees on each.
    func testCRLs_RevokedIsFatal_GoodPasses_StaleAndForgedAreRefused() throws {
        let pki = try TestPKI.shared()
        let revokedCRL = try crl("crl-revoked", pki)
        XCTAssertEqual(revokedCRL.issuer, try pki.certificate("intermediate").subject)
        XCTAssertEqual(revokedCRL.crlNumber, [0x02])
        XCTAssertEqual(revokedCRL.revokedCertificates.map(\.serialNumber), [[0x5E, 0x5E, 0x01]])
        XCTAssertEqual(revokedCRL.revokedCertificates.first?.revocationDate, Date(timeIntervalSince1970: 1_704_067_200))

        var trust = try trust(["server", "intermediate"], pki)
        trust.crls = [revokedCRL]
        var evaluation = trust.evaluate()
        assertFailures(evaluation, .fatalTrustFailure, [("revoked", 0)])
        XCTAssertEqual(evaluation.failures.first?.kind, .revoked(date: Date(timeIntervalSince1970: 1_704_067_200)))
        XCTAssertEqual(
            evaluation.revocation.map(\.status), [.revoked, .notChecked], "the intermediate has no CRL of the root")

        trust.crls = [try crl("crl-good", pki)]
        evaluation = trust.evaluate()
        assertFailures(evaluation, .unspecified, [])
        XCTAssertEqual(evaluation.revocation.first?.status, .good)
        XCTAssertTrue(evaluation.revocation.first?.source.contains("number 0x01") ?? false)

        for name in ["crl-stale", "crl-forged"] {
            trust.crls = [try crl(name, pki)]
            evaluation = trust.evaluate()
            assertFailures(evaluation, .unspecified, [])
            XCTAssertEqual(evaluation.revocation.first?.status, .notChecked, name)
            XCTAssertTrue(
                evaluation.warnings.contains {
                    $0.contains(name == "crl-stale" ? "stale since 2020-02-01" : "signature does not verify")
                },
                "\(name): \(evaluation.warnings)")
        }
        // The newest current CRL wins: good (number 1) and revoked (number 2) together -> revoked.
        trust.crls = [try crl("crl-good", pki), revokedCRL]
        XCTAssertEqual(trust.evaluate().result, .fatalTrustFailure)

        // openssl verify -crl_check: revoked fails, good passes.
        func opensslCRLCheck(_ crl: String) throws -> Int32 {
            try OpenSSL.runAllowingFailure([
                "verify", "-crl_check", "-CAfile", pki.path("root.pem"), "-untrusted", pki.path("intermediate.pem"),
                "-CRLfile", pki.path(crl + ".pem"), pki.path("server.pem")
            ]).status
        }
        XCTAssertNotEqual(try opensslCRLCheck("crl-revoked"), 0)
        XCTAssertEqual(try opensslCRLCheck("crl-good"), 0)
    }
}
