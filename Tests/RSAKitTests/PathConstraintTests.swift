import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitPKI

/// The constraints a CA puts on the path below it (RFC 5280 §6.1.4), on PKIs made by the real
/// `openssl`: pathLenConstraint does not count a self-issued certificate (a CA's key rollover,
/// NIST PKITS 4.6.15, 4.6.17) but counts every other intermediate; nameConstraints allow the
/// names inside the permitted subtree only.
final class PathConstraintTests: XCTestCase {
    private static let pki = Result { try ConstrainedPKI() }

    /// The PKI: root (anchor) -> "Limited CA" (pathlen:0, old key) -> "Limited CA" (self-issued
    /// with the new key, pathlen:0) -> rollover.pem; "Limited CA" -> "Sub CA" -> deep.pem;
    /// root -> "Named CA" (nameConstraints permitted;DNS:allowed.test) -> inside.pem, outside.pem.
    private final class ConstrainedPKI: Sendable {
        let directory: String
        func path(_ name: String) -> String { directory + "/" + name }
        func certificate(_ name: String) throws -> X509Certificate {
            try X509Certificate(
                pemRepresentation: String(
                    decoding: try Data(contentsOf: URL(fileURLWithPath: path(name + ".pem"))), as: UTF8.self))
        }

        init() throws {
            _ = try OpenSSL.require()
            directory = TestScratch.directory.appendingPathComponent("constrained-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for key in ["root", "limited-old", "limited-new", "sub", "named", "leaf"] {
                try OpenSSL.run([
                    "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path(key + ".key")
                ])
            }
            try OpenSSL.run([
                "req", "-x509", "-new", "-key", path("root.key"), "-subj", "/CN=Constraints Root", "-days", "3650",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                "-out", path("root.pem")
            ])
            let ca = "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
            let leaf = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            try issue(
                "limited", key: "limited-old", subject: "/CN=Limited CA", by: "root", key: "root", serial: "0x10",
                extensions: "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n")
            try issue(
                "limited-rollover", key: "limited-new", subject: "/CN=Limited CA", by: "limited", key: "limited-old",
                serial: "0x11",
                extensions: "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n")
            try issue(
                "rollover", key: "leaf", subject: "/CN=rollover.test", by: "limited-rollover", key: "limited-new",
                serial: "0x12", extensions: leaf)
            try issue(
                "sub", key: "sub", subject: "/CN=Sub CA", by: "limited", key: "limited-old", serial: "0x13",
                extensions: ca)
            try issue(
                "deep", key: "leaf", subject: "/CN=deep.test", by: "sub", key: "sub", serial: "0x14", extensions: leaf)
            try issue(
                "named", key: "named", subject: "/CN=Named CA", by: "root", key: "root", serial: "0x15",
                extensions: ca + "nameConstraints=critical,permitted;DNS:allowed.test\n")
            try issue(
                "inside", key: "leaf", subject: "/CN=www.allowed.test", by: "named", key: "named", serial: "0x16",
                extensions: leaf + "subjectAltName=DNS:www.allowed.test\n")
            try issue(
                "outside", key: "leaf", subject: "/CN=www.other.test", by: "named", key: "named", serial: "0x17",
                extensions: leaf + "subjectAltName=DNS:www.other.test\n")
            try issue(
                "dir-named", key: "named", subject: "/CN=Directory Named CA", by: "root", key: "root", serial: "0x18",
                extensions: ca
                    + "nameConstraints=critical,permitted;dirName:dir_sect,permitted;URI:.allowed.test,excluded;DNS:b"
                    + "ad.allowed.test\n"
                    + "[ dir_sect ]\nO=RSAKit Tests\n")
            for (name, subject, san, serial) in [
                ("dir-inside", "/O=RSAKit Tests/CN=in.test", "URI:https://www.allowed.test/x", "0x19"),
                ("dir-outside", "/O=Other Org/CN=out.test", "URI:https://www.allowed.test/x", "0x1A"),
                ("uri-outside", "/O=RSAKit Tests/CN=uri.test", "URI:https://www.other.test/x", "0x1B"),
                ("dns-excluded", "/O=RSAKit Tests/CN=dns.test", "DNS:www.bad.allowed.test", "0x1C")
            ] {
                try issue(
                    name, key: "leaf", subject: subject, by: "dir-named", key: "named", serial: serial,
                    extensions: leaf + "subjectAltName=\(san)\n")
            }
        }

        private func issue(
            _ name: String, key: String, subject: String, by issuer: String, key issuerKey: String, serial: String,
            extensions: String
        ) throws {
            try Data(extensions.utf8).write(to: URL(fileURLWithPath: path(name + ".ext")))
            try OpenSSL.run(["req", "-new", "-key", path(key + ".key"), "-subj", subject, "-out", path(name + ".csr")])
            try OpenSSL.run([
                "x509", "-req", "-in", path(name + ".csr"), "-CA", path(issuer + ".pem"), "-CAkey",
                path(issuerKey + ".key"),
                "-set_serial", serial, "-days", "3650", "-sha256", "-extfile", path(name + ".ext"), "-out",
                path(name + ".pem")
            ])
        }
    }

    private func evaluate(_ names: [String]) throws -> RSATrustEvaluation {
        let pki = try Self.pki.get()
        var trust = RSATrust(certificates: try names.map { try pki.certificate($0) }, policy: .basicX509)
        trust.anchorCertificates = [try pki.certificate("root")]
        trust.anchorCertificatesOnly = true
        return trust.evaluate()
    }

    private func codes(_ evaluation: RSATrustEvaluation) -> [String] {
        evaluation.failures.map { "\($0.kind.code)@\($0.chainIndex)" }
    }

    /// PKITS 4.6.15/4.6.17: the rollover certificate is self-issued, so pathlen:0 holds.
    func testPathLength_SelfIssuedRolloverIsNotCounted() throws {
        let evaluation = try evaluate(["rollover", "limited-rollover", "limited"])
        XCTAssertEqual(
            evaluation.chain.map(\.subjectSummary), ["rollover.test", "Limited CA", "Limited CA", "Constraints Root"])
        XCTAssertEqual(evaluation.result, .unspecified, "\(codes(evaluation))")
        XCTAssertEqual(RSATrust.pathLengthViolation(evaluation.chain), nil)
    }

    /// PKITS 4.6.1 style: "Sub CA" below the pathlen:0 CA breaks it; the failure names that CA.
    func testPathLength_AnotherIntermediateBreaksIt() throws {
        let evaluation = try evaluate(["deep", "sub", "limited"])
        XCTAssertEqual(evaluation.result, .fatalTrustFailure)
        XCTAssertEqual(codes(evaluation), ["constraints-violated@2"])
        XCTAssertEqual(RSATrust.pathLengthViolation(evaluation.chain), 2)
    }

    /// PKITS 4.13 (DN, URI), where GnuTLS 3.7.9 errs: a subject under the permitted
    /// directoryName subtree with a URI under the permitted host passes; a subject outside
    /// it, a URI of another host, or a dNSName under the excluded subtree fails at the leaf;
    /// openssl agrees on each.
    func testNameConstraints_DirectoryNameURIAndExcluded() throws {
        let pki = try Self.pki.get()
        for (leaf, valid) in [
            ("dir-inside", true), ("dir-outside", false), ("uri-outside", false), ("dns-excluded", false)
        ] {
            let evaluation = try evaluate([leaf, "dir-named"])
            XCTAssertEqual(
                evaluation.result, valid ? .unspecified : .fatalTrustFailure, "\(leaf): \(codes(evaluation))")
            XCTAssertEqual(codes(evaluation), valid ? [] : ["constraints-violated@0"], leaf)
            let openssl = try OpenSSL.runAllowingFailure([
                "verify", "-CAfile", pki.path("root.pem"), "-untrusted", pki.path("dir-named.pem"),
                pki.path(leaf + ".pem")
            ])
            XCTAssertEqual(openssl.status == 0, valid, "openssl on \(leaf): \(openssl.stderr)")
        }
    }

    /// Name forms inside and outside subtrees (RFC 5280 §4.2.1.10).
    func testGeneralNameSubtrees() {
        func name(_ tag: UInt8, _ text: String) -> X509GeneralName { .other(tag: tag, content: Array(text.utf8)) }
        let cases: [(X509GeneralName, X509GeneralName, Bool)] = [
            (name(0x82, "www.example.com"), name(0x82, "example.com"), true),
            (name(0x82, "example.com"), name(0x82, "example.com"), true),
            (name(0x82, "badexample.com"), name(0x82, "example.com"), false),
            (name(0x81, "a@mail.example.com"), name(0x81, ".example.com"), true),
            (name(0x81, "a@example.com"), name(0x81, ".example.com"), false),
            (name(0x81, "a@Example.com"), name(0x81, "example.com"), true),
            (name(0x81, "b@example.com"), name(0x81, "a@example.com"), false),
            (
                .uniformResourceIdentifier("https://user@Host.Example.com:8443/p"),
                .uniformResourceIdentifier(".example.com"), true
            ),
            (.uniformResourceIdentifier("https://example.com/"), .uniformResourceIdentifier(".example.com"), false),
            (.uniformResourceIdentifier("urn:isbn:123"), .uniformResourceIdentifier("example.com"), false),
            (
                .other(tag: 0x87, content: [10, 1, 2, 3]), .other(tag: 0x87, content: [10, 1, 0, 0, 255, 255, 0, 0]),
                true
            ),
            (
                .other(tag: 0x87, content: [10, 2, 2, 3]), .other(tag: 0x87, content: [10, 1, 0, 0, 255, 255, 0, 0]),
                false
            )
        ]
        for (value, base, inside) in cases {
            XCTAssertEqual(value.isWithin(base), inside, "\(value) in \(base)")
        }
    }

    /// A name inside the permitted subtree passes; one outside fails at the leaf, as openssl says too.
    func testNameConstraints_PermittedSubtree() throws {
        let inside = try evaluate(["inside", "named"])
        XCTAssertEqual(inside.result, .unspecified, "\(codes(inside))")
        let outside = try evaluate(["outside", "named"])
        XCTAssertEqual(outside.result, .fatalTrustFailure)
        XCTAssertEqual(codes(outside), ["constraints-violated@0"])
        let pki = try Self.pki.get()
        let openssl = try OpenSSL.runAllowingFailure([
            "verify", "-CAfile", pki.path("root.pem"), "-untrusted", pki.path("named.pem"), pki.path("outside.pem")
        ])
        XCTAssertNotEqual(openssl.status, 0, "openssl verify refuses it too: \(openssl.stderr)")
    }
}
