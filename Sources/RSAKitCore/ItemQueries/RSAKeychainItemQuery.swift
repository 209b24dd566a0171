// What a keychain lookup looked for, or which item an add collided with: the payload of
// RSAError.itemNotFound (errSecItemNotFound) and RSAError.duplicateItem (errSecDuplicateItem).

/// A keychain item class (Apple's `kSecClass` values).
public enum RSAKeychainItemClass: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A key item, public or private (`kSecClassKey`).
    case key
    /// A certificate item (`kSecClassCertificate`).
    case certificate
    /// An identity: a certificate with the private key of its public key (`kSecClassIdentity`).
    /// Not stored as an item of its own: found through its certificate and key.
    case identity
    /// A generic password item (`kSecClassGenericPassword`).
    case genericPassword
    /// An internet password item (`kSecClassInternetPassword`).
    case internetPassword
    /// A certificate revocation list item (RFC 5280 §5), one per issuer (``RSAKeyStore/addCRL(_:at:)``).
    case crl

    /// The class in words: "key", "certificate", "identity", "generic password" or
    /// "internet password".
    public var description: String {
        switch self {
        case .key: return "key"
        case .certificate: return "certificate"
        case .identity: return "identity"
        case .genericPassword: return "generic password"
        case .internetPassword: return "internet password"
        case .crl: return "CRL"
        }
    }
}

/// The item class and the attributes of a keychain query, as the `kSecClass` and attribute
/// keys of a `SecItemCopyMatching` or `SecItemAdd` dictionary: what a lookup looked for
/// (``RSAError/itemNotFound(_:)``) or the unique attributes an add found taken
/// (``RSAError/duplicateItem(_:)``). Only the attributes the call used are set; the others
/// are nil. Never holds a secret (no password value, no key material).
///
/// ``description`` is the noun phrase the error sentences use ("private key with tag
/// \"mail\"", "generic password for service \"s\" and account \"a\""); ``debugDescription``
/// shows the fields (`RSAKeychainItemQuery(itemClass: .genericPassword, service: "s", account: "a")`).
public struct RSAKeychainItemQuery: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The item class (`kSecClass`); nil for a lookup by item id of any class
    /// (``RSAKeyStore/item(id:)``).
    public let itemClass: RSAKeychainItemClass?
    /// For keys: the key class (`kSecAttrKeyClass`); nil when either class would do.
    public let keyClass: RSAKeyClass?
    /// For keys and identities: the application tag (`kSecAttrApplicationTag`) of the key.
    public let applicationTag: String?
    /// For certificates and identities: the certificate label (`kSecAttrLabel`).
    public let label: String?
    /// For generic passwords: the service (`kSecAttrService`).
    public let service: String?
    /// For generic passwords: the account (`kSecAttrAccount`).
    public let account: String?
    /// For internet passwords: the seven unique attributes (server, protocol, port, path,
    /// account, authentication type, security domain).
    public let internetPasswordKey: RSAInternetPasswordKey?
    /// The item id (the persistent reference, `kSecValuePersistentRef`).
    public let itemID: String?
    /// The SHA-256 fingerprint of the public key (SPKI): of the key itself for a key item
    /// (the analogue of `kSecAttrApplicationLabel`), of the certificate's key otherwise.
    public let publicKeyFingerprint: RSAKeyFingerprint?
    /// For certificates and identities: the SHA-256 of the certificate's DER (32 bytes).
    public let certificateFingerprint: [UInt8]?
    /// For certificates: the issuer name, RFC 4514 string (`kSecAttrIssuer`).
    public let issuer: String?
    /// For certificates: the serial number, big-endian bytes (`kSecAttrSerialNumber`).
    public let serialNumber: [UInt8]?

    /// A query from its class and the attributes used (nil: not part of the query).
    public init(
        itemClass: RSAKeychainItemClass?, keyClass: RSAKeyClass? = nil, applicationTag: String? = nil,
        label: String? = nil, service: String? = nil, account: String? = nil,
        internetPasswordKey: RSAInternetPasswordKey? = nil, itemID: String? = nil,
        publicKeyFingerprint: RSAKeyFingerprint? = nil, certificateFingerprint: [UInt8]? = nil,
        issuer: String? = nil, serialNumber: [UInt8]? = nil
    ) {
        self.itemClass = itemClass
        self.keyClass = keyClass
        self.applicationTag = applicationTag
        self.label = label
        self.service = service
        self.account = account
        self.internetPasswordKey = internetPasswordKey
        self.itemID = itemID
        self.publicKeyFingerprint = publicKeyFingerprint
        self.certificateFingerprint = certificateFingerprint
        self.issuer = issuer
        self.serialNumber = serialNumber
    }

    /// A noun phrase naming the item, for sentences: "private key with tag \"mail\"",
    /// "key with item id X", "certificate issued by \"CN=Root\" with serial 5e5e01",
    /// "identity with label \"alice\"", "generic password for service \"s\" and account \"a\"",
    /// "internet password for https://alice@example.com", "CRL issued by \"CN=CA\" with number
    /// 0x1000", "key store item with id X" (no class).
    public var description: String {
        var noun: String
        switch itemClass {
        case .key?: noun = keyClass.map { "\($0) key" } ?? "key"
        case let other?: noun = other.description
        case nil: noun = "key store item"
        }
        if let service {
            noun += " for service \"\(service)\"" + (account.map { " and account \"\($0)\"" } ?? "")
        } else if let account {
            noun += " for account \"\(account)\""
        }
        if let internetPasswordKey { noun += " for \(internetPasswordKey)" }
        if let issuer { noun += " issued by \"\(issuer)\"" }
        var with: [String] = []
        if let applicationTag { with.append("\(itemClass == .identity ? "key tag" : "tag") \"\(applicationTag)\"") }
        if let label { with.append("label \"\(label)\"") }
        // A CRL's "serial" is its CRL number, written as everywhere else for CRLs.
        if let serialNumber {
            with.append(
                itemClass == .crl
                    ? "number 0x\(serialNumber.map(hexByte).joined())" : "serial \(serialNumber.map(hexByte).joined())")
        }
        if let certificateFingerprint {
            with.append(
                "\(itemClass == .identity ? "certificate fingerprint" : "fingerprint") "
                    + "\(certificateFingerprint.map(hexByte).joined())"
            )
        }
        if let publicKeyFingerprint {
            with.append(
                "\(itemClass == .key ? "fingerprint" : "public key fingerprint") \(publicKeyFingerprint.base64String)")
        }
        if let itemID { with.append("\(itemClass == nil ? "id" : "item id") \(itemID)") }
        if !with.isEmpty { noun += " with " + with.joined(separator: " and ") }
        return noun
    }

    /// ``description`` with its indefinite article: "a private key ...", "an internet password ...".
    internal var withArticle: String {
        let text = description
        return ("aeiou".contains(text.first ?? "x") ? "an " : "a ") + text
    }

    /// The type and every attribute set, in Swift syntax, for debugging:
    /// `RSAKeychainItemQuery(itemClass: .key, keyClass: .private, applicationTag: "mail")`.
    public var debugDescription: String {
        var fields: [String] = [itemClass.map { "itemClass: .\($0.rawValue)" } ?? "itemClass: nil"]
        func add(_ name: String, _ value: String?) {
            if let value { fields.append("\(name): \(value)") }
        }
        add("keyClass", keyClass.map { ".\($0.rawValue)" })
        add("applicationTag", applicationTag.map { String(reflecting: $0) })
        add("label", label.map { String(reflecting: $0) })
        add("service", service.map { String(reflecting: $0) })
        add("account", account.map { String(reflecting: $0) })
        add("internetPasswordKey", internetPasswordKey.map { String(reflecting: $0.description) })
        add("itemID", itemID.map { String(reflecting: $0) })
        add("publicKeyFingerprint", publicKeyFingerprint.map { String(reflecting: $0.base64String) })
        add("certificateFingerprint", certificateFingerprint.map { String(reflecting: $0.map(hexByte).joined()) })
        add("issuer", issuer.map { String(reflecting: $0) })
        add("serialNumber", serialNumber.map { String(reflecting: $0.map(hexByte).joined()) })
        return "RSAKeychainItemQuery(" + fields.joined(separator: ", ") + ")"
    }
}

extension RSAKeychainItemQuery {
    /// The key item(s) under application tag `tag`, of `keyClass` (nil: either class).
    public static func key(tag: String, keyClass: RSAKeyClass? = nil) -> RSAKeychainItemQuery {
        RSAKeychainItemQuery(itemClass: .key, keyClass: keyClass, applicationTag: tag)
    }

    /// The generic password (`service`, `account`): its unique attributes.
    public static func genericPassword(service: String, account: String) -> RSAKeychainItemQuery {
        RSAKeychainItemQuery(itemClass: .genericPassword, service: service, account: account)
    }

    /// The internet password with exactly this key: its unique attributes.
    public static func internetPassword(_ key: RSAInternetPasswordKey) -> RSAKeychainItemQuery {
        RSAKeychainItemQuery(itemClass: .internetPassword, internetPasswordKey: key)
    }

    /// The item of class `itemClass` (nil: any class) with this item id.
    public static func item(id: String, itemClass: RSAKeychainItemClass? = nil) -> RSAKeychainItemQuery {
        RSAKeychainItemQuery(itemClass: itemClass, itemID: id)
    }
}
