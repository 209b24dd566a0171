// Every item class together: listing, lookup and deletion by item id (persistent reference).

import RSAKitCore
import RSAKitPKI

extension RSAKeyStore {
    /// Every item of every class, and every item file that could not be read (listed, not
    /// thrown). Reads every item file; needs no passphrase.
    ///
    /// - Throws: `RSAError.storeIOError` when a store folder cannot be listed.
    public func allKeychainItems() throws -> RSAKeychainListing {
        try allKeychainItemsWithPublicKeys().listing
    }

    /// ``allKeychainItems()`` and the public key of every listed key item, by
    /// ``RSAKeyItemAttributes/itemID`` (for a private item, its public half: readable without
    /// the passphrase in a protected store), from the same one reading of each item file
    /// (reading the keys again by tag would parse each item a second and third time). For the
    /// keys and the parsed certificates alone, with a stamp to tell when to read again, see
    /// ``snapshot()``.
    ///
    /// - Returns: the listing, exactly as ``allKeychainItems()`` gives it, and the keys.
    /// - Throws: as ``allKeychainItems()``.
    public func allKeychainItemsWithPublicKeys() throws -> (listing: RSAKeychainListing, publicKeys: [String: RSAPublicKey]) {
        let (keys, publicKeys) = try allItemsWithPublicKeys()
        var passwords: [RSAGenericPasswordAttributes] = []
        var internetPasswords: [RSAInternetPasswordAttributes] = []
        var certificates: [RSACertificateAttributes] = []
        var problems = keys.problems
        try withReadLock {
            for hash in try passwordFileHashes() {
                do {
                    guard let loaded = try loadPassword(hash: hash) else { continue }
                    if let internet = loaded.metadata.internetAttributes() {
                        internetPasswords.append(internet)
                    } else {
                        passwords.append(loaded.attributes)
                    }
                } catch let error as RSAError {
                    problems.append(RSAKeyStoreProblem(path: layout.absolute(StoreLayout.passwordPath(hash: hash)), error: error))
                }
            }
            for hash in try certificateFileHashes() {
                do {
                    if let loaded = try loadCertificate(hash: hash) { certificates.append(loaded.attributes) }
                } catch let error as RSAError {
                    problems.append(RSAKeyStoreProblem(path: layout.absolute(StoreLayout.certificatePath(hash: hash)), error: error))
                }
            }
        }
        passwords.sort {
            if !$0.service.utf8.elementsEqual($1.service.utf8) { return $0.service.utf8.lexicographicallyPrecedes($1.service.utf8) }
            return $0.account.utf8.lexicographicallyPrecedes($1.account.utf8)
        }
        internetPasswords.sort { $0.key.description.utf8.lexicographicallyPrecedes($1.key.description.utf8) }
        return (RSAKeychainListing(
            keys: keys.items, passwords: passwords, internetPasswords: internetPasswords,
            certificates: RSAKeyStore.sortedCertificates(certificates),
            problems: problems.sorted { $0.path < $1.path }), publicKeys)
    }

    /// The item with this item id, of any class (`kSecValuePersistentRef`). Opens one file.
    ///
    /// - Throws: `RSAError.itemNotFound` with ``RSAKeychainItemQuery/item(id:itemClass:)``
    ///   (no class: the lookup is by id alone) when no item has this id (also for ids of deleted
    ///   items and strings that are not ids); `RSAError.damagedItem`; `RSAError.storeIOError`.
    public func keychainItem(id: String) throws -> RSAKeychainItem {
        let notFound = RSAError.itemNotFound(.item(id: id))
        switch StoreLayout.parseAnyItemID(id) {
        case .key?:
            do {
                return .key(try item(id: id))
            } catch RSAError.itemNotFound {
                throw notFound
            }
        case let .password(hash)?:
            guard let loaded = try withReadLock({ try loadPassword(hash: hash) }), loaded.attributes.itemID == id else {
                throw notFound
            }
            if let internet = loaded.metadata.internetAttributes() { return .internetPassword(internet) }
            return .genericPassword(loaded.attributes)
        case let .certificate(hash)?:
            guard let loaded = try withReadLock({ try loadCertificate(hash: hash) }), loaded.metadata.itemID == id else {
                throw notFound
            }
            return .certificate(loaded.attributes)
        case .crl?:
            // NOTE: CRL items are not RSAKeychainItem values (their API is crls() and
            // deleteCRLs); an id of one is "not found" here, as for any other class's lookup.
            throw notFound
        case nil:
            throw notFound
        }
    }

    /// Delete the item with this id, of any class (`SecItemDelete` with
    /// `kSecValuePersistentRef`). Deleting one half of a key pair leaves the other.
    ///
    /// - Throws: `RSAError.itemNotFound` as ``keychainItem(id:)``; `RSAError.storeIOError`.
    public func deleteItem(id: String) throws {
        switch try keychainItem(id: id) {
        case let .key(attributes):
            try delete(tag: attributes.applicationTag, keyClass: attributes.keyClass)
        case let .genericPassword(attributes):
            try deleteGenericPassword(service: attributes.service, account: attributes.account)
        case let .internetPassword(attributes):
            try deleteInternetPassword(attributes.key)
        case .certificate:
            try deleteCertificate(itemID: id)
        }
    }
}

/// One keychain item of any class, as ``RSAKeyStore/keychainItem(id:)`` returns it.
public enum RSAKeychainItem: Sendable, Hashable {
    /// A key item (`kSecClassKey`).
    case key(RSAKeyItemAttributes)
    /// A generic password item (`kSecClassGenericPassword`).
    case genericPassword(RSAGenericPasswordAttributes)
    /// An internet password item (`kSecClassInternetPassword`).
    case internetPassword(RSAInternetPasswordAttributes)
    /// A certificate item (`kSecClassCertificate`).
    case certificate(RSACertificateAttributes)

    /// The item's id (persistent reference).
    public var itemID: String {
        switch self {
        case let .key(a): return a.itemID
        case let .genericPassword(a): return a.itemID
        case let .internetPassword(a): return a.itemID
        case let .certificate(a): return a.itemID
        }
    }

    /// The class name rsakit prints: "key", "password", "internet password" or "certificate".
    public var className: String {
        switch self {
        case .key: return "key"
        case .genericPassword: return "password"
        case .internetPassword: return "internet password"
        case .certificate: return "certificate"
        }
    }
}

/// Everything ``RSAKeyStore/allKeychainItems()`` found.
public struct RSAKeychainListing: Sendable {
    /// Every readable key item, sorted by application tag, public before private.
    public let keys: [RSAKeyItemAttributes]
    /// Every readable generic password, sorted by service then account (UTF-8 bytes).
    public let passwords: [RSAGenericPasswordAttributes]
    /// Every readable internet password, sorted by its key's URL form.
    public let internetPasswords: [RSAInternetPasswordAttributes]
    /// Every readable certificate, sorted by label.
    public let certificates: [RSACertificateAttributes]
    /// Every item file that could not be read, sorted by path.
    public let problems: [RSAKeyStoreProblem]
}
