import Foundation
import XCTest
import RSAKitTestSupport

/// A key is stored once (by SPKI fingerprint); re-importing
/// its identity under a new tag and label either moves it (--replace) or is refused, and the
/// result is one identity listed under the new names.
final class CLIIdentityReimportTests: CLITestCase {
    private func makePKCS12() throws -> String {
        _ = try openssl()
        _ = try OpenSSL.run([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("alice.key"), "-out", path("alice.pem"),
            "-subj", "/CN=alice.example", "-days", "30"
        ])
        _ = try OpenSSL.run([
            "pkcs12", "-export", "-inkey", path("alice.key"), "-in", path("alice.pem"), "-name", "alice",
            "-passout", "pass:p", "-out", path("alice.p12")
        ])
        return path("alice.p12")
    }

    private func keyTags() throws -> [String] {
        let items =
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["list", "--json"]).stdout)) as! [[String: Any]]
        return items.filter { $0["class"] as? String == "key" }.compactMap { $0["applicationTag"] as? String }.sorted()
    }

    func testReimportUnderANewTag_MovesTheKeyWithReplace_AndIsRefusedWithout() throws {
        let p12 = try makePKCS12()
        XCTAssertTrue(
            try rsakitOK(["identity", "import", p12, "--passin", "pass:p"]).stdoutText.hasPrefix(
                "imported identity: alice\n"))
        XCTAssertEqual(try keyTags(), ["alice", "alice"])

        // Without --replace: refused, naming the tag it is under, and nothing changes.
        let refused = try rsakit([
            "identity", "import", p12, "--label", "alice-sp", "--tag", "alice-sp", "--passin", "pass:p"
        ])
        assertFailure(
            refused, status: 73,
            contains: "is already stored under tag \"alice\": give --replace to move it to tag \"alice-sp\"")
        XCTAssertEqual(try keyTags(), ["alice", "alice"])

        // With --replace: one key pair, under the new tag; one certificate, with the new label; one identity.
        let moved = try rsakitOK([
            "identity", "import", p12, "--replace", "--label", "alice-sp", "--tag", "alice-sp", "--passin", "pass:p"
        ])
        XCTAssertTrue(
            moved.stdoutText.hasPrefix(
                "imported identity: alice-sp\nsubject summary: alice.example\nprivate key tag: alice-sp\n"),
            moved.stdoutText)
        XCTAssertEqual(try keyTags(), ["alice-sp", "alice-sp"])
        let identities =
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["identity", "list", "--json"]).stdout))
            as! [[String: Any]]
        XCTAssertEqual(identities.count, 1)
        XCTAssertEqual(identities.first?["label"] as? String, "alice-sp")
        XCTAssertEqual(identities.first?["privateKeyTag"] as? String, "alice-sp")
        let certificates =
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["cert", "list", "--json"]).stdout))
            as! [[String: Any]]
        XCTAssertEqual(certificates.compactMap { $0["label"] as? String }, ["alice-sp"])
        assertFailure(
            try rsakit(["identity", "show", "--label", "alice"]), status: 66, contains: "did you mean 'alice-sp'?")
        // The moved key still decrypts what was encrypted to the certificate's key.
        _ = try write(Array("moved\n".utf8), to: "m")
        try rsakitOK(["encrypt", "--tag", "alice-sp", "--in", path("m"), "--out", path("c")])
        XCTAssertEqual(try rsakitOK(["decrypt", "--tag", "alice-sp", "--in", path("c")]).stdoutText, "moved\n")
    }
}
