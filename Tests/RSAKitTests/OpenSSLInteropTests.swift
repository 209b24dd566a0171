import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// One-block and chunked RSAES-PKCS1-v1_5 against the real `openssl` CLI, both directions.
/// Keys travel through files: OpenSSL-generated PEM keys (components read from
/// `openssl pkey -text`), and rsakit keys written as PKCS#1 DER by the test.
final class OpenSSLInteropTests: XCTestCase {
    func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let url = TestKeys.scratch.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        return url.path
    }

    func testOpenSSLEncrypts_RSAKitDecrypts() throws {
        _ = try OpenSSL.require()
        for (bits, e) in [(2048, 65537), (2047, 65537), (3072, 3), (2048, 17)] {
            let (path, key) = try TestKeys.openssl(bits: bits, exponent: e)
            for length in [0, 1, key.maximumMessageByteCount] {
                let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 ^ 0x5C) }
                // openssl pkeyutl -encrypt -inkey KEY -pkeyopt rsa_padding_mode:pkcs1
                let ciphertext = try OpenSSL.run(
                    [
                        "pkeyutl", "-encrypt", "-inkey", path,
                        "-pkeyopt", "rsa_padding_mode:pkcs1"
                    ], input: message)
                XCTAssertEqual(ciphertext.count, key.modulusByteCount)
                XCTAssertEqual(try key.decrypt(ciphertext), message, "\(bits) bits, e = \(e), length \(length)")
            }
        }
    }

    func testRSAKitEncrypts_OpenSSLDecrypts() throws {
        _ = try OpenSSL.require()
        for (bits, e) in [(2048, 65537), (2049, 65537), (3072, 17)] {
            let (path, key) = try TestKeys.openssl(bits: bits, exponent: e)
            for length in [0, 5, key.maximumMessageByteCount] {
                let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 3) }
                let ciphertext = try key.publicKey.encrypt(message)
                // openssl pkeyutl -decrypt -inkey KEY -pkeyopt rsa_padding_mode:pkcs1
                let plaintext = try OpenSSL.run(
                    [
                        "pkeyutl", "-decrypt", "-inkey", path,
                        "-pkeyopt", "rsa_padding_mode:pkcs1"
                    ], input: ciphertext)
                XCTAssertEqual(plaintext, message, "\(bits) bits, e = \(e), length \(length)")
            }
        }
    }

    func testGeneratedKey_PassesOpenSSLCheckAndDecryptsThere() throws {
        _ = try OpenSSL.require()
        let key = try TestKeys.generated(bits: 2048)
        let derPath = try write(TestDER.pkcs1PrivateKey(key), "rsakit-key.der")
        // openssl rsa -inform DER -in KEY -check -noout
        let check = try OpenSSL.runAllowingFailure(["rsa", "-inform", "DER", "-in", derPath, "-check", "-noout"])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(String(decoding: check.stdout, as: UTF8.self).contains("RSA key ok"))
        // openssl rsa -inform DER -in KEY -noout -modulus
        let modulusLine = String(
            decoding: try OpenSSL.run(["rsa", "-inform", "DER", "-in", derPath, "-noout", "-modulus"]), as: UTF8.self)
        XCTAssertEqual(
            modulusLine.trimmingCharacters(in: .whitespacesAndNewlines),
            "Modulus=" + Hex.encode(key.modulus).uppercased())

        let message = Array("interop through a PKCS#1 DER file".utf8)
        let ciphertext = try key.publicKey.encrypt(message)
        let plaintext = try OpenSSL.run(
            [
                "pkeyutl", "-decrypt", "-keyform", "DER", "-inkey", derPath,
                "-pkeyopt", "rsa_padding_mode:pkcs1"
            ], input: ciphertext)
        XCTAssertEqual(plaintext, message)
        let back = try OpenSSL.run(
            [
                "pkeyutl", "-encrypt", "-keyform", "DER", "-inkey", derPath,
                "-pkeyopt", "rsa_padding_mode:pkcs1"
            ], input: message)
        XCTAssertEqual(try key.decrypt(back), message)
    }

    func testChunked_OpenSSLPerSliceBlocksDecryptWithRSAKit() throws {
        _ = try OpenSSL.require()
        let (path, key) = try TestKeys.openssl(bits: 2048)
        let plaintext = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        // Encrypt each 245-byte slice with openssl pkeyutl and concatenate (Apple's method).
        var ciphertext: [UInt8] = []
        var offset = 0
        while offset < plaintext.count {
            let slice = Array(plaintext[offset..<min(offset + 245, plaintext.count)])
            ciphertext += try OpenSSL.run(["pkeyutl", "-encrypt", "-inkey", path], input: slice)
            offset += 245
        }
        XCTAssertEqual(ciphertext.count, 5 * 256)
        XCTAssertEqual(try RSAPKCS1v15Chunking.decrypt(ciphertext, with: key), plaintext)

        // And the other way: every block rsakit writes decrypts alone with openssl.
        let ours = try RSAPKCS1v15Chunking.encrypt(plaintext, with: key.publicKey)
        var recovered: [UInt8] = []
        for b in 0..<(ours.count / 256) {
            recovered += try OpenSSL.run(
                ["pkeyutl", "-decrypt", "-inkey", path],
                input: Array(ours[(b * 256)..<((b + 1) * 256)]))
        }
        XCTAssertEqual(recovered, plaintext)
    }
}
