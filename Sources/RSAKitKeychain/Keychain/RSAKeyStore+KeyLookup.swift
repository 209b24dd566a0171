import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Keys: finding by tag, item id and fingerprint; listing every item.
extension RSAKeyStore {
    // MARK: Finding

    /// The public key stored under `tag` (class public), as `SecItemCopyMatching` with
    /// `kSecAttrKeyClassPublic` and `kSecReturnRef` finds it. Opens one file.
    ///
    /// - Throws: `RSAError.itemNotFound` (``RSAKeychainItemQuery/key(tag:keyClass:)``, class
    ///   public) when there is none; `RSAError.damagedItem` when the item file is damaged;
    ///   `RSAError.invalidTag`; `RSAError.storeIOError`.
    public func publicKey(tag: String) throws -> RSAPublicKey {
        try loadByTag(tag, .public).publicKey
    }

    /// The public key of the key under `tag`: its public item, else the public half of its
    /// private item (a pair stored with two tags has only the private item under the second).
    /// Needs no passphrase in a protected store: sealed private items keep their SPKI readable.
    ///
    /// - Throws: `RSAError.itemNotFound` (a key of either class with this tag) when neither
    ///   item exists; otherwise as ``publicKey(tag:)``.
    public func publicKeyOfAnyItem(tag: String) throws -> RSAPublicKey {
        do {
            return try publicKey(tag: tag)
        } catch RSAError.itemNotFound {
            do {
                return try loadByTag(tag, .private).publicKey
            } catch RSAError.itemNotFound {
                throw RSAError.itemNotFound(.key(tag: tag))
            }
        }
    }

    /// The private key stored under `tag` (class private). Opens one file. In a protected
    /// store the key is opened with the store key (unlock first).
    ///
    /// - Throws: `RSAError.itemNotFound` (class private) when there is none;
    ///   `RSAError.keychainLocked`; `RSAError.damagedItem`;
    ///   `RSAError.insecureStorePermissions` when the file is readable by group or others
    ///   (unless the store was opened with `allowInsecurePermissions`); `RSAError.invalidTag`;
    ///   `RSAError.storeIOError`; `RSAError.keyOnToken` when the key lives on a PKCS#11 token
    ///   (``tokenKey(tag:)`` gives it).
    public func privateKey(tag: String) throws -> RSAPrivateKey {
        let loaded = try loadByTag(tag, .private, secrets: .current)
        // A private item in the store always yields its key (loadItem parses or opens it, or
        // throws); a token key's item has none.
        guard let key = loaded.privateKey else { throw RSAError.keyOnToken(tag: tag) }
        return key
    }

    /// The private key of the private item with this item id, for the package's own
    /// servers (the PKCS#11 module, the ssh-agent), which list items and then use the one
    /// listed: by id, because the same tag may be held by several access groups. Opens one
    /// file; a protected store must be unlocked.
    ///
    /// - Throws: `RSAError.itemNotFound` (class key, this id) when no visible private item has
    ///   it; `RSAError.keyOnToken`; `RSAError.keychainLocked`; `RSAError.damagedItem`;
    ///   `RSAError.insecureStorePermissions`; `RSAError.storeIOError`.
    package func privateKey(itemID id: String) throws -> RSAPrivateKey {
        let notFound = RSAError.itemNotFound(.item(id: id, itemClass: .key))
        guard let (tagHash, keyClass) = StoreLayout.parseItemID(id), keyClass == .private else { throw notFound }
        let loaded = try withReadLock { try loadItem(.private, tagHash: tagHash, knownTag: nil, secrets: .current) }
        guard let loaded, loaded.attributes.itemID == id else { throw notFound }
        guard let key = loaded.privateKey else { throw RSAError.keyOnToken(tag: loaded.attributes.applicationTag) }
        return key
    }

    /// The attributes of the key item with this tag and key class: `SecItemCopyMatching` with
    /// `kSecClassKey`, `kSecAttrApplicationTag`, `kSecAttrKeyClass` and `kSecReturnAttributes`.
    /// Opens one file; needs no passphrase.
    ///
    /// - Throws: `RSAError.itemNotFound` (this tag and class) when there is none;
    ///   `RSAError.damagedItem` when the item file is damaged; `RSAError.insecureStorePermissions`;
    ///   `RSAError.invalidTag`; `RSAError.storeIOError`.
    public func keyItem(tag: String, keyClass: RSAKeyClass) throws -> RSAKeyItemAttributes {
        try loadByTag(tag, keyClass).attributes
    }

    /// The attributes of the key item with this item id: `SecItemCopyMatching` with
    /// `kSecClassKey` and `kSecValuePersistentRef`. Opens one file: the id names its item's
    /// file. ``item(id:)`` takes an id of any class.
    ///
    /// - Throws: `RSAError.itemNotFound` (class key, this item id) when no key item has this id
    ///   (including ids of items since replaced or deleted, and strings that are not item ids);
    ///   `RSAError.damagedItem`; `RSAError.insecureStorePermissions`; `RSAError.storeIOError`.
    public func keyItem(id: String) throws -> RSAKeyItemAttributes {
        guard let (tagHash, keyClass) = StoreLayout.parseItemID(id) else {
            throw RSAError.itemNotFound(.item(id: id, itemClass: .key))
        }
        let loaded = try withReadLock {
            try loadItem(keyClass, tagHash: tagHash, knownTag: nil)
        }
        guard let loaded, loaded.attributes.itemID == id else {
            throw RSAError.itemNotFound(.item(id: id, itemClass: .key))
        }
        return loaded.attributes
    }

    /// Every key item whose key has this fingerprint (both halves of a pair, and the same key
    /// stored under several tags), sorted by tag then class: `SecItemCopyMatching` with
    /// `kSecClassKey`, `kSecAttrApplicationLabel` and `kSecMatchLimitAll`. Uses the
    /// fingerprint index: one index folder is listed, and each match is read and checked.
    ///
    /// - Returns: the matching items; `[]` when none matches (a list lookup never throws
    ///   `RSAError.itemNotFound`).
    /// - Throws: `RSAError.damagedItem` when an item the index names is damaged (a lookup does
    ///   not drop it; ``allKeyItems()`` lists it with the others); `RSAError.storeIOError`.
    public func keyItems(fingerprint: RSAKeyFingerprint) throws -> [RSAKeyItemAttributes] {
        RSAKeyStore.sorted(try withReadLock { try itemsHoldingLock(fingerprint: fingerprint, skippingDamaged: false) })
    }

    /// ``keyItems(fingerprint:)`` for a caller that already holds the store's lock (a write
    /// transaction), unsorted. A write that only needs to know where else a key is stored
    /// passes `skippingDamaged`, so that an item it cannot read (damaged, or open to group or
    /// others) does not block it.
    func itemsHoldingLock(fingerprint: RSAKeyFingerprint, skippingDamaged: Bool) throws -> [RSAKeyItemAttributes] {
        let fingerprintHex = StoreHex.encode(fingerprint.bytes)
        var found: [RSAKeyItemAttributes] = []
        let shard = layout.absolute(StoreLayout.fingerprintShard(fingerprintHex))
        for name in try StoreFileSystem.listDirectory(shard) {
            guard let entry = StoreLayout.parseFingerprintEntry(name),
                entry.fingerprintHex == fingerprintHex
            else { continue }
            let loaded: LoadedItem?
            do {
                loaded = try loadItem(entry.keyClass, tagHash: entry.tagHash, knownTag: nil)
            } catch  where skippingDamaged {
                continue
            }
            guard let loaded, loaded.attributes.fingerprint == fingerprint else { continue }
            found.append(loaded.attributes)
        }
        return found
    }

    /// Every key item with its attributes, and every key item file that could not be read
    /// (`SecItemCopyMatching` with `kSecClassKey` and `kSecMatchLimitAll`). A listing: a
    /// damaged item is in ``RSAKeyItemListing/problems``, never thrown and never left out, so
    /// one damaged item does not hide the others. Reads every key item file, and removes the
    /// temporary files of interrupted writes it meets. ``allItems()`` lists every class.
    ///
    /// - Throws: `RSAError.storeIOError` when a store folder cannot be listed.
    public func allKeyItems() throws -> RSAKeyItemListing {
        try allKeyItemsWithPublicKeys().listing
    }

    /// ``allKeyItems()`` and the public key of every listed item by item id (a private item's
    /// public half), from the same one reading of each file.
    func allKeyItemsWithPublicKeys() throws -> (listing: RSAKeyItemListing, publicKeys: [String: RSAPublicKey]) {
        try withReadLock {
            var publicKeys: [String: RSAPublicKey] = [:]
            var items: [RSAKeyItemAttributes] = []
            var problems: [RSAKeyStoreProblem] = []
            for keyClass in RSAKeyClass.allCases {
                let classFolder = StoreLayout.classDirectory(keyClass)
                for shard in try StoreFileSystem.listDirectory(layout.absolute(classFolder))
                where StoreLayout.isShardName(shard) {
                    for name in try StoreFileSystem.listDirectory(layout.absolute(classFolder + "/" + shard)) {
                        if name.hasPrefix(StoreFileSystem.temporaryPrefix) {
                            // Under the shared lock no write is in progress, and a journal
                            // naming temporary files was applied by withReadLock: this one was
                            // left by a write that died before its commit point. (Best effort:
                            // a read-only store keeps it, and it is ignored.)
                            _ = try? StoreFileSystem.removeFile(layout.absolute(classFolder + "/" + shard + "/" + name))
                            continue
                        }
                        guard let tagHash = StoreLayout.tagHash(fromItemName: name), name.hasPrefix(shard) else {
                            continue  // anything not ours
                        }
                        do {
                            if let loaded = try loadItem(keyClass, tagHash: tagHash, knownTag: nil) {
                                items.append(loaded.attributes)
                                publicKeys[loaded.attributes.itemID] = loaded.publicKey
                            }
                        } catch let error as RSAError {
                            problems.append(
                                RSAKeyStoreProblem(
                                    path: layout.absolute(StoreLayout.itemPath(keyClass, tagHash: tagHash)),
                                    error: error))
                        }
                    }
                }
            }
            return (
                RSAKeyItemListing(items: RSAKeyStore.sorted(items), problems: problems.sorted { $0.path < $1.path }),
                publicKeys
            )
        }
    }
}
