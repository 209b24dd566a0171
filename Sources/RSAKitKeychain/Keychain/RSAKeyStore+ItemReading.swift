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

// Reading one key item file and checking it completely.
extension RSAKeyStore {
    // MARK: Reading items

    /// An item read from disk and checked.
    internal struct LoadedItem {
        var attributes: RSAKeyItemAttributes
        var metadata: StoreItemMetadata
        var pem: String
        var publicKey: RSAPublicKey
        /// The private key of a private item (nil for a sealed one not opened).
        var privateKey: RSAPrivateKey?
    }

    /// Whether and how to open a sealed private key while reading its item.
    enum SecretAccess {
        /// Leave it sealed (attributes and public key only).
        case none
        /// Open it with the store key this object holds (`RSAError.keychainLocked` if none).
        case current
        /// Open it with this key (nil: the item must be in the clear).
        case key(UnlockedStoreKey?)
    }

    /// Read and check the item under `tag` of `keyClass` under the shared lock.
    func loadByTag(_ tag: String, _ keyClass: RSAKeyClass, secrets: SecretAccess = .none) throws -> LoadedItem {
        try RSAKeyStore.validateTag(tag)
        let loaded = try withReadLock {
            try loadItem(keyClass, tagHash: try resolveKey(tag: tag, keyClass), knownTag: tag, secrets: secrets)
        }
        guard let loaded else { throw RSAError.itemNotFound(.key(tag: tag, keyClass: keyClass)) }
        return loaded
    }

    /// The tag hash of the key item file a lookup of (`tag`, `keyClass`) reads: see
    /// ``resolveName(_:hash:path:)``. Call under a lock.
    ///
    /// - Throws: `RSAError.ambiguousItem`, `RSAError.storeIOError`.
    func resolveKey(tag: String, _ keyClass: RSAKeyClass) throws -> String {
        try resolveName(
            .key(tag: tag, keyClass: keyClass),
            hash: { StoreLayout.tagHash(tag, group: $0) },
            path: { StoreLayout.itemPath(keyClass, tagHash: $0) })
    }

    /// The metadata record of an item file, without checking the key (for replacing and
    /// deleting, where the item may be damaged).
    func readMetadata(_ itemPath: String) throws -> StoreItemMetadata {
        guard
            let file = try StoreFileSystem.readFile(
                layout.absolute(itemPath), maximumByteCount: StoreItemRecord.maximumFileByteCount)
        else {
            throw StoreDamage("missing")
        }
        return try StoreItemRecord.decode(file.bytes).metadata
    }

    /// Read the item file of (`keyClass`, `tagHash`) and check it completely: format,
    /// metadata, the tag against the file name, the key against the metadata (fingerprint,
    /// size), and for private items the file's permissions.
    ///
    /// - Returns: nil when the file does not exist.
    /// - Throws: `RSAError.damagedItem`, `RSAError.insecureStorePermissions`,
    ///   `RSAError.storeIOError`.
    func loadItem(_ keyClass: RSAKeyClass, tagHash: String, knownTag: String?, storeKey: UnlockedStoreKey?) throws
        -> LoadedItem?
    {
        try loadItem(keyClass, tagHash: tagHash, knownTag: knownTag, secrets: .key(storeKey))
    }

    /// - Parameter anyGroup: read an item of any access group; otherwise an item of a group
    ///   this store object does not see reads as absent (nil).
    func loadItem(
        _ keyClass: RSAKeyClass, tagHash: String, knownTag: String?, secrets: SecretAccess = .none,
        anyGroup: Bool = false
    ) throws -> LoadedItem? {
        let path = layout.absolute(StoreLayout.itemPath(keyClass, tagHash: tagHash))
        var metadataTag: String?
        func damaged(_ reason: String) -> RSAError {
            .damagedItem(tag: knownTag ?? metadataTag, path: path, reason: reason)
        }
        let file: StoreFileSystem.FileContents
        do {
            guard let read = try StoreFileSystem.readFile(path, maximumByteCount: StoreItemRecord.maximumFileByteCount)
            else {
                return nil
            }
            file = read
        } catch let RSAError.storeIOError(_, reason) {
            throw damaged(reason)
        }
        var bytes = file.bytes
        defer { wipe(&bytes) }
        if keyClass == .private && !allowsInsecurePermissions {
            if let finding = layout.permissions.finding(path, file.status) { throw finding }
        }
        let metadata: StoreItemMetadata
        let pem: String
        do {
            (metadata, pem) = try StoreItemRecord.decode(bytes)
        } catch let damage as StoreDamage {
            throw damaged(damage.reason)
        }
        metadataTag = metadata.applicationTag
        guard metadata.keyClass == keyClass else {
            throw damaged("the metadata says key class \(metadata.keyClass) in the \(keyClass) folder")
        }
        guard let group = RSAKeyStore.checkedGroup(metadata.accessGroup) else {
            throw damaged("the access group is not a valid group name")
        }
        guard StoreLayout.tagHash(metadata.applicationTag, group: group) == tagHash else {
            throw damaged("the tag and access group in the metadata do not match the file name")
        }
        if let knownTag, !knownTag.utf8.elementsEqual(metadata.applicationTag.utf8) {
            throw damaged("the tag in the metadata differs from the tag asked for")
        }
        guard let ids = StoreLayout.parseItemID(metadata.itemID), ids.tagHash == tagHash, ids.keyClass == keyClass
        else {
            throw damaged("the item id does not belong to this item")
        }
        guard let milliseconds = StoreItemRecord.parseDate(metadata.creationDate) else {
            throw damaged("the creation date is not valid")
        }
        guard anyGroup || isVisible(group) else { return nil }
        if let label = metadata.label, label.utf8.count > RSAKeyStore.maximumLabelByteCount {
            throw damaged("the label is too long")
        }
        if metadata.sealed == true {
            guard keyClass == .private else { throw damaged("a public item marked sealed") }
            var loaded = try loadSealedItem(
                metadata, body: pem, milliseconds: milliseconds, secrets: secrets, damaged: damaged)
            loaded.attributes.accessGroup = group
            return loaded
        }
        // Exactly one PEM block of the class's format, ending the file: SPKI for public items,
        // PKCS#8 for private ones. (The key parser alone is as lenient as OpenSSL.)
        // A token key's private item holds the SPKI: the private key is on the token.
        let onToken = metadata.token != nil
        if onToken && keyClass == .public { throw damaged("a public item with a token reference") }
        let label = keyClass == .public || onToken ? "PUBLIC KEY" : "PRIVATE KEY"
        guard pem.hasPrefix("-----BEGIN \(label)-----\n") else {
            throw damaged("the PEM block is not \"\(label)\"")
        }
        guard pem.hasSuffix("-----END \(label)-----\n"),
            StoreItemRecord.occurrenceCount(of: "-----BEGIN ", in: pem) == 1
        else {
            throw damaged("the PEM block is truncated or followed by other data")
        }
        let publicKey: RSAPublicKey
        var privateKey: RSAPrivateKey?
        do {
            switch keyClass {
            case .public:
                publicKey = try RSAPublicKey(pemRepresentation: pem)
            case .private where onToken:
                publicKey = try RSAPublicKey(pemRepresentation: pem)
            case .private:
                let key = try RSAPrivateKey(pemRepresentation: pem)
                privateKey = key
                publicKey = key.publicKey
            }
        } catch let error as RSAError {
            throw damaged("the key does not parse (\(error.description))")
        }
        let fingerprint = publicKey.fingerprint
        guard StoreHex.encode(fingerprint.bytes) == metadata.fingerprint else {
            throw damaged("the fingerprint in the metadata does not match the key")
        }
        guard metadata.keySizeInBits == publicKey.modulusBitCount else {
            throw damaged(
                "the key size in the metadata (\(metadata.keySizeInBits) bits) does not match the key "
                    + "(\(publicKey.modulusBitCount) bits)"
            )
        }
        var attributes = RSAKeyItemAttributes(
            keyClass: keyClass, applicationTag: metadata.applicationTag, label: metadata.label,
            keySizeInBits: metadata.keySizeInBits, fingerprint: fingerprint,
            creationDate: StoreItemRecord.date(milliseconds: milliseconds), itemID: metadata.itemID,
            pssRestriction: publicKey.pssRestriction, token: metadata.token)
        attributes.accessGroup = group
        return LoadedItem(
            attributes: attributes, metadata: metadata, pem: pem, publicKey: publicKey, privateKey: privateKey)
    }

    /// A sealed private item: SPKI PEM (readable without the passphrase), then the line
    /// "sealed:" + base64(nonce || XChaCha20-Poly1305(store key, PKCS#8 DER) || tag), whose
    /// associated data is ("private", tag, fingerprint, item id).
    func loadSealedItem(
        _ metadata: StoreItemMetadata, body: String, milliseconds: Int64, secrets: SecretAccess,
        damaged: (String) -> RSAError
    ) throws -> LoadedItem {
        let end = "-----END PUBLIC KEY-----\n"
        guard body.hasPrefix("-----BEGIN PUBLIC KEY-----\n"), let endRange = body.firstRange(of: end),
            StoreItemRecord.occurrenceCount(of: "-----BEGIN ", in: body) == 1
        else {
            throw damaged("the sealed item has no public key block")
        }
        let pem = String(body[..<endRange.upperBound])
        let secretLine = Array(body[endRange.upperBound...].utf8)
        guard secretLine.last == 0x0A else { throw damaged("the sealed key line is truncated") }
        let sealed: [UInt8]
        do {
            let decoded = try StoreSecretLine.decode(secretLine.dropLast())
            guard decoded.sealed else { throw StoreDamage("the key line is not sealed") }
            sealed = decoded.bytes
        } catch let damage as StoreDamage {
            throw damaged(damage.reason)
        }
        let publicKey: RSAPublicKey
        do {
            publicKey = try RSAPublicKey(pemRepresentation: pem)
        } catch let error as RSAError {
            throw damaged("the public key does not parse (\(error.description))")
        }
        guard StoreHex.encode(publicKey.fingerprint.bytes) == metadata.fingerprint,
            metadata.keySizeInBits == publicKey.modulusBitCount
        else {
            throw damaged("the fingerprint or size in the metadata does not match the key")
        }
        var privateKey: RSAPrivateKey?
        let storeKey: UnlockedStoreKey?
        switch secrets {
        case .none: storeKey = nil
        case .current: storeKey = try currentStoreKey()
        case let .key(key):
            guard let key else { throw RSAError.keychainLocked }
            storeKey = key
        }
        if let storeKey {
            guard let der = try StoreSealing.open(sealed, key: storeKey, associatedData: metadata.sealedAssociatedData)
            else {
                throw damaged(
                    "the sealed key does not open under the store key for this item (moved from another item, or "
                        + "modified)"
                )
            }
            do {
                let key = try der.withUnsafeBytes { try RSAPrivateKey(derRepresentation: Array($0)) }
                guard key.publicKey == publicKey, key.pssRestriction == publicKey.pssRestriction else {
                    throw damaged("the sealed key does not match its public key")
                }
                privateKey = key
            } catch let error as RSAError {
                if case .damagedItem = error { throw error }
                throw damaged("the sealed key does not parse (\(error.description))")
            }
        }
        let attributes = RSAKeyItemAttributes(
            keyClass: .private, applicationTag: metadata.applicationTag, label: metadata.label,
            keySizeInBits: metadata.keySizeInBits, fingerprint: publicKey.fingerprint,
            creationDate: StoreItemRecord.date(milliseconds: milliseconds), itemID: metadata.itemID,
            pssRestriction: publicKey.pssRestriction)
        return LoadedItem(
            attributes: attributes, metadata: metadata, pem: body, publicKey: publicKey, privateKey: privateKey)
    }

    /// The bytes of a key item file: public items and unprotected private ones as PEM;
    /// private ones sealed under `storeKey` when given.
    func encodeKeyItem(
        _ metadata: StoreItemMetadata, privateKey: RSAPrivateKey?, publicKey: RSAPublicKey, storeKey: UnlockedStoreKey?
    ) throws -> [UInt8] {
        var metadata = metadata
        guard metadata.keyClass == .private, let privateKey else {
            metadata.sealed = nil
            return try StoreItemRecord.encode(metadata, pem: publicKey.pemRepresentation)
        }
        guard let storeKey else {
            metadata.sealed = nil
            return try StoreItemRecord.encode(metadata, pem: privateKey.pkcs8PEMRepresentation)
        }
        metadata.sealed = true
        var der = privateKey.pkcs8DERRepresentation
        defer { wipe(&der) }
        let sealed = try StoreSealing.seal(der, key: storeKey, associatedData: metadata.sealedAssociatedData)
        let body =
            publicKey.pemRepresentation + String(decoding: StoreSecretLine.encode(sealed, sealed: true), as: UTF8.self)
        return try StoreItemRecord.encode(metadata, pem: body)
    }
}
