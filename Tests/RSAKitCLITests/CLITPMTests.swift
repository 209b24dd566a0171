import Foundation
import XCTest
import RSAKitTestSupport

/// Keys in the TPM (`genpair --tpm`), with swtpm: each test starts its own software TPM
/// (`swtpm socket --tpm2 --flags not-need-init,startup-clear`) on two free ports of
/// 127.0.0.1, its state in the test's folder, reached through RSAKIT_TPM_TCTI
/// (`swtpm:host=127.0.0.1,port=P`). No test touches a /dev/tpm* device. Without swtpm or
/// tpm2-pkcs11 installed (scripts/install-deps.sh installs both) the tests skip, saying so.
final class CLITPMTests: CLITestCase {
    static let module = "/usr/lib/x86_64-linux-gnu/pkcs11/libtpm2_pkcs11.so"
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
        guard FileManager.default.fileExists(atPath: Self.module) else {
            throw XCTSkip("TPM2-PKCS11 NOT INSTALLED (apt package libtpm2-pkcs11-1): TPM KEY TESTS NOT RUN")
        }
        try startTPM(swtpmPath)
        environment = [
            "RSAKIT_TPM_TCTI": "swtpm:host=127.0.0.1,port=\(port)", "RSAKIT_TOKEN_PIN": nil, "RSAKIT_PASSIN": nil,
            "TPM2_PKCS11_LOG_LEVEL": nil
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

    func testGenPairTPM_OpenSSLRoundTripsSignaturesAndNoExport() throws {
        let openssl = try openssl()
        let made = try tpm(["genpair", "--tag", "tk", "--tpm"]).stdoutText
        XCTAssertTrue(made.contains("location: tpm (swtpm:host=127.0.0.1,port=\(port); PIN: none)"), made)
        let list = try tpm(["list"]).stdoutText
        XCTAssertTrue(
            list.split(separator: "\n").contains { $0.hasPrefix("private") && $0.hasSuffix("tk  [tpm]") }, list)
        let show = try tpm(["show", "--tag", "tk"]).stdoutText
        XCTAssertTrue(show.contains("location: tpm (token rsakit "), show)
        XCTAssertTrue(show.contains("PIN: none; not exportable)"), show)
        XCTAssertTrue(show.contains("public key:\n-----BEGIN PUBLIC KEY-----\n"), show)
        XCTAssertTrue(try tpm(["show", "--tag", "tk", "--json"]).stdoutText.contains("\"tpm\" : true"))
        // The store's TPM database is private.
        let database = storeDirectory.path + "/tpm/tpm2_pkcs11.sqlite3"
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: database)[.posixPermissions] as? Int), 0o600)

        try tpm(["export", "--tag", "tk", "--out", path("tk.pub")])
        XCTAssertTrue(show.contains(try String(contentsOfFile: path("tk.pub"), encoding: .utf8)), show)
        let message = Array("a secret for the TPM\n".utf8)
        _ = try write(message, to: "m")
        // PKCS#1 v1.5 and OAEP (SHA-256) by openssl, decrypted in the TPM.
        let v15 = try runProcess(
            openssl, ["pkeyutl", "-encrypt", "-pubin", "-inkey", path("tk.pub"), "-in", path("m"), "-out", path("c1")])
        XCTAssertEqual(v15.status, 0, v15.stderr)
        XCTAssertEqual(try tpm(["decrypt", "--tag", "tk", "--raw", "--in", path("c1")]).stdout, message)
        let oaep = try runProcess(
            openssl,
            [
                "pkeyutl", "-encrypt", "-pubin", "-inkey", path("tk.pub"), "-in", path("m"), "-out", path("c2"),
                "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256"
            ])
        XCTAssertEqual(oaep.status, 0, oaep.stderr)
        XCTAssertEqual(
            try tpm([
                "decrypt", "--tag", "tk", "--raw", "--padding", "oaep", "--oaep-hash", "sha256", "--in", path("c2")
            ]).stdout, message)

        // Signatures made in the TPM, verified by openssl: PKCS#1 v1.5 and PSS with salt = hLen.
        try tpm(["sign", "--tag", "tk", "--in", path("m"), "--out", path("s1")])
        let verified = try runProcess(
            openssl, ["dgst", "-sha256", "-verify", path("tk.pub"), "-signature", path("s1"), path("m")])
        XCTAssertEqual(verified.stdoutText, "Verified OK\n", verified.stderr)
        try tpm(["sign", "--tag", "tk", "--scheme", "pss", "--in", path("m"), "--out", path("s2")])
        let pss = try runProcess(
            openssl,
            [
                "dgst", "-sha256", "-verify", path("tk.pub"), "-sigopt", "rsa_padding_mode:pss",
                "-sigopt", "rsa_pss_saltlen:32", "-signature", path("s2"), path("m")
            ])
        XCTAssertEqual(pss.stdoutText, "Verified OK\n", pss.stderr)
        // The TPM makes PSS with salt = hLen only.
        assertFailure(
            try run([
                "sign", "--tag", "tk", "--scheme", "pss", "--salt-length", "max", "--in", path("m"), "--out", path("s3")
            ]),
            status: 64, contains: "salt as long as the hash")

        // encrypt needs only the public key, and says what decrypting costs.
        let sealed = try tpm(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("m.rsa")])
        XCTAssertEqual(
            sealed.stderr,
            "rsakit: note: the private key is in a TPM: decrypting this takes 1 private operation in the TPM\n")
        _ = try write(testBytes(4000), to: "big")
        let many = try tpm(["encrypt", "--tag", "tk", "--in", path("big"), "--out", path("big.rsa")])
        XCTAssertTrue(many.stderr.contains("decrypting this takes 22 private operations in the TPM"), many.stderr)
        XCTAssertTrue(many.stderr.contains("--format apple-aesgcm takes one for any size"), many.stderr)
        XCTAssertEqual(try tpm(["decrypt", "--tag", "tk", "--in", path("m.rsa")]).stdout, message)
        try tpm(["encrypt", "--tag", "tk", "--format", "apple-aesgcm", "--in", path("big"), "--out", path("big.apple")])
        XCTAssertEqual(
            try tpm(["decrypt", "--tag", "tk", "--format", "apple-aesgcm", "--in", path("big.apple")]).stdout,
            testBytes(4000))

        // The private key cannot be read out.
        assertFailure(
            try run(["export", "--tag", "tk", "--private", "--out", path("k.pem")]), status: 66,
            contains: "cannot be exported")
        XCTAssertFalse(exists("k.pem"))
        // rsakit's PKCS#11 module shows the object as sensitive and never extractable (it has
        // no value to give: the store holds the public key only), and runs its operations in
        // the TPM: a SHA256-RSA-PKCS signature openssl verifies, an OAEP decryption; raw
        // CKM_RSA_PKCS over a caller's DigestInfo is refused.
        let module = Self.productsDirectory.appendingPathComponent("librsakit-pkcs11.so").path
        if FileManager.default.fileExists(atPath: module),
            let tool = ["/usr/bin/pkcs11-tool"].first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        {
            let objects = try runProcess(tool, ["--module", module, "-O"], environment: environment)
            XCTAssertTrue(
                objects.stdoutText.contains("Access:     sensitive, always sensitive, never extractable"),
                objects.stdoutText)
            let signed = try runProcess(
                tool,
                [
                    "--module", module, "--sign", "-m", "SHA256-RSA-PKCS", "--label", "tk",
                    "-i", path("m"), "-o", path("p11.sig")
                ], environment: environment)
            XCTAssertEqual(signed.status, 0, signed.stderr)
            let checked = try runProcess(
                openssl, ["dgst", "-sha256", "-verify", path("tk.pub"), "-signature", path("p11.sig"), path("m")])
            XCTAssertEqual(checked.stdoutText, "Verified OK\n", checked.stderr)
            let opened = try runProcess(
                tool,
                [
                    "--module", module, "--decrypt", "-m", "RSA-PKCS-OAEP", "--hash-algorithm", "SHA256",
                    "--mgf", "MGF1-SHA256", "--label", "tk", "-i", path("c2")
                ], environment: environment)
            XCTAssertEqual(opened.stdout, message, opened.stderr)
            let raw = try runProcess(
                tool,
                [
                    "--module", module, "--sign", "-m", "RSA-PKCS", "--label", "tk",
                    "-i", path("m"), "-o", path("raw.sig")
                ], environment: environment)
            XCTAssertTrue(raw.stderr.contains("CKR_KEY_FUNCTION_NOT_PERMITTED"), raw.stderr)
        }

        // A certificate request signed in the TPM (PKCS#1 v1.5 over the request, and PSS),
        // which openssl accepts, for the key the store shows.
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
    }

    func testTPMStateDeleted_KeyLostStoreUnchanged() throws {
        try tpm(["genpair", "--tag", "tk", "--tpm"])
        _ = try write(Array("m\n".utf8), to: "m")
        try tpm(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("m.rsa")])
        let before = try storeSnapshot()
        // A cleared TPM: a new state, so a new storage seed and another primary key.
        swtpm?.kill9()
        try FileManager.default.removeItem(atPath: stateDirectory)
        try startTPM()
        environment["RSAKIT_TPM_TCTI"] = "swtpm:host=127.0.0.1,port=\(port)"
        assertFailure(
            try run(["decrypt", "--tag", "tk", "--in", path("m.rsa")]), status: 66, contains: "the TPM key is gone")
        assertFailure(
            try run(["sign", "--tag", "tk", "--in", path("m")]), status: 66,
            contains: "TPM was cleared, reset or replaced")
        XCTAssertEqual(try storeSnapshot(), before)
        // The public half still works, and the store still lists the key.
        try tpm(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("m2.rsa")])
        XCTAssertTrue(try tpm(["list"]).stdoutText.contains("tk  [tpm]"))
    }

    func testWrongPINs_LockoutNamed() throws {
        let made = try tpm(["genpair", "--tag", "tk", "--tpm", "--token-pin", "pass:1234"]).stdoutText
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
        XCTAssertFalse(exists(storeDirectory.path + "/tpm"))
        assertFailure(
            try run(["genpair", "--tag", "tk", "--tpm", "--bits", "4096"]), status: 64, contains: "must be 2048 or 3072"
        )
    }

    func testTLSConnect_TPMKey_TLS13SignsPSSInTheTPM() throws {
        let openssl = try openssl()
        let pki = try TLSTestPKI.shared(openssl: openssl)
        try tpm(["genpair", "--tag", "tk", "--tpm"])
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
        // A server that takes only PKCS#1 v1.5 client signatures (TLS 1.2) needs one over
        // GnuTLS's DigestInfo, which is raw RSA: refused by name, before anything is sent.
        let pkcs1 = try TLSTestServer(
            openssl: openssl,
            arguments: [
                "-Verify", "1", "-verify_return_error", "-CAfile", pki.path("ca.pem"), "-client_sigalgs", "RSA+SHA256",
                "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"), "-key", pki.path("srv.key"), "-www"
            ],
            directory: workDirectory.path)
        servers.append(pkcs1)
        let refused = try runProcess(
            "/usr/bin/timeout",
            [
                "-k", "5", "60", Self.binary.path, "tls", "connect", "127.0.0.1:\(pkcs1.port)",
                "--timeout", "20", "--tag", "tk", "--anchor", pki.path("ca.pem"), "--tls1.2"
            ],
            stdin: Array("GET / HTTP/1.0\r\n\r\n".utf8), environment: environment)
        assertFailure(
            refused, status: 65,
            contains:
                "the client key could not sign: a key in the TPM makes PKCS#1 v1.5 signatures only over the whole "
                + "message"
        )
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
