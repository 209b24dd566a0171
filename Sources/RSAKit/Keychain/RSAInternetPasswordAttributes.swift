#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What makes an internet password unique (Apple's `kSecClassInternetPassword` primary key):
/// server, protocol, port, path, account, authentication type and security domain, each
/// compared byte for byte (the server case-folded to ASCII lower case, as DNS names are).
public struct RSAInternetPasswordKey: Sendable, Hashable, CustomStringConvertible {
    /// The host name or address (`kSecAttrServer`): 1 to 255 bytes, stored in ASCII lower case.
    public let server: String
    /// The protocol (`kSecAttrProtocol`) as a URL scheme in lower case ("https", "imap", "ssh"),
    /// or "" for none: 0 to 32 bytes of letters, digits, "+", "-", ".".
    public let `protocol`: String
    /// The port (`kSecAttrPort`), 0 for none (the protocol's default), else 1 to 65535.
    public let port: Int
    /// The path (`kSecAttrPath`), "" for none; at most 255 bytes.
    public let path: String
    /// The account (`kSecAttrAccount`), "" for none; at most 255 bytes.
    public let account: String
    /// The authentication type (`kSecAttrAuthenticationType`: "default", "httpBasic",
    /// "httpDigest", "htmlForm", "ntlm"...), "" for none; at most 255 bytes.
    public let authenticationType: String
    /// The security domain (`kSecAttrSecurityDomain`, an HTTP realm for example), "" for none.
    public let securityDomain: String

    /// A key from its attributes.
    /// - Throws: `RSAError.invalidAttribute` naming the attribute that is empty (server),
    ///   too long, or malformed (protocol, port).
    public init(server: String, protocol scheme: String = "", port: Int = 0, path: String = "", account: String = "",
                authenticationType: String = "", securityDomain: String = "") throws {
        self.server = server.lowercased()
        self.protocol = scheme.lowercased()
        self.port = port
        self.path = path
        self.account = account
        self.authenticationType = authenticationType
        self.securityDomain = securityDomain
        try validate()
    }

    /// A key from a URL, `scheme://[account@]host[:port][/path]` (RFC 3986 §3): the
    /// protocol from the scheme, the account from the user part (percent-decoded; a password
    /// in the URL is refused, it belongs in the item's value), the path without its leading "/".
    /// - Throws: `RSAError.invalidAttribute` for a URL without scheme or host, with a
    ///   password, or an invalid port.
    public init(url text: String, authenticationType: String = "", securityDomain: String = "") throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
              let host = components.host, !host.isEmpty else {
            throw RSAError.invalidAttribute(reason: "the URL \"\(text)\" has no scheme://host")
        }
        guard components.password == nil else {
            throw RSAError.invalidAttribute(reason: "the URL holds a password; give the value on standard input, never in a URL")
        }
        var path = components.path
        if path.hasPrefix("/") { path.removeFirst() }
        try self.init(server: host, protocol: scheme, port: components.port ?? 0, path: path,
                      account: components.user ?? "", authenticationType: authenticationType,
                      securityDomain: securityDomain)
    }

    /// "https://alice@example.com:8443/repo" (with ";auth=..." and ";domain=..." when set).
    public var description: String {
        var text = (self.protocol.isEmpty ? "" : self.protocol + "://") + (account.isEmpty ? "" : account + "@") + server
        if port != 0 { text += ":\(port)" }
        if !path.isEmpty { text += "/" + path }
        if !authenticationType.isEmpty { text += ";auth=" + authenticationType }
        if !securityDomain.isEmpty { text += ";domain=" + securityDomain }
        return text
    }

    private func validate() throws {
        guard !server.utf8.isEmpty else { throw RSAError.invalidAttribute(reason: "the server is empty") }
        for (name, value) in [("server", server), ("path", path), ("account", account),
                              ("authentication type", authenticationType), ("security domain", securityDomain)]
        where value.utf8.count > RSAKeyStore.maximumServiceByteCount {
            throw RSAError.invalidAttribute(reason: "the \(name) is \(value.utf8.count) bytes of UTF-8; at most \(RSAKeyStore.maximumServiceByteCount) are allowed")
        }
        let schemeCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789+-.".utf8)
        guard self.protocol.utf8.count <= 32, self.protocol.utf8.allSatisfy(schemeCharacters.contains) else {
            throw RSAError.invalidAttribute(reason: "the protocol \"\(self.protocol)\" is not a URL scheme (letters, digits, +, -, .; at most 32)")
        }
        guard (0...65535).contains(port) else {
            throw RSAError.invalidAttribute(reason: "the port \(port) is not 0 (none) or 1 to 65535")
        }
    }

    /// The fields in a fixed order, for hashing and associated data.
    internal var fields: [String] { [server, self.protocol, String(port), path, authenticationType, securityDomain, account] }
}

/// The attributes of one internet password item (Apple's `kSecClassInternetPassword`). The
/// value is returned only on request (``RSAKeyStore/internetPasswordValue(_:)``).
public struct RSAInternetPasswordAttributes: Sendable, Hashable, CustomStringConvertible {
    /// The item's unique attributes.
    public let key: RSAInternetPasswordKey
    /// A free-text label (`kSecAttrLabel`), or nil.
    public let label: String?
    /// A free-text comment (`kSecAttrComment`), or nil.
    public let comment: String?
    /// When the item was added (`kSecAttrCreationDate`), to the millisecond, UTC.
    public let creationDate: Date
    /// When the value or an attribute last changed (`kSecAttrModificationDate`).
    public let modificationDate: Date
    /// The value's length in bytes.
    public let valueByteCount: Int
    /// The stable item id (persistent reference).
    public let itemID: String

    /// Build attributes (the store does this; public for tests and tools).
    public init(key: RSAInternetPasswordKey, label: String?, comment: String?, creationDate: Date,
                modificationDate: Date, valueByteCount: Int, itemID: String) {
        self.key = key
        self.label = label
        self.comment = comment
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.valueByteCount = valueByteCount
        self.itemID = itemID
    }

    /// One line for logs: id and key. Never the value.
    public var description: String { "internet password item \(itemID): \(key)" }
}

/// Which internet passwords to find (`SecItemCopyMatching` with `kSecClassInternetPassword`):
/// every attribute given must equal the item's; nil matches any value.
public struct RSAInternetPasswordQuery: Sendable, Hashable {
    public var server: String?
    public var `protocol`: String?
    public var port: Int?
    public var path: String?
    public var account: String?
    public var authenticationType: String?
    public var securityDomain: String?

    /// A query; every attribute optional (the server compared in lower case).
    public init(server: String? = nil, protocol scheme: String? = nil, port: Int? = nil, path: String? = nil,
                account: String? = nil, authenticationType: String? = nil, securityDomain: String? = nil) {
        self.server = server?.lowercased()
        self.protocol = scheme?.lowercased()
        self.port = port
        self.path = path
        self.account = account
        self.authenticationType = authenticationType
        self.securityDomain = securityDomain
    }

    /// Whether `key` has every attribute this query names.
    public func matches(_ key: RSAInternetPasswordKey) -> Bool {
        func same(_ wanted: String?, _ value: String) -> Bool { wanted.map { $0.utf8.elementsEqual(value.utf8) } ?? true }
        return same(server, key.server) && same(self.protocol, key.protocol) && (port.map { $0 == key.port } ?? true)
            && same(path, key.path) && same(account, key.account) && same(authenticationType, key.authenticationType)
            && same(securityDomain, key.securityDomain)
    }
}

/// The internet attributes in a password item's metadata record (absent for a generic password).
internal struct StoreInternetAttributes: Codable, Equatable {
    var server: String
    var `protocol`: String
    var port: Int
    var path: String
    var authenticationType: String
    var securityDomain: String

    init(_ key: RSAInternetPasswordKey) {
        server = key.server
        self.protocol = key.protocol
        port = key.port
        path = key.path
        authenticationType = key.authenticationType
        securityDomain = key.securityDomain
    }

    func key(account: String) throws -> RSAInternetPasswordKey {
        try RSAInternetPasswordKey(server: server, protocol: self.protocol, port: port, path: path, account: account,
                                   authenticationType: authenticationType, securityDomain: securityDomain)
    }
}
