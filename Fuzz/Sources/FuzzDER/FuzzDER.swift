// DER reader harness. Properties:
// 1. Input the strict reader accepts is canonical: re-encoding its tree (tag, minimal length,
//    content) gives the input back, byte for byte, and the tree is no deeper than the limit.
// 2. Every INTEGER it accepts re-encodes (DERValue) to the same TLV, unless the reader noted
//    redundant leading zeros, and then to a shorter one with the same value.
// 3. Every OBJECT IDENTIFIER it accepts prints as dotted decimal that encodes back to its content.
// 4. A rejection is RSAError.malformedDER with an offset inside the input.
@_spi(Fuzzing) import RSAKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDER(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    let tree: RSAKitFuzzing.DERNode
    do {
        tree = try RSAKitFuzzing.derTree(input)
    } catch let RSAError.malformedDER(_, offset) {
        require(offset >= 0 && offset <= input.count, "offset \(offset) outside 0...\(input.count)")
        return 0
    } catch {
        unreachable("DER reader threw a non-DER error: \(error)")
    }
    require(encode(tree) == input, "accepted DER does not re-encode to itself")
    require(depth(tree) <= RSAKitFuzzing.derMaximumDepth, "tree deeper than the limit")
    checkPrimitives(tree)
    return 0
}

/// Tag, minimal definite length (X.690 §10.1), content.
func encode(_ node: RSAKitFuzzing.DERNode) -> [UInt8] {
    let content = node.isConstructed ? node.children.flatMap(encode) : node.content
    var out: [UInt8] = [node.tag]
    if content.count < 0x80 {
        out.append(UInt8(content.count))
    } else {
        var length: [UInt8] = []
        var rest = content.count
        while rest > 0 { length.insert(UInt8(rest & 0xFF), at: 0); rest >>= 8 }
        out.append(0x80 | UInt8(length.count))
        out += length
    }
    return out + content
}

func depth(_ node: RSAKitFuzzing.DERNode) -> Int {
    node.isConstructed ? 1 + (node.children.map(depth).max() ?? 0) : 0
}

func checkPrimitives(_ node: RSAKitFuzzing.DERNode) {
    if node.isConstructed {
        node.children.forEach(checkPrimitives)
        return
    }
    let tlv = encode(node)
    switch node.tag {
    case 0x02:
        guard let (magnitude, noted, reencoded) = try? RSAKitFuzzing.derUnsignedInteger(tlv: tlv) else {
            // Refused: empty or negative.
            require(node.content.isEmpty || node.content[0] & 0x80 != 0, "a non-negative INTEGER was refused")
            return
        }
        require(magnitude.first != 0, "magnitude keeps a leading zero")
        if noted {
            require(reencoded.count < tlv.count, "noted INTEGER does not shrink when re-encoded")
        } else {
            require(reencoded == tlv, "minimal INTEGER does not re-encode to itself")
        }
        let significant = node.content.drop(while: { $0 == 0 })
        require(Array(significant) == magnitude, "INTEGER magnitude differs from its content")
    case 0x06:
        guard let dotted = try? RSAKitFuzzing.derObjectIdentifier(tlv: tlv) else { return }
        if dotted.hasPrefix("(") { return }  // an arc too long to print
        require(encodeDotted(dotted) == node.content, "OID \(dotted) does not encode back to its content")
    default:
        return
    }
}

/// X.690 §8.19 from dotted decimal (first two arcs combined as 40 * a + b).
func encodeDotted(_ dotted: String) -> [UInt8]? {
    let arcs = dotted.split(separator: ".").map { UInt64($0) }
    guard arcs.count >= 2, arcs.allSatisfy({ $0 != nil }) else { return nil }
    let values = arcs.map { $0! }
    let (first, overflow) = (values[0] * 40).addingReportingOverflow(values[1])
    guard !overflow else { return nil }
    var out: [UInt8] = []
    for value in [first] + values.dropFirst(2) {
        var groups: [UInt8] = [UInt8(value & 0x7F)]
        var rest = value >> 7
        while rest > 0 { groups.insert(UInt8(rest & 0x7F) | 0x80, at: 0); rest >>= 7 }
        out += groups
    }
    return out
}
