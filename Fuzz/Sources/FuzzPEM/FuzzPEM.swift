// PEM scanner and base64 harness. Properties:
// 1. The quick BEGIN-line test (used to tell PEM from DER) agrees with the scanner: a text the
//    scanner finds a block in has a BEGIN line.
// 2. Every block that decodes re-encodes (RFC 7468, 64 columns) to a text the scanner reads
//    back as exactly that block: same label, same bytes, no headers.
// 3. A block that does not decode fails with RSAError.malformedPEM and a line number inside the text.
// 4. Base64: a strict decode re-encodes to the same characters; a lenient decode's bytes
//    survive encode-then-strict-decode.
@_spi(Fuzzing) import RSAKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPEM(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    let blocks = RSAKitFuzzing.pemBlocks(input)
    if !blocks.isEmpty {
        require(
            RSAKitFuzzing.pemContainsBeginLine(input),
            "the scanner found \(blocks.count) block(s) but containsBeginLine says none")
    }
    let lineCount = 1 + input.filter { $0 == 0x0A }.count
    for block in blocks {
        switch block.decoded {
        case let .success(der):
            let text = Array(RSAKitFuzzing.pemEncode(der, label: block.label).utf8)
            let again = RSAKitFuzzing.pemBlocks(text)
            require(again.count == 1, "re-encoded block scans as \(again.count) blocks")
            require(again[0].label == block.label, "label \(block.label) came back as \(again[0].label)")
            require(again[0].headerCount == 0, "re-encoded block has headers")
            guard case let .success(back) = again[0].decoded else {
                unreachable("re-encoded block does not decode: \(again[0].decoded)")
            }
            require(back == der, "re-encoded block decodes to other bytes")
        case let .failure(error):
            guard case let .malformedPEM(_, line) = error else {
                unreachable("PEM decode failed with \(error)")
            }
            require(line >= 1 && line <= lineCount + 1, "error line \(line) outside 1...\(lineCount + 1)")
        }
    }
    checkBase64(input)
    return 0
}

func checkBase64(_ input: [UInt8]) {
    let characters = input.filter { $0 != 0x0A && $0 != 0x0D && $0 != 0x20 }
    if let strict = RSAKitFuzzing.base64Decode(characters, strict: true) {
        let padded = characters.contains(UInt8(ascii: "="))
        let text = Array(RSAKitFuzzing.base64Encode(strict, padded: padded).utf8)
        // Input without '=' may still need none (a multiple of 4 characters): both spellings agree then.
        require(
            text == characters
                || (!padded && Array(RSAKitFuzzing.base64Encode(strict, padded: true).utf8) == characters),
            "strict base64 is not canonical")
    }
    if let lenient = RSAKitFuzzing.base64Decode(characters, strict: false) {
        let text = Array(RSAKitFuzzing.base64Encode(lenient, padded: true).utf8)
        require(RSAKitFuzzing.base64Decode(text, strict: true) == lenient, "base64 round trip differs")
    }
}
