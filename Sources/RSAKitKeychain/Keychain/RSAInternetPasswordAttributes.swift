import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    /// The access group (`kSecAttrAccessGroup`): ``RSAKeyStore/defaultAccessGroup`` for an
    /// item added without one and for every item of a store written before access groups.
    public internal(set) var accessGroup: String = RSAKeyStore.defaultAccessGroup

    /// Build attributes (the store does this; public for tests and tools).
    public init(
        key: RSAInternetPasswordKey, label: String?, comment: String?, creationDate: Date,
        modificationDate: Date, valueByteCount: Int, itemID: String
    ) {
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
    public init(
        server: String? = nil, protocol scheme: String? = nil, port: Int? = nil, path: String? = nil,
        account: String? = nil, authenticationType: String? = nil, securityDomain: String? = nil
    ) {
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
        func same(_ wanted: String?, _ value: String) -> Bool {
            wanted.map { $0.utf8.elementsEqual(value.utf8) } ?? true
        }
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
        try RSAInternetPasswordKey(
            server: server, protocol: self.protocol, port: port, path: path, account: account,
            authenticationType: authenticationType, securityDomain: securityDomain)
    }
}
