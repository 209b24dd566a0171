import Foundation
import XCTest
import RSAKitTestSupport

/// `rsakit trust evaluate`, `rsakit cert show` and encrypted key files through the built
/// binary. Fixtures are made by openssl once per process (commands beside them).
final class CLITrustAndCertificateTests: CLITestCase {
    /// A file of the shared openssl-made PKI (RSAKitTestSupport's TestPKI, commands beside it):
    /// root.pem (self-signed CA, 2019-2039), intermediate.pem, server.pem (serverAuth,
    /// DNS:server.rsakit.test), expired.pem (2020-01-01 .. 2021-01-01, serverAuth), leaf.key.
    private func file(_ name: String) throws -> String {
        _ = try openssl()
        return try TestPKI.shared().path(name)
    }

    /// An ssl-server evaluation without --hostname warns (stderr and the JSON `warnings`) that
    /// the leaf's names were not checked; with --hostname there is no such warning.
    func testTrustEvaluate_SSLServerWithoutHostname_Warns() throws {
        let base = [
            "trust", "evaluate", try file("server.pem"), "--chain", try file("intermediate.pem"),
            "--anchor", try file("root.pem"), "--anchors-only", "--policy", "ssl-server"
        ]
        let text = try rsakitOK(base)
        XCTAssertTrue(
            text.stderr.contains("rsakit: warning: the ssl-server policy was evaluated without a hostname"), text.stderr
        )
        let json = try rsakitOK(base + ["--json"])
        XCTAssertTrue(json.stderr.contains("without a hostname"), json.stderr)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout)) as! [String: Any]
        XCTAssertEqual(
            object["warnings"] as? [String],
            [
                "the ssl-server policy was evaluated without a hostname: the leaf's names were not checked, as a TLS "
                    + "client would check them"
            ])
        let named = try rsakitOK(base + ["--hostname", "server.rsakit.test", "--json"])
        XCTAssertFalse(named.stderr.contains("hostname"), named.stderr)
        XCTAssertEqual(
            (try JSONSerialization.jsonObject(with: Data(named.stdout)) as! [String: Any])["warnings"] as? [String], [])
    }

    func testTrustEvaluate_ServerChain_Unspecified() throws {
        let result = try rsakitOK([
            "trust", "evaluate", try file("server.pem"), "--chain", try file("intermediate.pem"),
            "--anchor", try file("root.pem"), "--anchors-only", "--policy", "ssl-server", "--hostname",
            "server.rsakit.test"
        ])
        let text = result.stdoutText
        XCTAssertTrue(text.hasPrefix("result: unspecified\npolicy: ssl-server (hostname server.rsakit.test)\n"), text)
        XCTAssertTrue(text.contains("  2: RSAKit Test Root CA (not after 2039-12-31T00:00:00Z) [anchor]"), text)
        XCTAssertFalse(text.contains("failures:"), text)
    }

    /// An intermediate stored with `cert add` completes the chain of a server
    /// certificate given alone (SecTrust searches the keychains); stored is not trusted.
    func testTrustEvaluate_UsesIntermediatesFromTheStore() throws {
        let alone = ["trust", "evaluate", try file("server.pem"), "--anchor", try file("root.pem"), "--anchors-only"]
        assertFailure(try rsakit(alone), status: 65, contains: "trust evaluation failed: recoverable-trust-failure")
        try rsakitOK(["cert", "add", try file("intermediate.pem"), "--label", "stored intermediate"])
        let text = try rsakitOK(alone).stdoutText
        XCTAssertTrue(text.hasPrefix("result: unspecified\n"), text)
        XCTAssertTrue(text.contains("  1: RSAKit Test Intermediate"), text)
        // Without the root as anchor, the stored intermediate anchors nothing.
        assertFailure(
            try rsakit(["trust", "evaluate", try file("server.pem"), "--anchors-only"]), status: 65,
            contains: "trust evaluation failed")
    }

    /// `trust evaluate --crl`: revoked is a fatal failure with its date, in text and
    /// JSON; a current CRL that does not list the server is "good"; a stale one is refused
    /// with a warning; a file that is not a CRL is a data error.
    func testTrustEvaluate_CRL_RevokedGoodStale() throws {
        let base = [
            "trust", "evaluate", try file("server.pem"), "--chain", try file("intermediate.pem"),
            "--anchor", try file("root.pem"), "--anchors-only"
        ]
        let revoked = try rsakit(base + ["--crl", try file("crl-revoked.pem")])
        XCTAssertEqual(revoked.status, 65, revoked.stderr)
        XCTAssertTrue(revoked.stdoutText.hasPrefix("result: fatal-trust-failure\n"), revoked.stdoutText)
        XCTAssertTrue(revoked.stdoutText.contains("  0: revoked (CRL of "), revoked.stdoutText)
        XCTAssertTrue(revoked.stdoutText.contains("revoked on 2024-01-01T00:00:00Z"), revoked.stdoutText)
        let json = try rsakit(base + ["--crl", try file("crl-revoked.pem"), "--json"])
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
        let checks = try XCTUnwrap(object["revocation"] as? [[String: Any]])
        XCTAssertEqual(checks.first?["status"] as? String, "revoked")
        XCTAssertEqual(checks.first?["revocationDate"] as? String, "2024-01-01T00:00:00.000Z")
        XCTAssertEqual((object["failures"] as? [[String: Any]])?.first?["reason"] as? String, "revoked")

        let good = try rsakitOK(base + ["--crl", try file("crl-good.pem")]).stdoutText
        XCTAssertTrue(good.contains("  0: good (CRL of "), good)
        let stale = try rsakitOK(base + ["--crl", try file("crl-stale.pem")])
        XCTAssertTrue(stale.stdoutText.contains("  0: not-checked"), stale.stdoutText)
        XCTAssertTrue(stale.stderr.contains("stale since 2020-02-01"), stale.stderr)
        assertFailure(
            try rsakit(base + ["--crl", try file("server.pem")]), status: 65, contains: "cannot read the CRL file")
    }

    /// `identity import --anchor` evaluates the imported chain as `trust evaluate`
    /// would, so a private PKI's identity reports its real trust result.
    func testIdentityImport_WithAnchor_ReportsTheChainTrusted() throws {
        let openssl = try openssl()
        let p12 = path("private-pki.p12")
        // openssl pkcs12 -export -inkey leaf.key -in server.pem -certfile intermediate.pem -passout pass:pki -out
        // private-pki.p12
        XCTAssertEqual(
            try runProcess(
                openssl,
                [
                    "pkcs12", "-export", "-inkey", try file("leaf.key"), "-in", try file("server.pem"),
                    "-certfile", try file("intermediate.pem"), "-passout", "pass:pki", "-out", p12
                ]
            ).status, 0)
        let anchored = try rsakitOK([
            "identity", "import", p12, "--passin", "pass:pki", "--label", "pki server",
            "--anchor", try file("root.pem"), "--anchors-only"
        ]).stdoutText
        XCTAssertTrue(anchored.contains("trust (basic X.509): unspecified\n"), anchored)
        let unanchored = try rsakitOK([
            "identity", "import", p12, "--passin", "pass:pki", "--label", "pki server", "--replace",
            "--anchors-only"
        ]).stdoutText
        XCTAssertTrue(unanchored.contains("trust (basic X.509): recoverable-trust-failure\n"), unanchored)
        // A bad anchor file stores nothing.
        let bad = try write(Array("not a certificate".utf8), to: "bad.pem")
        XCTAssertNotEqual(
            try rsakit(["identity", "import", p12, "--passin", "pass:pki", "--label", "other", "--anchor", bad]).status,
            0)
        XCTAssertFalse(try rsakitOK(["identity", "list"]).stdoutText.contains("other"))
    }

    /// The server's own certificate as the only anchor (pinning) is trusted.
    func testTrustEvaluate_LeafAsTheOnlyAnchor_Unspecified() throws {
        let result = try rsakitOK([
            "trust", "evaluate", try file("server.pem"), "--anchor", try file("server.pem"), "--anchors-only",
            "--policy", "ssl-server", "--hostname", "server.rsakit.test"
        ])
        XCTAssertTrue(result.stdoutText.hasPrefix("result: unspecified\n"), result.stdoutText)
        XCTAssertTrue(result.stdoutText.contains("  0: server.rsakit.test (not after "), result.stdoutText)
        XCTAssertTrue(result.stdoutText.contains(") [anchor]"), result.stdoutText)
        // A subject-equals-issuer certificate signed by another key is named for what it is.
        let sameName = try rsakit(["trust", "evaluate", try file("same-name.pem"), "--anchors-only", "--json"])
        assertFailure(sameName, status: 65, contains: "trust evaluation failed: recoverable-trust-failure")
        XCTAssertTrue(sameName.stdoutText.contains("\"self-signature-invalid\""), sameName.stdoutText)
    }

    func testTrustEvaluate_WrongHostname_Exits65WithReasonInJSON() throws {
        let result = try rsakit([
            "trust", "evaluate", try file("server.pem"), "--chain", try file("intermediate.pem"),
            "--anchor", try file("root.pem"), "--anchors-only", "--policy", "ssl-server", "--hostname", "other.test",
            "--json"
        ])
        assertFailure(result, status: 65, contains: "trust evaluation failed: recoverable-trust-failure")
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
        XCTAssertEqual(json["result"] as? String, "recoverable-trust-failure")
        XCTAssertEqual(json["trusted"] as? Bool, false)
        let failures = try XCTUnwrap(json["failures"] as? [[String: Any]])
        XCTAssertEqual(failures.count, 1)
        XCTAssertEqual(failures[0]["reason"] as? String, "hostname-mismatch")
        XCTAssertEqual(failures[0]["certificateIndex"] as? Int, 0)
        XCTAssertEqual((json["chain"] as? [[String: Any]])?.count, 3)
    }

    func testTrustEvaluate_Expired_ThenAtTheSuggestedVerifyDate() throws {
        let arguments = [
            "trust", "evaluate", try file("expired.pem"), "--chain", try file("intermediate.pem"),
            "--anchor", try file("root.pem"), "--anchors-only"
        ]
        let expired = try rsakit(arguments)
        assertFailure(expired, status: 65, contains: "trust evaluation failed: recoverable-trust-failure")
        XCTAssertTrue(
            expired.stdoutText.contains(
                "certificate 0 (expired.rsakit.test): expired at 2021-01-01T00:00:00Z (notAfter); a verify date of "
                    + "2020-12-31T00:00:00Z would evaluate it (--verify-date 2020-12-31T00:00:00Z)"
            ),
            expired.stdoutText)
        for date in ["2020-12-31T00:00:00Z", "2020-06-15", "2020-06-15T14:00:00+02:00"] {
            let result = try rsakitOK(arguments + ["--verify-date", date])
            XCTAssertTrue(result.stdoutText.hasPrefix("result: unspecified\n"), result.stdoutText)
        }
        assertFailure(
            try rsakit(arguments + ["--verify-date", "June 2020"]), status: 64,
            contains: "--verify-date expects RFC 3339")
        // Without anchors: the test root is not a system anchor.
        assertFailure(
            try rsakit([
                "trust", "evaluate", try file("server.pem"), "--chain", try file("intermediate.pem"), "--anchors-only"
            ]),
            status: 65, contains: "recoverable-trust-failure")
    }

    func testTrustEvaluate_StoreTrustedRoot_Proceeds_DistrustedDenies() throws {
        try rsakitOK(["cert", "add", try file("root.pem"), "--trust"])
        let result = try rsakitOK([
            "trust", "evaluate", try file("server.pem"), "--chain", try file("intermediate.pem"), "--anchors-only"
        ])
        XCTAssertTrue(result.stdoutText.hasPrefix("result: proceed\n"), result.stdoutText)
        XCTAssertTrue(result.stdoutText.contains("[anchor, trusted by the user]"), result.stdoutText)
        try rsakitOK(["cert", "add", try file("intermediate.pem"), "--distrust"])
        let denied = try rsakit([
            "trust", "evaluate", try file("server.pem"), "--chain", try file("intermediate.pem"), "--anchors-only"
        ])
        assertFailure(denied, status: 65, contains: "trust evaluation failed: deny")
        XCTAssertTrue(
            denied.stdoutText.contains("certificate 1 (RSAKit Test Intermediate): marked distrusted by the user"),
            denied.stdoutText)
    }

    func testTrustEvaluate_UsageErrors() throws {
        assertFailure(try rsakit(["trust", "evaluate"]), status: 64, contains: "missing certificate file argument")
        assertFailure(try rsakit(["trust", "check", "x"]), status: 64, contains: "unknown subcommand 'check'")
        assertFailure(
            try rsakit(["trust", "evaluate", try file("server.pem"), "--policy", "tls"]), status: 64,
            contains: "--policy must be")
        assertFailure(
            try rsakit(["trust", "evaluate", try file("server.pem"), "--hostname", "a"]), status: 64,
            contains: "--hostname needs --policy ssl-server")
        assertFailure(
            try rsakit(["trust", "evaluate", try file("leaf.key")]), status: 65, contains: "no CERTIFICATE block found")
        XCTAssertFalse(exists(storeDirectory.path), "evaluating must not create a store")
    }

    func testCertShow_PrintsTheFields() throws {
        // expired.pem has fixed dates (openssl ca -startdate/-enddate), so they can be asserted.
        let result = try rsakitOK(["cert", "show", try file("expired.pem")])
        let text = result.stdoutText
        for line in [
            "subject: CN=expired.rsakit.test", "subject summary: expired.rsakit.test",
            "issuer: O=RSAKit Tests,CN=RSAKit Test Intermediate",
            "not valid before: 2020-01-01T00:00:00Z", "not valid after: 2021-01-01T00:00:00Z (expired)",
            "public key: RSA 2048 bits",
            "signature algorithm: RSA-SHA256", "key usage: Digital Signature, Key Encipherment",
            "extended key usage: TLS Web Server Authentication", "subject alternative names: DNS:expired.rsakit.test",
            "basic constraints: CA:FALSE"
        ] {
            XCTAssertTrue(text.contains(line + "\n"), "\(line) in \(text)")
        }
        // The fingerprint is openssl's: openssl x509 -in expired.pem -noout -fingerprint -sha256.
        let openssl = try runProcess(
            try openssl(), ["x509", "-in", try file("expired.pem"), "-noout", "-fingerprint", "-sha256"])
        let hex = openssl.stdoutText.split(separator: "=")[1].replacingOccurrences(of: ":", with: "").lowercased()
            .trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(text.contains("fingerprint (SHA-256): \(hex)\n"), text)
        XCTAssertTrue(text.contains("public key fingerprint (SHA-256 of the SPKI): SHA256:"), text)
        // A bundle shows every certificate; JSON too.
        let bundle = try write(try read(try file("intermediate.pem")) + read(try file("root.pem")), to: "bundle.pem")
        let json = try rsakitOK(["cert", "show", bundle, "--json"])
        let array = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [[String: Any]])
        XCTAssertEqual(
            array.map { $0["subjectSummary"] as? String }, ["RSAKit Test Intermediate", "RSAKit Test Root CA"])
        XCTAssertEqual((array[1]["basicConstraints"] as? [String: Any])?["ca"] as? Bool, true)
        assertFailure(try rsakit(["cert", "show", path("missing.pem")]), status: 66, contains: "missing.pem")
    }

    func testEncryptedKeyFiles_ImportDecryptAndExport() throws {
        let openssl = try openssl()
        let key = try file("leaf.key")
        // openssl pkcs8 -topk8 -v2 aes-256-cbc -in leaf.key -passout pass:in-secret -out encrypted.pem
        let encrypted = path("encrypted.pem")
        XCTAssertEqual(
            try runProcess(
                openssl,
                ["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", key, "-passout", "pass:in-secret", "-out", encrypted]
            ).status, 0)
        // openssl rsa -aes128 -traditional -in leaf.key -passout pass:in-secret -out legacy.pem
        let legacy = path("legacy.pem")
        XCTAssertEqual(
            try runProcess(
                openssl, ["rsa", "-aes128", "-traditional", "-in", key, "-passout", "pass:in-secret", "-out", legacy]
            ).status, 0)
        for (tag, file) in [("enc", encrypted), ("legacy", legacy)] {
            assertFailure(
                try rsakit(["import", "--tag", tag, file, "--passin", "pass:wrong"]), status: 65,
                contains: "wrong passphrase")
            try rsakitOK(["import", "--tag", tag, file, "--passin", "pass:in-secret"])
        }
        // encrypt to the public key; decrypt with the encrypted key file.
        let message = try write(Array("attack at dawn".utf8), to: "message.txt")
        try rsakitOK(["encrypt", "--tag", "enc", "--in", message, "--out", path("message.rsa")])
        let viaEnv = try rsakit(
            ["decrypt", "--key", legacy, "--passin", "env:KEYPASS", "--in", path("message.rsa")],
            environment: ["KEYPASS": "in-secret"])
        XCTAssertEqual(viaEnv.status, 0, viaEnv.stderr)
        XCTAssertEqual(viaEnv.stdoutText, "attack at dawn")
        // export --private --encrypt: openssl pkey -passin reads it, the same key.
        try rsakitOK([
            "export", "--tag", "enc", "--private", "--encrypt", "--passout", "pass:out-secret", "--out", path("out.pem")
        ])
        XCTAssertTrue(
            String(decoding: try read("out.pem"), as: UTF8.self).hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))
        let plain = try runProcess(
            openssl, ["pkey", "-in", path("out.pem"), "-passin", "pass:out-secret", "-traditional"])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        let original = try runProcess(openssl, ["pkey", "-in", key, "-traditional"])
        XCTAssertEqual(plain.stdout, original.stdout)
        XCTAssertNotEqual(
            try runProcess(openssl, ["pkey", "-in", path("out.pem"), "-passin", "pass:wrong", "-noout"]).status, 0)
        assertFailure(
            try rsakit(["export", "--tag", "enc", "--encrypt"]), status: 64,
            contains: "--encrypt applies to private keys")
    }
    func testIdentity_ImportListShowExportDelete() throws {
        let openssl = try openssl()
        _ = try write(try read(try file("intermediate.pem")) + read(try file("root.pem")), to: "chain.pem")
        // openssl pkcs12 -export -inkey leaf.key -in server.pem -certfile chain.pem -name "Web Server" -passout
        // pass:p12-secret -out id.p12
        let p12 = path("id.p12")
        XCTAssertEqual(
            try runProcess(
                openssl,
                [
                    "pkcs12", "-export", "-inkey", try file("leaf.key"), "-in", try file("server.pem"),
                    "-certfile", path("chain.pem"), "-name", "Web Server", "-passout", "pass:p12-secret", "-out", p12
                ]
            ).status, 0)
        // Wrong passphrase: exit 65, nothing stored.
        assertFailure(
            try rsakit(["identity", "import", p12, "--passin", "pass:nope"]), status: 65,
            contains: "wrong passphrase for the PKCS#12 file")
        // A tampered MAC (the last octets are the MAC's salt and iterations; the digest sits
        // before them): flip an octet of the 32-byte digest.
        var tampered = try read(p12)
        tampered[tampered.count - 16] ^= 0x01
        let tamperedPath = try write(tampered, to: "tampered.p12")
        assertFailure(
            try rsakit(["identity", "import", tamperedPath, "--passin", "pass:p12-secret"]), status: 65,
            contains: "integrity check failed")
        // Failed imports create no store: listing reports it missing.
        XCTAssertFalse(exists(storeDirectory.path))
        assertFailure(try rsakit(["identity", "list"]), status: 66, contains: "no key store at")

        let imported = try rsakitOK(["identity", "import", p12, "--passin", "pass:p12-secret"])
        let text = imported.stdoutText
        XCTAssertTrue(
            text.hasPrefix(
                "imported identity: Web Server\nsubject summary: server.rsakit.test\nprivate key tag: Web Server\n"),
            text)
        XCTAssertTrue(text.contains("chain: 2 certificates\n"), text)
        // The test root is not a system anchor: recoverable until it is trusted.
        XCTAssertTrue(text.contains("trust (basic X.509): recoverable-trust-failure\n"), text)
        // The same identity again under another tag: the key is stored once, and the refusal names
        // the option that moves it (CLIIdentityReimportTests covers the move).
        assertFailure(
            try rsakit(["identity", "import", p12, "--tag", "other", "--passin", "pass:p12-secret"]), status: 73,
            contains: "is already stored under tag \"Web Server\": give --replace to move it to tag \"other\"")
        // Under its own tag, the duplicate certificate names --replace too.
        assertFailure(
            try rsakit(["identity", "import", p12, "--passin", "pass:p12-secret"]), status: 73,
            contains: "already exists (use --replace to overwrite it)")
        XCTAssertTrue(try rsakitOK(["identity", "list"]).stdoutText.hasPrefix("Web Server  tag: Web Server"))
        let shown = try rsakitOK(["identity", "show", "--label", "Web Server"]).stdoutText
        XCTAssertTrue(shown.contains("subject summary: server.rsakit.test\n"), shown)
        XCTAssertTrue(shown.contains("chain: RSAKit Test Intermediate"), shown)

        // export p12 -> openssl pkcs12 -info reads it, with the same key and certificates.
        try rsakitOK([
            "identity", "export", "--label", "Web Server", "--format", "p12", "--passout", "pass:out-secret", "--out",
            path("out.p12")
        ])
        let info = try runProcess(
            openssl, ["pkcs12", "-info", "-in", path("out.p12"), "-passin", "pass:out-secret", "-noenc"])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stderr.contains("MAC: sha256"), info.stderr)
        XCTAssertTrue(info.stdoutText.contains("friendlyName: Web Server"), info.stdoutText)
        XCTAssertEqual(info.stdoutText.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1, 3)
        let exportedKey = try runProcess(openssl, ["pkey", "-traditional"], stdin: info.stdout)
        XCTAssertEqual(
            exportedKey.stdout, try runProcess(openssl, ["pkey", "-in", try file("leaf.key"), "-traditional"]).stdout)
        // export pem: key + certificate + chain.
        try rsakitOK(["identity", "export", "--label", "Web Server", "--format", "pem", "--out", path("out.pem")])
        let pem = String(decoding: try read("out.pem"), as: UTF8.self)
        XCTAssertTrue(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"), pem)
        XCTAssertEqual(pem.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1, 3)
        var status = stat()
        XCTAssertEqual(stat(path("out.pem"), &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o600)

        try rsakitOK(["identity", "delete", "--label", "Web Server"])
        XCTAssertEqual(try rsakitOK(["identity", "list"]).stdoutText, "no identities in the store\n")
        assertFailure(
            try rsakit(["identity", "show", "--label", "Web Server"]), status: 66, contains: "identity with label")
    }
    func testEncrypt_ToACertificate() throws {
        let message = try write(Array("for the server".utf8), to: "m.txt")
        try rsakitOK(["import", "--tag", "leaf", try file("leaf.key")])
        let result = try rsakitOK(["encrypt", "--cert", try file("server.pem"), "--in", message, "--out", path("m.rsa")]
        )
        XCTAssertEqual(result.stderr, "")
        XCTAssertEqual(try rsakitOK(["decrypt", "--tag", "leaf", "--in", path("m.rsa")]).stdoutText, "for the server")
        // Expired: a warning on stderr, the output still made.
        let expired = try rsakitOK([
            "encrypt", "--cert", try file("expired.pem"), "--in", message, "--out", path("e.rsa")
        ])
        XCTAssertEqual(
            expired.stderr,
            "rsakit: warning: \(try file("expired.pem")): the certificate expired at 2021-01-01T00:00:00Z\n")
        XCTAssertEqual(try rsakitOK(["decrypt", "--tag", "leaf", "--in", path("e.rsa")]).stdoutText, "for the server")
        // A CA certificate's key usage (keyCertSign, cRLSign) forbids key encipherment: a warning.
        let ca = try rsakitOK(["encrypt", "--cert", try file("root.pem"), "--in", message, "--out", path("c.rsa")])
        XCTAssertTrue(ca.stderr.contains("does not allow key encipherment"), ca.stderr)
        // By label from the store.
        try rsakitOK(["cert", "add", try file("server.pem"), "--label", "web"])
        try rsakitOK(["encrypt", "--cert-label", "web", "--in", message, "--out", path("l.rsa")])
        XCTAssertEqual(try rsakitOK(["decrypt", "--tag", "leaf", "--in", path("l.rsa")]).stdoutText, "for the server")
        assertFailure(
            try rsakit(["encrypt", "--cert", try file("server.pem"), "--tag", "leaf", "--in", message]), status: 64,
            contains: "give either --tag or --key (or --cert, --cert-label), not several")
        // A non-RSA certificate: openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=ec
        // -keyout ec.key -out ec.pem
        let ecResult = try runProcess(
            try openssl(),
            [
                "req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-subj", "/CN=ec", "-keyout", path("ec.key"), "-out", path("ec.pem")
            ])
        XCTAssertEqual(ecResult.status, 0, ecResult.stderr)
        assertFailure(
            try rsakit(["encrypt", "--cert", path("ec.pem"), "--in", message, "--out", path("x.rsa")]), status: 65,
            contains: "not RSA")
        XCTAssertFalse(exists("x.rsa"))
    }
}
