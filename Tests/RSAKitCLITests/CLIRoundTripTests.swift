import Foundation
import XCTest
import RSAKitTestSupport

/// End-to-end: genpair, encrypt, decrypt on real files, both output forms, armor, openssl.
final class CLIRoundTripTests: CLITestCase {
    func genpair(_ tag: String, bits: Int = 1024, extra: [String] = []) throws -> String {
        let result = try rsakitOK(["genpair", "--tag", tag, "--bits", String(bits)] + extra)
        XCTAssertTrue(result.stdoutText.contains("tag: \(tag)\n"), result.stdoutText)
        XCTAssertTrue(result.stdoutText.contains("bits: \(bits)\n"), result.stdoutText)
        let k = (bits + 7) / 8
        XCTAssertTrue(result.stdoutText.contains("block size: \(k) bytes"), result.stdoutText)
        let fingerprint = result.stdoutText.split(separator: "\n").first { $0.hasPrefix("fingerprint: SHA256:") }
        XCTAssertNotNil(fingerprint, result.stdoutText)
        return String(fingerprint?.dropFirst("fingerprint: ".count) ?? "")
    }

    func testRoundTrip_FilesOfManySizesInBothForms() throws {
        _ = try genpair("com.example.pub", bits: 1024)
        let k = 128
        let sizes = [0, 1, k - 11, k - 10, 100, 101, 3 * (k - 11) + 5, 65_537]
        for size in sizes {
            let plain = try write(testBytes(size, seed: UInt64(size + 1)), to: "plain-\(size)")
            for raw in [false, true] {
                let form = raw ? ["--raw"] : []
                let sealed = path("sealed-\(size)-\(raw)")
                try rsakitOK(["encrypt", "--tag", "com.example.pub", "--in", plain, "--out", sealed] + form)
                let ciphertext = try read(sealed)
                if raw {
                    XCTAssertEqual(
                        ciphertext.count, max(1, (size + k - 12) / (k - 11)) * k,
                        "raw size for \(size) (empty: one block)")
                } else {
                    XCTAssertEqual(Array(ciphertext.prefix(8)), [0x89, 0x52, 0x53, 0x41, 0x4B, 0x49, 0x54, 0x0A])
                }
                let opened = path("opened-\(size)-\(raw)")
                try rsakitOK(["decrypt", "--tag", "com.example.pub", "--in", sealed, "--out", opened] + form)
                XCTAssertEqual(try read(opened), try read(plain), "size \(size), raw \(raw)")
            }
        }
    }

    func testRoundTrip_MultiMegabyteFileThroughPipes() throws {
        _ = try genpair("big", bits: 2048)
        let size = longTestsEnabled ? 8 << 20 : 1 << 20
        let plain = try write(testBytes(size, seed: 99), to: "big.bin")
        let sealed = try rsakitOK(["encrypt", "--tag", "big"], stdinFile: plain)
        let sealedPath = try write(sealed.stdout, to: "big.rsa")
        // Decrypt without --tag: the key is found by the fingerprint in the header.
        let opened = try rsakitOK(["decrypt"], stdinFile: sealedPath)
        XCTAssertEqual(opened.stdout.count, size)
        XCTAssertEqual(opened.stdout, try read(plain))
    }

    func testArmor_RoundTripAndFormat() throws {
        _ = try genpair("armored")
        let message = Array("text channels need armor\n".utf8) + testBytes(500)
        let armored = try rsakitOK(["encrypt", "--tag", "armored", "--armor"], stdin: message)
        let text = armored.stdoutText
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.first, "-----BEGIN RSAKIT MESSAGE-----")
        XCTAssertEqual(lines.last, "-----END RSAKIT MESSAGE-----")
        XCTAssertTrue(lines.dropFirst().dropLast().allSatisfy { $0.count <= 64 && !$0.isEmpty })
        let decoded = Data(base64Encoded: lines.dropFirst().dropLast().joined())!
        XCTAssertEqual(Array(decoded.prefix(8)), [0x89, 0x52, 0x53, 0x41, 0x4B, 0x49, 0x54, 0x0A])
        // CRLF line ends survive too.
        let crlf = Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        for input in [armored.stdout, crlf] {
            let opened = try rsakitOK(["decrypt", "--tag", "armored"], stdin: input)
            XCTAssertEqual(opened.stdout, message)
        }
    }

    func testKeyFile_EncryptAndDecryptWithOpenSSLKeysWithoutImport() throws {
        let openssl = try openssl()
        let keyPath = path("key.pem"), pubPath = path("pub.pem")
        XCTAssertEqual(
            try runProcess(
                openssl, ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", keyPath]
            ).status, 0)
        XCTAssertEqual(try runProcess(openssl, ["pkey", "-in", keyPath, "-pubout", "-out", pubPath]).status, 0)
        let message = testBytes(1000)
        let sealed = try rsakitOK(["encrypt", "--key", pubPath], stdin: message)
        let opened = try rsakitOK(["decrypt", "--key", keyPath], stdin: sealed.stdout)
        XCTAssertEqual(opened.stdout, message)
    }

    func testRaw_OpenSSLInteropBothDirections() throws {
        let openssl = try openssl()
        _ = try genpair("interop", bits: 2048)
        let pubPath = path("interop-pub.pem"), keyPath = path("interop-key.pem")
        try rsakitOK(["export", "--tag", "interop", "--out", pubPath])
        try rsakitOK(["export", "--tag", "interop", "--private", "--out", keyPath])
        let message = testBytes(1000, seed: 5)

        // rsakit --raw: every 256-byte block decrypts with openssl pkeyutl -decrypt.
        let raw = try rsakitOK(["encrypt", "--tag", "interop", "--raw"], stdin: message).stdout
        XCTAssertEqual(raw.count, 5 * 256)
        var recovered: [UInt8] = []
        for b in 0..<5 {
            let block = try write(Array(raw[(b * 256)..<((b + 1) * 256)]), to: "block-\(b)")
            let r = try runProcess(openssl, ["pkeyutl", "-decrypt", "-inkey", keyPath, "-in", block])
            XCTAssertEqual(r.status, 0, r.stderr)
            recovered += r.stdout
        }
        XCTAssertEqual(recovered, message)

        // openssl pkeyutl -encrypt per 245-byte slice, concatenated: rsakit decrypt --raw.
        var concatenated: [UInt8] = []
        var offset = 0
        while offset < message.count {
            let slice = try write(Array(message[offset..<min(offset + 245, message.count)]), to: "slice-\(offset)")
            let r = try runProcess(openssl, ["pkeyutl", "-encrypt", "-pubin", "-inkey", pubPath, "-in", slice])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stdout.count, 256)
            concatenated += r.stdout
            offset += 245
        }
        let opened = try rsakitOK(["decrypt", "--tag", "interop", "--raw"], stdin: concatenated)
        XCTAssertEqual(opened.stdout, message)
        // Auto-detection also treats it as raw (no container magic).
        XCTAssertEqual(try rsakitOK(["decrypt", "--tag", "interop"], stdin: concatenated).stdout, message)
    }

    func testPrivateTag_SeparateTagsLikeApplesExample() throws {
        _ = try genpair("com.example.pub", extra: ["--private-tag", "com.example.priv"])
        let sealed = try rsakitOK(["encrypt", "--tag", "com.example.pub"], stdin: [1, 2, 3])
        XCTAssertEqual(try rsakitOK(["decrypt", "--tag", "com.example.priv"], stdin: sealed.stdout).stdout, [1, 2, 3])
        XCTAssertEqual(try rsakitOK(["decrypt"], stdin: sealed.stdout).stdout, [1, 2, 3])
        // The private tag alone also names the public key for encryption.
        let again = try rsakitOK(["encrypt", "--tag", "com.example.priv"], stdin: [4])
        XCTAssertEqual(try rsakitOK(["decrypt"], stdin: again.stdout).stdout, [4])
    }

    func testConcurrentGenpair_TwoProcesses() throws {
        // Both start on a store that does not exist yet, so both create it.
        let processes = try (0..<2).map { i in
            try ChildProcess.start(
                [Self.binary.path, "genpair", "--tag", "parallel-\(i)", "--bits", "1024"],
                environment: childEnvironment())
        }
        let results = try processes.map { try $0.finish() }
        XCTAssertEqual(results.map(\.status), [0, 0], results.map(\.stderr).joined(separator: "\n"))
        let list = try rsakitOK(["list", "--json"])
        let items = try JSONSerialization.jsonObject(with: Data(list.stdout)) as! [[String: Any]]
        XCTAssertEqual(Set(items.map { $0["applicationTag"] as! String }), ["parallel-0", "parallel-1"])
        XCTAssertEqual(items.count, 4)
    }
}
