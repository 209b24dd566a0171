import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The attributes of one generic password item (Apple's `kSecClassGenericPassword`), as
/// `SecItemCopyMatching` with `kSecReturnAttributes` reports them. The value itself is
/// returned only on request (``RSAKeyStore/genericPasswordValue(service:account:)``).
///
/// Two items never share (``service``, ``account``), compared byte for byte.
public struct RSAGenericPasswordAttributes: Sendable, Hashable, CustomStringConvertible {
    /// The service (`kSecAttrService`): 1 to 255 bytes of UTF-8.
    public let service: String
    /// The account (`kSecAttrAccount`): 0 to 255 bytes of UTF-8.
    public let account: String
    /// A free-text label (`kSecAttrLabel`), or nil.
    public let label: String?
    /// A free-text comment (`kSecAttrComment`), or nil.
    public let comment: String?
    /// When the item was added (`kSecAttrCreationDate`), to the millisecond, UTC.
    public let creationDate: Date
    /// When the value or an attribute last changed (`kSecAttrModificationDate`).
    public let modificationDate: Date
    /// The value's length in bytes (public: lengths are not sealed).
    public let valueByteCount: Int
    /// The stable item id (persistent reference): changes only when the item is deleted and
    /// added again, never on update.
    public let itemID: String
    /// The access group (`kSecAttrAccessGroup`): ``RSAKeyStore/defaultAccessGroup`` for an
    /// item added without one and for every item of a store written before access groups.
    public internal(set) var accessGroup: String = RSAKeyStore.defaultAccessGroup

    /// Build attributes (the store does this; public for tests and tools).
    public init(
        service: String, account: String, label: String?, comment: String?, creationDate: Date,
        modificationDate: Date, valueByteCount: Int, itemID: String
    ) {
        self.service = service
        self.account = account
        self.label = label
        self.comment = comment
        self.creationDate = creationDate
        self.modificationDate = modificationDate
        self.valueByteCount = valueByteCount
        self.itemID = itemID
    }

    /// One line for logs: id, service, account, label. Never the value.
    public var description: String {
        "generic password item \(itemID): service \"\(service)\", account \"\(account)\""
            + (label.map { ", label \"\($0)\"" } ?? "")
    }
}

/// A generic password item file:
///
///   rsakit password item 1
///   {"account":"alice","creationDate":"...","format":1,"itemID":"...","service":"...",...}
///   value:<base64 of the value>            (unprotected store)
///   sealed:<base64 of nonce || ciphertext || tag>   (protected store)
internal struct StorePasswordMetadata: Codable, Equatable {
    static let magicLine = "rsakit password item 1"
    var format: Int = 1
    var itemID: String
    var service: String
    var account: String
    var label: String?
    var comment: String?
    var creationDate: String
    var modificationDate: String
    var valueByteCount: Int
    /// An internet password's attributes (its `service` is then the server); absent for a
    /// generic password.
    var internet: StoreInternetAttributes?
    /// The access group; absent for the default group.
    var accessGroup: String? = nil

    /// The associated data of this item's sealed value: ("password", service, account) or
    /// ("internet-password", server, protocol, port, path, authentication type, domain, account).
    var associatedData: [UInt8] {
        if let internet, let key = try? internet.key(account: account) {
            return StoreSealing.associatedData(kind: "internet-password", identity: key.fields, itemID: itemID)
        }
        return StoreSealing.associatedData(kind: "password", identity: [service, account], itemID: itemID)
    }

    /// The file-name hash of this item in its group (see
    /// ``StoreLayout/passwordHash(service:account:group:)`` and
    /// ``StoreLayout/internetPasswordHash(_:group:)``); nil for malformed internet attributes
    /// or an access group that is not a valid name.
    var fileHash: String? {
        guard let group = RSAKeyStore.checkedGroup(accessGroup) else { return nil }
        guard let internet else { return StoreLayout.passwordHash(service: service, account: account, group: group) }
        return (try? internet.key(account: account)).map { StoreLayout.internetPasswordHash($0, group: group) }
    }

    /// The attributes of an internet password item; nil for a generic one or bad dates.
    func internetAttributes() -> RSAInternetPasswordAttributes? {
        guard let internet, let key = try? internet.key(account: account),
            let created = StoreItemRecord.parseDate(creationDate),
            let modified = StoreItemRecord.parseDate(modificationDate)
        else { return nil }
        var attributes = RSAInternetPasswordAttributes(
            key: key, label: label, comment: comment, creationDate: StoreItemRecord.date(milliseconds: created),
            modificationDate: StoreItemRecord.date(milliseconds: modified), valueByteCount: valueByteCount,
            itemID: itemID)
        guard let group = RSAKeyStore.checkedGroup(accessGroup) else { return nil }
        attributes.accessGroup = group
        return attributes
    }

    func attributes() -> RSAGenericPasswordAttributes? {
        guard let created = StoreItemRecord.parseDate(creationDate),
            let modified = StoreItemRecord.parseDate(modificationDate)
        else { return nil }
        var attributes = RSAGenericPasswordAttributes(
            service: service, account: account, label: label, comment: comment,
            creationDate: StoreItemRecord.date(milliseconds: created),
            modificationDate: StoreItemRecord.date(milliseconds: modified),
            valueByteCount: valueByteCount, itemID: itemID)
        guard let group = RSAKeyStore.checkedGroup(accessGroup) else { return nil }
        attributes.accessGroup = group
        return attributes
    }
}

/// The secret line of a password file (or a sealed private key): plain or sealed bytes.
internal enum StoreSecretLine {
    static let plainPrefix = Array("value:".utf8)
    static let sealedPrefix = Array("sealed:".utf8)

    /// "value:" or "sealed:", base64, "\n".
    static func encode(_ bytes: [UInt8], sealed: Bool) -> [UInt8] {
        (sealed ? sealedPrefix : plainPrefix) + Array(Base64.encode(bytes).utf8) + [0x0A]
    }

    /// (sealed?, bytes) of a secret line (without its "\n").
    static func decode(_ line: ArraySlice<UInt8>) throws -> (sealed: Bool, bytes: [UInt8]) {
        let sealed: Bool
        var text: [UInt8]
        if line.starts(with: plainPrefix) {
            sealed = false
            text = Array(line.dropFirst(plainPrefix.count))
        } else if line.starts(with: sealedPrefix) {
            sealed = true
            text = Array(line.dropFirst(sealedPrefix.count))
        } else {
            throw StoreDamage("the value line is missing")
        }
        defer { wipe(&text) }
        guard let bytes = try? Base64.decode(text, strict: true) else {
            throw StoreDamage("the value line is not valid base64")
        }
        return (sealed, bytes)
    }
}
