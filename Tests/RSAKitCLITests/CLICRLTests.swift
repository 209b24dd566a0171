import Foundation
import XCTest
import RSAKitTestSupport

/// `rsakit crl add | list | delete` through the built binary, with openssl-made CRLs
/// (TestPKI: crl-good number 1, crl-revoked number 2 listing the server, crl-stale,
/// crl-forged), and stored CRLs used by `trust evaluate` without --crl.
final class CLICRLTests: CLITestCase {
    private func file(_ name: String) throws -> String {
        _ = try openssl()
        return try TestPKI.shared().path(name)
    }

    func testCRL_AddSupersedeListDelete_UsedByTrustEvaluate() throws {
        let evaluate = [
            "trust", "evaluate", try file("server.pem"), "--chain", try file("intermediate.pem"),
            "--anchor", try file("root.pem"), "--anchors-only"
        ]
        let added = try rsakitOK(["crl", "add", try file("crl-good.pem")]).stdoutText
        XCTAssertTrue(
            added.hasPrefix(
                "added CRL: issuer: O=RSAKit Tests,CN=RSAKit Test Intermediate, number: 0x01, revoked: 0, fingerprint: "
            ), added)
        XCTAssertTrue(
            try rsakitOK(evaluate).stdoutText.contains(
                "  0: good (CRL of O=RSAKit Tests,CN=RSAKit Test Intermediate, number 0x01"))

        let newer = try rsakitOK(["crl", "add", try file("crl-revoked.pem")]).stdoutText
        XCTAssertTrue(newer.contains("number: 0x02, revoked: 1"), newer)
        XCTAssertTrue(newer.contains("superseded CRL number 0x01"), newer)
        assertFailure(
            try rsakit(["crl", "add", try file("crl-revoked.pem")]), status: 73,
            contains: "issued by \"O=RSAKit Tests,CN=RSAKit Test Intermediate\" with number 0x02")
        let list = try rsakitOK(["crl", "list"]).stdoutText
        XCTAssertTrue(list.hasPrefix("NUMBER   THIS UPDATE"), list)
        XCTAssertEqual(list.split(separator: "\n").count, 2, list)
        XCTAssertTrue(list.contains("0x02 "), list)
        let json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["crl", "list", "--json"]).stdout))
                as? [[String: Any]])
        XCTAssertEqual(json.count, 1)
        XCTAssertEqual(json[0]["crlNumber"] as? String, "02")
        XCTAssertEqual(json[0]["revokedCount"] as? Int, 1)
        XCTAssertEqual(json[0]["class"] as? String, "crl")

        // The stored CRL revokes the server without --crl.
        let revoked = try rsakit(evaluate)
        XCTAssertEqual(revoked.status, 65, revoked.stderr)
        XCTAssertTrue(revoked.stdoutText.hasPrefix("result: fatal-trust-failure\n"), revoked.stdoutText)
        XCTAssertTrue(revoked.stdoutText.contains("revoked on 2024-01-01T00:00:00Z"), revoked.stdoutText)

        // Refused by name, the store unchanged: older, duplicate, stale, not a CRL.
        let before = try storeSnapshot()
        assertFailure(
            try rsakit(["crl", "add", try file("crl-good.pem")]), status: 65,
            contains:
                "CRL refused: a newer CRL of \"O=RSAKit Tests,CN=RSAKit Test Intermediate\" is stored (number 0x02)")
        assertFailure(try rsakit(["crl", "add", try file("crl-revoked.pem")]), status: 73, contains: "CRL")
        assertFailure(
            try rsakit(["crl", "add", try file("crl-stale.pem")]), status: 65,
            contains: "is stale: nextUpdate 2020-02-01T00:00:00Z has passed")
        assertFailure(
            try rsakit(["crl", "add", try file("server.pem")]), status: 65, contains: "cannot read the CRL file")
        XCTAssertEqual(try storeSnapshot(), before)

        assertFailure(
            try rsakit(["crl", "delete"]), status: 64, contains: "delete needs one of --issuer or --fingerprint")
        assertFailure(
            try rsakit(["crl", "delete", "--issuer", "CN=Nobody"]), status: 66, contains: "CRL issued by \"CN=Nobody\"")
        let fingerprint = try XCTUnwrap(json[0]["fingerprint"] as? String)
        XCTAssertEqual(
            try rsakitOK(["crl", "delete", "--fingerprint", fingerprint]).stdoutText,
            "deleted CRL: issuer: O=RSAKit Tests,CN=RSAKit Test Intermediate, number: 0x02\n")
        XCTAssertEqual(try rsakitOK(["crl", "list"]).stdoutText, "no CRLs in the store\n")
        XCTAssertEqual(try rsakitOK(evaluate).status, 0)
    }

    /// A CRL item is an item like the others: `show --id` and `delete --id` take its item id.
    func testCRL_ShowAndDeleteByItemID() throws {
        try rsakitOK(["crl", "add", try file("crl-good.pem")])
        let json = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["crl", "list", "--json"]).stdout))
                as? [[String: Any]])
        let id = try XCTUnwrap(json.first?["itemID"] as? String)
        let shown = try rsakitOK(["show", "--id", id]).stdoutText
        XCTAssertTrue(
            shown.hasPrefix("class: CRL\nissuer: O=RSAKit Tests,CN=RSAKit Test Intermediate\nnumber: 0x01\n"), shown)
        XCTAssertTrue(shown.contains("item id: \(id)\n"), shown)
        let shownJSON = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["show", "--id", id, "--json"]).stdout))
                as? [[String: Any]])
        XCTAssertEqual(shownJSON.first?["class"] as? String, "crl")
        XCTAssertEqual(shownJSON.first?["itemID"] as? String, id)
        XCTAssertEqual(try rsakitOK(["delete", "--id", id]).stdoutText, "deleted CRL item: \(id)\n")
        XCTAssertEqual(try rsakitOK(["crl", "list"]).stdoutText, "no CRLs in the store\n")
        assertFailure(try rsakit(["show", "--id", id]), status: 66, contains: id)
    }

    func testCRL_ForgedRefusedWhenTheIssuerIsStored() throws {
        try rsakitOK(["cert", "add", try file("intermediate.pem")])
        let before = try storeSnapshot()
        assertFailure(
            try rsakit(["crl", "add", try file("crl-forged.pem")]), status: 65,
            contains: "does not verify with the key of the stored certificate of that name")
        XCTAssertEqual(try storeSnapshot(), before)
    }

    /// A PEM bundle goes in whole or not at all.
    func testCRL_AddBundle_AllOrNothing() throws {
        let bundle = workDirectory.appendingPathComponent("bundle.pem").path
        let stale = workDirectory.appendingPathComponent("stale-bundle.pem").path
        try
            (try String(contentsOfFile: try file("crl-good.pem"), encoding: .utf8)
            + String(contentsOfFile: try file("crl-revoked.pem"), encoding: .utf8))
            .write(toFile: bundle, atomically: true, encoding: .utf8)
        try
            (try String(contentsOfFile: try file("crl-good.pem"), encoding: .utf8)
            + String(contentsOfFile: try file("crl-stale.pem"), encoding: .utf8))
            .write(toFile: stale, atomically: true, encoding: .utf8)
        try rsakitOK(["cert", "add", try file("root.pem")])
        let before = try storeSnapshot()
        assertFailure(try rsakit(["crl", "add", stale]), status: 65, contains: "is stale")
        XCTAssertEqual(try storeSnapshot(), before)
        let text = try rsakitOK(["crl", "add", bundle]).stdoutText
        XCTAssertEqual(text.split(separator: "\n").filter { $0.hasPrefix("added CRL:") }.count, 2, text)
        XCTAssertTrue(try rsakitOK(["crl", "list"]).stdoutText.contains("0x02 "))
    }

    /// `tls connect` checks the server's chain against the stored CRLs without --crl.
    func testTLSConnect_UsesStoredCRLs() throws {
        let opensslPath = try openssl()
        // openssl s_server -accept 127.0.0.1:PORT -cert server.pem -cert_chain intermediate.pem -key leaf.key -www
        let server = try TLSTestServer(
            openssl: opensslPath,
            arguments: [
                "-cert", try file("server.pem"), "-cert_chain", try file("intermediate.pem"),
                "-key", try file("leaf.key"), "-www"
            ], directory: workDirectory.path)
        defer { server.stop() }
        let connect = [
            "-k", "5", "60", Self.binary.path, "tls", "connect", "127.0.0.1:\(server.port)", "--servername",
            "server.rsakit.test",
            "--anchor", try file("root.pem"), "--anchors-only"
        ]
        let request = Array("GET / HTTP/1.0\r\n\r\n".utf8)
        try rsakitOK(["crl", "add", try file("crl-good.pem")])
        let good = try runProcess("/usr/bin/timeout", connect + ["-v"], stdin: request)
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(good.stderr.contains("rsakit: revocation: certificate 0: good (CRL of "), good.stderr)
        try rsakitOK(["crl", "add", try file("crl-revoked.pem")])
        let revoked = try runProcess("/usr/bin/timeout", connect, stdin: request)
        XCTAssertEqual(revoked.status, 65, revoked.stderr)
        XCTAssertTrue(revoked.stderr.contains("revoked on 2024-01-01T00:00:00Z"), revoked.stderr)
    }

    /// A CRL signed by the CA's separate CRL-signing certificate (RFC 5280 §6.3.3 (f), PKITS
    /// 4.4.19) is used when that certificate is among the --chain candidates and validates;
    /// once the root's CRL revokes it (PKITS 4.4.20), the CRL is refused by name and the leaf
    /// is unchecked, a failure under --require-revocation.
    func testTrustEvaluate_CRLSignedBySeparateKey() throws {
        _ = try openssl()
        let pki = try SeparateCRLKeyPKI()
        let evaluate = [
            "trust", "evaluate", pki.path("good.pem"), "--chain", pki.path("ca-certs.pem"), "--chain",
            pki.path("ca-crls.pem"),
            "--anchor", pki.path("root.pem"), "--anchors-only", "--require-revocation", "--crl", pki.path("crl-ca.pem")
        ]
        let good = try rsakitOK(evaluate + ["--crl", pki.path("crl-root-good.pem")])
        XCTAssertTrue(good.stdoutText.hasPrefix("result: unspecified\n"), good.stdoutText)
        XCTAssertTrue(
            good.stdoutText.contains("  0: good (CRL of O=RSAKit Tests,CN=Separate Keys CA, number 0x01, thisUpdate "),
            good.stdoutText)
        XCTAssertTrue(
            good.stdoutText.contains(", signed by the CRL signer Separate Keys CA (serial 11))\n"), good.stdoutText)
        XCTAssertEqual(good.stderr, "")

        let refused = try rsakit(evaluate + ["--crl", pki.path("crl-root-signer-revoked.pem")])
        XCTAssertEqual(refused.status, 65, refused.stderr)
        XCTAssertTrue(refused.stdoutText.hasPrefix("result: recoverable-trust-failure\n"), refused.stdoutText)
        XCTAssertTrue(
            refused.stderr.contains(
                "rsakit: warning: CRL of O=RSAKit Tests,CN=Separate Keys CA refused: the certificate that signed it "
                    + "(Separate Keys CA, serial 11) does not validate: fatal-trust-failure"
            ),
            refused.stderr)
        XCTAssertTrue(
            refused.stdoutText.contains(
                "revocation status could not be established: no current CRL of O=RSAKit Tests,CN=Separate Keys CA"),
            refused.stdoutText)
    }
}
