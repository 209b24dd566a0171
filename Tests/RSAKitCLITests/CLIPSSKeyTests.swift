import Foundation
import XCTest
import RSAKitTestSupport

/// RSA-PSS keys (id-RSASSA-PSS, RFC 4055) and SHAKE PSS (RFC 8702) through the built binary.
final class CLIPSSKeyTests: CLITestCase {
    private struct WycheproofFile: Decodable {
        struct Group: Decodable {
            let publicKeyPem: String
            let sha: String
            let sLen: Int
            let tests: [Case]
        }
        struct Case: Decodable { let tcId: Int; let msg: String; let sig: String; let result: String }
        let testGroups: [Group]
    }

    /// Every test of Wycheproof's RSA-PSS files whose keys carry id-RSASSA-PSS parameters
    /// (`*_params_test.json`) and of its SHAKE files, through `rsakit verify --key`: the key's
    /// own parameters are the defaults (no --hash, no --salt-length), SHAKE files name
    /// `--hash shake128|shake256 --salt-length sLen` (their keys are rsaEncryption keys).
    ///
    /// One process per test is 1,871 processes (27 s here), and `WycheproofTests` already checks
    /// every one of these signatures in the library. What only the CLI can get wrong is per key:
    /// reading its parameters, or the options. So CI runs every group (every key) with its first
    /// test of each verdict (valid, invalid, acceptable); `RSAKIT_FULL_SAMPLES=1` (the long run,
    /// scripts/long-run.sh) runs all of them.
    func testWycheproofPSSWithParametersAndSHAKE_ThroughVerify() throws {
        let folder = try wycheproofFolder(
            holding: "rsa_pss_misc_params_test.json", skipping: "RSA-PSS key and SHAKE cases through the CLI")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        let paramsFiles = names.filter { $0.hasPrefix("rsa_pss_") && $0.hasSuffix("_params_test.json") }
        let shakeFiles = names.filter { $0.hasPrefix("rsa_pss_") && $0.contains("shake") }
        XCTAssertEqual(paramsFiles.count, 8)
        XCTAssertEqual(shakeFiles.count, 5)
        let everyTest = ProcessInfo.processInfo.environment["RSAKIT_FULL_SAMPLES"] == "1"
        var counts = (tests: 0, valid: 0, invalid: 0, acceptable: 0)
        var read = 0
        var failures: [String] = []
        for name in paramsFiles + shakeFiles {
            let file = try JSONDecoder().decode(
                WycheproofFile.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
            for (groupIndex, group) in file.testGroups.enumerated() {
                let key = try write(Array(group.publicKeyPem.utf8), to: "key-\(groupIndex).pem")
                var options = ["--scheme", "pss"]
                if group.sha.hasPrefix("SHAKE") {
                    options += ["--hash", group.sha.lowercased(), "--salt-length", String(group.sLen)]
                }
                var verdictsRun: Set<String> = []
                for test in group.tests {
                    read += 1
                    guard everyTest || verdictsRun.insert(test.result).inserted else { continue }
                    counts.tests += 1
                    let message = try write(hexBytes(test.msg), to: "msg")
                    let signature = try write(hexBytes(test.sig), to: "sig")
                    let result = try rsakit(
                        ["verify", "--key", key, "--signature", signature, "--in", message] + options)
                    switch test.result {
                    case "valid":
                        counts.valid += 1
                        if result.status != 0 || result.stdoutText != "signature ok\n" {
                            failures.append("\(name) tcId \(test.tcId) valid: exit \(result.status) \(result.stderr)")
                        }
                    case "invalid":
                        counts.invalid += 1
                        if result.status != 65 || result.stderr != "rsakit: error: signature invalid\n" {
                            failures.append("\(name) tcId \(test.tcId) invalid: exit \(result.status) \(result.stderr)")
                        }
                    default:
                        counts.acceptable += 1  // either verdict is allowed; it must still be one of the two
                        if ![0, 65].contains(result.status) {
                            failures.append(
                                "\(name) tcId \(test.tcId) acceptable: exit \(result.status) \(result.stderr)")
                        }
                    }
                }
            }
        }
        print(
            "Wycheproof RSA-PSS params + SHAKE through rsakit verify: \(counts.tests) of \(read) tests run "
                + "(\(counts.valid) valid, \(counts.invalid) invalid, \(counts.acceptable) acceptable), "
                + "\(failures.count) failures"
        )
        XCTAssertEqual(read, 1_091 + 780)
        XCTAssertGreaterThanOrEqual(counts.valid, 162, "every group's key verifies at least one valid signature")
        XCTAssertGreaterThan(counts.invalid, 0)
        if everyTest { XCTAssertEqual(counts.tests, read) }
        XCTAssertEqual(failures, [])
    }

    func testPSSKeyFromOpenSSL_StoredAndExportedAsItCame_KeptToItsParameters() throws {
        let openssl = try openssl()
        let keyPath = path("pss.pem"), publicPath = path("pss-pub.pem")
        let generated = try runProcess(
            openssl,
            [
                "genpkey", "-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:2048",
                "-pkeyopt", "rsa_pss_keygen_md:sha256", "-pkeyopt", "rsa_pss_keygen_mgf1_md:sha256",
                "-pkeyopt", "rsa_pss_keygen_saltlen:32", "-out", keyPath
            ])
        XCTAssertEqual(generated.status, 0, generated.stderr)
        XCTAssertEqual(try runProcess(openssl, ["pkey", "-in", keyPath, "-pubout", "-out", publicPath]).status, 0)
        let message = try write(testBytes(3000), to: "message")

        try rsakitOK(["import", "--tag", "pss", keyPath])
        // Exported as it came: the public PEM is openssl's, the private DER openssl's PKCS#8.
        XCTAssertEqual(try rsakitOK(["export", "--tag", "pss"]).stdout, try read(publicPath))
        try rsakitOK(["export", "--tag", "pss", "--private", "--der", "--out", path("back.der")])
        let pkcs8 = try runProcess(openssl, ["pkcs8", "-topk8", "-nocrypt", "-in", keyPath, "-outform", "DER"])
        XCTAssertEqual(try read("back.der"), pkcs8.stdout)
        let shown = try rsakitOK(["show", "--tag", "pss", "--json"]).stdoutText
        XCTAssertTrue(shown.contains(#""keyAlgorithm" : "rsassaPSS""#), shown)
        XCTAssertTrue(shown.contains(#""saltLength" : 32"#), shown)
        XCTAssertFalse(shown.contains("maximumRawBlockPayload"), shown)
        XCTAssertTrue(
            try rsakitOK(["show", "--tag", "pss"]).stdoutText.contains(
                "algorithm: RSASSA-PSS (SHA-256, MGF1-SHA-256, salt 32), signatures only"))

        // Signing with no options uses the key's parameters; openssl verifies with the key alone.
        try rsakitOK(["sign", "--tag", "pss", "--in", message, "--out", path("ours.sig")])
        let verified = try runProcess(
            openssl, ["dgst", "-sha256", "-verify", publicPath, "-signature", path("ours.sig"), message])
        XCTAssertEqual(verified.stdoutText, "Verified OK\n", verified.stderr)
        // openssl's signature (the key's defaults) verifies with the stored key and with the file.
        XCTAssertEqual(
            try runProcess(openssl, ["dgst", "-sha256", "-sign", keyPath, "-out", path("theirs.sig"), message]).status,
            0)
        XCTAssertEqual(
            try rsakitOK(["verify", "--tag", "pss", "--signature", path("theirs.sig"), "--in", message]).stdoutText,
            "signature ok\n")
        XCTAssertEqual(
            try rsakitOK([
                "verify", "--key", publicPath, "--scheme", "pss", "--signature", path("theirs.sig"), "--in", message
            ]).stdoutText, "signature ok\n")

        // What the key's parameters forbid is refused (64), naming them, and writes nothing.
        let refusals: [([String], String)] = [
            (
                ["sign", "--tag", "pss", "--hash", "sha1", "--in", message, "--out", path("x")],
                "require the hash SHA-256 (SHA-256, MGF1-SHA-256, salt 32); SHA-1 was asked for"
            ),
            (
                ["sign", "--tag", "pss", "--salt-length", "20", "--in", message, "--out", path("x")],
                "require a salt of at least 32 bytes"
            ),
            (
                ["sign", "--tag", "pss", "--mgf1-hash", "sha1", "--in", message, "--out", path("x")],
                "require MGF1-SHA-256"
            ),
            (
                ["sign", "--key", keyPath, "--scheme", "pkcs1", "--in", message, "--out", path("x")],
                "signs with RSASSA-PSS only, not PKCS#1 v1.5"
            ),
            (
                ["sign", "--tag", "pss", "--hash", "shake256", "--in", message, "--out", path("x")],
                "SHAKE256 was asked for"
            ),
            (
                ["verify", "--tag", "pss", "--salt-length", "auto", "--signature", path("theirs.sig"), "--in", message],
                "a recovered ('auto') salt length is not allowed"
            ),
            (
                ["encrypt", "--tag", "pss", "--in", message, "--out", path("x")],
                "is for signatures only; it cannot encrypt or decrypt"
            ),
            (["encrypt", "--key", publicPath, "--raw", "--in", message, "--out", path("x")], "is for signatures only"),
            (
                ["decrypt", "--key", keyPath, "--raw", "--in", path("ours.sig"), "--out", path("x")],
                "is for signatures only"
            ),
            (["export", "--tag", "pss", "--format", "pkcs1", "--out", path("x")], "PKCS#1 has no algorithm identifier"),
            (["export", "--tag", "pss", "--private", "--format", "pkcs1", "--out", path("x")], "export it as pkcs8")
        ]
        for (arguments, message) in refusals {
            assertFailure(try rsakit(arguments), status: 64, contains: message)
            XCTAssertFalse(exists("x"), arguments.joined(separator: " "))
        }
    }

    /// Through GnuTLS's decryption (encrypted PKCS#8, PKCS#12) the key keeps openssl's
    /// algorithm identifier, and a PKCS#12 identity pairs the key with its RSA-PSS certificate.
    func testEncryptedPSSKeyAndPKCS12Identity_KeepOpenSSLsEncoding() throws {
        let openssl = try openssl()
        let keyPath = path("pss.pem"), publicPath = path("pss-pub.pem")
        for arguments in [
            [
                "genpkey", "-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:2048", "-pkeyopt",
                "rsa_pss_keygen_md:sha384",
                "-pkeyopt", "rsa_pss_keygen_mgf1_md:sha384", "-pkeyopt", "rsa_pss_keygen_saltlen:48", "-out", keyPath
            ],
            ["pkey", "-in", keyPath, "-pubout", "-out", publicPath],
            ["pkcs8", "-topk8", "-in", keyPath, "-passout", "pass:pw", "-v2", "aes-256-cbc", "-out", path("enc.pem")],
            ["req", "-x509", "-key", keyPath, "-subj", "/CN=pss-identity", "-days", "30", "-out", path("cert.pem")],
            [
                "pkcs12", "-export", "-inkey", keyPath, "-in", path("cert.pem"), "-passout", "pass:pw", "-out",
                path("id.p12")
            ]
        ] {
            let run = try runProcess(openssl, arguments)
            XCTAssertEqual(run.status, 0, "openssl \(arguments.joined(separator: " ")): \(run.stderr)")
        }
        try rsakitOK(["import", "--tag", "enc", path("enc.pem"), "--passin", "pass:pw"])
        XCTAssertEqual(try rsakitOK(["export", "--tag", "enc"]).stdout, try read(publicPath))
        // The same key, found by its fingerprint through the PKCS#12 too: already stored (73).
        assertFailure(
            try rsakit(["identity", "import", path("id.p12"), "--passin", "pass:pw"]), status: 73,
            contains: "already stored under tag \"enc\"")
        try rsakitOK(["delete", "--tag", "enc"])
        let imported = try rsakitOK(["identity", "import", path("id.p12"), "--passin", "pass:pw"]).stdoutText
        XCTAssertTrue(imported.hasPrefix("imported identity: pss-identity\n"), imported)
        XCTAssertEqual(try rsakitOK(["export", "--tag", "pss-identity"]).stdout, try read(publicPath))
        let message = try write(testBytes(500), to: "m")
        try rsakitOK(["sign", "--tag", "pss-identity", "--in", message, "--out", path("m.sig")])
        let verified = try runProcess(
            openssl, ["dgst", "-sha384", "-verify", publicPath, "-signature", path("m.sig"), message])
        XCTAssertEqual(verified.stdoutText, "Verified OK\n", verified.stderr)
        XCTAssertEqual(
            try rsakitOK(["verify", "--cert", path("cert.pem"), "--signature", path("m.sig"), "--in", message])
                .stdoutText, "signature ok\n")
    }

    func testSHAKE_SignAndVerifyWithAnRSAKey() throws {
        let key = path("key.pem")
        let openssl = try openssl()
        XCTAssertEqual(
            try runProcess(openssl, ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key])
                .status, 0)
        let message = try write(testBytes(100_000), to: "message")
        for shake in ["shake128", "shake256"] {
            try rsakitOK([
                "sign", "--key", key, "--scheme", "pss", "--hash", shake, "--in", message, "--out", path("\(shake).sig")
            ])
            XCTAssertEqual(try read("\(shake).sig").count, 256)
            // RFC 8702 salt = digest length: exactly 32 or 64 verifies, auto too, the other SHAKE not.
            let salt = shake == "shake128" ? "32" : "64"
            for saltOptions in [[], ["--salt-length", salt]] {
                XCTAssertEqual(
                    try rsakitOK(
                        [
                            "verify", "--key", key, "--scheme", "pss", "--hash", shake, "--signature",
                            path("\(shake).sig"), "--in", message
                        ] + saltOptions
                    ).stdoutText, "signature ok\n")
            }
            let other = shake == "shake128" ? "shake256" : "shake128"
            assertFailure(
                try rsakit([
                    "verify", "--key", key, "--scheme", "pss", "--hash", other, "--signature", path("\(shake).sig"),
                    "--in", message
                ]), status: 65, contains: "signature invalid")
        }
        assertFailure(
            try rsakit(["sign", "--key", key, "--hash", "shake128", "--in", message]), status: 64,
            contains: "SHAKE128 and SHAKE256 sign with --scheme pss only")
        assertFailure(
            try rsakit([
                "sign", "--key", key, "--scheme", "pss", "--hash", "shake128", "--mgf1-hash", "sha256", "--in", message
            ]), status: 64, contains: "--mgf1-hash does not apply to SHAKE")
    }
}
