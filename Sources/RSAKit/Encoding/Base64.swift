/// Base64 (RFC 4648 §4, the standard alphabet) for PEM bodies and fingerprints.
///
/// Built here rather than taken from Foundation so that decoding is exactly as strict
/// as each caller needs and reports the position of the first bad character.
internal enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 6-bit value of each ASCII character, 0xFF where the character is not in the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// Encode `bytes`; `padded` adds '=' to a multiple of 4 characters.
    static func encode(_ bytes: [UInt8], padded: Bool = true) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int((chunk >> UInt32(shift)) & 0x3F)]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            var chunk = UInt32(bytes[index]) << 16
            if rest == 2 { chunk |= UInt32(bytes[index + 1]) << 8 }
            out.append(alphabet[Int((chunk >> 18) & 0x3F)])
            out.append(alphabet[Int((chunk >> 12) & 0x3F)])
            if rest == 2 { out.append(alphabet[Int((chunk >> 6) & 0x3F)]) }
            if padded { out.append(contentsOf: Array(repeating: UInt8(ascii: "="), count: 3 - rest)) }
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
    /// and last. With `strict`, the unused low bits of the final character must be zero
    /// (RFC 4648 §3.5, canonical encoding).
    /// - Throws: ``DecodingError`` naming the bad character's index.
    static func decode(_ characters: [UInt8], strict: Bool) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(characters.count / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var pending = 0          // characters in the current group of 4
        var padding = 0
        for (index, character) in characters.enumerated() {
            if character == UInt8(ascii: "=") {
                guard pending >= 2 else {
                    throw DecodingError(reason: "misplaced '=' padding", index: index)
                }
                padding += 1
                guard pending + padding <= 4 else {
                    throw DecodingError(reason: "too much '=' padding", index: index)
                }
                continue
            }
            guard padding == 0 else {
                throw DecodingError(reason: "data after '=' padding", index: index)
            }
            let value = values[Int(character)]
            guard value != 0xFF else {
                let shown = character >= 0x21 && character < 0x7F
                    ? "'\(Character(Unicode.Scalar(character)))'" : "byte 0x\(hexByte(character))"
                throw DecodingError(reason: "invalid base64 character \(shown)", index: index)
            }
            accumulator = accumulator << 6 | UInt32(value)
            pending += 1
            if pending == 4 {
                out.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                out.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                out.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator = 0
                pending = 0
            }
        }
        if padding > 0 && pending + padding != 4 {
            throw DecodingError(reason: "incomplete '=' padding", index: characters.count)
        }
        switch pending {
        case 0:
            break
        case 1:
            throw DecodingError(reason: "base64 ends with a lone character (truncated?)", index: characters.count - 1)
        case 2:
            if strict && accumulator & 0x0F != 0 {
                throw DecodingError(reason: "non-canonical base64 (unused bits set)", index: characters.count - 1 - padding)
            }
            out.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        default: // 3
            if strict && accumulator & 0x03 != 0 {
                throw DecodingError(reason: "non-canonical base64 (unused bits set)", index: characters.count - 1 - padding)
            }
            out.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            out.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        }
        return out
    }
}
