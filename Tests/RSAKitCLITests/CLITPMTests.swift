import Foundation
import XCTest
import RSAKitTestSupport

/// Keys in the TPM (`genpair --tpm`), with swtpm: each test starts its own software TPM
/// (`swtpm socket --tpm2 --flags not-need-init,startup-clear`) on two free ports of
/// 127.0.0.1, its state in the test's folder, reached through RSAKIT_TPM_TCTI
/// (`swtpm:host=127.0.0.1,port=P`). No test touches a /dev/tpm* device. Without swtpm or
/// tpm2-tss installed (scripts/install-deps.sh installs both) the tests skip, saying so.
final class CLITPMTests: CLITestCase {
    private var swtpm: ChildProcess?
    private var port = 0
    private var environment: [String: String?] = [:]
    private var servers: [TLSTestServer] = []
    private var stateDirectory: String { path("tpmstate") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard
            let swtpmPath = ["/usr/bin/swtpm", TestTools.path(of: "swtpm")].compactMap({ $0 })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            throw XCTSkip(
                "SWTPM NOT INSTALLED (apt package swtpm; scripts/install-deps.sh installs it): TPM KEY TESTS NOT RUN")
        }
        guard dlopen("libtss2-esys.so.0", RTLD_NOW | RTLD_LOCAL) != nil else {
            throw XCTSkip("TPM2-TSS NOT INSTALLED (apt package libtss2-esys-3.0.2-0): TPM KEY TESTS NOT RUN")
        }
        try startTPM(swtpmPath)
        environment = [
            "RSAKIT_TPM_TCTI": "swtpm:host=127.0.0.1,port=\(port)", "RSAKIT_TOKEN_PIN": nil, "RSAKIT_PASSIN": nil,
            "TSS2_LOG": nil
        ]
    }

    override func tearDownWithError() throws {
        for server in servers { server.stop() }
        servers = []
        swtpm?.kill9()
        try super.tearDownWithError()
    }

    /// Start swtpm on a fresh state folder (manufactured on first start) and wait, at most
    /// 10 s, until its command port accepts a connection.
    private func startTPM(_ executable: String? = nil) throws {
        let executable = executable ?? "/usr/bin/swtpm"
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        for _ in 0..<3 {
            // tpm2-tss's swtpm TCTI takes the control channel to be the next port.
            let server = try TLSTestServer.freePort(), control = server + 1
            guard control < 65536 else { continue }
            let process = try ChildProcess(
                [
                    executable, "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory)",
                    "--server", "type=tcp,port=\(server),bindaddr=127.0.0.1",
                    "--ctrl", "type=tcp,port=\(control),bindaddr=127.0.0.1",
                    "--flags", "not-need-init,startup-clear"
                ],
                stdout: .appending(path("swtpm.log")), stderr: .appending(path("swtpm.log")))
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && process.isRunning {
                if Self.accepts(port: server) {
                    swtpm = process
                    port = server
                    return
                }
                usleep(20_000)
            }
            process.kill9()
        }
        XCTFail("swtpm did not start: \((try? String(contentsOfFile: path("swtpm.log"), encoding: .utf8)) ?? "")")
        throw CocoaError(.executableLoad)
    }

    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    @discardableResult
    private func tpm(_ arguments: [String], stdin: [UInt8]? = nil, file: StaticString = #filePath, line: UInt = #line)
        throws -> Result
    {
        try rsakitOK(arguments, stdin: stdin, environment: environment, file: file, line: line)
    }

    private func run(_ arguments: [String], environment extra: [String: String?] = [:]) throws -> Result {
        try rsakit(arguments, environment: environment.merging(extra) { $1 })
    }

    /// rsakit's PKCS#11 module and pkcs11-tool, when both are there (nil otherwise).
    private func pkcs11Tool() -> (module: String, tool: String)? {
        let module = Self.productsDirectory.appendingPathComponent("librsakit-pkcs11.so").path
        guard FileManager.default.fileExists(atPath: module),
            let tool = ["/usr/bin/pkcs11-tool"].first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { return nil }
        return (module, tool)
    }

    func testSignKey_OpenSSLVerifiesTPMSignaturesAndCSRs_DecryptionRefused() throws {
        let openssl = try openssl()
        let made = try tpm(["genpair", "--tag", "tk", "--tpm", "--usage", "sign"]).stdoutText
        XCTAssertTrue(
            made.contains("location: tpm (swtpm:host=127.0.0.1,port=\(port); PIN: none)\nusage: sign\n"), made)
        let list = try tpm(["list"]).stdoutText
        XCTAssertTrue(
            list.split(separator: "\n").contains { $0.hasPrefix("private") && $0.hasSuffix("tk  [tpm: sign]") }, list)
        let show = try tpm(["show", "--tag", "tk"]).stdoutText
        XCTAssertTrue(show.contains("PIN: none; not exportable)\nusage: sign\n"), show)
        XCTAssertTrue(show.contains("public key:\n-----BEGIN PUBLIC KEY-----\n"), show)
        XCTAssertTrue(try tpm(["show", "--tag", "tk", "--json"]).stdoutText.contains("\"usage\" : \"sign\""))
        // No TPM database next to the store: the key's blobs are in its private item.
        XCTAssertFalse(exists(storeDirectory.path + "/tpm"))

        try tpm(["export", "--tag", "tk", "--out", path("tk.pub")])
        XCTAssertTrue(show.contains(try String(contentsOfFile: path("tk.pub"), encoding: .utf8)), show)
        let message = Array("a message for the TPM to sign\n".utf8)
        _ = try write(message, to: "m")
        // Signatures made in the TPM, verified by openssl: PKCS#1 v1.5 and PSS with salt = hLen.
        try tpm(["sign", "--tag", "tk", "--in", path("m"), "--out", path("s1")])
        let verified = try runProcess(
            openssl, ["dgst", "-sha256", "-verify", path("tk.pub"), "-signature", path("s1"), path("m")])
        XCTAssertEqual(verified.stdoutText, "Verified OK\n", verified.stderr)
        try tpm(["sign", "--tag", "tk", "--scheme", "pss", "--hash", "sha384", "--in", path("m"), "--out", path("s2")])
        let pss = try runProcess(
            openssl,
            [
                "dgst", "-sha384", "-verify", path("tk.pub"), "-sigopt", "rsa_padding_mode:pss",
                "-sigopt", "rsa_pss_saltlen:48", "-signature", path("s2"), path("m")
            ])
        XCTAssertEqual(pss.stdoutText, "Verified OK\n", pss.stderr)
        // The TPM makes PSS with salt = hLen only.
        assertFailure(
            try run([
                "sign", "--tag", "tk", "--scheme", "pss", "--salt-length", "max", "--in", path("m"), "--out", path("s3")
            ]),
            status: 64, contains: "salt as long as the hash")
        // A signing key decrypts nothing, and nothing is encrypted to it.
        _ = try write([UInt8](repeating: 7, count: 256), to: "block")
        assertFailure(
            try run(["decrypt", "--tag", "tk", "--raw", "--padding", "oaep", "--in", path("block")]), status: 64,
            contains: "this TPM key can only sign (its usage, fixed in the TPM)")
        assertFailure(
            try run(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("m.rsa")]), status: 64,
            contains: "can only sign (its usage, fixed in the TPM): nothing encrypted to it could ever be decrypted")
        XCTAssertFalse(exists("m.rsa"))
        // The private key cannot be read out.
        assertFailure(
            try run(["export", "--tag", "tk", "--private", "--out", path("k.pem")]), status: 66,
            contains: "cannot be exported")
        XCTAssertFalse(exists("k.pem"))

        // Certificate requests signed in the TPM (PKCS#1 v1.5 and PSS), which openssl accepts.
        for scheme in ["pkcs1", "pss"] {
            try tpm([
                "cert", "request", "--tag", "tk", "--subject", "CN=tpm.example,O=rsakit", "--san", "DNS:tpm.example",
                "--scheme", scheme, "--out", path("tk-\(scheme).csr")
            ])
            let checked = try runProcess(openssl, ["req", "-verify", "-noout", "-in", path("tk-\(scheme).csr")])
            XCTAssertEqual(checked.status, 0, checked.stderr)
            let key = try runProcess(openssl, ["req", "-pubkey", "-noout", "-in", path("tk-\(scheme).csr")])
            XCTAssertEqual(key.stdoutText, try String(contentsOfFile: path("tk.pub"), encoding: .utf8))
        }

        // rsakit's PKCS#11 module shows a signing key (CKA_SIGN only), sensitive and never
        // extractable, and signs in the TPM: hash-and-sign, and CKM_RSA_PKCS over a DigestInfo
        // (parsed, then TPM2_Sign with RSASSA); anything else over CKM_RSA_PKCS would be raw RSA.
        guard let (module, tool) = pkcs11Tool() else { return }
        let objects = try runProcess(tool, ["--module", module, "-O"], environment: environment)
        XCTAssertTrue(
            objects.stdoutText.contains("Access:     sensitive, always sensitive, never extractable"),
            objects.stdoutText)
        XCTAssertTrue(objects.stdoutText.contains("Usage:      sign\n"), objects.stdoutText)
        let signed = try runProcess(
            tool,
            [
                "--module", module, "--sign", "-m", "SHA256-RSA-PKCS", "--label", "tk", "-i", path("m"), "-o",
                path("p11")
            ],
            environment: environment)
        XCTAssertEqual(signed.status, 0, signed.stderr)
        XCTAssertEqual(try read("p11"), try read("s1"))
        // The DER DigestInfo of SHA-256(m) (RFC 8017 §9.2 note 1's prefix, then the digest).
        let digest = try runProcess(openssl, ["dgst", "-sha256", "-binary", path("m")])
        let digestInfo: [UInt8] =
            [
                0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00,
                0x04, 0x20
            ]
            + digest.stdout
        _ = try write(digestInfo, to: "di")
        let overDigestInfo = try runProcess(
            tool,
            ["--module", module, "--sign", "-m", "RSA-PKCS", "--label", "tk", "-i", path("di"), "-o", path("p11b")],
            environment: environment)
        XCTAssertEqual(overDigestInfo.status, 0, overDigestInfo.stderr)
        XCTAssertEqual(try read("p11b"), try read("s1"))
        let raw = try runProcess(
            tool, ["--module", module, "--sign", "-m", "RSA-PKCS", "--label", "tk", "-i", path("m"), "-o", path("raw")],
            environment: environment)
        XCTAssertTrue(raw.stderr.contains("CKR_KEY_FUNCTION_NOT_PERMITTED"), raw.stderr)
    }

    func testDecryptKey_OAEPFromOpenSSLAndAppleFormat_SigningAndOtherPaddingsRefused() throws {
        let openssl = try openssl()
        let made = try tpm(["genpair", "--tag", "tk", "--tpm"]).stdoutText
        XCTAssertTrue(made.contains("usage: decrypt (RSAES-OAEP SHA-256)\n"), made)
        XCTAssertTrue(try tpm(["list"]).stdoutText.contains("tk  [tpm: decrypt]"))
        try tpm(["export", "--tag", "tk", "--out", path("tk.pub")])
        let message = Array("a secret for the TPM\n".utf8)
        _ = try write(message, to: "m")
        // RSAES-OAEP with SHA-256 by openssl, decrypted in the TPM.
        let oaep = try runProcess(
            openssl,
            [
                "pkeyutl", "-encrypt", "-pubin", "-inkey", path("tk.pub"), "-in", path("m"), "-out", path("c2"),
                "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256"
            ])
        XCTAssertEqual(oaep.status, 0, oaep.stderr)
        XCTAssertEqual(
            try tpm(["decrypt", "--tag", "tk", "--raw", "--padding", "oaep", "--in", path("c2")]).stdout, message)
        // A changed ciphertext: the TPM's OAEP check fails, one opaque error, no output.
        var bad = try read("c2")
        bad[100] ^= 1
        _ = try write(bad, to: "bad")
        assertFailure(
            try run(["decrypt", "--tag", "tk", "--raw", "--padding", "oaep", "--in", path("bad"), "--out", path("o")]),
            status: 65, contains: "decryption failed")
        XCTAssertFalse(exists("o"))
        // Another padding is refused by name before the TPM is asked.
        assertFailure(
            try run(["decrypt", "--tag", "tk", "--raw", "--in", path("c2")]), status: 64,
            contains: "decrypts RSAES-OAEP with SHA-256 (MGF1-SHA-256, no label) only (its scheme, fixed in the TPM), "
                + "not RSAES-PKCS1-v1_5")
        // encrypt needs only the public key; the default PKCS#1 v1.5 container could never be
        // decrypted, so it is refused with the options that work.
        assertFailure(
            try run(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("m.rsa")]), status: 64,
            contains: "use --padding oaep (SHA-256, no label) or --format apple-aesgcm")
        XCTAssertFalse(exists("m.rsa"))
        let sealed = try tpm(["encrypt", "--tag", "tk", "--padding", "oaep", "--in", path("m"), "--out", path("m.rsa")])
        XCTAssertEqual(
            sealed.stderr,
            "rsakit: note: the private key is in a TPM: decrypting this takes 1 private operation in the TPM\n")
        XCTAssertEqual(try tpm(["decrypt", "--tag", "tk", "--in", path("m.rsa")]).stdout, message)
        _ = try write(testBytes(4000), to: "big")
        let many = try tpm([
            "encrypt", "--tag", "tk", "--padding", "oaep", "--in", path("big"), "--out", path("big.rsa")
        ])
        XCTAssertTrue(many.stderr.contains("decrypting this takes 31 private operations in the TPM"), many.stderr)
        XCTAssertTrue(many.stderr.contains("--format apple-aesgcm takes one for any size"), many.stderr)
        try tpm(["encrypt", "--tag", "tk", "--format", "apple-aesgcm", "--in", path("big"), "--out", path("big.apple")])
        XCTAssertEqual(
            try tpm(["decrypt", "--tag", "tk", "--format", "apple-aesgcm", "--in", path("big.apple")]).stdout,
            testBytes(4000))
        // A decryption key signs nothing.
        assertFailure(
            try run(["sign", "--tag", "tk", "--in", path("m"), "--out", path("s")]), status: 64,
            contains: "this TPM key can only decrypt (its usage, fixed in the TPM): signing needs a TPM key made with "
                + "usage sign")
        XCTAssertFalse(exists("s"))

        // Through rsakit's PKCS#11 module: CKA_DECRYPT only, OAEP decryption in the TPM,
        // PKCS#1 v1.5 decryption and signing refused.
        guard let (module, tool) = pkcs11Tool() else { return }
        let objects = try runProcess(tool, ["--module", module, "-O"], environment: environment)
        XCTAssertTrue(objects.stdoutText.contains("Usage:      decrypt\n"), objects.stdoutText)
        let opened = try runProcess(
            tool,
            [
                "--module", module, "--decrypt", "-m", "RSA-PKCS-OAEP", "--hash-algorithm", "SHA256",
                "--mgf", "MGF1-SHA256", "--label", "tk", "-i", path("c2")
            ], environment: environment)
        XCTAssertEqual(opened.stdout, message, opened.stderr)
        let pkcs1 = try runProcess(
            tool, ["--module", module, "--decrypt", "-m", "RSA-PKCS", "--label", "tk", "-i", path("c2")],
            environment: environment)
        XCTAssertTrue(pkcs1.stderr.contains("CKR_KEY_FUNCTION_NOT_PERMITTED"), pkcs1.stderr)
        let signing = try runProcess(
            tool,
            ["--module", module, "--sign", "-m", "SHA256-RSA-PKCS", "--label", "tk", "-i", path("m"), "-o", path("p")],
            environment: environment)
        XCTAssertTrue(signing.stderr.contains("CKR_KEY_FUNCTION_NOT_PERMITTED"), signing.stderr)
    }

    func testPKCS1DecryptKey_RoundTripsPKCS1v15Only() throws {
        let openssl = try openssl()
        let made = try tpm(["genpair", "--tag", "tk", "--tpm", "--usage", "decrypt", "--padding", "pkcs1"]).stdoutText
        XCTAssertTrue(made.contains("usage: decrypt (RSAES-PKCS1-v1_5)\n"), made)
        assertFailure(
            try run(["genpair", "--tag", "x", "--tpm", "--usage", "sign", "--padding", "pkcs1"]), status: 64,
            contains: "--padding applies to --usage decrypt")
        try tpm(["export", "--tag", "tk", "--out", path("tk.pub")])
        let message = Array("pkcs1 in the TPM\n".utf8)
        _ = try write(message, to: "m")
        let v15 = try runProcess(
            openssl, ["pkeyutl", "-encrypt", "-pubin", "-inkey", path("tk.pub"), "-in", path("m"), "-out", path("c1")])
        XCTAssertEqual(v15.status, 0, v15.stderr)
        XCTAssertEqual(try tpm(["decrypt", "--tag", "tk", "--raw", "--in", path("c1")]).stdout, message)
        try tpm(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("m.rsa")])
        XCTAssertEqual(try tpm(["decrypt", "--tag", "tk", "--in", path("m.rsa")]).stdout, message)
        assertFailure(
            try run(["encrypt", "--tag", "tk", "--format", "apple-aesgcm", "--in", path("m"), "--out", path("m.a")]),
            status: 64, contains: "decrypts only RSAES-PKCS1-v1_5 (its scheme, fixed in the TPM)")
    }

    /// The rule at the TPM itself, not through rsakit: the key's blobs, loaded with tpm2-tools
    /// under the same SRK, give no raw RSA decryption to anyone, and need the PIN.
    func testTPMBlobs_TheTPMRefusesRawRSAToAnyProgram() throws {
        guard let createPrimary = TestTools.path(of: "tpm2_createprimary"), let load = TestTools.path(of: "tpm2_load"),
            let rsaDecrypt = TestTools.path(of: "tpm2_rsadecrypt"), let flush = TestTools.path(of: "tpm2_flushcontext")
        else {
            throw XCTSkip("TPM2-TOOLS NOT INSTALLED (apt package tpm2-tools): TPM RULE TEST NOT RUN")
        }
        let openssl = try openssl()
        try tpm(["genpair", "--tag", "d", "--tpm", "--token-pin", "pass:4321"])
        try tpm(["genpair", "--tag", "s", "--tpm", "--usage", "sign", "--token-pin", "pass:4321"])
        try tpm(["show", "--tag", "d", "--tpm-blobs", path("d")])
        try tpm(["show", "--tag", "s", "--tpm-blobs", path("s")])
        XCTAssertEqual(
            (try FileManager.default.attributesOfItem(atPath: path("d/key.priv"))[.posixPermissions] as? Int), 0o600)
        try tpm(["genpair", "--tag", "plain", "--bits", "1024", "-q"])
        assertFailure(
            try run(["show", "--tag", "plain", "--tpm-blobs", path("p")]), status: 64, contains: "not in a TPM")
        try tpm(["export", "--tag", "d", "--out", path("d.pub")])
        let tools = ["TPM2TOOLS_TCTI": environment["RSAKIT_TPM_TCTI"]!, "TSS2_LOG": "all+none"]
        // swtpm has no resource manager: each tool leaves its objects loaded, so flush them.
        func tool(_ executable: String, _ arguments: [String]) throws -> Result {
            let result = try runProcess(executable, arguments, environment: tools)
            _ = try runProcess(flush, ["-t"], environment: tools)
            return result
        }
        let primary = try tool(
            createPrimary,
            [
                "-Q", "-C", "o", "-g", "sha256", "-G", "ecc256:aes128cfb", "-a",
                "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt", "-c", path("srk.ctx")
            ])
        XCTAssertEqual(primary.status, 0, primary.stderr)
        for name in ["d", "s"] {
            let loaded = try tool(
                load,
                [
                    "-Q", "-C", path("srk.ctx"), "-u", path("\(name)/key.pub"), "-r", path("\(name)/key.priv"), "-c",
                    path("\(name).ctx")
                ])
            XCTAssertEqual(loaded.status, 0, "the SRK is the same key: \(loaded.stderr)")
        }
        // A raw block (no padding at all) encrypted to the decryption key.
        let block = [0x00] + testBytes(255).map { $0 | 1 }
        _ = try write(block, to: "raw")
        let encrypted = try runProcess(
            openssl,
            [
                "pkeyutl", "-encrypt", "-pubin", "-inkey", path("d.pub"), "-in", path("raw"), "-out", path("raw.enc"),
                "-pkeyopt", "rsa_padding_mode:none"
            ])
        XCTAssertEqual(encrypted.status, 0, encrypted.stderr)
        // -s null asks for the key's own scheme: OAEP, so the raw block does not decode, and
        // -s rsaes names another scheme (TPM_RC_SCHEME). Neither gives the block back.
        for scheme in ["null", "rsaes"] {
            let raw = try tool(
                rsaDecrypt,
                ["-c", path("d.ctx"), "-p", "4321", "-s", scheme, "-o", path("out-\(scheme)"), path("raw.enc")])
            XCTAssertNotEqual(raw.status, 0, raw.stderr)
            XCTAssertNotEqual(try? read("out-\(scheme)"), block)
        }
        let scheme = try tool(
            rsaDecrypt, ["-c", path("d.ctx"), "-p", "4321", "-s", "rsaes", "-o", path("o"), path("raw.enc")])
        XCTAssertTrue(scheme.stderr.contains("0x2D2") || scheme.stderr.contains("scheme"), scheme.stderr)
        // What -s null does give is OAEP's message, never the encoded block.
        let message = Array("oaep through tpm2-tools\n".utf8)
        _ = try write(message, to: "m")
        _ = try runProcess(
            openssl,
            [
                "pkeyutl", "-encrypt", "-pubin", "-inkey", path("d.pub"), "-in", path("m"), "-out", path("m.enc"),
                "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256"
            ])
        let oaep = try tool(
            rsaDecrypt, ["-c", path("d.ctx"), "-p", "4321", "-s", "null", "-o", path("m.out"), path("m.enc")])
        XCTAssertEqual(oaep.status, 0, oaep.stderr)
        XCTAssertEqual(try read("m.out"), message)
        // The PIN is the key's authValue: without it the TPM refuses.
        let noPIN = try tool(rsaDecrypt, ["-c", path("d.ctx"), "-s", "null", "-o", path("n.out"), path("m.enc")])
        XCTAssertNotEqual(noPIN.status, 0)
        XCTAssertTrue(noPIN.stderr.contains("0x98E") || noPIN.stderr.contains("authorization"), noPIN.stderr)
        XCTAssertEqual((try? read("n.out")) ?? [], [])
        // The signing key decrypts nothing at all (TPM_RC_ATTRIBUTES on the key handle).
        for scheme in ["null", "rsaes", "oaep"] {
            let refused = try tool(
                rsaDecrypt,
                ["-c", path("s.ctx"), "-p", "4321", "-s", scheme, "-o", path("s-\(scheme)"), path("raw.enc")])
            XCTAssertNotEqual(refused.status, 0, refused.stderr)
            XCTAssertTrue(refused.stderr.contains("0x182") || refused.stderr.contains("attributes"), refused.stderr)
            XCTAssertEqual((try? read("s-\(scheme)")) ?? [], [])
        }
    }

    /// What crosses the bus, recorded by tpm2-tss's pcap TCTI between rsakit and swtpm: the
    /// key's PIN, the ciphertext and the plaintext never appear in clear (the salted session's
    /// parameter encryption), while the public modulus does (the capture sees the traffic).
    func testBus_PINAndPlaintextNeverInClear() throws {
        guard dlopen("libtss2-tcti-pcap.so.0", RTLD_NOW | RTLD_LOCAL) != nil else {
            throw XCTSkip("TPM2-TSS'S PCAP TCTI NOT INSTALLED (libtss2-tcti-pcap0, with libtss2-dev): BUS TEST NOT RUN")
        }
        let openssl = try openssl()
        let capture = path("bus.pcap")
        environment["RSAKIT_TPM_TCTI"] = "pcap:swtpm:host=127.0.0.1,port=\(port)"
        environment["TCTI_PCAP_FILE"] = capture
        let pin = "PIN-never-in-clear-4711"
        try tpm(["genpair", "--tag", "tk", "--tpm", "--token-pin", "pass:" + pin])
        try tpm(["export", "--tag", "tk", "--out", path("tk.pub")])
        let message = Array("PLAINTEXT never in clear on the bus 0815".utf8)
        _ = try write(message, to: "m")
        let encrypted = try runProcess(
            openssl,
            [
                "pkeyutl", "-encrypt", "-pubin", "-inkey", path("tk.pub"), "-in", path("m"), "-out", path("c"),
                "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256"
            ])
        XCTAssertEqual(encrypted.status, 0, encrypted.stderr)
        XCTAssertEqual(
            try tpm([
                "decrypt", "--tag", "tk", "--raw", "--padding", "oaep", "--in", path("c"), "--token-pin",
                "pass:" + pin
            ]).stdout, message)
        let bus = try read("bus.pcap")
        func seen(_ needle: [UInt8]) -> Bool {
            guard bus.count >= needle.count else { return false }
            return (0...(bus.count - needle.count)).contains { bus[$0..<$0 + needle.count].elementsEqual(needle) }
        }
        let modulus = try runProcess(openssl, ["rsa", "-pubin", "-in", path("tk.pub"), "-modulus", "-noout"])
        let hex = Array(modulus.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "=")[1])
        let modulusBytes = stride(from: 0, to: hex.count, by: 2).map { UInt8(String(hex[$0..<$0 + 2]), radix: 16)! }
        XCTAssertTrue(seen(modulusBytes), "the capture holds the traffic (TPM2_Create's public area)")
        XCTAssertFalse(seen(Array(pin.utf8)), "the PIN crossed the bus in clear")
        XCTAssertFalse(seen(message), "the plaintext crossed the bus in clear")
        XCTAssertFalse(seen(try read("c")), "the ciphertext crossed the bus in clear")
    }

    func testTPMStateDeleted_KeyLostStoreUnchanged() throws {
        try tpm(["genpair", "--tag", "tk", "--tpm"])
        try tpm(["genpair", "--tag", "sk", "--tpm", "--usage", "sign"])
        _ = try write(Array("m\n".utf8), to: "m")
        try tpm(["encrypt", "--tag", "tk", "--padding", "oaep", "--in", path("m"), "--out", path("m.rsa")])
        let before = try storeSnapshot()
        // A cleared TPM: a new state, so a new storage seed and another primary key.
        swtpm?.kill9()
        try FileManager.default.removeItem(atPath: stateDirectory)
        try startTPM()
        environment["RSAKIT_TPM_TCTI"] = "swtpm:host=127.0.0.1,port=\(port)"
        assertFailure(
            try run(["decrypt", "--tag", "tk", "--in", path("m.rsa")]), status: 66, contains: "the TPM key is gone")
        assertFailure(
            try run(["sign", "--tag", "sk", "--in", path("m")]), status: 66,
            contains: "the TPM was cleared, reset or replaced since the key was made")
        XCTAssertEqual(try storeSnapshot(), before)
        // The public half still works, and the store still lists the key.
        try tpm(["encrypt", "--tag", "tk", "--padding", "oaep", "--in", path("m"), "--out", path("m2.rsa")])
        XCTAssertTrue(try tpm(["list"]).stdoutText.contains("tk  [tpm: decrypt]"))
    }

    func testWrongPINs_LockoutNamed() throws {
        let made = try tpm(["genpair", "--tag", "tk", "--tpm", "--usage", "sign", "--token-pin", "pass:1234"])
            .stdoutText
        XCTAssertTrue(made.contains("PIN: set"), made)
        _ = try write(Array("m\n".utf8), to: "m")
        try tpm(["sign", "--tag", "tk", "--in", path("m"), "--out", path("s"), "--token-pin", "pass:1234"])
        // No prompt without a terminal: the PIN must come from a source.
        assertFailure(
            try run(["sign", "--tag", "tk", "--in", path("m")]), status: 64,
            contains: "--token-pin SPEC or RSAKIT_TOKEN_PIN")
        // swtpm allows 3 failed authorisations (TPM2_PT_MAX_AUTH_FAIL), then locks out.
        for _ in 0..<3 {
            assertFailure(
                try run(["sign", "--tag", "tk", "--in", path("m"), "--token-pin", "pass:0000"]), status: 65,
                contains: "wrong token PIN")
        }
        assertFailure(
            try run(["sign", "--tag", "tk", "--in", path("m"), "--token-pin", "pass:0000"]), status: 1,
            contains: "dictionary-attack lockout")
        assertFailure(
            try run(["sign", "--tag", "tk", "--in", path("m"), "--token-pin", "pass:1234"]), status: 1,
            contains: "dictionary-attack lockout")
    }

    func testNoTPM_ClearErrorNothingWritten() throws {
        let missing = path("no-such-tpm")
        assertFailure(
            try run(["genpair", "--tag", "tk", "--tpm"], environment: ["RSAKIT_TPM_TCTI": "device:\(missing)"]),
            status: 66, contains: "no TPM: \(missing) does not exist")
        XCTAssertFalse(exists(storeDirectory.path))
        let unused = try TLSTestServer.freePort()
        assertFailure(
            try run(
                ["genpair", "--tag", "tk", "--tpm"],
                environment: ["RSAKIT_TPM_TCTI": "swtpm:host=127.0.0.1,port=\(unused)"]),
            status: 66, contains: "no TPM answers through TCTI 'swtpm:host=127.0.0.1,port=\(unused)'")
        XCTAssertFalse(exists(storeDirectory.path))
        // An existing store gains nothing either.
        try tpm(["genpair", "--tag", "other", "--bits", "1024"])
        let before = try storeSnapshot()
        assertFailure(
            try run(["genpair", "--tag", "tk", "--tpm"], environment: ["RSAKIT_TPM_TCTI": "device:\(missing)"]),
            status: 66, contains: "does not exist")
        XCTAssertEqual(try storeSnapshot(), before)
        assertFailure(
            try run(["genpair", "--tag", "tk", "--tpm", "--bits", "4096"]), status: 64, contains: "must be 2048 or 3072"
        )
        // A TPM whose owner hierarchy has an auth value: rsakit's parent key cannot be made
        // there, which it says in one line; nothing is written.
        guard let changeAuth = TestTools.path(of: "tpm2_changeauth") else { return }
        let tools = ["TPM2TOOLS_TCTI": environment["RSAKIT_TPM_TCTI"]!, "TSS2_LOG": "all+none"]
        let set = try runProcess(changeAuth, ["-c", "owner", "owner-secret"], environment: tools)
        XCTAssertEqual(set.status, 0, set.stderr)
        assertFailure(
            try run(["genpair", "--tag", "tk", "--tpm"]), status: 66,
            contains: "TPM unavailable: the TPM's owner hierarchy has an auth value")
        XCTAssertEqual(try storeSnapshot(), before)
    }

    func testTLSConnect_TPMKey_TLS13SignsPSSInTheTPM() throws {
        let openssl = try openssl()
        let pki = try TLSTestPKI.shared(openssl: openssl)
        try tpm(["genpair", "--tag", "tk", "--tpm", "--usage", "sign"])
        try tpm(["export", "--tag", "tk", "--out", path("tk.pub")])
        try pki.issueClientCertificate(
            openssl: openssl, publicKey: path("tk.pub"), subject: "/CN=tpm-client", serial: 89, output: path("tk.pem"))
        try tpm(["cert", "add", path("tk.pem"), "--label", "tpm-client"])
        let server = try TLSTestServer(
            openssl: openssl,
            arguments: [
                "-Verify", "1", "-verify_return_error", "-CAfile", pki.path("ca.pem"),
                "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"), "-key", pki.path("srv.key"), "-www"
            ],
            directory: workDirectory.path)
        servers.append(server)
        let result = try runProcess(
            "/usr/bin/timeout",
            [
                "-k", "5", "60", Self.binary.path, "tls", "connect", "127.0.0.1:\(server.port)",
                "--timeout", "20", "--tag", "tk", "--anchor", pki.path("ca.pem"), "--tls1.3", "-v"
            ],
            stdin: Array("GET / HTTP/1.0\r\n\r\n".utf8), environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        TLSTestPKI.assertServerSawClientCertificate(result.stdoutText, version: "TLSv1.3", subject: "CN=tpm-client")
        XCTAssertTrue(
            result.stderr.contains("client signature: RSA-PSS-RSAE-SHA256, by the TPM (rsa_pss_rsae_sha256)"),
            result.stderr)
        // A server that takes only PKCS#1 v1.5 client signatures (TLS 1.2): GnuTLS hands a
        // DigestInfo, which rsakit parses and the TPM signs with RSASSA (no raw RSA).
        let pkcs1 = try TLSTestServer(
            openssl: openssl,
            arguments: [
                "-Verify", "1", "-verify_return_error", "-CAfile", pki.path("ca.pem"), "-client_sigalgs", "RSA+SHA256",
                "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"), "-key", pki.path("srv.key"), "-www"
            ],
            directory: workDirectory.path)
        servers.append(pkcs1)
        let signed = try runProcess(
            "/usr/bin/timeout",
            [
                "-k", "5", "60", Self.binary.path, "tls", "connect", "127.0.0.1:\(pkcs1.port)",
                "--timeout", "20", "--tag", "tk", "--anchor", pki.path("ca.pem"), "--tls1.2", "-v"
            ],
            stdin: Array("GET / HTTP/1.0\r\n\r\n".utf8), environment: environment)
        XCTAssertEqual(signed.status, 0, signed.stderr)
        let page = signed.stdoutText
        XCTAssertTrue(page.contains("New, TLSv1.2, Cipher is"), page)
        XCTAssertTrue(page.contains("Subject: CN=tpm-client"), page)
        XCTAssertTrue(page.contains("Peer signature type: RSA\n"), page)
        XCTAssertTrue(signed.stderr.contains("client signature: RSA-SHA256, by the TPM"), signed.stderr)
    }

    func testStoreProtectTPM_OpensWithoutPassphraseUntilTheTPMIsCleared() throws {
        try tpm(["genpair", "--tag", "k", "--bits", "1024", "-q"])
        _ = try write(Array("m\n".utf8), to: "m")
        let protected = try tpm(["store", "protect", "--tpm", "--kdf", "interactive", "--store-passin", "pass:recovery"]
        ).stdoutText
        XCTAssertEqual(
            protected, "protected: \(storeDirectory.path) (sealed to the TPM; the passphrase is the recovery path)\n")
        XCTAssertTrue(try tpm(["store", "info"]).stdoutText.contains("sealed to the TPM: yes"))
        // No passphrase source and no terminal: the TPM opens the store key.
        try tpm(["sign", "--tag", "k", "--in", path("m"), "--out", path("s1")])
        // A new passphrase keeps the TPM's seal (it seals the same store key).
        try tpm([
            "store", "change-passphrase", "--store-passin", "pass:recovery", "--new-passin", "pass:recovery2", "--kdf",
            "interactive"
        ])
        try tpm(["sign", "--tag", "k", "--in", path("m"), "--out", path("s2")])
        XCTAssertEqual(try read("s1"), try read("s2"))
        // The TPM cleared: the seal is lost, the passphrase still opens the store.
        swtpm?.kill9()
        try FileManager.default.removeItem(atPath: stateDirectory)
        try startTPM()
        environment["RSAKIT_TPM_TCTI"] = "swtpm:host=127.0.0.1,port=\(port)"
        let locked = try run(["sign", "--tag", "k", "--in", path("m"), "--out", path("s3")])
        XCTAssertEqual(locked.status, 64, locked.stderr)
        XCTAssertTrue(
            locked.stderr.contains(
                "rsakit: warning: the TPM did not open the key store at \(storeDirectory.path) (the TPM no longer "
                    + "holds its seal"
            ), locked.stderr)
        XCTAssertTrue(
            locked.stderr.contains("a passphrase is needed and there is no terminal to ask on"), locked.stderr)
        XCTAssertFalse(exists("s3"))
        try tpm(["sign", "--tag", "k", "--in", path("m"), "--out", path("s3"), "--store-passin", "pass:recovery2"])
        XCTAssertEqual(try read("s1"), try read("s3"))
    }
}
