// Every item class together: listing, lookup and deletion by item id (persistent reference).

import RSAKitCore
import RSAKitPKI

extension RSAKeyStore {
    /// Every item of every class (`SecItemCopyMatching` with `kSecMatchLimitAll` over each
    /// class), and every item file that could not be read. Reads every item file; needs no
    /// passphrase.
    ///
    /// A listing never throws for a damaged item and never drops one: each is in
    /// ``RSAKeychainListing/problems`` with its path and the error a lookup of it throws, and
    /// the other items are listed as usual.
    ///
    /// - Returns: the items of each class, sorted (see ``RSAKeychainListing``), and the problems.
    /// - Throws: `RSAError.storeIOError` when a store folder cannot be listed.
    public func allItems() throws -> RSAKeychainListing {
        try allItemsWithPublicKeys().listing
    }

    /// ``allItems()`` and the public key of every listed key item, by
    /// ``RSAKeyItemAttributes/itemID`` (for a private item, its public half: readable without
    /// the passphrase in a protected store), from the same one reading of each item file
    /// (reading the keys again by tag would parse each item a second and third time). For the
    /// keys and the parsed certificates alone, with a stamp to tell when to read again, see
    /// ``snapshot()``.
    ///
    /// - Returns: the listing, exactly as ``allItems()`` gives it, and the keys.
    /// - Throws: as ``allItems()``.
    public func allItemsWithPublicKeys() throws -> (listing: RSAKeychainListing, publicKeys: [String: RSAPublicKey]) {
        let (keys, publicKeys) = try allKeyItemsWithPublicKeys()
        var passwords: [RSAGenericPasswordAttributes] = []
        var internetPasswords: [RSAInternetPasswordAttributes] = []
        var certificates: [RSACertificateAttributes] = []
        var crls: [RSACRLAttributes] = []
        var problems = keys.problems
        try withReadLock {
            for loaded in readRecords(
                try passwordFileHashes(), path: StoreLayout.passwordPath, problems: &problems,
                { try loadPassword(hash: $0) })
            {
                if let internet = loaded.metadata.internetAttributes() {
                    internetPasswords.append(internet)
                } else {
                    passwords.append(loaded.attributes)
                }
            }
            certificates = readRecords(
                try certificateFileHashes(), path: StoreLayout.certificatePath, problems: &problems,
                { try loadCertificate(hash: $0) }
            ).map(\.attributes)
            crls = readRecords(try crlFileHashes(), path: StoreLayout.crlPath, problems: &problems, loadCRL).map(
                \.attributes)
        }
        passwords.sort {
            if !$0.service.utf8.elementsEqual($1.service.utf8) {
                return $0.service.utf8.lexicographicallyPrecedes($1.service.utf8)
            }
            return $0.account.utf8.lexicographicallyPrecedes($1.account.utf8)
        }
        internetPasswords.sort { $0.key.description.utf8.lexicographicallyPrecedes($1.key.description.utf8) }
        return (
            RSAKeychainListing(
                keys: keys.items, passwords: passwords, internetPasswords: internetPasswords,
                certificates: RSAKeyStore.sortedCertificates(certificates), crls: RSAKeyStore.sortedCRLs(crls),
                problems: problems.sorted { $0.path < $1.path }), publicKeys
        )
    }

    /// The record files of `hashes` that read, in order; each that does not is appended to
    /// `problems` with its path (`path` of the hash, relative) instead. Call under a lock.
    func readRecords<Loaded>(
        _ hashes: [String], path: (String) -> String, problems: inout [RSAKeyStoreProblem],
        _ load: (String) throws -> Loaded?
    ) -> [Loaded] {
        hashes.compactMap { hash in
            do {
                return try load(hash)
            } catch {
                problems.append(
                    RSAKeyStoreProblem(
                        path: layout.absolute(path(hash)),
                        error: error as? RSAError
                            ?? RSAError.storeIOError(path: layout.absolute(path(hash)), reason: "\(error)")))
                return nil
            }
        }
    }

    /// The item with this item id, of any class (`SecItemCopyMatching` with
    /// `kSecValuePersistentRef` and `kSecReturnAttributes`). Opens one file.
    ///
    /// - Throws: `RSAError.itemNotFound` with ``RSAKeychainItemQuery/item(id:itemClass:)``
    ///   (no class: the lookup is by id alone) when no item has this id (also for ids of deleted
    ///   items and strings that are not ids); `RSAError.damagedItem` when the item's file is
    ///   damaged; `RSAError.storeIOError`.
    public func item(id: String) throws -> RSAKeychainItem {
        let notFound = RSAError.itemNotFound(.item(id: id))
        switch StoreLayout.parseAnyItemID(id) {
        case .key?:
            do {
                return .key(try keyItem(id: id))
            } catch RSAError.itemNotFound {
                throw notFound
            }
        case let .password(hash)?:
            guard let loaded = try withReadLock({ try loadPassword(hash: hash) }), loaded.attributes.itemID == id else {
                throw notFound
            }
            if let internet = loaded.metadata.internetAttributes() { return .internetPassword(internet) }
            return .genericPassword(loaded.attributes)
        case .certificate?:
            do {
                return .certificate(try certificate(id: id))
            } catch RSAError.itemNotFound {
                throw notFound
            }
        case let .crl(hash)?:
            guard let loaded = try withReadLock({ try loadCRL(hash: hash) }), loaded.attributes.itemID == id else {
                throw notFound
            }
            return .crl(loaded.attributes)
        case nil:
            throw notFound
        }
    }

    /// Delete the item with this id, of any class (`SecItemDelete` with
    /// `kSecValuePersistentRef`). Deleting one half of a key pair leaves the other. The id
    /// names one file, so the item deleted is exactly that one, whichever group holds the same
    /// tag (or service and account) too.
    ///
    /// - Throws: `RSAError.itemNotFound` as ``item(id:)``; `RSAError.accessGroupNotAllowed`
    ///   when the store was opened with access groups and the item belongs to another (the id
    ///   names it exactly, so this is refused, not "not found"; nothing is deleted);
    ///   `RSAError.damagedItem` as ``item(id:)`` (a damaged key or password is deleted by its
    ///   tag or service and account, which need no reading); `RSAError.storeIOError`.
    /// - Returns: the item deleted, as ``item(id:)`` gave it just before.
    @discardableResult
    public func deleteItem(id: String) throws -> RSAKeychainItem {
        let notFound = RSAError.itemNotFound(.item(id: id))
        switch StoreLayout.parseAnyItemID(id) {
        case let .key(tagHash, keyClass)?:
            return try withWriteTransaction { tx in
                guard let loaded = try loadItem(keyClass, tagHash: tagHash, knownTag: nil, anyGroup: true),
                    loaded.attributes.itemID == id
                else { throw notFound }
                try checkWritable(loaded.attributes.accessGroup)
                tx.remove(StoreLayout.itemPath(keyClass, tagHash: tagHash))
                tx.remove(
                    StoreLayout.fingerprintEntry(
                        fingerprintHex: loaded.metadata.fingerprint, tagHash: tagHash, keyClass: keyClass))
                return .key(loaded.attributes)
            }
        case let .password(hash)?:
            return try withWriteTransaction { tx in
                guard let loaded = try loadPassword(hash: hash, anyGroup: true), loaded.attributes.itemID == id else {
                    throw notFound
                }
                try checkWritable(loaded.attributes.accessGroup)
                tx.remove(StoreLayout.passwordPath(hash: hash))
                if let internet = loaded.metadata.internetAttributes() { return .internetPassword(internet) }
                return .genericPassword(loaded.attributes)
            }
        case .certificate?:
            return try withWriteTransaction { tx in
                let loaded: LoadedCertificate
                do {
                    loaded = try loadCertificate(id: id, anyGroup: true)
                } catch RSAError.itemNotFound {
                    throw notFound
                }
                try checkWritable(loaded.attributes.accessGroup)
                removeCertificateIndex(loaded.metadata, hash: loaded.hash, into: &tx)
                tx.remove(StoreLayout.certificatePath(hash: loaded.hash))
                return .certificate(loaded.attributes)
            }
        case let .crl(hash)?:
            guard let loaded = try withReadLock({ try loadCRL(hash: hash) }), loaded.attributes.itemID == id else {
                throw notFound
            }
            try deleteCRL(issuer: loaded.attributes.issuer)
            return .crl(loaded.attributes)
        case nil:
            throw notFound
        }
    }
}

/// One keychain item of any class, as ``RSAKeyStore/item(id:)`` returns it.
public enum RSAKeychainItem: Sendable, Hashable {
    /// A key item (`kSecClassKey`).
    case key(RSAKeyItemAttributes)
    /// A generic password item (`kSecClassGenericPassword`).
    case genericPassword(RSAGenericPasswordAttributes)
    /// An internet password item (`kSecClassInternetPassword`).
    case internetPassword(RSAInternetPasswordAttributes)
    /// A certificate item (`kSecClassCertificate`).
    case certificate(RSACertificateAttributes)
    /// A certificate revocation list (no `SecItem` class: Apple keeps CRLs in the trust
    /// settings, rsakit keeps the newest of each issuer as an item).
    case crl(RSACRLAttributes)

    /// The item's id (persistent reference).
    public var itemID: String {
        switch self {
        case let .key(a): return a.itemID
        case let .genericPassword(a): return a.itemID
        case let .internetPassword(a): return a.itemID
        case let .certificate(a): return a.itemID
        case let .crl(a): return a.itemID
        }
    }

    /// The class name rsakit prints: "key", "password", "internet password", "certificate" or "CRL".
    public var className: String {
        switch self {
        case .key: return "key"
        case .genericPassword: return "password"
        case .internetPassword: return "internet password"
        case .certificate: return "certificate"
        case .crl: return "CRL"
        }
    }
}

/// Everything ``RSAKeyStore/allItems()`` found: the items of each class that read, and the
/// item files that did not.
public struct RSAKeychainListing: Sendable {
    /// Every readable key item, sorted by application tag, public before private.
    public let keys: [RSAKeyItemAttributes]
    /// Every readable generic password, sorted by service then account (UTF-8 bytes).
    public let passwords: [RSAGenericPasswordAttributes]
    /// Every readable internet password, sorted by its key's URL form.
    public let internetPasswords: [RSAInternetPasswordAttributes]
    /// Every readable certificate, sorted by label.
    public let certificates: [RSACertificateAttributes]
    /// Every readable CRL item, sorted by issuer name (UTF-8 bytes).
    public let crls: [RSACRLAttributes]
    /// Every item file of any class that could not be read (damaged, or a private item open
    /// to group or others), sorted by path: a listing reports them here and leaves none out.
    public let problems: [RSAKeyStoreProblem]
}
