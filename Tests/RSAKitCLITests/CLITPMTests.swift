import Foundation
import XCTest
import RSAKitTestSupport

/// Keys in the TPM (`genpair --tpm`) with their one usage, on swtpm (``TPMTestCase``): a signing
/// key's signatures, requests and TLS client authentication, a decryption key's OAEP and
/// PKCS#1 v1.5 round trips and Apple's format, each refusing the other usage; rsakit's PKCS#11
/// module on both; the store key sealed to the TPM.
final class CLITPMTests: TPMTestCase {
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
        XCTAssertTrue(show.contains("signatures only (a TPM key made with usage sign)\n"), show)
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
        let made = try tpm(["genpair", "--tag", "tk", "--tpm"]).stdoutText
        XCTAssertTrue(made.contains("usage: decrypt (RSAES-OAEP SHA-256)\n"), made)
        XCTAssertTrue(try tpm(["list"]).stdoutText.contains("tk  [tpm: decrypt]"))
        let show = try tpm(["show", "--tag", "tk"]).stdoutText
        XCTAssertTrue(show.contains("maximum raw block payload: 190 bytes (k - 66, --raw --padding oaep)\n"), show)
        XCTAssertTrue(show.contains("usage: decrypt (RSAES-OAEP SHA-256)\n"), show)
        try tpm(["export", "--tag", "tk", "--out", path("tk.pub")])
        let message = Array("a secret for the TPM\n".utf8)
        _ = try write(message, to: "m")
        // RSAES-OAEP with SHA-256 by openssl, decrypted in the TPM.
        try opensslEncryptOAEP(publicKey: path("tk.pub"), input: path("m"), output: path("c2"))
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
        // The TPM checks PKCS#1 v1.5 padding itself: implicit rejection cannot apply, and is refused.
        assertFailure(
            try run(["decrypt", "--tag", "tk", "--raw", "--implicit-rejection", "--in", path("c1")]), status: 64,
            contains: "--implicit-rejection needs the private key in rsakit's engine; a key in the TPM checks")
        try tpm(["encrypt", "--tag", "tk", "--in", path("m"), "--out", path("m.rsa")])
        XCTAssertEqual(try tpm(["decrypt", "--tag", "tk", "--in", path("m.rsa")]).stdout, message)
        assertFailure(
            try run(["encrypt", "--tag", "tk", "--format", "apple-aesgcm", "--in", path("m"), "--out", path("m.a")]),
            status: 64, contains: "decrypts only RSAES-PKCS1-v1_5 (its scheme, fixed in the TPM)")
    }

    func testTLSConnect_TPMKey_TLS13SignsPSSInTheTPM() throws {
        let openssl = try openssl()
        let pki = try TLSTestPKI.shared(openssl: openssl)
        try tpm(["genpair", "--tag", "tk", "--tpm", "--usage", "sign"])
        try tpm(["export", "--tag", "tk", "--out", path("tk.pub")])
        try pki.issueClientCertificate(
            openssl: openssl, publicKey: path("tk.pub"), subject: "/CN=tpm-client", serial: 89, output: path("tk.pem"))
        try tpm(["cert", "add", path("tk.pem"), "--label", "tpm-client"])
        let server = try startMutualTLSServer(pki, openssl: openssl)
        servers.append(server)
        let result = try connectTLS(
            server, ["--tag", "tk", "--anchor", pki.path("ca.pem"), "--tls1.3", "-v"], environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        TLSTestPKI.assertServerSawClientCertificate(result.stdoutText, version: "TLSv1.3", subject: "CN=tpm-client")
        XCTAssertTrue(
            result.stderr.contains("client signature: RSA-PSS-RSAE-SHA256, by the TPM (rsa_pss_rsae_sha256)"),
            result.stderr)
        // A server that takes only PKCS#1 v1.5 client signatures (TLS 1.2): GnuTLS hands a
        // DigestInfo, which rsakit parses and the TPM signs with RSASSA (no raw RSA).
        let pkcs1 = try startMutualTLSServer(pki, openssl: openssl, extra: ["-client_sigalgs", "RSA+SHA256"])
        servers.append(pkcs1)
        let signed = try connectTLS(
            pkcs1, ["--tag", "tk", "--anchor", pki.path("ca.pem"), "--tls1.2", "-v"], environment: environment)
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
