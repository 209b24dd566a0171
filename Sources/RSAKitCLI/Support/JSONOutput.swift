import Foundation
import RSAKit

/// Serialise a JSON object tree ([String: Any] / [Any] of strings, numbers, NSNull) with
/// sorted keys and one trailing newline; an empty array is "[]", as the Encodable form gives.
func jsonText(_ value: Any) throws -> String {
    if let array = value as? [Any], array.isEmpty { return "[]\n" }
    let data = try JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self) + "\n"
}

/// One key item as a JSON object tree, with exactly the keys of ``ItemJSON`` (so `list --json`
/// can put keys, passwords and certificates in one array).
func itemJSON(_ item: RSAKeyItemAttributes) throws -> [String: Any] {
    let data = try JSONEncoder().encode(ItemJSON(item: item))
    return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
}
