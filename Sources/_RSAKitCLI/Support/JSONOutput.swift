#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// One JSON value, so object trees built as `[String: Any]` can be written by `JSONEncoder`
/// (FoundationEssentials has no JSONSerialization). `null` stands where NSNull used to.
enum JSONValue: Codable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value of a tree of strings, Booleans, integers, doubles, arrays, `[String: Any]`
    /// dictionaries, `nil` and ``JSONValue``s; anything else is a programming error.
    init(any value: Any) {
        switch value {
        case let json as JSONValue: self = json
        case let bool as Bool: self = .bool(bool)
        case let string as String: self = .string(string)
        case let integer as any SignedInteger: self = .integer(Int64(integer))
        case let integer as any UnsignedInteger: self = .unsigned(UInt64(integer))
        case let double as Double: self = .double(double)
        case let array as [Any]: self = .array(array.map(JSONValue.init(any:)))
        case let object as [String: Any]: self = .object(object.mapValues(JSONValue.init(any:)))
        case let optional as any OptionalJSON: self = optional.jsonValue
        default: preconditionFailure("not a JSON value: \(type(of: value))")
        }
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let integer = try? container.decode(UInt64.self) {
            self = .unsigned(integer)
        } else if let double = try? container.decode(Double.self) {
            self = .double(double)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .unsigned(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

/// Lets ``JSONValue/init(any:)`` see through an `Optional` boxed in `Any` (nil is `null`).
private protocol OptionalJSON { var jsonValue: JSONValue { get } }
extension Optional: OptionalJSON {
    fileprivate var jsonValue: JSONValue {
        switch self {
        case .none: return .null
        case .some(let wrapped): return JSONValue(any: wrapped)
        }
    }
}

/// Serialise a JSON object tree ([String: Any] / [Any] of strings, numbers, ``JSONValue/null``)
/// with sorted keys and one trailing newline; an empty array is "[]", as the Encodable form gives.
func jsonText(_ value: Any) throws -> String {
    try jsonText(JSONValue(any: value))
}

/// One key item as a JSON object tree, with exactly the keys of ``ItemJSON`` (so `list --json`
/// can put keys, passwords and certificates in one array).
func itemJSON(_ item: RSAKeyItemAttributes) throws -> [String: Any] {
    let data = try JSONEncoder().encode(ItemJSON(item: item))
    guard case let .object(object) = try JSONDecoder().decode(JSONValue.self, from: data) else { return [:] }
    return object
}

/// Two lower-case hex digits per byte ("0a1b..."), as String(format: "%02x") gave.
func lowercaseHex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef")
    var text = ""
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0f)])
    }
    return text
}
