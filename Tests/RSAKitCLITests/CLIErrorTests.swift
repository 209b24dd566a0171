import Foundation
import XCTest

/// Every documented failure: one stderr line, the documented exit status, nothing left behind.
final class CLIErrorTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try rsakitOK(["genpair", "--tag", "mine", "--bits", "1024"])
    }

    func testMissingTag_ExitsNotFound() throws {
        assertFailure(
            try rsakit(["encrypt", "--tag", "nobody"], stdin: [1]), status: 66, contains: "no key with tag \"nobody\"")
        assertFailure(try rsakit(["decrypt", "--tag", "nobody", "--raw"], stdin: [1]), status: 66, contains: "nobody")
        assertFailure(try rsakit(["delete", "--tag", "nobody"]), status: 66, contains: "nobody")
        assertFailure(try rsakit(["show", "--tag", "nobody"]), status: 66, contains: "nobody")
    }

    func testWrongKey_NamesTheRecipient() throws {
        let other = try rsakitOK(["genpair", "--tag", "other", "--bits", "1024"])
        let fingerprint = other.stdoutText.split(separator: "\n").first { $0.hasPrefix("fingerprint: ") }!.dropFirst(
            "fingerprint: ".count)
        let sealed = try rsakitOK(["encrypt", "--tag", "other"], stdin: [1, 2, 3])
        let out = path("out.bin")
        let result = try rsakit(["decrypt", "--tag", "mine", "--out", out], stdin: sealed.stdout)
        assertFailure(
            result, status: 65, contains: "encrypted for key \(fingerprint), which is stored as 'other', not 'mine'")
        XCTAssertFalse(exists(out))
    }

    func testTruncatedAndCorruptedFiles_FailTheSameWay() throws {
        let sealed = try rsakitOK(["encrypt", "--tag", "mine"], stdin: testBytes(1000)).stdout
        let out = path("out.bin")
        // Drop the last block: whole blocks remain, the final flag is missing.
        let truncated = Array(sealed.dropLast(128))
        var corrupted = sealed
        corrupted[60 + 128 + 9] ^= 0x80
        for (name, input) in [("truncated", truncated), ("corrupted", corrupted)] {
            let result = try rsakit(["decrypt", "--tag", "mine", "--out", out], stdin: input)
            assertFailure(result, status: 65, contains: "decryption failed")
            XCTAssertEqual(result.stderr, "rsakit: error: decryption failed\n", name)
            XCTAssertFalse(exists(out), "\(name): nothing left at --out")
        }
        // Cut inside a block: the length is not whole blocks.
        assertFailure(
            try rsakit(["decrypt", "--tag", "mine"], stdin: Array(sealed.dropLast(5))), status: 65,
            contains: "not a multiple of the block size 128")
        // Raw blocks whose length is not a multiple of k.
        let raw = try rsakitOK(["encrypt", "--tag", "mine", "--raw"], stdin: testBytes(300)).stdout
        assertFailure(
            try rsakit(["decrypt", "--tag", "mine", "--raw"], stdin: Array(raw.dropLast(1))), status: 65,
            contains: "ciphertext length 383 bytes is not a multiple of the block size 128 bytes")
    }

    func testEmptyInput() throws {
        assertFailure(try rsakit(["decrypt", "--tag", "mine"], stdin: []), status: 65, contains: "input is empty")
        // Raw mode, as openssl pkeyutl and SecKeyEncrypt: empty in, one block of an empty message out.
        let raw = try rsakitOK(["encrypt", "--tag", "mine", "--raw"], stdin: [])
        XCTAssertEqual(raw.stdout.count, 128)
        XCTAssertEqual(try rsakitOK(["decrypt", "--tag", "mine", "--raw"], stdin: raw.stdout).stdout, [])
        // Raw decryption of nothing is a data error.
        assertFailure(
            try rsakit(["decrypt", "--tag", "mine", "--raw"], stdin: []), status: 65, contains: "no ciphertext blocks")
    }

    func testUnreadableInputAndUnwritableOutput() throws {
        assertFailure(
            try rsakit(["encrypt", "--tag", "mine", "--in", path("missing.txt")]), status: 66,
            contains: "cannot read input file")
        let plain = try write([1, 2, 3], to: "plain.txt")
        assertFailure(
            try rsakit(["encrypt", "--tag", "mine", "--in", plain, "--out", path("no/such/folder/out.rsa")]),
            status: 1, contains: "cannot write output file")
        assertFailure(
            try rsakit(["encrypt", "--tag", "mine", "--in", workDirectory.path]), status: 1, contains: "is a directory")
    }

    func testOutputEqualToInput_IsRefusedAndTheFileKept() throws {
        let plain = try write(testBytes(200), to: "same.bin")
        let result = try rsakit(["encrypt", "--tag", "mine", "--in", plain, "--out", plain])
        assertFailure(result, status: 64, contains: "is the input file")
        XCTAssertEqual(try read(plain), testBytes(200))
    }

    func testPublicHalfOnly_CannotDecrypt() throws {
        let pub = path("pub.pem")
        try rsakitOK(["export", "--tag", "mine", "--out", pub])
        try rsakitOK(["import", "--tag", "pubonly", pub])
        let sealed = try rsakitOK(["encrypt", "--tag", "pubonly"], stdin: [9]).stdout
        assertFailure(
            try rsakit(["decrypt", "--tag", "pubonly"], stdin: sealed), status: 66,
            contains: "the store holds only the public key for tag 'pubonly'")
        assertFailure(
            try rsakit(["decrypt", "--key", pub], stdin: sealed), status: 66, contains: "holds only a public key")
    }

    func testDuplicateTag_ExitsAlreadyExists() throws {
        assertFailure(
            try rsakit(["genpair", "--tag", "mine", "--bits", "1024"]), status: 73, contains: "already exists")
        XCTAssertEqual(try rsakit(["genpair", "--tag", "mine", "--bits", "1024", "--replace"]).status, 0)
    }

    func testUsageErrors_Exit64() throws {
        assertFailure(try rsakit(["encrypt"]), status: 64, contains: "missing --tag <TAG> or --key <FILE>")
        assertFailure(
            try rsakit(["encrypt", "--tag", "a", "--key", "b"]), status: 64, contains: "either --tag or --key")
        assertFailure(try rsakit(["genpair"]), status: 64, contains: "missing required option '--tag'")
        assertFailure(
            try rsakit(["genpair", "--tag", "x", "--bits", "512"]), status: 64,
            contains: "--bits must be between 1024 and 16384")
        assertFailure(
            try rsakit(["genpair", "--tag", "x", "--bits", "many"]), status: 64, contains: "expects an integer")
        assertFailure(
            try rsakit(["genpair", "--tag", "x", "--exponent", "4"]), status: 64,
            contains: "--exponent must be an odd integer")
        assertFailure(
            try rsakit(["encrypt", "--tag", "mine", "--bogus"]), status: 64, contains: "unknown option '--bogus'")
        assertFailure(try rsakit(["frobnicate"]), status: 64, contains: "unknown command 'frobnicate'")
        assertFailure(
            try rsakit(["export", "--tag", "mine", "--format", "spki", "--private"]), status: 64,
            contains: "public-key format")
        assertFailure(
            try rsakit(["decrypt", "--raw"], stdin: testBytes(128)), status: 64, contains: "--raw needs --tag or --key")
        // Data that is neither a container nor usable raw blocks is a data error, with or without --tag.
        assertFailure(
            try rsakit(["decrypt"], stdin: testBytes(128)), status: 65,
            contains: "raw blocks need --tag or --key (an Apple RSA-OAEP + AES-GCM blob needs --format apple-aesgcm)")
        assertFailure(
            try rsakit(["decrypt", "--tag", "mine"], stdin: testBytes(100)), status: 65,
            contains: "neither an rsakit container")
    }

    func testUnprotectedStore_IsRefusedUnlessOverridden() throws {
        let sealed = try rsakitOK(["encrypt", "--tag", "mine"], stdin: [4, 2])
        let privateFolder = storeDirectory.appendingPathComponent("private").path
        let files = try FileManager.default.subpathsOfDirectory(atPath: privateFolder).filter { $0.hasSuffix(".pem") }
        XCTAssertEqual(files.count, 1)
        let item = privateFolder + "/" + files[0]
        XCTAssertEqual(chmod(item, 0o644), 0)
        let refused = try rsakit(["decrypt", "--tag", "mine"], stdin: sealed.stdout)
        assertFailure(refused, status: 1, contains: "unprotected key store")
        XCTAssertTrue(refused.stderr.contains("--allow-insecure-store"))
        let allowed = try rsakit(["decrypt", "--tag", "mine", "--allow-insecure-store"], stdin: sealed.stdout)
        XCTAssertEqual(allowed.status, 0, allowed.stderr)
        XCTAssertEqual(allowed.stdout, [4, 2])
        XCTAssertTrue(allowed.stderr.contains("rsakit: warning: unprotected key store"), allowed.stderr)
    }

    func testBadKeyFile_IsADataError() throws {
        let junk = try write(Array("not a key\n".utf8), to: "junk.pem")
        assertFailure(try rsakit(["encrypt", "--key", junk], stdin: [1]), status: 65, contains: "cannot load key file")
        assertFailure(try rsakit(["import", "--tag", "j", junk]), status: 65, contains: "cannot load key file")
        XCTAssertEqual(try rsakit(["show", "--tag", "j"]).status, 66, "a failed import adds nothing")
    }
}
