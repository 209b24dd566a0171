import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitCore
@testable import RSAKitPKI
@testable import RSAKitKeychain

/// RFC 5280 §7.1 name comparison (X509Name): attribute types by OID, PrintableString and
/// UTF8String values prepared (RFC 4518 insignificant space handling and case folding), other
/// types by tag and octets; the names decoded by GnuTLS from openssl-made certificates.
final class X509NameTests: XCTestCase {
    private static let cn = "2.5.4.3", o = "2.5.4.10", c = "2.5.4.6", email = "1.2.840.113549.1.9.1"
    private static let utf8: UInt = 12, printable: UInt = 19, ia5: UInt = 22

    private func name(_ rdns: [[(String, UInt, String)]]) -> X509Name {
        X509Name(rdns: rdns.map { $0.map { X509Name.Attribute(oid: $0.0, tag: $0.1, value: Array($0.2.utf8)) } })
    }

    func testPrepared_FoldsCaseAndInsignificantSpaces() {
        XCTAssertEqual(X509Name.prepared(Array("  Good   CA ".utf8)), "good ca")
        XCTAssertEqual(X509Name.prepared(Array("GOOD\tCA".utf8)), "good ca")
        XCTAssertEqual(X509Name.prepared(Array("Test Certificates 2011".utf8)), "test certificates 2011")
        XCTAssertEqual(
            X509Name.prepared(Array("ÉCOLE\u{00AD}S".utf8)), "écoles",
            "case folded beyond ASCII, SOFT HYPHEN mapped to nothing")
        XCTAssertEqual(X509Name.prepared(Array("a\u{00A0}b".utf8)), "a b", "NO-BREAK SPACE is a space")
        XCTAssertEqual(X509Name.prepared(Array("   ".utf8)), "")
        XCTAssertNil(X509Name.prepared([0xC3, 0x28]), "not UTF-8")
    }

    func testMatches_CaseSpacesAndStringTypes() {
        let ca = name([
            [(Self.c, Self.printable, "US")], [(Self.o, Self.printable, "Test Certificates 2011")],
            [(Self.cn, Self.printable, "Good CA")]
        ])
        XCTAssertTrue(
            ca.matches(
                name([
                    [(Self.c, Self.printable, "us")], [(Self.o, Self.utf8, " test  certificates 2011 ")],
                    [(Self.cn, Self.utf8, "GOOD CA")]
                ])))
        XCTAssertFalse(
            ca.matches(
                name([
                    [(Self.c, Self.printable, "US")], [(Self.o, Self.printable, "Test Certificates 2011")],
                    [(Self.cn, Self.printable, "Good CA Root")]
                ])),
            "another value")
        XCTAssertFalse(
            ca.matches(
                name([
                    [(Self.c, Self.printable, "US")], [(Self.cn, Self.printable, "Good CA")],
                    [(Self.o, Self.printable, "Test Certificates 2011")]
                ])),
            "RDNs in another order (PKITS 4.3.2)")
        XCTAssertFalse(
            ca.matches(name([[(Self.c, Self.printable, "US")], [(Self.o, Self.printable, "Test Certificates 2011")]])),
            "fewer RDNs")
        XCTAssertFalse(
            ca.matches(
                name([
                    [(Self.c, Self.printable, "US")], [(Self.o, Self.printable, "Test Certificates 2011")],
                    [(Self.o, Self.printable, "Good CA")]
                ])),
            "another attribute type")
        // Other string types compare as tag and octets.
        let mail = name([[(Self.email, Self.ia5, "CA@example.test")]])
        XCTAssertTrue(mail.matches(mail))
        XCTAssertFalse(mail.matches(name([[(Self.email, Self.ia5, "ca@example.test")]])))
        // A multi-valued RDN matches in any order within the RDN.
        let multi = name([[(Self.cn, Self.utf8, "A"), (Self.o, Self.utf8, "B")]])
        XCTAssertTrue(multi.matches(name([[(Self.o, Self.utf8, "b"), (Self.cn, Self.utf8, "a")]])))
        XCTAssertFalse(multi.matches(name([[(Self.o, Self.utf8, "b")], [(Self.cn, Self.utf8, "a")]])))
    }

    /// GnuTLS decodes the names of an openssl-made certificate (`-subj "/CN=RSAKit Test Root
    /// CA/O=RSAKit Tests"`, UTF8String by openssl's default string mask) into their attributes.
    func testDecode_OpenSSLMadeCertificate() throws {
        let pki = try TestPKI.shared()
        let root = try pki.certificate("root").gnutlsCertificate()
        let subject = try XCTUnwrap(root.subjectName())
        let attributes = subject.rdns.flatMap { $0 }
        XCTAssertEqual(Set(attributes.map(\.oid)), [Self.cn, Self.o])
        XCTAssertEqual(
            Set(attributes.map { String(decoding: $0.value, as: UTF8.self) }), ["RSAKit Test Root CA", "RSAKit Tests"])
        XCTAssertEqual(Set(attributes.map(\.tag)), [Self.utf8])
        XCTAssertTrue(subject.matches(try XCTUnwrap(root.issuerName())), "self-issued")
        let intermediate = try pki.certificate("intermediate").gnutlsCertificate()
        XCTAssertTrue(try XCTUnwrap(intermediate.issuerName()).matches(subject))
        XCTAssertFalse(try XCTUnwrap(intermediate.subjectName()).matches(subject))
    }

    /// A leaf whose issuer field differs from its CA's subject only in case and spaces is
    /// chained to that CA (PKITS 4.3.3-4.3.5), and openssl verify agrees; one naming another
    /// CA is not. Made with openssl in a scratch folder, TestPKI's root as the anchor:
    ///   openssl req -new -key case.key -subj "/CN=Case Chaining CA/O=RSAKit Tests" | openssl x509 -req
    ///     -CA root.pem -CAkey root.key -set_serial 0x7001 -days 3650 -extfile ca.ext -out case-ca.pem
    ///   openssl req -x509 -new -key case.key -subj "/CN=  case   CHAINING ca/O=rsakit tests" -days 3650 -out alias.pem
    ///   openssl req -new -key case.key -subj "/CN=case.leaf.test" | openssl x509 -req -CA alias.pem
    ///     -CAkey case.key -set_serial 0x7002 -days 3650 -out case-leaf.pem   (its issuer: the alias's spelling)
    func testChaining_IssuerNameDiffersInCaseAndSpaces() throws {
        let pki = try TestPKI.shared()
        let directory = TestScratch.directory.appendingPathComponent("names-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { directory + "/" + name }
        try OpenSSL.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path("case.key")])
        try Data("basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n".utf8).write(
            to: URL(fileURLWithPath: path("ca.ext")))
        try Data("basicConstraints=CA:FALSE\n".utf8).write(to: URL(fileURLWithPath: path("leaf.ext")))
        func issue(_ name: String, subject: String, ca: String, caKey: String, serial: String, ext: String) throws {
            try OpenSSL.run(["req", "-new", "-key", path("case.key"), "-subj", subject, "-out", path(name + ".csr")])
            try OpenSSL.run([
                "x509", "-req", "-in", path(name + ".csr"), "-CA", ca, "-CAkey", caKey, "-set_serial", serial,
                "-days", "3650", "-sha256", "-extfile", path(ext), "-out", path(name + ".pem")
            ])
        }
        try issue(
            "case-ca", subject: "/CN=Case Chaining CA/O=RSAKit Tests", ca: pki.path("root.pem"), caKey: pki.rootKey,
            serial: "0x7001", ext: "ca.ext")
        try OpenSSL.run([
            "req", "-x509", "-new", "-key", path("case.key"), "-subj", "/CN=  case   CHAINING ca/O=rsakit tests",
            "-days", "3650",
            "-out", path("alias.pem")
        ])
        try issue(
            "case-leaf", subject: "/CN=case.leaf.test", ca: path("alias.pem"), caKey: path("case.key"),
            serial: "0x7002", ext: "leaf.ext")
        try issue(
            "other-leaf", subject: "/CN=other.leaf.test", ca: pki.path("intermediate.pem"), caKey: pki.intermediateKey,
            serial: "0x7003", ext: "leaf.ext")

        func read(_ file: String) throws -> X509Certificate {
            try X509Certificate(pemRepresentation: try String(contentsOfFile: file, encoding: .utf8))
        }
        let leaf = try read(path("case-leaf.pem")), ca = try read(path("case-ca.pem"))
        XCTAssertEqual(leaf.issuer, #"O=rsakit tests,CN=\  case   CHAINING ca"#)
        var trust = RSATrust(certificates: [leaf, ca, try read(path("other-leaf.pem"))], policy: .basicX509)
        trust.anchorCertificates = [try pki.certificate("root")]
        trust.anchorCertificatesOnly = true
        let evaluation = trust.evaluate()
        XCTAssertEqual(evaluation.result, .unspecified, "\(evaluation.failures)")
        XCTAssertEqual(
            evaluation.chain.map(\.subjectSummary), ["case.leaf.test", "Case Chaining CA", "RSAKit Test Root CA"])
        XCTAssertEqual(
            try OpenSSL.runAllowingFailure([
                "verify", "-CAfile", pki.path("root.pem"), "-untrusted", path("case-ca.pem"),
                path("case-leaf.pem")
            ]).status, 0, "openssl matches names by their canonical form too")

        // A CRL whose issuer is spelled as the alias (case and spaces) is the CA's CRL: it
        // revokes the leaf (RFC 5280 §6.3.3 (b)(1) under §7.1); openssl agrees.
        //   index.txt: R 391231000000Z 240101000000Z 7002 unknown /CN=case.leaf.test
        //   openssl ca -batch -config crl.cnf -gencrl -keyfile case.key -cert alias.pem -out alias-crl.pem
        try Data("R\t391231000000Z\t240101000000Z\t7002\tunknown\t/CN=case.leaf.test\n".utf8).write(
            to: URL(fileURLWithPath: path("index.txt")))
        try Data("01\n".utf8).write(to: URL(fileURLWithPath: path("crlnumber")))
        try Data(
            ("[ ca ]\ndefault_ca = CA_default\n[ CA_default ]\ndatabase = \(path("index.txt"))\ncrlnumber = "
                + "\(path("crlnumber"))\ndefault_md = sha256\ndefault_crl_days = 30\n")
                .utf8
        )
        .write(to: URL(fileURLWithPath: path("crl.cnf")))
        try OpenSSL.run([
            "ca", "-batch", "-config", path("crl.cnf"), "-gencrl", "-keyfile", path("case.key"), "-cert",
            path("alias.pem"),
            "-out", path("alias-crl.pem")
        ])
        let aliasCRL = try XCTUnwrap(
            X509CRL.crls(from: Array(try Data(contentsOf: URL(fileURLWithPath: path("alias-crl.pem"))))).first)
        XCTAssertEqual(aliasCRL.issuer, #"O=rsakit tests,CN=\  case   CHAINING ca"#)
        var revoking = trust
        revoking.crls = [aliasCRL]
        let revoked = revoking.evaluate()
        XCTAssertEqual(revoked.result, .fatalTrustFailure)
        XCTAssertEqual(revoked.failures.map { "\($0.kind.code)@\($0.chainIndex)" }, ["revoked@0"])
        XCTAssertEqual(revoked.failures.first?.kind, .revoked(date: Date(timeIntervalSince1970: 1_704_067_200)))
        XCTAssertNotEqual(
            try OpenSSL.runAllowingFailure([
                "verify", "-crl_check", "-CAfile", pki.path("root.pem"), "-untrusted", path("case-ca.pem"),
                "-CRLfile", path("alias-crl.pem"), path("case-leaf.pem")
            ]).status, 0)

        // The link is still checked: a CA of that name with another key (TestPKI's leaf key,
        // issued by the root like case-ca.pem) is found by name and fails on the signature.
        //   openssl req -new -key leaf.key -subj "/CN=Case Chaining CA/O=RSAKit Tests" | openssl x509 -req
        //     -CA root.pem -CAkey root.key -set_serial 0x7004 -days 3650 -extfile ca.ext -out wrong-key-ca.pem
        try OpenSSL.run([
            "req", "-new", "-key", pki.leafKey, "-subj", "/CN=Case Chaining CA/O=RSAKit Tests", "-out",
            path("wrong-key-ca.csr")
        ])
        try OpenSSL.run([
            "x509", "-req", "-in", path("wrong-key-ca.csr"), "-CA", pki.path("root.pem"), "-CAkey", pki.rootKey,
            "-set_serial", "0x7004",
            "-days", "3650", "-sha256", "-extfile", path("ca.ext"), "-out", path("wrong-key-ca.pem")
        ])
        trust.certificates = [leaf, try read(path("wrong-key-ca.pem"))]
        // wrong-key-ca.pem's notBefore is the second it was made: after the first verify date on a
        // loaded machine.
        trust.verifyDate = Date()
        let forged = trust.evaluate()
        XCTAssertEqual(forged.result, .fatalTrustFailure)
        XCTAssertEqual(forged.failures.map { "\($0.kind.code)@\($0.chainIndex)" }, ["bad-signature@0"])
    }
}
