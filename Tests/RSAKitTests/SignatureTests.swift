import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// RSASSA-PKCS1-v1_5 and RSASSA-PSS through the key API, against the real `openssl`.
final class SignatureTests: XCTestCase {
    func temporary(_ bytes: [UInt8], _ name: String) throws -> String {
        let url = TestKeys.scratch.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        return url.path
    }

    func testPKCS1_SameBytesAsOpenSSLForEveryHash() throws {
        let (path, key) = try TestKeys.openssl(bits: 2048)
        let message = Array("sign me".utf8)
        let messagePath = try temporary(message, "msg")
        for hash in RSAHashAlgorithm.allCases {
            // Command: openssl dgst -<hash> -sign KEY MSG
            let theirs = try OpenSSL.run(["dgst", "-\(hash.rawValue)", "-sign", path, messagePath])
            let ours = try key.signature(for: message, hash: hash, padding: .pkcs1v15)
            XCTAssertEqual(ours, theirs, hash.rawValue)
            XCTAssertTrue(
                key.publicKey.isValidSignature(theirs, for: message, hash: hash, padding: .pkcs1v15), hash.rawValue)
            XCTAssertFalse(key.publicKey.isValidSignature(theirs, for: message + [0], hash: hash, padding: .pkcs1v15))
            // Command: openssl pkeyutl -verifyrecover -inkey KEY (recovers T, the DER DigestInfo)
            let t = try OpenSSL.run(
                ["pkeyutl", "-verifyrecover", "-inkey", path, "-pkeyopt", "rsa_padding_mode:pkcs1"], input: ours)
            XCTAssertEqual(
                t, RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: hash) + hash.hash(message),
                "\(hash.rawValue): DigestInfo")
        }
    }

    func testDigestInfo_SignsRawTAsOpenSSLPkeyutlDoes() throws {
        let (path, key) = try TestKeys.openssl(bits: 2048)
        // TLS 1.0/1.1: T = MD5(x) || SHA-1(x), 36 octets, no DigestInfo (RFC 4346 §7.4.3).
        let t = [UInt8](repeating: 0xA5, count: 16) + RSAHashAlgorithm.sha1.hash([1])
        // Command: openssl pkeyutl -sign -inkey KEY -pkeyopt rsa_padding_mode:pkcs1 (raw T, no digest)
        let theirs = try OpenSSL.run(
            ["pkeyutl", "-sign", "-inkey", path, "-pkeyopt", "rsa_padding_mode:pkcs1"], input: t)
        XCTAssertEqual(try key.signature(forDigestInfo: t), theirs)
        XCTAssertTrue(key.publicKey.isValidSignature(theirs, forDigestInfo: t))
        // A DER DigestInfo gives the ordinary PKCS#1 v1.5 signature.
        let digest = RSAHashAlgorithm.sha384.hash([7])
        XCTAssertEqual(
            try key.signature(forDigestInfo: RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: .sha384) + digest),
            try key.signature(forDigest: digest, hash: .sha384, padding: .pkcs1v15))
        XCTAssertThrowsError(try key.signature(forDigestInfo: [UInt8](repeating: 1, count: 246))) {
            XCTAssertEqual(
                $0 as? RSAError,
                .keyTooSmallForPadding(modulusByteCount: 256, minimumByteCount: 257, padding: "PKCS#1 v1.5 signatures"))
        }
    }

    func testPSS_OpenSSLSignaturesVerifyAndRSAKitSignaturesVerifyInOpenSSL() throws {
        // 2049 bits: emBits = 2048 and emLen = k - 1, the edge of RFC 8017 §9.1.1.
        for bits in [2048, 2049] {
            let (path, key) = try TestKeys.openssl(bits: bits)
            let message = Array("pss \(bits)".utf8)
            let messagePath = try temporary(message, "pss")
            for (hash, salt) in [(RSAHashAlgorithm.sha256, "digest"), (.sha384, "max"), (.sha1, "0"), (.sha512, "auto")]
            {
                // Command: openssl dgst -H -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:S -sign KEY MSG
                let theirs = try OpenSSL.run([
                    "dgst", "-\(hash.rawValue)", "-sigopt", "rsa_padding_mode:pss", "-sigopt",
                    "rsa_pss_saltlen:\(salt)", "-sign", path, messagePath
                ])
                let saltLength: RSAPSSSaltLength =
                    salt == "digest"
                    ? .digestLength : salt == "max" || salt == "auto" ? .maximum : .byteCount(Int(salt)!)
                XCTAssertTrue(
                    key.publicKey.isValidSignature(
                        theirs, for: message, hash: hash, padding: .pss(saltLength: saltLength)),
                    "\(bits) \(hash.rawValue) \(salt)")
                XCTAssertTrue(
                    key.publicKey.isValidSignature(theirs, for: message, hash: hash, padding: .pss(saltLength: .auto)))
                let ours = try key.signature(for: message, hash: hash, padding: .pss(saltLength: saltLength))
                XCTAssertEqual(ours.count, key.modulusByteCount)
                let again = try key.signature(for: message, hash: hash, padding: .pss(saltLength: saltLength))
                if salt == "0" {
                    XCTAssertEqual(again, ours, "no salt: deterministic")
                } else {
                    XCTAssertNotEqual(again, ours, "a fresh salt each time")
                }
                let sigPath = try temporary(ours, "sig")
                let verified = try OpenSSL.run([
                    "dgst", "-\(hash.rawValue)", "-sigopt", "rsa_padding_mode:pss", "-sigopt",
                    "rsa_pss_saltlen:\(salt)", "-prverify", path, "-signature", sigPath, messagePath
                ])
                XCTAssertEqual(String(decoding: verified, as: UTF8.self), "Verified OK\n")
            }
            // MGF1 over another hash: rsa_mgf1_md:sha1.
            let theirs = try OpenSSL.run([
                "dgst", "-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest", "-sigopt",
                "rsa_mgf1_md:sha1", "-sign", path, messagePath
            ])
            XCTAssertTrue(
                key.publicKey.isValidSignature(
                    theirs, for: message, hash: .sha256, padding: .pssMGF1(.sha1, saltLength: .digestLength)))
            XCTAssertFalse(
                key.publicKey.isValidSignature(theirs, for: message, hash: .sha256, padding: .pss(saltLength: .auto)))
        }
    }

    func testSignature_ParameterErrors() throws {
        let key = try TestKeys.generated(bits: 1024)
        XCTAssertThrowsError(try key.signature(forDigest: [1, 2], hash: .sha256, padding: .pkcs1v15)) {
            XCTAssertEqual($0 as? RSAError, .digestLengthMismatch(byteCount: 2, expected: 32))
        }
        XCTAssertFalse(
            key.publicKey.isValidSignature(
                [UInt8](repeating: 0, count: 128), forDigest: [1, 2], hash: .sha256, padding: .pkcs1v15))
        // SHA-512 PSS with salt = digest needs 64 + 64 + 2 octets; a 1024-bit key has emLen = 128.
        XCTAssertThrowsError(try key.signature(for: [1], hash: .sha512, padding: .pss(saltLength: .digestLength))) {
            XCTAssertEqual($0 as? RSAError, .saltLengthInvalid(byteCount: 64, maximum: 62))
        }
        let max = try key.signature(for: [1], hash: .sha512, padding: .pss(saltLength: .maximum))
        XCTAssertTrue(
            key.publicKey.isValidSignature(max, for: [1], hash: .sha512, padding: .pss(saltLength: .byteCount(62))))
        // A signature of the wrong length, or >= n, is invalid.
        let good = try key.signature(for: [1], hash: .sha256, padding: .pkcs1v15)
        XCTAssertFalse(key.publicKey.isValidSignature([0] + good, for: [1], hash: .sha256, padding: .pkcs1v15))
        XCTAssertFalse(
            key.publicKey.isValidSignature(key.publicKey.modulus, for: [1], hash: .sha256, padding: .pkcs1v15))
    }

    func testSHAKE_MatchesOpenSSLAndSignsPerRFC8702() throws {
        for shake in RSAPSSSHAKE.allCases {
            for inputLength in [0, 1, 135, 136, 167, 168, 169, 400] {
                let input = (0..<inputLength).map { UInt8(truncatingIfNeeded: $0 &* 11) }
                for outputLength in [1, 32, 64, 168, 169, 500] {
                    // Command: openssl dgst -shake128|-shake256 -xoflen N -r
                    let out = String(
                        decoding: try OpenSSL.run(
                            ["dgst", "-\(shake.rawValue)", "-xoflen", "\(outputLength)", "-r"], input: input),
                        as: UTF8.self)
                    XCTAssertEqual(
                        Hex.encode(shake.output(input, byteCount: outputLength)), String(out.split(separator: " ")[0]),
                        "\(shake.rawValue) in \(inputLength) out \(outputLength)")
                }
            }
        }
        let key = try TestKeys.generated(bits: 2048)
        for shake in RSAPSSSHAKE.allCases {
            let signature = try key.signature(for: [1, 2, 3], shake: shake)
            XCTAssertTrue(key.publicKey.isValidSignature(signature, for: [1, 2, 3], shake: shake))
            XCTAssertTrue(
                key.publicKey.isValidSignature(
                    signature, for: [1, 2, 3], shake: shake, saltLength: .byteCount(shake.digestByteCount)))
            XCTAssertFalse(key.publicKey.isValidSignature(signature, for: [1, 2, 4], shake: shake))
        }
    }
}
