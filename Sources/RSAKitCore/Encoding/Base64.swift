internal import CNettle

/// Base64 (RFC 4648 §4, the standard alphabet) for PEM bodies and fingerprints.
///
/// The encoding and decoding themselves are Nettle's (`nettle_base64_encode_raw`,
/// `nettle_base64_decode_*` from <nettle/base64.h>). What is ours is the validation in front
/// of the decoder, so that a rejection names the first bad character and its index, and the
/// leniency OpenSSL has (missing '=' padding is accepted).
package enum Base64 {
    /// Encode `bytes`; `padded` keeps the '=' padding to a multiple of 4 characters.
    package static func encode(_ bytes: [UInt8], padded: Bool = true) -> String {
        let length = (bytes.count + 2) / 3 * 4  // BASE64_ENCODE_RAW_LENGTH
        var out = [UInt8](repeating: 0, count: length)
        out.withUnsafeMutableBufferPointer { dst in
            bytes.withUnsafeBufferPointer { src in
                dst.baseAddress!.withMemoryRebound(to: CChar.self, capacity: length) { text in
                    nettle_base64_encode_raw(text, src.count, src.baseAddress)
                }
            }
        }
        if !padded {
            while out.last == UInt8(ascii: "=") { out.removeLast() }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Why decoding stopped, and at which character index of the input.
    struct DecodingError: Error {
        let reason: String
        let index: Int
    }

    /// Decode base64 characters (no whitespace; callers strip it).
    ///
    /// Accepts missing padding (OpenSSL does too). Padding, when present, must be correct
    /// and last. With `strict`, the encoding must be canonical: the unused low bits of the
    /// final character zero (RFC 4648 §3.5).
    /// - Throws: ``DecodingError`` naming the bad character's index.
    package static func decode(_ characters: [UInt8], strict: Bool) throws -> [UInt8] {
        // Validate first, so the error can say what and where.
        var dataCount = 0
        var padding = 0
        for (index, character) in characters.enumerated() {
            if character == UInt8(ascii: "=") {
                guard dataCount % 4 >= 2 else {
                    throw DecodingError(reason: "misplaced '=' padding", index: index)
                }
                padding += 1
                guard dataCount % 4 + padding <= 4 else {
                    throw DecodingError(reason: "too much '=' padding", index: index)
                }
                continue
            }
            guard padding == 0 else {
                throw DecodingError(reason: "data after '=' padding", index: index)
            }
            guard isAlphabet(character) else {
                let shown =
                    character >= 0x21 && character < 0x7F
                    ? "'\(Character(Unicode.Scalar(character)))'" : "byte 0x\(hexByte(character))"
                throw DecodingError(reason: "invalid base64 character \(shown)", index: index)
            }
            dataCount += 1
        }
        let remainder = dataCount % 4
        if padding > 0 && remainder + padding != 4 {
            throw DecodingError(reason: "incomplete '=' padding", index: characters.count)
        }
        if remainder == 1 {
            throw DecodingError(reason: "base64 ends with a lone character (truncated?)", index: characters.count - 1)
        }
        // Lenient mode: clear the unused low bits of the last character (OpenSSL ignores them;
        // Nettle, like strict mode, refuses them), then restore missing padding.
        var text = characters
        if !strict && remainder != 0 {
            let last = dataCount - 1  // index of the last data character (padding follows it)
            let unusedBits: UInt8 = remainder == 2 ? 0x0F : 0x03
            text[last] = alphabet(value(of: text[last]) & ~unusedBits)
        }
        if padding == 0 && remainder != 0 {
            text += [UInt8](repeating: UInt8(ascii: "="), count: 4 - remainder)
        }
        var out = [UInt8](repeating: 0, count: (text.count + 1) * 6 / 8)  // BASE64_DECODE_LENGTH
        var outLength = out.count
        var context = base64_decode_ctx()
        nettle_base64_decode_init(&context)
        let ok =
            out.withUnsafeMutableBufferPointer { dst in
                text.withUnsafeBufferPointer { src in
                    src.baseAddress!.withMemoryRebound(to: CChar.self, capacity: src.count) { chars in
                        nettle_base64_decode_update(&context, &outLength, dst.baseAddress, src.count, chars) == 1
                    }
                }
            } && nettle_base64_decode_final(&context) == 1
        guard ok else {
            throw DecodingError(reason: "invalid base64", index: 0)
        }
        out.removeLast(out.count - outLength)
        if strict && remainder != 0 {
            // Canonical iff re-encoding gives the same characters (unused bits zero).
            let reencoded = Array(encode(out, padded: padding > 0).utf8)
            guard reencoded == characters else {
                throw DecodingError(
                    reason: "non-canonical base64 (unused bits set)",
                    index: characters.count - 1 - padding)
            }
        }
        return out
    }

    private static let characters: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    private static func isAlphabet(_ c: UInt8) -> Bool { characters.contains(c) }

    /// The 6-bit value of an alphabet character.
    private static func value(of c: UInt8) -> UInt8 { UInt8(characters.firstIndex(of: c)!) }

    /// The alphabet character of a 6-bit value.
    private static func alphabet(_ value: UInt8) -> UInt8 { characters[Int(value)] }
}
