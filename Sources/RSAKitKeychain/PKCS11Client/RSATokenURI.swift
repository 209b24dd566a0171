// RFC 7512 PKCS#11 URIs, the part rsakit reads: `pkcs11:token=LABEL;serial=S;object=L;id=%01`
// with the query `?module-path=/path/to/module.so`. Other attributes are accepted and ignored.

import RSAKitCore
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A parsed RFC 7512 `pkcs11:` URI naming a token (and optionally one object on it).
///
/// rsakit loads the module named by the `module-path` query attribute with `dlopen`
/// (p11-kit's registry of modules by `module-name` is not consulted); without one, the
/// `RSAKIT_PKCS11_MODULE` environment variable names it. Path attributes are percent-decoded.
public struct RSATokenURI: Sendable, Equatable, CustomStringConvertible {
    /// The PKCS#11 module's file (`module-path`), for example `/usr/lib/softhsm/libsofthsm2.so`.
    public var modulePath: String
    /// The token label (`token=`, CK_TOKEN_INFO.label without its space padding), or nil for
    /// any token.
    public var tokenLabel: String?
    /// The token serial number (`serial=`), or nil for any.
    public var tokenSerial: String?
    /// The object label (`object=`, CKA_LABEL), or nil.
    public var objectLabel: String?
    /// The object id (`id=`, CKA_ID bytes), or nil.
    public var objectID: [UInt8]?

    /// Parse `text`.
    ///
    /// - Parameter text: a URI starting with `pkcs11:` (RFC 7512 §2.3).
    /// - Throws: `RSAError.invalidAttribute` when it does not start with `pkcs11:`, has a bad
    ///   percent escape, or names no module (no `module-path` and no `RSAKIT_PKCS11_MODULE`).
    public init(_ text: String) throws {
        guard text.hasPrefix("pkcs11:") else {
            throw RSAError.invalidAttribute(reason: "a token URI starts with 'pkcs11:'")
        }
        let rest = text.dropFirst("pkcs11:".count)
        let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var module: String?
        var token: String?, serial: String?, object: String?, id: [UInt8]?
        for attribute in parts[0].split(separator: ";") where !attribute.isEmpty {
            let (name, value) = try RSATokenURI.split(attribute)
            switch name {
            case "token": token = String(decoding: value, as: UTF8.self)
            case "serial": serial = String(decoding: value, as: UTF8.self)
            case "object": object = String(decoding: value, as: UTF8.self)
            case "id": id = value
            default: break
            }
        }
        if parts.count == 2 {
            for attribute in parts[1].split(separator: "&") where !attribute.isEmpty {
                let (name, value) = try RSATokenURI.split(attribute)
                if name == "module-path" { module = String(decoding: value, as: UTF8.self) }
            }
        }
        if module == nil, let fromEnvironment = getenv("RSAKIT_PKCS11_MODULE").map({ String(cString: $0) }),
            !fromEnvironment.isEmpty
        {
            module = fromEnvironment
        }
        guard let module else {
            throw RSAError.invalidAttribute(
                reason:
                    "the token URI names no module (add ?module-path=/path/to/module.so or set RSAKIT_PKCS11_MODULE)")
        }
        self.init(modulePath: module, tokenLabel: token, tokenSerial: serial, objectLabel: object, objectID: id)
    }

    /// A URI from its parts.
    public init(
        modulePath: String, tokenLabel: String?, tokenSerial: String? = nil, objectLabel: String? = nil,
        objectID: [UInt8]? = nil
    ) {
        self.modulePath = modulePath
        self.tokenLabel = tokenLabel
        self.tokenSerial = tokenSerial
        self.objectLabel = objectLabel
        self.objectID = objectID
    }

    /// The URI text, attributes percent-encoded where RFC 7512 requires it.
    public var description: String {
        var path: [String] = []
        if let tokenLabel { path.append("token=" + RSATokenURI.encode(Array(tokenLabel.utf8))) }
        if let tokenSerial { path.append("serial=" + RSATokenURI.encode(Array(tokenSerial.utf8))) }
        if let objectLabel { path.append("object=" + RSATokenURI.encode(Array(objectLabel.utf8))) }
        if let objectID { path.append("id=" + objectID.map { "%" + RSATokenURI.hex($0) }.joined()) }
        return "pkcs11:" + path.joined(separator: ";") + "?module-path=" + RSATokenURI.encode(Array(modulePath.utf8))
    }

    private static func split(_ attribute: Substring) throws -> (String, [UInt8]) {
        guard let equals = attribute.firstIndex(of: "=") else {
            throw RSAError.invalidAttribute(reason: "token URI attribute '\(attribute)' has no '='")
        }
        return (String(attribute[..<equals]), try decode(attribute[attribute.index(after: equals)...]))
    }

    /// Percent-decoding (RFC 3986 §2.1).
    private static func decode(_ text: Substring) throws -> [UInt8] {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            guard byte == 0x25 else { out.append(byte); continue }
            guard bytes.count >= 2, let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
            else {
                throw RSAError.invalidAttribute(reason: "the token URI has a bad percent escape")
            }
            out.append(value)
            bytes = bytes.dropFirst(2)
        }
        return out
    }

    private static func encode(_ bytes: [UInt8]) -> String {
        var out = ""
        for byte in bytes {
            let c = Character(Unicode.Scalar(byte))
            if byte < 0x80 && (c.isLetter || c.isNumber || "-._~/".contains(c)) {
                out.append(c)
            } else {
                out += "%" + hex(byte)
            }
        }
        return out
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}
