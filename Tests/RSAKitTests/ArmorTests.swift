import Foundation
import XCTest
import RSAKit

/// ASCII armor in the library: layout, streaming, leniency, and errors.
final class ArmorTests: XCTestCase {
    func testEncode_LayoutIs64ColumnBase64BetweenTheLines() {
        let bytes = (0..<100).map { UInt8($0) }
        let text = RSAArmor.encode(bytes)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.first, "-----BEGIN RSAKIT MESSAGE-----")
        XCTAssertEqual(lines[1].count, 64)
        XCTAssertEqual(lines[2].count, 64)
        XCTAssertEqual(lines[3], Substring(Base64.encode(Array(bytes[96...]))))
        XCTAssertEqual(lines[4], "-----END RSAKIT MESSAGE-----")
        XCTAssertEqual(lines.last, "")
        XCTAssertEqual(try RSAArmor.decode(Array(text.utf8)), bytes)
        XCTAssertEqual(RSAArmor.encode([]), "-----BEGIN RSAKIT MESSAGE-----\n-----END RSAKIT MESSAGE-----\n")
    }

    func testDecode_SkipsLeadingTextAcceptsCRLFAndIgnoresTrailingText() throws {
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let armored = RSAArmor.encode(bytes).replacingOccurrences(of: "\n", with: "\r\n")
        let mail = "From: someone\r\nSubject: hi\r\n\r\nSee below.\r\n" + armored + "\r\n-- \r\nsignature\r\n"
        XCTAssertEqual(try RSAArmor.decode(Array(mail.utf8)), bytes)
    }

    func testDecode_LinesAcrossReadsOfTheInnerSource() throws {
        // 5,000 bytes read through 1- to 97-byte pieces (lines straddle every read), and
        // 400,000 bytes whose armor (about 540 KB) takes several of the decoder's 64 KiB reads.
        let small = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let large = (0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 9) }
        for (bytes, trickle) in [(small, true), (large, false)] {
            let text =
                "Subject: x\r\n\r\n"
                + RSAArmor.encode(bytes).replacingOccurrences(of: "\n", with: trickle ? "\r\n" : "\n")
            let armored = Array(text.utf8)
            var out: [UInt8] = []
            if trickle {
                var source = RSAArmorDecodingSource(ChunkingTests.TrickleSource(inner: RSAArrayByteSource(armored)))
                while case let piece = try source.read(upTo: 1 + out.count % 1000), !piece.isEmpty { out += piece }
            } else {
                var source = RSAArmorDecodingSource(RSAArrayByteSource(armored))
                while case let piece = try source.read(upTo: 65536), !piece.isEmpty { out += piece }
            }
            XCTAssertEqual(out.count, bytes.count, "trickle: \(trickle)")
            XCTAssertEqual(out, bytes, "trickle: \(trickle)")
        }
    }

    func testDecode_ErrorsNameTheProblem() {
        func reason(_ text: String) -> String? {
            do { _ = try RSAArmor.decode(Array(text.utf8)); return nil } catch let RSAError.messageInvalid(reason) {
                return reason
            } catch { return "\(error)" }
        }
        XCTAssertEqual(reason("hello"), "no '-----BEGIN RSAKIT MESSAGE-----' line found")
        XCTAssertEqual(
            reason("-----BEGIN RSAKIT MESSAGE-----\nAAAA\n"),
            "armored input ends without '-----END RSAKIT MESSAGE-----' (truncated)")
        XCTAssertEqual(
            reason("-----BEGIN RSAKIT MESSAGE-----\nAA*A\n-----END RSAKIT MESSAGE-----\n"),
            "armored input has invalid base64 on line 2")
    }

    func testArmoredContainer_IsDetectedAndDecrypts() throws {
        let key = try TestKeys.generated(bits: 1024)
        let plaintext = Array("a note for a text channel".utf8)
        let armored = try RSAMessage.encrypt(plaintext, for: key.publicKey, format: .container(armored: true))
        XCTAssertTrue(String(decoding: armored, as: UTF8.self).hasPrefix("-----BEGIN RSAKIT MESSAGE-----\n"))
        XCTAssertTrue(RSAMessageContainer.hasMagic(try RSAArmor.decode(armored)))
        let pasted = Array("Hi,\n\nhere it is:\n\n".utf8) + armored
        XCTAssertEqual(try RSAMessage.decrypt(pasted, with: key), plaintext)
        XCTAssertEqual(RSAMessage.recipientFingerprint(of: pasted), key.publicKey.fingerprint)
    }
}
