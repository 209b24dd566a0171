import Foundation
import XCTest
import RSAKitTestSupport

/// The TPM's boundaries, on swtpm (``TPMTestCase``): the one-usage rule shown at the TPM through
/// tpm2-tools, what crosses the bus, a cleared TPM, the dictionary-attack lockout, no TPM.
final class CLITPMBoundaryTests: TPMTestCase {
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
        try opensslEncryptOAEP(publicKey: path("d.pub"), input: path("m"), output: path("m.enc"))
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
        try opensslEncryptOAEP(publicKey: path("tk.pub"), input: path("m"), output: path("c"))
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
}
