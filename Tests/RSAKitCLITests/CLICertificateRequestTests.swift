import Foundation
import XCTest
import RSAKitTestSupport

/// `rsakit cert request` and `rsakit cert self-sign`, checked by the real openssl: the
/// request's self-signature, subject and SANs (`openssl req -verify`, `-text`), a self-signed
/// certificate that verifies with itself (`openssl verify -CAfile`), a key on a SoftHSM2
/// token signing its own request, and a CA-issued certificate from that request used for
/// mutual TLS against `openssl s_server -Verify 1`.
final class CLICertificateRequestTests: CLITestCase {
    static let softHSMModule = "/usr/lib/softhsm/libsofthsm2.so"
    private var servers: [TLSTestServer] = []

    override func tearDownWithError() throws {
        for server in servers { server.stop() }
        servers = []
        try super.tearDownWithError()
    }

    /// Run openssl, require exit 0, return stdout (stderr appended: `req -verify` reports there).
    @discardableResult
    private func openssl(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try runProcess(try openssl(), arguments)
        XCTAssertEqual(
            result.status, 0, "openssl \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result.stdoutText + result.stderr
    }

    /// A 2048-bit key made by openssl (key.pem, kept for comparisons) and imported under `tag`.
    private func importedKey(tag: String) throws {
        try openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path("key.pem")])
        try rsakitOK(["import", "--tag", tag, path("key.pem")])
    }

    func testRequest_StoredKey_OpenSSLVerifiesSubjectSANsAndKey() throws {
        try importedKey(tag: "web")
        let subject = "CN=host.example.com,O=Example Org,C=GB"
        try rsakitOK([
            "cert", "request", "--tag", "web", "--subject", subject,
            "--san", "DNS:host.example.com", "--san", "DNS:*.example.com", "--san", "IP:192.0.2.7",
            "--san", "IP:2001:db8::1", "--san", "email:ops@example.com", "--san", "URI:https://example.com/x",
            "--out", path("req.pem")
        ])
        XCTAssertTrue(try openssl(["req", "-in", path("req.pem"), "-verify", "-noout"]).contains("verify OK"))
        XCTAssertEqual(
            try openssl(["req", "-in", path("req.pem"), "-noout", "-subject", "-nameopt", "RFC2253"]),
            "subject=\(subject)\n")
        let text = try openssl(["req", "-in", path("req.pem"), "-noout", "-text"])
        XCTAssertTrue(
            text.contains(
                "DNS:host.example.com, DNS:*.example.com, IP Address:192.0.2.7, IP Address:2001:DB8:0:0:0:0:0:1, "
                    + "email:ops@example.com, URI:https://example.com/x"
            ), text)
        XCTAssertTrue(text.contains("Signature Algorithm: sha256WithRSAEncryption"), text)
        XCTAssertTrue(text.contains("Version: 1 (0x0)"), text)
        // The request's key is the stored key.
        let stored = try openssl(["pkey", "-in", path("key.pem"), "-pubout"])
        XCTAssertEqual(try openssl(["req", "-in", path("req.pem"), "-noout", "-pubkey"]), stored)

        // RSASSA-PSS with SHA-384, DER to standard output; no SANs means no extensionRequest.
        let der = try rsakitOK([
            "cert", "request", "--tag", "web", "--subject", "CN=pss", "--scheme", "pss", "--hash", "sha384", "--der"
        ]).stdout
        try Data(der).write(to: URL(fileURLWithPath: path("req.der")))
        XCTAssertEqual(der.first, 0x30)
        XCTAssertTrue(
            try openssl(["req", "-inform", "DER", "-in", path("req.der"), "-verify", "-noout"]).contains("verify OK"))
        let pss = try openssl(["req", "-inform", "DER", "-in", path("req.der"), "-noout", "-text"])
        XCTAssertTrue(pss.contains("Signature Algorithm: rsassaPss"), pss)
        XCTAssertTrue(pss.contains("Hash Algorithm: sha384"), pss)
        XCTAssertTrue(pss.contains("Salt Length: 0x30"), pss)
        XCTAssertFalse(pss.contains("Subject Alternative Name"), pss)
    }

    func testSelfSign_VerifiesWithItself_StoredKey_OpenSSLExtensions() throws {
        try importedKey(tag: "me")
        try rsakitOK([
            "cert", "self-sign", "--tag", "me", "--subject", "CN=me.example,O=Example", "--days", "30",
            "--san", "DNS:me.example", "--out", path("me.pem")
        ])
        XCTAssertEqual(try openssl(["verify", "-CAfile", path("me.pem"), path("me.pem")]), "\(path("me.pem")): OK\n")
        XCTAssertEqual(
            try openssl(["x509", "-in", path("me.pem"), "-noout", "-pubkey"]),
            try openssl(["pkey", "-in", path("key.pem"), "-pubout"]))
        let text = try openssl(["x509", "-in", path("me.pem"), "-noout", "-text"])
        XCTAssertTrue(text.contains("Version: 3 (0x2)"), text)
        XCTAssertTrue(text.contains("Issuer: O = Example, CN = me.example"), text)
        XCTAssertTrue(text.contains("Subject: O = Example, CN = me.example"), text)
        XCTAssertTrue(text.contains("X509v3 Basic Constraints: critical\n                CA:FALSE"), text)
        XCTAssertTrue(
            text.contains(
                "X509v3 Key Usage: critical\n                Digital Signature, Non Repudiation, Key Encipherment"),
            text)
        XCTAssertTrue(text.contains("DNS:me.example"), text)
        // Subject and authority key identifiers: what openssl itself writes for this key.
        try openssl([
            "req", "-x509", "-new", "-key", path("key.pem"), "-subj", "/CN=reference", "-days", "1", "-out",
            path("ref.pem")
        ])
        let reference = try openssl([
            "x509", "-in", path("ref.pem"), "-noout", "-ext", "subjectKeyIdentifier,authorityKeyIdentifier"
        ])
        XCTAssertEqual(
            try openssl(["x509", "-in", path("me.pem"), "-noout", "-ext", "subjectKeyIdentifier,authorityKeyIdentifier"]
            ), reference)
        // 30 days, a positive 20-byte serial (40 hex digits, the first below 8).
        let dates = try openssl([
            "x509", "-in", path("me.pem"), "-noout", "-startdate", "-enddate", "-dateopt", "iso_8601"
        ])
        let stamps = dates.split(separator: "\n").map {
            ISO8601DateFormatter().date(
                from: String($0.split(separator: "=")[1]).replacingOccurrences(of: " ", with: "T"))
        }
        XCTAssertEqual(stamps.count, 2)
        if let start = stamps.first ?? nil, let end = stamps.last ?? nil {
            XCTAssertEqual(end.timeIntervalSince(start), 30 * 86_400)
            XCTAssertLessThan(abs(start.timeIntervalSinceNow), 120)
        }
        let serial = try openssl(["x509", "-in", path("me.pem"), "-noout", "-serial"]).dropFirst("serial=".count)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(serial.count, 40, serial)
        XCTAssertLessThan(Int(String(serial.first!), radix: 16)!, 8, serial)

        // --ca, stored with --add: the key becomes an identity; a second one has another serial.
        let added = try rsakitOK([
            "cert", "self-sign", "--tag", "me", "--subject", "CN=My CA", "--days", "2", "--ca", "--add", "--out",
            path("ca.pem")
        ]).stdoutText
        XCTAssertTrue(added.contains("added certificate: label: My CA"), added)
        XCTAssertTrue(added.contains("identity: private key tag me"), added)
        let ca = try openssl(["x509", "-in", path("ca.pem"), "-noout", "-text"])
        XCTAssertTrue(ca.contains("CA:TRUE"), ca)
        XCTAssertTrue(ca.contains("Digital Signature, Certificate Sign, CRL Sign"), ca)
        XCTAssertEqual(try openssl(["verify", "-CAfile", path("ca.pem"), path("ca.pem")]), "\(path("ca.pem")): OK\n")
        XCTAssertNotEqual(try openssl(["x509", "-in", path("ca.pem"), "-noout", "-serial"]), "serial=" + serial + "\n")
        let exported = try rsakitOK(["cert", "export", "--label", "My CA"]).stdoutText
        XCTAssertEqual(exported, try String(contentsOfFile: path("ca.pem"), encoding: .utf8))
    }

    /// A key generated on a SoftHSM2 token signs its own request (C_Sign on the token); a CA
    /// issues the certificate from it (`openssl x509 -req`); added to the store it makes the
    /// token key an identity that `rsakit tls connect` completes mutual TLS with.
    func testRequest_TokenKey_CAIssuedCertificate_MutualTLS() throws {
        guard FileManager.default.fileExists(atPath: Self.softHSMModule) else {
            XCTFail("\(Self.softHSMModule) not found: scripts/install-deps.sh installs it (apt package softhsm2)")
            return
        }
        let openssl = try openssl()
        let tokens = path("tokens")
        try FileManager.default.createDirectory(atPath: tokens, withIntermediateDirectories: true)
        try "directories.tokendir = \(tokens)\nobjectstore.backend = file\nlog.level = ERROR\n".write(
            toFile: path("softhsm2.conf"), atomically: true, encoding: .utf8)
        let environment: [String: String?] = [
            "SOFTHSM2_CONF": path("softhsm2.conf"), "RSAKIT_TOKEN_PIN": nil, "RSAKIT_PASSIN": nil
        ]
        let softhsm = ["/usr/bin/softhsm2-util", TestTools.path(of: "softhsm2-util")].compactMap { $0 }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        let initialised = try runProcess(
            try XCTUnwrap(softhsm, "softhsm2-util not found"),
            ["--init-token", "--free", "--label", "T", "--pin", "1234", "--so-pin", "5678"], environment: environment)
        XCTAssertEqual(initialised.status, 0, initialised.stderr)
        try rsakitOK(
            [
                "genpair", "--tag", "tk", "--token", "pkcs11:token=T?module-path=\(Self.softHSMModule)", "--token-pin",
                "pass:1234"
            ], environment: environment)

        // The wrong PIN: a clear error and no request file.
        assertFailure(
            try rsakit(
                [
                    "cert", "request", "--tag", "tk", "--subject", "CN=token-client", "--token-pin", "pass:0000",
                    "--out", path("bad.pem")
                ],
                environment: environment), status: 65, contains: "wrong token PIN")
        XCTAssertFalse(exists("bad.pem"))
        try rsakitOK(
            [
                "cert", "request", "--tag", "tk", "--subject", "CN=token-client,O=RSAKit Tests", "--san",
                "email:client@example.com",
                "--token-pin", "pass:1234", "--out", path("tk.csr")
            ], environment: environment)
        XCTAssertTrue(try self.openssl(["req", "-in", path("tk.csr"), "-verify", "-noout"]).contains("verify OK"))
        let exported = try rsakitOK(["export", "--tag", "tk"], environment: environment).stdoutText
        XCTAssertEqual(try self.openssl(["req", "-in", path("tk.csr"), "-noout", "-pubkey"]), exported)

        let pki = try TLSTestPKI.shared(openssl: openssl)
        try "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n".write(
            toFile: path("client.ext"), atomically: true, encoding: .utf8)
        try self.openssl([
            "x509", "-req", "-in", path("tk.csr"), "-CA", pki.path("ca.pem"), "-CAkey", pki.path("ca.key"),
            "-set_serial", "4711",
            "-days", "2", "-extfile", path("client.ext"), "-copy_extensions", "copy", "-out", path("tk.pem")
        ])
        XCTAssertTrue(
            try self.openssl(["x509", "-in", path("tk.pem"), "-noout", "-text"]).contains("email:client@example.com"))
        let added = try rsakitOK(["cert", "add", path("tk.pem")], environment: environment).stdoutText
        XCTAssertTrue(added.contains("identity: private key tag tk"), added)

        let server = try startMutualTLSServer(pki, openssl: openssl)
        servers.append(server)
        let result = try connectTLS(
            server, ["--tag", "tk", "--anchor", pki.path("ca.pem"), "--tls1.3", "--token-pin", "pass:1234"],
            environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        TLSTestPKI.assertServerSawClientCertificate(
            result.stdoutText, version: "TLSv1.3", subject: "O=RSAKit Tests, CN=token-client")
    }

    func testErrors_BadSubjectUnknownTagBadSAN_NoOutputStoreUnchanged() throws {
        try importedKey(tag: "k")
        let before = try storeSnapshot()
        func refused(_ arguments: [String], status: Int32, _ message: String, line: UInt = #line) throws {
            assertFailure(
                try rsakit(["cert"] + arguments + ["--out", path("out.pem")]), status: status, contains: message,
                line: line)
            XCTAssertFalse(exists("out.pem"), "an output file was left for \(arguments)", line: line)
        }
        try refused(
            ["request", "--tag", "k", "--subject", "CN=x,NOSUCHATTR=y"], status: 64,
            "--subject: invalid distinguished name \"CN=x,NOSUCHATTR=y\"")
        try refused(
            ["self-sign", "--tag", "k", "--subject", "just words", "--days", "1"], status: 64,
            "--subject: invalid distinguished name \"just words\"")
        try refused(["request", "--tag", "k", "--subject", ""], status: 64, "it is empty")
        try refused(["request", "--tag", "nope", "--subject", "CN=x"], status: 66, "no key with tag \"nope\"")
        try refused(
            ["request", "--tag", "k", "--subject", "CN=x", "--san", "DNS:bad name.example"], status: 64,
            "--san: invalid subject alternative name \"DNS:bad name.example\": a DNS name is labels")
        try refused(
            ["request", "--tag", "k", "--subject", "CN=x", "--san", "IP:300.1.2.3"], status: 64,
            "not an IPv4 or IPv6 address")
        try refused(
            ["request", "--tag", "k", "--subject", "CN=x", "--san", "host.example"], status: 64, "expected TYPE:VALUE")
        try refused(
            ["request", "--tag", "k", "--subject", "CN=x", "--san", "RID:1.2.3"], status: 64, "unknown type \"RID\"")
        try refused(
            ["self-sign", "--tag", "k", "--subject", "CN=x", "--days", "0"], status: 64,
            "--days must be 1 to 36500, got 0")
        try refused(["self-sign", "--tag", "k", "--subject", "CN=x"], status: 64, "self-sign needs --days")
        try refused(["request", "--subject", "CN=x"], status: 64, "--tag")
        // No failure above changed the store.
        XCTAssertEqual(try storeSnapshot(), before)
    }
}
