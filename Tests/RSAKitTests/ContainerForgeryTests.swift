import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitCore

/// Blocks forged by someone holding only the public key, made with the real
/// `openssl pkeyutl -encrypt -pubin`. Version 1 accepts them (its documented weakness);
/// version 2 rejects them with the opaque "decryption failed". Also: version 1 still decrypts.
final class ContainerForgeryTests: XCTestCase {
    var publicKeyPath = ""
    var key: RSAPrivateKey!

    override func setUpWithError() throws {
        let generated = try TestKeys.openssl(bits: 1024)
        key = generated.key
        publicKeyPath = TestKeys.scratch.appendingPathComponent("forgery-pub-\(UUID().uuidString).pem").path
        // Command: openssl pkey -in KEY.pem -pubout -out PUB.pem
        try OpenSSL.run(["pkey", "-in", generated.path, "-pubout", "-out", publicKeyPath])
    }

    /// What an attacker holding only the public key can do: encrypt any frame as one block.
    func forgeBlock(_ frame: [UInt8]) throws -> [UInt8] {
        // Command: openssl pkeyutl -encrypt -pubin -inkey PUB.pem  (RSAES-PKCS1-v1_5)
        let block = try OpenSSL.run(["pkeyutl", "-encrypt", "-pubin", "-inkey", publicKeyPath], input: frame)
        XCTAssertEqual(block.count, 128)
        return block
    }

    func index(_ i: UInt64) -> [UInt8] { var out: [UInt8] = []; appendBigEndian(i, to: &out); return out }

    /// A version 1 container as rsakit 1.x wrote it (header 60 bytes, 17-byte frames), its
    /// blocks made by openssl: the format is public, so this is exactly what v1 looked like.
    func versionOneContainer(_ plaintext: [UInt8]) throws -> (container: [UInt8], messageID: [UInt8]) {
        let messageID = (0..<16).map { UInt8(truncatingIfNeeded: $0 * 17 + 3) }
        var container =
            RSAMessageContainer.magic + [0x01, 0x01, 0x00, 0x80] + key.publicKey.fingerprint.bytes + messageID
        let payload = 128 - 11 - 17
        let slices = stride(from: 0, to: max(1, plaintext.count), by: payload).map {
            Array(plaintext[$0..<min(plaintext.count, $0 + payload)])
        }
        for (i, slice) in slices.enumerated() {
            let flags: UInt8 = i == slices.count - 1 ? 1 : 0
            container += try forgeBlock(Array(messageID[0..<8]) + index(UInt64(i)) + [flags] + slice)
        }
        return (container, messageID)
    }

    func testVersion1_StillDecrypts() throws {
        let plaintext = (0..<250).map { UInt8(truncatingIfNeeded: $0 * 3) }
        let (container, _) = try versionOneContainer(plaintext)
        XCTAssertEqual(container.count, 60 + 3 * 128)
        let header = try RSAMessageContainer.Header(parsing: container)
        XCTAssertEqual(header.version, 1)
        XCTAssertEqual(header.byteCount, 60)
        XCTAssertEqual(try RSAMessageContainer.decrypt(container, with: key), plaintext)
        XCTAssertEqual(try RSAMessage.decrypt(container, with: key), plaintext, "detected as a container")
        // Its frame checks still catch reordering.
        var swapped = Array(container[0..<60])
        swapped += container[(60 + 128)..<(60 + 256)] + container[60..<(60 + 128)] + container[(60 + 256)...]
        XCTAssertThrowsError(try RSAMessageContainer.decrypt(swapped, with: key)) {
            XCTAssertEqual($0 as? RSAError, .decryptionFailed)
        }
    }

    func testVersion1_AcceptsABlockForgedWithThePublicKey_DocumentedWeakness() throws {
        let plaintext = [UInt8](repeating: 0x41, count: 250)
        var (container, messageID) = try versionOneContainer(plaintext)
        // Everything the forgery needs is public: the id's first half (header), the index.
        let evil = [UInt8](repeating: 0x45, count: 100)
        let forged = try forgeBlock(Array(messageID[0..<8]) + index(1) + [0x00] + evil)
        container.replaceSubrange((60 + 128)..<(60 + 256), with: forged)
        let opened = try RSAMessageContainer.decrypt(container, with: key)
        XCTAssertEqual(
            opened, Array(plaintext[0..<100]) + evil + Array(plaintext[200...]),
            "v1 accepts the forged block: the weakness version 2 fixes")
    }

    func testVersion2_RejectsBlocksForgedWithThePublicKey() throws {
        let plaintext = [UInt8](repeating: 0x41, count: 150)
        let container = try RSAMessageContainer.encrypt(plaintext, to: key.publicKey)
        let header = Array(container[0..<64])
        XCTAssertEqual(container.count, 64 + 3 * 128)
        let payload = RSAMessageContainer.payloadByteCount(blockSize: 128)
        // The attacker knows everything public (header digest, index, flags) but not the secret.
        for (position, flags) in [(1, UInt8(0)), (2, UInt8(1)), (0, UInt8(0))] {
            let guess = SystemRandomSource().bytes(16)
            let count = position == 2 ? 150 - 2 * payload : payload
            let frame =
                guess + RSAHashAlgorithm.sha256.hash(header) + index(UInt64(position)) + [flags]
                + [UInt8](repeating: 0x45, count: count)
            var forged = container
            forged.replaceSubrange((64 + 128 * position)..<(64 + 128 * (position + 1)), with: try forgeBlock(frame))
            XCTAssertThrowsError(try RSAMessageContainer.decrypt(forged, with: key), "forged block \(position)") {
                error in
                XCTAssertEqual(error as? RSAError, .decryptionFailed)
                XCTAssertEqual(String(describing: error), "decryption failed")
            }
        }
        XCTAssertEqual(try RSAMessageContainer.decrypt(container, with: key), plaintext)
    }

    func testVersion2_Limit_APublicKeyHolderCanStillWriteAWholeNewMessage() throws {
        // No sender authentication without a signature: a complete message of one's own,
        // with its own secret in every block, decrypts (docs/container-format.md says so).
        let header = RSAMessageContainer.Header(
            padding: .pkcs1v15, blockSize: 128,
            recipientFingerprint: key.publicKey.fingerprint,
            messageID: [UInt8](repeating: 7, count: 16)
        ).bytes
        let secret = [UInt8](repeating: 0x5A, count: 16)
        let frame = secret + RSAHashAlgorithm.sha256.hash(header) + index(0) + [0x01] + Array("hello".utf8)
        let message = header + (try forgeBlock(frame))
        XCTAssertEqual(try RSAMessageContainer.decrypt(message, with: key), Array("hello".utf8))
    }
}
