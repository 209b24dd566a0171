import Foundation
import XCTest

/// `rsakit sign` / `rsakit verify` with the built binary against the real `openssl`, both
/// directions: `openssl dgst -sign/-verify` (PKCS#1 v1.5 and PSS) and `openssl pkeyutl`
/// over a digest.
final class CLISignatureTests: CLITestCase {
    /// A 2048-bit key made by openssl, its public half, and a message with NULs.
    func fixtures() throws -> (key: String, pub: String, message: String) {
        let openssl = try openssl()
        let key = path("key.pem"), pub = path("pub.pem")
        // Commands: openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out key.pem; openssl pkey -in key.pem
        // -pubout -out pub.pem
        XCTAssertEqual(
            try runProcess(openssl, ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key])
                .status, 0)
        XCTAssertEqual(try runProcess(openssl, ["pkey", "-in", key, "-pubout", "-out", pub]).status, 0)
        return (key, pub, try write(testBytes(10_000), to: "message.bin"))
    }

    @discardableResult
    func opensslOK(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        let result = try runProcess(try openssl(), arguments)
        XCTAssertEqual(
            result.status, 0, "openssl \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    func testSignPKCS1_ByteIdenticalToOpenSSLDgstAndBothVerify() throws {
        let f = try fixtures()
        for hash in ["sha1", "sha224", "sha256", "sha384", "sha512", "sha512-224", "sha512-256", "sha3-256", "sha3-512"]
        {
            // openssl dgst -H -sign key.pem -out o.sig message.bin
            let theirs = path("openssl-\(hash).sig"), ours = path("rsakit-\(hash).sig")
            try opensslOK(["dgst", "-\(hash)", "-sign", f.key, "-out", theirs, f.message])
            try rsakitOK(["sign", "--key", f.key, "--hash", hash, "--in", f.message, "--out", ours])
            XCTAssertEqual(
                try read(ours), try read(theirs), "PKCS#1 v1.5 is deterministic: same bytes as openssl (\(hash))")
            XCTAssertEqual(try read(ours).count, 256)
            let verified = try opensslOK(["dgst", "-\(hash)", "-verify", f.pub, "-signature", ours, f.message])
            XCTAssertEqual(verified.stdoutText, "Verified OK\n")
            let ok = try rsakitOK(["verify", "--key", f.pub, "--hash", hash, "--signature", theirs, "--in", f.message])
            XCTAssertEqual(ok.stdoutText, "signature ok\n")
            XCTAssertEqual(ok.stderr, "")
        }
    }

    /// `verify --cert`: the certificate's RSA key checks what `openssl dgst -sign`
    /// made with the private key; an altered message is refused.
    func testVerify_WithACertificate() throws {
        let f = try fixtures()
        // openssl req -x509 -new -key key.pem -subj /CN=signer -days 30 -out cert.pem
        let cert = path("cert.pem")
        try opensslOK(["req", "-x509", "-new", "-key", f.key, "-subj", "/CN=signer", "-days", "30", "-out", cert])
        let sig = path("cert.sig")
        try opensslOK(["dgst", "-sha256", "-sign", f.key, "-out", sig, f.message])
        let ok = try rsakitOK(["verify", "--cert", cert, "--signature", sig, "--in", f.message])
        XCTAssertEqual(ok.stdoutText, "signature ok\n")
        let altered = try write(testBytes(10_001), to: "altered.bin")
        let bad = try rsakit(["verify", "--cert", cert, "--signature", sig, "--in", altered])
        XCTAssertEqual(bad.status, 65, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("signature invalid"), bad.stderr)
        let both = try rsakit(["verify", "--cert", cert, "--key", f.pub, "--signature", sig, "--in", f.message])
        XCTAssertEqual(both.status, 64, both.stderr)
    }

    func testSignPSS_OpenSSLVerifiesRSAKitSignatures() throws {
        let f = try fixtures()
        for (hash, salt, opensslSalt) in [
            ("sha256", nil, "digest"), ("sha384", "max", "max"), ("sha512", "0", "0"), ("sha1", "20", "20")
        ] {
            let sig = path("pss-\(hash).sig")
            var arguments = ["sign", "--key", f.key, "--scheme", "pss", "--hash", hash, "--in", f.message, "--out", sig]
            if let salt { arguments += ["--salt-length", salt] }
            try rsakitOK(arguments)
            // openssl dgst -H -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:S -verify pub.pem -signature sig
            // message.bin
            let dgst = try opensslOK([
                "dgst", "-\(hash)", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:\(opensslSalt)",
                "-verify", f.pub, "-signature", sig, f.message
            ])
            XCTAssertEqual(dgst.stdoutText, "Verified OK\n", "\(hash) salt \(opensslSalt)")
            // openssl dgst -H -binary message.bin > digest; openssl pkeyutl -verify -pubin -inkey pub.pem -pkeyopt
            // digest:H
            //   -pkeyopt rsa_padding_mode:pss -pkeyopt rsa_pss_saltlen:S -in digest -sigfile sig
            let digest = try write(
                try opensslOK(["dgst", "-\(hash)", "-binary", f.message]).stdout, to: "digest-\(hash).bin")
            let pkeyutl = try opensslOK([
                "pkeyutl", "-verify", "-pubin", "-inkey", f.pub, "-pkeyopt", "digest:\(hash)",
                "-pkeyopt", "rsa_padding_mode:pss", "-pkeyopt", "rsa_pss_saltlen:\(opensslSalt)",
                "-in", digest, "-sigfile", sig
            ])
            XCTAssertTrue(pkeyutl.stdoutText.contains("Signature Verified Successfully"), pkeyutl.stdoutText)
        }
    }

    func testVerifyPSS_AcceptsOpenSSLPkeyutlSignaturesOverADigest() throws {
        let f = try fixtures()
        let digest = try write(try opensslOK(["dgst", "-sha256", "-binary", f.message]).stdout, to: "digest.bin")
        for (opensslSalt, ourSalt, mgf1) in [
            ("digest", "digest", "sha256"), ("max", "max", "sha256"), ("17", "17", "sha256"), ("32", "32", "sha1")
        ] {
            let sig = path("pkeyutl-\(opensslSalt)-\(mgf1).sig")
            // openssl pkeyutl -sign -inkey key.pem -pkeyopt digest:sha256 -pkeyopt rsa_padding_mode:pss
            //   -pkeyopt rsa_pss_saltlen:S -pkeyopt rsa_mgf1_md:M -in digest.bin -out sig
            try opensslOK([
                "pkeyutl", "-sign", "-inkey", f.key, "-pkeyopt", "digest:sha256", "-pkeyopt", "rsa_padding_mode:pss",
                "-pkeyopt", "rsa_pss_saltlen:\(opensslSalt)", "-pkeyopt", "rsa_mgf1_md:\(mgf1)", "-in", digest, "-out",
                sig
            ])
            let common = [
                "verify", "--key", f.pub, "--scheme", "pss", "--mgf1-hash", mgf1, "--signature", sig, "--in", f.message
            ]
            XCTAssertEqual(
                try rsakitOK(common + ["--salt-length", ourSalt]).stdoutText, "signature ok\n",
                "salt \(opensslSalt), MGF1 \(mgf1)")
            XCTAssertEqual(
                try rsakitOK(common + ["--salt-length", "auto"]).stdoutText, "signature ok\n",
                "auto recovers salt \(opensslSalt)")
            // No --salt-length is auto: every salt length verifies, as with openssl.
            XCTAssertEqual(try rsakitOK(common).stdoutText, "signature ok\n", "default recovers salt \(opensslSalt)")
        }
    }

    /// openssl's default PSS signature (maximum salt, 222 bytes for a 2048-bit key
    /// and SHA-256) verifies without --salt-length (auto is the default); an explicit number
    /// or 'digest' stays strict and fails with the opaque message.
    func testVerifyPSS_DefaultRecoversOpenSSLsMaximumSalt_ExplicitLengthStaysStrict() throws {
        let f = try fixtures()
        let sig = path("openssl-default-pss.sig")
        // openssl dgst -sha256 -sigopt rsa_padding_mode:pss -sign key.pem -out sig message.bin
        try opensslOK(["dgst", "-sha256", "-sigopt", "rsa_padding_mode:pss", "-sign", f.key, "-out", sig, f.message])
        let common = ["verify", "--key", f.pub, "--scheme", "pss", "--signature", sig, "--in", f.message]
        let ok = try rsakitOK(common)
        XCTAssertEqual(ok.stdoutText, "signature ok\n")
        XCTAssertEqual(ok.stderr, "")
        XCTAssertEqual(
            try rsakitOK(common + ["--salt-length", "222"]).stdoutText, "signature ok\n",
            "the maximum salt is 256 - 32 - 2")
        for strict in ["32", "digest", "221", "0"] {
            let result = try rsakit(common + ["--salt-length", strict])
            XCTAssertEqual(result.status, 65, "salt \(strict): \(result.stderr)")
            XCTAssertEqual(result.stderr, "rsakit: error: signature invalid\n", "salt \(strict)")
        }
        XCTAssertTrue(try rsakitOK(["help", "verify"]).stdoutText.contains("'auto' (the default"))
    }

    func testVerify_RejectsAlteredDataWrongHashWrongSchemeWrongKey() throws {
        let f = try fixtures()
        let sig = path("m.sig")
        try rsakitOK(["sign", "--key", f.key, "--in", f.message, "--out", sig])
        var altered = try read(f.message); altered[5_000] ^= 1
        let alteredPath = try write(altered, to: "altered.bin")
        var badSig = try read(sig); badSig[100] ^= 0x80
        let badSigPath = try write(badSig, to: "bad.sig")
        let otherKey = path("other.pem")
        XCTAssertEqual(
            try runProcess(
                try openssl(), ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", otherKey]
            ).status, 0)
        let cases: [(String, [String])] = [
            ("altered data", ["--key", f.pub, "--signature", sig, "--in", alteredPath]),
            ("altered signature", ["--key", f.pub, "--signature", badSigPath, "--in", f.message]),
            ("wrong hash", ["--key", f.pub, "--hash", "sha384", "--signature", sig, "--in", f.message]),
            (
                "wrong scheme",
                ["--key", f.pub, "--scheme", "pss", "--salt-length", "auto", "--signature", sig, "--in", f.message]
            ),
            ("wrong key", ["--key", otherKey, "--signature", sig, "--in", f.message]),
            (
                "truncated signature",
                [
                    "--key", f.pub, "--signature", try write(Array(try read(sig).dropFirst()), to: "short.sig"), "--in",
                    f.message
                ]
            )
        ]
        for (what, arguments) in cases {
            let result = try rsakit(["verify"] + arguments)
            assertFailure(result, status: 65, contains: "signature invalid")
            XCTAssertEqual(result.stdout, [], what)
        }
    }

    func testSignVerify_WithStoreTagsAndStandardStreams() throws {
        try rsakitOK(["genpair", "--tag", "signer", "--bits", "2048"])
        let message = testBytes(3_000, seed: 9)
        let signed = try rsakitOK(["sign", "--tag", "signer", "--scheme", "pss"], stdin: message)
        XCTAssertEqual(signed.stdout.count, 256, "k bytes on standard output")
        let sig = try write(signed.stdout, to: "tag.sig")
        XCTAssertEqual(
            try rsakitOK(["verify", "--tag", "signer", "--scheme", "pss", "--signature", sig], stdin: message)
                .stdoutText, "signature ok\n")
        // The public half, exported, verifies with openssl too.
        let pub = try rsakitOK(["export", "--tag", "signer"]).stdout
        let pubPath = try write(pub, to: "signer.pub.pem")
        let messagePath = try write(message, to: "m.bin")
        let ok = try runProcess(
            try openssl(),
            [
                "dgst", "-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest",
                "-verify", pubPath, "-signature", sig, messagePath
            ])
        XCTAssertEqual(ok.stdoutText, "Verified OK\n", ok.stderr)
    }

    func testSignVerify_UsageErrorsAndNoOutputOnFailure() throws {
        let f = try fixtures()
        assertFailure(
            try rsakit(["sign", "--key", f.key, "--salt-length", "max", "--in", f.message]), status: 64,
            contains: "--salt-length applies to --scheme pss only")
        assertFailure(
            try rsakit(["sign", "--key", f.key, "--hash", "md5", "--in", f.message]), status: 64,
            contains: "unknown hash 'md5'")
        assertFailure(
            try rsakit(["sign", "--key", f.key, "--scheme", "x931", "--in", f.message]), status: 64,
            contains: "unknown --scheme")
        assertFailure(
            try rsakit(["sign", "--key", f.key, "--scheme", "pss", "--salt-length", "auto", "--in", f.message]),
            status: 64, contains: "--salt-length expects")
        assertFailure(
            try rsakit(["sign", "--in", f.message]), status: 64, contains: "missing --tag <TAG> or --key <FILE>")
        assertFailure(
            try rsakit(["verify", "--key", f.pub, "--in", f.message]), status: 64,
            contains: "missing required option '--signature'")
        let out = path("never.sig")
        assertFailure(
            try rsakit(["sign", "--key", f.pub, "--in", f.message, "--out", out]), status: 65,
            contains: "holds a public key")
        XCTAssertFalse(exists(out))
        assertFailure(
            try rsakit([
                "sign", "--key", f.key, "--scheme", "pss", "--salt-length", "300", "--in", f.message, "--out", out
            ]),
            status: 64, contains: "invalid PSS salt length 300 bytes: at most 222")
        XCTAssertFalse(exists(out), "no half-written signature file")
        XCTAssertTrue(try rsakitOK(["help", "sign"]).stdoutText.contains("--salt-length"))
        XCTAssertTrue(try rsakitOK(["--help"]).stdoutText.contains("verify"))
    }
}
