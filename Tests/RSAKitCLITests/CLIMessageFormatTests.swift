import Foundation
import XCTest

/// `encrypt`/`decrypt` formats and paddings with the built binary: --format, --padding,
/// --oaep-hash, --mgf1-hash, --label, against the real openssl.
final class CLIMessageFormatTests: CLITestCase {
    /// An openssl key pair in files: (private PEM, public PEM).
    func opensslKeys(bits: Int = 2048) throws -> (String, String) {
        let tool = try openssl()
        let priv = path("key.pem"), pub = path("pub.pem")
        // Commands: openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out key.pem
        //           openssl pkey -in key.pem -pubout -out pub.pem
        XCTAssertEqual(
            try runProcess(tool, ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)", "-out", priv])
                .status, 0)
        XCTAssertEqual(try runProcess(tool, ["pkey", "-in", priv, "-pubout", "-out", pub]).status, 0)
        return (priv, pub)
    }

    func testRawOAEP_InteropWithOpensslPkeyutlBothWays() throws {
        let tool = try openssl()
        let (priv, pub) = try opensslKeys()
        let opensslOptions = [
            "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256",
            "-pkeyopt", "rsa_mgf1_md:sha1", "-pkeyopt", "rsa_oaep_label:6a617661"
        ]
        let rsakitOptions = [
            "--raw", "--padding", "oaep", "--oaep-hash", "sha256", "--mgf1-hash", "sha1", "--label", "java"
        ]
        // rsakit -> openssl: one block (at most k - 2 hLen - 2 = 190 bytes) decrypts on its own.
        let message = testBytes(190)
        let sealed = try rsakitOK(["encrypt", "--key", pub] + rsakitOptions, stdin: message).stdout
        XCTAssertEqual(sealed.count, 256)
        let opened = try runProcess(tool, ["pkeyutl", "-decrypt", "-inkey", priv] + opensslOptions, stdin: sealed)
        XCTAssertEqual(opened.status, 0, opened.stderr)
        XCTAssertEqual(opened.stdout, message)
        // 191 bytes take two blocks.
        XCTAssertEqual(try rsakitOK(["encrypt", "--key", pub] + rsakitOptions, stdin: testBytes(191)).stdout.count, 512)
        // openssl -> rsakit.
        let theirs = try runProcess(
            tool, ["pkeyutl", "-encrypt", "-pubin", "-inkey", pub] + opensslOptions, stdin: message)
        XCTAssertEqual(theirs.status, 0, theirs.stderr)
        XCTAssertEqual(try rsakitOK(["decrypt", "--key", priv] + rsakitOptions, stdin: theirs.stdout).stdout, message)
        // Label given as hex is the same label.
        XCTAssertEqual(
            try rsakitOK(
                [
                    "decrypt", "--key", priv, "--raw", "--padding", "oaep", "--mgf1-hash", "sha1",
                    "--label-hex", "6A617661"
                ], stdin: theirs.stdout
            ).stdout, message)
        // Any mismatch is "decryption failed": PKCS#1 for OAEP, wrong MGF1 hash, wrong label, wrong OAEP hash.
        for wrong in [
            ["--raw"], ["--raw", "--padding", "oaep", "--label", "java"],
            ["--raw", "--padding", "oaep", "--mgf1-hash", "sha1"],
            ["--raw", "--padding", "oaep", "--oaep-hash", "sha1", "--mgf1-hash", "sha1", "--label", "java"]
        ] {
            let out = path("never.bin")
            assertFailure(
                try rsakit(["decrypt", "--key", priv, "--out", out] + wrong, stdin: theirs.stdout),
                status: 65, contains: "decryption failed")
            XCTAssertFalse(exists(out))
        }
    }

    func testContainerOAEP_DecryptNeedsNoFlags() throws {
        let (priv, pub) = try opensslKeys()
        let plaintext = testBytes(10_000)
        for options in [
            ["--padding", "oaep"], ["--padding", "oaep", "--oaep-hash", "sha384", "--mgf1-hash", "sha1"],
            ["--padding", "pkcs1"]
        ] {
            let sealed = try rsakitOK(["encrypt", "--key", pub, "--armor"] + options, stdin: plaintext).stdout
            XCTAssertEqual(try rsakitOK(["decrypt", "--key", priv], stdin: sealed).stdout, plaintext, "\(options)")
        }
        let sealed = try rsakitOK(["encrypt", "--key", pub, "--padding", "oaep", "--oaep-hash", "sha512"], stdin: [1])
            .stdout
        XCTAssertEqual(
            Array(sealed[8..<13]), [0x02, 0x02, 0x05, 0x05, 0x00], "version 2, OAEP, SHA-512 twice, empty label")
    }

    func testAppleFormat_RoundTripAndWrongHashWritesNothing() throws {
        let (priv, pub) = try opensslKeys()
        let plaintext = testBytes(70_000)
        let sealed = try rsakitOK(
            ["encrypt", "--key", pub, "--format", "apple-aesgcm", "--oaep-hash", "sha384"], stdin: plaintext
        ).stdout
        XCTAssertEqual(sealed.count, 256 + 70_000 + 16)
        XCTAssertEqual(
            try rsakitOK(["decrypt", "--key", priv, "--format", "apple-aesgcm", "--oaep-hash", "sha384"], stdin: sealed)
                .stdout, plaintext)
        let out = path("apple.out")
        for wrong in [["--oaep-hash", "sha256"], ["--oaep-hash", "sha1"]] {
            let result = try rsakit(
                ["decrypt", "--key", priv, "--format", "apple-aesgcm", "--out", out] + wrong, stdin: sealed)
            assertFailure(result, status: 65, contains: "decryption failed")
            XCTAssertFalse(exists(out))
        }
        // On standard output too, nothing is written before the tag checks.
        var tampered = sealed; tampered[tampered.count - 1] ^= 1
        let result = try rsakit(
            ["decrypt", "--key", priv, "--format", "apple-aesgcm", "--oaep-hash", "sha384"], stdin: tampered)
        assertFailure(result, status: 65, contains: "decryption failed")
        XCTAssertEqual(result.stdout, [])
    }

    func testOptionMisuse_IsAUsageError() throws {
        let (_, pub) = try opensslKeys(bits: 1024)
        let cases: [([String], String)] = [
            (["--format", "zip"], "unknown --format 'zip'"),
            (["--padding", "oaep2"], "unknown --padding 'oaep2'"),
            (["--oaep-hash", "sha256"], "--oaep-hash applies to OAEP; add --padding oaep"),
            (["--padding", "oaep", "--oaep-hash", "md5"], "unknown --oaep-hash 'md5'"),
            (["--padding", "oaep", "--label", "x"], "records OAEP with an empty label only"),
            (["--raw", "--padding", "oaep", "--label", "x", "--label-hex", "00"], "either --label or --label-hex"),
            (["--raw", "--padding", "oaep", "--label-hex", "abc"], "even number of hex digits"),
            (["--format", "apple-aesgcm", "--armor"], "cannot be combined with --format apple-aesgcm"),
            (
                ["--format", "apple-aesgcm", "--oaep-hash", "sha3-256"],
                "defined for sha1, sha224, sha256, sha384 and sha512"
            ),
            (["--format", "apple-aesgcm", "--padding", "pkcs1"], "always uses OAEP"),
            (["--format", "container", "--raw"], "--raw means --format raw")
        ]
        for (options, message) in cases {
            assertFailure(try rsakit(["encrypt", "--key", pub] + options, stdin: [1]), status: 64, contains: message)
        }
        assertFailure(
            try rsakit(["decrypt", "--format", "apple-aesgcm"], stdin: testBytes(300)), status: 64,
            contains: "--format apple-aesgcm needs --tag or --key")
    }
}
