// ASCII armor harness, over the library's RSAArmor (Sources/RSAKit/Messages/Armor.swift).
// Properties:
// 1. Decoding any input either yields bytes or fails with RSAError.messageInvalid (the CLI's
//    data error, exit 65), never another error.
// 2. Whatever decodes re-encodes to armor that decodes to the same bytes.
// 3. Encoding the input (written in fuzz-chosen pieces) gives 64-column lines between the
//    BEGIN and END lines, and decodes back to the input: decode . encode == identity.
import RSAKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArmor(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    if let decoded = decodeArmor(input, readSize: 1 + Int(input.first ?? 0) % 97) {
        require(
            decodeArmor(encodeArmor(decoded, pieces: [decoded.count]), readSize: 4096) == decoded,
            "decoded armor does not survive encode then decode")
    }
    // Identity on arbitrary bytes, written in pieces whose sizes come from the input.
    var pieces: [Int] = []
    var remaining = input.count
    var cursor = 0
    while remaining > 0 {
        let size = min(remaining, 1 + Int(input[cursor % input.count]) % 70)
        pieces.append(size)
        remaining -= size
        cursor += size
    }
    let armor = encodeArmor(input, pieces: pieces)
    let lines = String(decoding: armor, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    require(
        lines.first == Substring(RSAArmor.beginLine) && lines.dropLast().last == Substring(RSAArmor.endLine)
            && lines.last == "",
        "armor is not framed by BEGIN and END lines")
    require(
        lines.dropFirst().dropLast(2).allSatisfy { $0.count <= 64 && $0.count % 4 == 0 },
        "armor line longer than 64 columns")
    require(decodeArmor(armor, readSize: 1 + input.count % 4096) == input, "decode of encode is not the identity")
    return 0
}

/// The decoded bytes, or nil after RSAError.messageInvalid.
func decodeArmor(_ bytes: [UInt8], readSize: Int) -> [UInt8]? {
    var source = RSAArmorDecodingSource(RSAArrayByteSource(bytes))
    var out: [UInt8] = []
    do {
        while true {
            let piece = try source.read(upTo: readSize)
            require(piece.count <= readSize, "read returned more than asked")
            if piece.isEmpty { return out }
            out += piece
        }
    } catch RSAError.messageInvalid {
        return nil
    } catch {
        unreachable("armor decoding threw \(error)")
    }
}

func encodeArmor(_ bytes: [UInt8], pieces: [Int]) -> [UInt8] {
    do {
        var sink = RSAArmorEncodingSink(RSAArrayByteSink())
        var offset = 0
        for size in pieces where size > 0 {
            try sink.write(Array(bytes[offset..<(offset + size)]))
            offset += size
        }
        try sink.finish()
        return sink.inner.bytes
    } catch {
        unreachable("armor encoding into memory threw \(error)")
    }
}
