import Foundation
import XCTest
import RSAKit
@testable import RSAKitCore

/// Apple's RSA-OAEP + AES-GCM (`kSecKeyAlgorithmRSAEncryptionOAEPSHA*AESGCM`): Apple's own
/// ciphertexts, round trips on both sides of the AES-128/AES-256 rule, and every failure.
final class AppleAESGCMTests: XCTestCase {
    struct VectorFile: Decodable {
        struct Vector: Decodable {
            let algorithm: String
            let keyBits: Int
            let privateKeyPKCS1DERBase64: String
            let ciphertextBase64: String
        }
        let plaintextHex: String
        let vectors: [Vector]
    }

    func loadVectors() throws -> VectorFile {
        guard let directory = AppleVectors.directory else {
            XCTFail(
                "APPLE VECTORS NOT FOUND: place shared/vectors/apple beside the package or set RSAKIT_VECTORS; "
                    + "\(AppleVectors.fileName) NOT RUN")
            throw XCTSkip("Apple vectors absent")
        }
        let data = try Data(contentsOf: directory.appendingPathComponent(AppleVectors.fileName))
        return try JSONDecoder().decode(VectorFile.self, from: data)
    }

    /// "kSecKeyAlgorithmRSAEncryptionOAEPSHA384AESGCM" -> .sha384
    func hash(of algorithm: String) throws -> RSAHashAlgorithm {
        let name = algorithm.replacingOccurrences(of: "kSecKeyAlgorithmRSAEncryptionOAEP", with: "")
            .replacingOccurrences(of: "AESGCM", with: "").lowercased()
        return try XCTUnwrap(RSAHashAlgorithm(name: name), algorithm)
    }

    func testAppleVectors_AllFiveDecrypt() throws {
        let file = try loadVectors()
        let expected = Hex.decode(file.plaintextHex)
        var passed = 0
        for vector in file.vectors {
            let key = try RSAPrivateKey(
                derRepresentation: [UInt8](try XCTUnwrap(Data(base64Encoded: vector.privateKeyPKCS1DERBase64))))
            XCTAssertEqual(key.modulusBitCount, vector.keyBits)
            let ciphertext = [UInt8](try XCTUnwrap(Data(base64Encoded: vector.ciphertextBase64)))
            let hash = try hash(of: vector.algorithm)
            XCTAssertEqual(ciphertext.count, key.modulusByteCount + expected.count + 16, vector.algorithm)
            let inMemory = try RSAAppleAESGCM.decrypt(ciphertext, with: key, hash: hash)
            var source = RSAArrayByteSource(ciphertext)
            var sink = RSAArrayByteSink()
            try RSAAppleAESGCM.decrypt(from: &source, to: &sink, with: key, hash: hash)
            let viaMessage = try RSAMessage.decrypt(ciphertext, with: key, format: .appleAESGCM(hash: hash))
            XCTAssertEqual(inMemory, expected, vector.algorithm)
            XCTAssertEqual(sink.bytes, expected, vector.algorithm)
            XCTAssertEqual(viaMessage, expected, vector.algorithm)
            // The session key is AES-128 below 4096 bits, AES-256 from 4096 up.
            let sessionKey = try key.decrypt(
                Array(ciphertext[0..<key.modulusByteCount]),
                padding: .oaep(RSAOAEPParameters(hash: hash, mgf1Hash: hash)))
            XCTAssertEqual(sessionKey.count, vector.keyBits >= 4096 ? 32 : 16)
            if inMemory == expected { passed += 1 }
        }
        print("Apple RSA-OAEP + AES-GCM vectors: \(passed)/\(file.vectors.count) decrypted")
        XCTAssertEqual(passed, 5)
    }

    func testRoundTrip_2048_3072_4096Bits() throws {
        for bits in [2048, 3072, 4096] {
            let key = try TestKeys.openssl(bits: bits).key
            let k = key.modulusByteCount
            for hash in RSAAppleAESGCM.supportedHashes where bits == 2048 || hash == .sha256 || hash == .sha512 {
                for length in [0, 1, 15, 16, 17, (1 << 16) + 5] {
                    let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ bits) }
                    let ciphertext = try RSAAppleAESGCM.encrypt(plaintext, to: key.publicKey, hash: hash)
                    XCTAssertEqual(ciphertext.count, k + length + 16, "\(bits) \(hash) \(length)")
                    let sessionKey = try key.decrypt(
                        Array(ciphertext[0..<k]), padding: .oaep(RSAOAEPParameters(hash: hash)))
                    XCTAssertEqual(sessionKey.count, bits >= 4096 ? 32 : 16, "\(bits) bits")
                    XCTAssertEqual(
                        try RSAAppleAESGCM.decrypt(ciphertext, with: key, hash: hash), plaintext,
                        "\(bits) \(hash) \(length)")
                }
            }
        }
    }

    /// Build an Apple-format message with a session key of any size (as a broken or hostile
    /// sender could), with AES-GCM of that key size.
    func handMade(_ sessionKey: [UInt8], for key: RSAPublicKey, _ plaintext: [UInt8]) throws -> [UInt8] {
        let wrapped = try key.encrypt(sessionKey, padding: .oaep(RSAOAEPParameters(hash: .sha256)))
        let gcm = AESGCMContext(
            key: SecretBytes(copying: sessionKey), iv: [UInt8](repeating: 0, count: 16),
            authenticatedData: key.pkcs1DERRepresentation)
        return wrapped + gcm.encrypt(plaintext) + gcm.tag()
    }

    func testSessionKeyOfTheWrongSize_IsRefusedAsIOSRefusesIt() throws {
        let small = try TestKeys.generated(bits: 2048)
        let large = try TestKeys.openssl(bits: 4096).key
        let plaintext = Array("KNOWN PLAINTEXT".utf8)
        // The construction is right: with the size iOS expects, it decrypts...
        XCTAssertEqual(
            try RSAAppleAESGCM.decrypt(
                try handMade(SystemRandomSource().bytes(16), for: small.publicKey, plaintext), with: small), plaintext)
        XCTAssertEqual(
            try RSAAppleAESGCM.decrypt(
                try handMade(SystemRandomSource().bytes(32), for: large.publicKey, plaintext), with: large), plaintext)
        // ...and with the other size (a valid AES-256 / AES-128 GCM message), it is refused.
        for (sessionKey, key) in [(SystemRandomSource().bytes(32), small), (SystemRandomSource().bytes(16), large)] {
            let message = try handMade(sessionKey, for: key.publicKey, plaintext)
            XCTAssertThrowsError(try RSAAppleAESGCM.decrypt(message, with: key)) { error in
                XCTAssertEqual(
                    error as? RSAError, .decryptionFailed, "\(sessionKey.count)-byte key, \(key.modulusBitCount) bits")
            }
        }
        // A 24-byte key (AES-192, which Apple never uses) is refused before any AES work.
        let wrapped = try small.publicKey.encrypt(
            SystemRandomSource().bytes(24), padding: .oaep(RSAOAEPParameters(hash: .sha256)))
        XCTAssertThrowsError(try RSAAppleAESGCM.decrypt(wrapped + SystemRandomSource().bytes(31), with: small)) {
            error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed)
        }
    }

    func testWrongTagKeyOrHash_FailOpaquelyAndWriteNothing() throws {
        let key = try TestKeys.generated(bits: 2048)
        let other = try TestKeys.openssl(bits: 2048).key
        let plaintext = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        let good = try RSAAppleAESGCM.encrypt(plaintext, to: key.publicKey)
        var badTag = good; badTag[badTag.count - 1] ^= 1
        var badBody = good; badBody[256 + 70_000] ^= 0x80
        var badWrap = good; badWrap[10] ^= 1
        let cases: [(String, [UInt8], RSAPrivateKey, RSAHashAlgorithm)] = [
            ("tag", badTag, key, .sha256), ("body", badBody, key, .sha256), ("wrapped key", badWrap, key, .sha256),
            ("key", good, other, .sha256), ("hash", good, key, .sha1), ("hash", good, key, .sha512)
        ]
        for (what, message, decryptor, hash) in cases {
            var source = RSAArrayByteSource(message)
            var sink = RSAArrayByteSink()
            XCTAssertThrowsError(
                try RSAAppleAESGCM.decrypt(from: &source, to: &sink, with: decryptor, hash: hash), what
            ) { error in
                XCTAssertEqual(error as? RSAError, .decryptionFailed, what)
            }
            XCTAssertEqual(sink.bytes.count, 0, "wrong \(what): nothing may be written before the tag checks")
            XCTAssertThrowsError(try RSAAppleAESGCM.decrypt(message, with: decryptor, hash: hash), what)
        }
        XCTAssertThrowsError(try RSAAppleAESGCM.decrypt(Array(good.prefix(256 + 15)), with: key)) { error in
            guard case .messageInvalid = error as? RSAError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try RSAAppleAESGCM.encrypt([1], to: key.publicKey, hash: .sha3_256)) { error in
            guard case .messageFormatUnsupported = error as? RSAError else { return XCTFail("\(error)") }
        }
    }

    func testStreamingDecrypt_GoesThroughAnUnlinkedPrivateFileInBoundedPieces() throws {
        let key = try TestKeys.generated(bits: 2048)
        let plaintext = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let message = try RSAAppleAESGCM.encrypt(plaintext, to: key.publicKey)
        let folder = TestKeys.scratch.appendingPathComponent("spool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var source = RSAArrayByteSource(message)
        var sink = CountingSink()
        try RSAAppleAESGCM.decrypt(from: &source, to: &sink, with: key, temporaryDirectory: folder.path)
        XCTAssertEqual(sink.inner.bytes, plaintext)
        XCTAssertLessThanOrEqual(sink.largestWrite, 1 << 16)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [], "nothing left behind")
        // The spool itself: 0600, and no name in the folder while it is open.
        let spool = try PlaintextSpool(directory: folder.path)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
        var info = stat()
        XCTAssertEqual(fstat(spool.fileDescriptor, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(info.st_nlink, 0, "unlinked at once")
    }
}
