// The store's item-file parser (magic line, one JSON metadata line, PEM). Properties:
// 1. A file the parser accepts writes back (StoreItemRecord.encode) to a file it accepts as
//    the same record: parse . write . parse == parse, and writing is then a fixed point.
// 2. The written file keeps the shape: magic line, one JSON line, the PEM from a BEGIN line.
// 3. Dates: a date the parser accepts formats back to the same text.
@_spi(Fuzzing) import RSAKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStoreItem(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    if let item = try? RSAKitFuzzing.storeItemDecode(input) {
        let written: [UInt8]
        do { written = try RSAKitFuzzing.storeItemEncode(item) } catch {
            unreachable("an accepted record does not write: \(error)")
        }
        let lines = written.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
        require(
            lines.count == 3 && lines[0].elementsEqual("rsakit key item 1".utf8)
                && lines[2].starts(with: "-----BEGIN ".utf8), "written file lost its shape")
        let again: RSAKitFuzzing.StoreItem
        do { again = try RSAKitFuzzing.storeItemDecode(written) } catch {
            unreachable("the written record does not parse: \(error)")
        }
        // encode() appends a final newline when the PEM has none.
        // (Compared as bytes: "\r\n" is one Character, so String.hasSuffix("\n") would miss it.)
        let expectedPEM = item.pem.utf8.last == 0x0A ? item.pem : item.pem + "\n"
        require(
            again.format == item.format && again.itemID == item.itemID && again.keyClass == item.keyClass
                && again.applicationTag == item.applicationTag && again.label == item.label
                && again.keySizeInBits == item.keySizeInBits && again.fingerprint == item.fingerprint
                && again.creationDate == item.creationDate && again.pem == expectedPEM,
            "record changed in a write/parse round trip")
        require((try? RSAKitFuzzing.storeItemEncode(again)) == written, "writing is not a fixed point")
        checkDate(item.creationDate)
    }
    // Dates on their own (the metadata's creationDate is parsed when the store lists items).
    if input.count <= 32, let text = String(validating: input, as: UTF8.self) {
        checkDate(text)
    }
    return 0
}

func checkDate(_ text: String) {
    guard let milliseconds = RSAKitFuzzing.storeParseDate(text) else { return }
    require(RSAKitFuzzing.storeFormatDate(milliseconds: milliseconds) == text, "date \(text) does not format back")
}
