import Foundation
import XCTest
import RSAKit

/// RSAMessage, the one-call message API: bytes, Data, files, a store, detection, errors.
final class MessageAPITests: XCTestCase {
    func folder() throws -> URL {
        let url = TestKeys.scratch.appendingPathComponent("messages-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func testEveryFormatRoundTripsInMemoryAndDetectionNeedsNoOptionsForAContainer() async throws {
        let key = try TestKeys.generated(bits: 2048)
        let plaintext = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 11) }
        let oaep = RSAEncryptionPadding.oaep(RSAOAEPParameters(hash: .sha384, mgf1Hash: .sha1))
        let formats: [RSAMessageFormat] = [
            .container(), .container(padding: oaep), .container(armored: true),
            .container(padding: oaep, armored: true),
            .rawBlocks(), .rawBlocks(padding: oaep), .appleAESGCM(), .appleAESGCM(hash: .sha512)
        ]
        for format in formats {
            let message = try RSAMessage.encrypt(plaintext, for: key.publicKey, format: format)
            // A container (armored or not, any padding) is read without options.
            let detected: RSAMessageFormat? = format.kind == .container ? nil : format
            XCTAssertEqual(try RSAMessage.decrypt(message, with: key, format: detected), plaintext, "\(format)")
            // The Data forms are the async ones (off the cooperative pool).
            let data = try await RSAMessage.encrypt(Data(plaintext), for: key.publicKey, format: format)
            let opened = try await RSAMessage.decrypt(data, with: key, format: detected)
            XCTAssertEqual(opened, Data(plaintext), "\(format) Data")
        }
    }

    func testRawOAEPBlocksCarryAtMostKMinus2hLenMinus2Bytes_WithALabel() throws {
        let key = try TestKeys.generated(bits: 2048)
        let padding = RSAEncryptionPadding.oaep(
            RSAOAEPParameters(hash: .sha256, mgf1Hash: .sha1, label: Array("label".utf8)))
        let maximum = 256 - 2 * 32 - 2
        let plaintext = (0..<(2 * maximum + 1)).map { UInt8(truncatingIfNeeded: $0) }
        let blocks = try RSAMessage.encrypt(plaintext, for: key.publicKey, format: .rawBlocks(padding: padding))
        XCTAssertEqual(blocks.count, 3 * 256)
        XCTAssertEqual(try key.decrypt(Array(blocks[0..<256]), padding: padding), Array(plaintext[0..<maximum]))
        XCTAssertEqual(try RSAMessage.decrypt(blocks, with: key, rawPadding: padding), plaintext, "detected as raw")
        // A mismatch of padding, hash or label is the one opaque failure.
        for wrong: RSAEncryptionPadding in [
            .pkcs1v15, .oaep(RSAOAEPParameters(hash: .sha256, mgf1Hash: .sha1)),
            .oaep(RSAOAEPParameters(hash: .sha256, label: Array("label".utf8)))
        ] {
            XCTAssertThrowsError(try RSAMessage.decrypt(blocks, with: key, format: .rawBlocks(padding: wrong))) {
                error in
                XCTAssertEqual(error as? RSAError, .decryptionFailed, "\(wrong)")
            }
        }
        // Empty input: one block of the empty message (as openssl pkeyutl does); decrypting empty input is an error.
        let empty = try RSAMessage.encrypt([], for: key.publicKey, format: .rawBlocks(padding: padding))
        XCTAssertEqual(empty.count, 256)
        XCTAssertEqual(try RSAMessage.decrypt(empty, with: key, format: .rawBlocks(padding: padding)), [])
        XCTAssertThrowsError(try RSAMessage.decrypt([], with: key, format: .rawBlocks()))
        XCTAssertThrowsError(try RSAMessage.decrypt([], with: key)) { error in
            XCTAssertEqual(error as? RSAError, .messageInvalid(reason: "input is empty: nothing to decrypt"))
        }
    }

    func testErrorsAreTypedAndLocalized() throws {
        let key = try TestKeys.generated(bits: 1024)
        let other = try TestKeys.generated(bits: 2048)
        let container = try RSAMessage.encrypt([1, 2, 3], for: key.publicKey)
        XCTAssertThrowsError(try RSAMessage.decrypt(container, with: other)) { error in
            XCTAssertEqual(error as? RSAError, .encryptedForAnotherKey(expected: key.publicKey.fingerprint))
        }
        var broken = container; broken[100] ^= 1
        XCTAssertThrowsError(try RSAMessage.decrypt(broken, with: key)) { error in
            XCTAssertEqual(error.localizedDescription, "decryption failed")
        }
        XCTAssertThrowsError(try RSAMessage.decrypt(Array(container[64...]), with: key, format: .container())) {
            error in
            XCTAssertEqual(error as? RSAError, .containerInvalid(reason: "not an rsakit container (wrong magic)"))
        }
        XCTAssertThrowsError(try RSAMessage.decrypt(Array(container.dropLast(3)) + [], with: key, format: .rawBlocks()))
        XCTAssertThrowsError(
            try RSAMessage.encrypt(
                [1], for: key.publicKey,
                format: .container(padding: .oaep(RSAOAEPParameters(label: [1])))))
    }

    func testFiles_OutputOnlyOnSuccess() throws {
        let key = try TestKeys.generated(bits: 2048)
        let dir = try folder()
        let plain = dir.appendingPathComponent("plain.bin"), sealed = dir.appendingPathComponent("sealed.rsa")
        let opened = dir.appendingPathComponent("opened.bin")
        let plaintext = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 3) }
        try Data(plaintext).write(to: plain)
        for format: RSAMessageFormat in [.container(), .rawBlocks(), .appleAESGCM(hash: .sha1)] {
            try RSAMessage.encryptFile(atPath: plain.path, toPath: sealed.path, for: key.publicKey, format: format)
            try RSAMessage.decryptFile(
                atPath: sealed.path, toPath: opened.path, with: key,
                format: format.kind == .container ? nil : format)
            XCTAssertEqual([UInt8](try Data(contentsOf: opened)), plaintext, "\(format)")
            // A damaged last block (or tag) fails and leaves nothing at a new output path.
            var damaged = [UInt8](try Data(contentsOf: sealed))
            damaged[damaged.count - 3] ^= 1
            try Data(damaged).write(to: sealed)
            let fresh = dir.appendingPathComponent("never-\(format.kind.rawValue).bin")
            XCTAssertThrowsError(
                try RSAMessage.decryptFile(
                    atPath: sealed.path, toPath: fresh.path, with: key,
                    format: format.kind == .container ? nil : format)
            ) { error in
                XCTAssertEqual(error as? RSAError, .decryptionFailed, "\(format)")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: fresh.path), "\(format): no half-written output")
        }
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(),
            ["opened.bin", "plain.bin", "sealed.rsa"], "no temporary left behind")
        XCTAssertThrowsError(
            try RSAMessage.encryptFile(
                atPath: dir.appendingPathComponent("missing").path,
                toPath: sealed.path, for: key.publicKey)
        ) { error in
            guard case .inputFileFailed(_, "no such file or directory") = error as? RSAError else {
                return XCTFail("\(error)")
            }
        }
    }

    func testStore_FindsTheKeyByTheContainersFingerprint() async throws {
        let dir = try folder()
        let store = try RSAKeyStore(path: dir.appendingPathComponent("store").path)
        let key = try TestKeys.generated(bits: 1024)
        try store.addKeyPair(key, tag: "com.example.msg")
        let plaintext = Array("found by fingerprint".utf8)
        let armored = try RSAMessage.encrypt(plaintext, for: key.publicKey, format: .container(armored: true))
        XCTAssertEqual(try RSAMessage.decrypt(armored, using: store), plaintext)
        let openedData = try await RSAMessage.decrypt(Data(armored), using: store)
        XCTAssertEqual(openedData, Data(plaintext))
        let file = dir.appendingPathComponent("in.asc"), out = dir.appendingPathComponent("out.txt")
        try Data(armored).write(to: file)
        try await RSAMessage.decryptFile(at: file, to: out, using: store)
        XCTAssertEqual([UInt8](try Data(contentsOf: out)), plaintext)

        let stranger = try TestKeys.generated(bits: 2048)
        let forStranger = try RSAMessage.encrypt(plaintext, for: stranger.publicKey)
        // The private key the header names is looked for by its fingerprint: not found.
        let recipientQuery = RSAKeychainItemQuery(
            itemClass: .key, keyClass: .private, publicKeyFingerprint: stranger.publicKey.fingerprint)
        XCTAssertThrowsError(try RSAMessage.decrypt(forStranger, using: store)) { error in
            XCTAssertEqual(error as? RSAError, .itemNotFound(recipientQuery))
        }
        // The public half alone does not decrypt; the list lookup shows it is there.
        try store.addPublicKey(stranger.publicKey, tag: "com.example.stranger")
        XCTAssertThrowsError(try RSAMessage.decrypt(forStranger, using: store)) { error in
            XCTAssertEqual(error as? RSAError, .itemNotFound(recipientQuery))
        }
        XCTAssertEqual(try store.keyItems(fingerprint: stranger.publicKey.fingerprint).map(\.keyClass), [.public])
        let raw = try RSAMessage.encrypt(plaintext, for: key.publicKey, format: .rawBlocks())
        XCTAssertThrowsError(try RSAMessage.decrypt(raw, using: store)) { error in
            XCTAssertEqual(error as? RSAError, .messageNamesNoRecipient)
        }
    }
}
