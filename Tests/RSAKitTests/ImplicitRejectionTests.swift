import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitCore

/// RSAES-PKCS1-v1_5 decryption with implicit rejection (draft-irtf-cfrg-rsa-guidance §7)
/// against the draft's Appendix B vectors (Fixtures/implicit-rejection).
final class ImplicitRejectionTests: XCTestCase {
    private struct LoadedSet {
        let key: RSAPrivateKey
        let cases: [(vector: ImplicitRejectionVectors.Case, ciphertext: [UInt8])]
    }

    private func loadSets() throws -> [LoadedSet] {
        try ImplicitRejectionVectors.load().sets.map { set in
            let key = try RSAPrivateKey(pemRepresentation: set.privateKeyPEM)
            XCTAssertEqual(key.publicKey.modulusBitCount, set.modulusBits)
            return LoadedSet(
                key: key, cases: try set.cases.map { ($0, try ImplicitRejectionVectors.bytes(hex: $0.ciphertext)) })
        }
    }

    func testEveryVectorGivesTheExpectedMessageOrError() throws {
        let sets = try loadSets()
        XCTAssertEqual(sets.map(\.key.publicKey.modulusBitCount), [2048, 2049, 4096])
        var draftCases = 0, synthetic = 0, real = 0
        for set in sets {
            for (vector, ciphertext) in set.cases {
                let label = "\(vector.draft ?? "-") \(vector.name)"
                if vector.draft != nil { draftCases += 1 }
                let expected = try XCTUnwrap(vector.message, label)
                XCTAssertEqual(ciphertext.count, set.key.modulusByteCount, label)
                let output = try set.key.decrypt(ciphertext, rejection: .implicit)
                XCTAssertEqual(output, try ImplicitRejectionVectors.bytes(hex: expected), label)
                XCTAssertLessThanOrEqual(output.count, set.key.modulusByteCount - 11, label)
                // Where the padding is valid, implicit rejection returns what explicit rejection
                // returns; where it is not, explicit rejection throws the one opaque error.
                do {
                    let explicit = try set.key.decrypt(ciphertext)
                    XCTAssertEqual(explicit, output, label)
                    real += 1
                } catch {
                    XCTAssertEqual(error as? RSAError, .decryptionFailed, label)
                    synthetic += 1
                }
            }
        }
        XCTAssertEqual(draftCases, 36, "Appendix B.1, B.2 and B.4 have 12 ciphertexts each")
        XCTAssertEqual(synthetic, 27, "the draft: per key, three valid paddings and nine invalid ones")
        XCTAssertEqual(real + synthetic, 36)
    }

    func testTheSyntheticMessageIsTheSameEveryTimeAndDependsOnTheCiphertext() throws {
        let key = try loadSets()[0].key
        let k = key.modulusByteCount
        // Raw RSAEP of EMs with a wrong second byte: each one's padding is invalid.
        var outputs: [[UInt8]] = []
        for seed in UInt8(1)...8 {
            var em = [UInt8](repeating: seed, count: k)
            em[0] = 0; em[1] = 0x03
            let ciphertext = try key.publicKey.rsaep(em)
            XCTAssertThrowsError(try key.decrypt(ciphertext))
            let first = try key.decrypt(ciphertext, rejection: .implicit)
            XCTAssertEqual(try key.decrypt(ciphertext, rejection: .implicit), first)
            XCTAssertLessThanOrEqual(first.count, k - 11)
            outputs.append(first)
        }
        XCTAssertEqual(Set(outputs).count, outputs.count, "eight ciphertexts, eight different synthetic messages")
    }

    func testPublicFailuresStillThrow() throws {
        let key = try loadSets()[0].key
        let k = key.modulusByteCount
        let tooLarge = [UInt8](repeating: 0xFF, count: k)  // C >= n (step 2.b)
        let modulus = key.publicKey.modulus  // C == n
        for ciphertext in [
            tooLarge, modulus, [UInt8](repeating: 1, count: k - 1), [UInt8](repeating: 1, count: k + 1), []
        ] {
            XCTAssertThrowsError(try key.decrypt(ciphertext, rejection: .implicit)) { error in
                XCTAssertEqual(error as? RSAError, .decryptionFailed)
            }
        }
    }

    /// Raw blocks through RSARawBlocks and RSAMessage: eight and more blocks, so that the
    /// batch path (eight lanes when the vector kernel runs) decodes them too.
    func testRawBlocksWithImplicitRejectionDecryptEachBlockAsTheSingleBlockCallDoes() throws {
        let set = try loadSets()[0]
        // 17 blocks: two groups of eight and one left over.
        let blocks = set.cases.map(\.ciphertext) + set.cases.prefix(5).map(\.ciphertext)
        XCTAssertEqual(blocks.count, 17)
        let stream = blocks.flatMap { $0 }
        let expected = try blocks.flatMap { try set.key.decrypt($0, rejection: .implicit) }

        for concurrency in [1, 2] {
            var source = RSAArrayByteSource(stream)
            var sink = RSAArrayByteSink()
            let count = try RSARawBlocks.decrypt(
                from: &source, to: &sink, with: set.key, padding: .pkcs1v15,
                rejection: .implicit, concurrency: concurrency)
            XCTAssertEqual(count, UInt64(blocks.count))
            XCTAssertEqual(sink.bytes, expected, "concurrency \(concurrency)")
        }
        XCTAssertEqual(
            try RSAMessage.decrypt(stream, with: set.key, format: .rawBlocksWithImplicitRejection()), expected)
        XCTAssertThrowsError(try RSAMessage.decrypt(stream, with: set.key, format: .rawBlocks(padding: .pkcs1v15))) {
            error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed)
        }
        XCTAssertEqual(
            RSAMessageFormat.rawBlocksWithImplicitRejection().description,
            "raw blocks (PKCS#1 v1.5, implicit rejection)")
    }

    func testImplicitRejectionWithOAEPIsRefusedBeforeAnyBlockIsRead() throws {
        let key = try loadSets()[0].key
        var source = RSAArrayByteSource([UInt8](repeating: 7, count: key.modulusByteCount))
        var sink = RSAArrayByteSink()
        XCTAssertThrowsError(
            try RSARawBlocks.decrypt(
                from: &source, to: &sink, with: key,
                padding: .oaep(RSAOAEPParameters()), rejection: .implicit)
        ) { error in
            guard case .messageFormatUnsupported(let reason)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("PKCS#1 v1.5"), reason)
        }
        XCTAssertEqual(sink.bytes, [])
    }

    /// The PRF of §7.1 by its definition: HMAC-SHA256 in counter mode, truncated.
    func testPRFIsHMACInCounterModeTruncatedToTheBitLength() {
        let kdk = [UInt8](repeating: 0x0B, count: 32)
        let out = ImplicitRejectionFallback.prf(kdk, label: "message", bitCount: 8 * 70)
        XCTAssertEqual(out.count, 70)
        let suffix = Array("message".utf8) + [0x02, 0x30]  // 560 bits
        XCTAssertEqual(Array(out[0..<32]), HMACSHA256.authenticationCode(key: kdk, [0, 0], suffix))
        XCTAssertEqual(Array(out[32..<64]), HMACSHA256.authenticationCode(key: kdk, [0, 1], suffix))
        XCTAssertEqual(Array(out[64..<70]), Array(HMACSHA256.authenticationCode(key: kdk, [0, 2], suffix)[0..<6]))
    }

    /// HMAC-SHA256 against RFC 4231 test case 2 (key "Jefe").
    func testHMACSHA256MatchesRFC4231() {
        let tag = HMACSHA256.authenticationCode(
            key: Array("Jefe".utf8), Array("what do ya want ".utf8), Array("for nothing?".utf8))
        XCTAssertEqual(KeyFormatFixtures.hex(tag), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }
}
