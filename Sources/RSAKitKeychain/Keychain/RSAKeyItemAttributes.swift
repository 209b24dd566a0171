import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The attributes of one key store item, as `SecItemCopyMatching` with
/// `kSecReturnAttributes` reports them.
///
/// Two items never share (``applicationTag``, ``keyClass``). A key pair stored under one tag
/// is two items (public and private) with the same ``fingerprint``.
public struct RSAKeyItemAttributes: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Public or private (`kSecAttrKeyClass`).
    public let keyClass: RSAKeyClass
    /// The application tag (`kSecAttrApplicationTag`): 1 to 255 bytes of UTF-8, compared
    /// byte for byte (no Unicode normalisation, no case folding).
    public let applicationTag: String
    /// A free-text label (`kSecAttrLabel`), at most ``RSAKeyStore/maximumLabelByteCount``
    /// bytes of UTF-8, or nil.
    public let label: String?
    /// The bit length of the modulus n (`kSecAttrKeySizeInBits`), for example 2048.
    public let keySizeInBits: Int
    /// SHA-256 of the public key's SubjectPublicKeyInfo DER (32 bytes), the same for both
    /// halves of a pair (`kSecAttrApplicationLabel` plays this part on Apple platforms).
    public let fingerprint: RSAKeyFingerprint
    /// When the item was added, to the millisecond (UTC).
    public let creationDate: Date
    /// The item's stable identifier, the analogue of a persistent reference
    /// (`kSecValuePersistentRef`): an opaque ASCII string that changes only when the item
    /// is replaced by a new one, never when its label changes.
    public let itemID: String
    /// The access group (`kSecAttrAccessGroup`): ``RSAKeyStore/defaultAccessGroup`` for an
    /// item added without one and for every item of a store written before access groups.
    public internal(set) var accessGroup: String = RSAKeyStore.defaultAccessGroup
    /// The key's RSASSA-PSS restriction when it is an id-RSASSA-PSS key (RFC 4055), nil for
    /// an rsaEncryption key. Part of the key, so of ``fingerprint`` too; not compared by `==`.
    public let pssRestriction: RSAPSSKeyRestriction?
    /// For a private item whose key lives on a PKCS#11 token: where; nil for a key held in
    /// the store (and for every public item). Not compared by `==`.
    public let token: RSATokenReference?

    /// Build attributes (the store does this; public for tests and tools).
    public init(
        keyClass: RSAKeyClass, applicationTag: String, label: String?, keySizeInBits: Int,
        fingerprint: RSAKeyFingerprint, creationDate: Date, itemID: String,
        pssRestriction: RSAPSSKeyRestriction? = nil, token: RSATokenReference? = nil
    ) {
        self.token = token
        self.pssRestriction = pssRestriction
        self.keyClass = keyClass
        self.applicationTag = applicationTag
        self.label = label
        self.keySizeInBits = keySizeInBits
        self.fingerprint = fingerprint
        self.creationDate = creationDate
        self.itemID = itemID
    }

    /// Equality compares the tag and label byte for byte (Swift's `==` on strings would
    /// treat canonically equivalent forms such as "e\u{301}" and "\u{e9}" as equal).
    public static func == (a: RSAKeyItemAttributes, b: RSAKeyItemAttributes) -> Bool {
        a.keyClass == b.keyClass
            && a.applicationTag.utf8.elementsEqual(b.applicationTag.utf8)
            && a.label.map { Array($0.utf8) } == b.label.map { Array($0.utf8) }
            && a.keySizeInBits == b.keySizeInBits
            && a.fingerprint == b.fingerprint
            && a.creationDate == b.creationDate
            && a.itemID == b.itemID
            && a.accessGroup == b.accessGroup
    }

    /// Hashes the item id and the tag's UTF-8 bytes (consistent with `==`).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(itemID)
        hasher.combine(Array(applicationTag.utf8))
    }

    /// One line for logs: class, id, tag, size, fingerprint, label. No key material.
    public var description: String {
        "\(keyClass) key item \(itemID): tag \"\(applicationTag)\", \(keySizeInBits) bits, "
            + "\(fingerprint.base64String)" + (label.map { ", label \"\($0)\"" } ?? "")
            + (token.map { ", on \($0)" } ?? "")
    }
}

/// A damaged or unreadable item met while listing the store. The rest of the store is
/// listed regardless.
public struct RSAKeyStoreProblem: Sendable, Equatable, CustomStringConvertible {
    /// The item file's path.
    public let path: String
    /// The application tag, when the file said it (nil when its metadata is unreadable).
    public let applicationTag: String?
    /// What is wrong, as a lower-case phrase.
    public let reason: String
    /// The error a lookup of this item throws: `RSAError.damagedItem`, or
    /// `RSAError.insecureStorePermissions` for a private item readable by group or others.
    public let error: RSAError

    /// The description of ``error``.
    public var description: String { error.description }
}

/// Everything ``RSAKeyStore/allKeyItems()`` found.
public struct RSAKeyItemListing: Sendable {
    /// Every readable item, sorted by application tag (UTF-8 bytes), public before private.
    public let items: [RSAKeyItemAttributes]
    /// Every item that could not be read, sorted by path.
    public let problems: [RSAKeyStoreProblem]
}
