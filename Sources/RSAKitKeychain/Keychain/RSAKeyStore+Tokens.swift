// Keys on a PKCS#11 token, kept in the store as a reference: the public
// item as for any key pair, and a private item that holds the SPKI and where the private key
// is (module, token label and serial, CKA_ID). The token work itself is in PKCS11Client/.

import RSAKitCore
import RSAKitPKI

extension RSAKeyStore {
    /// Store a token key pair: a public item under `tag` and a private item under `tag` that
    /// refers to the token object (``RSAKeyItemAttributes/token``), in one atomic step.
    /// Make the key first (``RSATokenKey/generate(on:bits:label:pin:)`` or
    /// ``RSATokenKey/importKey(_:to:label:pin:)``): a token failure then changes nothing here.
    ///
    /// - Parameters:
    ///   - key: the token key.
    ///   - tag: the application tag of both items (1 to 255 bytes of UTF-8).
    ///   - label: optional free text, on both items.
    ///   - replace: replace existing items with this tag instead of failing (the old token
    ///     object, if any, stays on its token).
    /// - Returns: the attributes of the new public and private items.
    /// - Throws: as ``addKeyPair(_:tag:privateTag:label:replace:)``. A protected store needs
    ///   no unlocking: the private item holds no secret.
    @discardableResult
    public func addTokenKeyPair(
        _ key: RSATokenKey, tag: String, label: String? = nil, replace: Bool = false
    ) throws -> (public: RSAKeyItemAttributes, private: RSAKeyItemAttributes) {
        try RSAKeyStore.validateTag(tag)
        try RSAKeyStore.validateLabel(label)
        let publicKey = key.publicKey
        let pem = publicKey.pemRepresentation
        let requests = [
            NewItem(
                keyClass: .public, tag: tag, label: label, keySizeInBits: publicKey.modulusBitCount,
                fingerprint: publicKey.fingerprint, pem: pem),
            NewItem(
                keyClass: .private, tag: tag, label: label, keySizeInBits: publicKey.modulusBitCount,
                fingerprint: publicKey.fingerprint, pem: pem, token: key.reference)
        ]
        let added = try withWriteTransaction { tx in
            try stage(requests, replace: replace, into: &tx)
        }
        return (added[0], added[1])
    }

    /// The token key whose private item is under `tag`, or nil when that private key is held
    /// in the store itself (``privateKey(tag:)`` gives it). Opens one file; no token access.
    ///
    /// A private item whose metadata names no token gives nil from its metadata alone: its key
    /// is neither parsed nor checked here (``privateKey(tag:)`` does both), so asking this
    /// before ``privateKey(tag:)`` costs one small read, not a second parse of the key. A
    /// token item is read and checked in full before its reference is returned.
    ///
    /// - Throws: `RSAError.itemNotFound` (class private) when there is no private item;
    ///   `RSAError.damagedItem` for a token item, or an item whose metadata cannot be read;
    ///   `RSAError.invalidTag`; `RSAError.storeIOError`.
    public func tokenKey(tag: String) throws -> RSATokenKey? {
        try RSAKeyStore.validateTag(tag)
        if let metadata = try? withReadLock({
            try readMetadata(StoreLayout.itemPath(.private, tagHash: try resolveKey(tag: tag, .private)))
        }), metadata.token == nil {
            return nil
        }
        let loaded = try loadByTag(tag, .private)
        guard let reference = loaded.metadata.token else { return nil }
        return RSATokenKey(
            reference: reference, publicKey: loaded.publicKey, tpm: reference.isTPM ? tpmConfiguration : nil)
    }

    /// The token key of the private item with this item id, or nil when that item holds its
    /// key itself: ``tokenKey(tag:)`` for the package's own servers (the PKCS#11 module), which
    /// use the item they listed, by id, since the same tag may be held by several access groups.
    ///
    /// - Throws: `RSAError.itemNotFound` (class key, this id) when no visible private item has
    ///   it; `RSAError.damagedItem`; `RSAError.storeIOError`.
    package func tokenKey(itemID id: String) throws -> RSATokenKey? {
        let notFound = RSAError.itemNotFound(.item(id: id, itemClass: .key))
        guard let (tagHash, keyClass) = StoreLayout.parseItemID(id), keyClass == .private else { throw notFound }
        let loaded = try withReadLock { try loadItem(.private, tagHash: tagHash, knownTag: nil, secrets: .none) }
        guard let loaded, loaded.attributes.itemID == id else { throw notFound }
        guard let reference = loaded.metadata.token else { return nil }
        return RSATokenKey(
            reference: reference, publicKey: loaded.publicKey, tpm: reference.isTPM ? tpmConfiguration : nil)
    }

    /// How this store's TPM keys reach the TPM: the TCTI from `RSAKIT_TPM_TCTI` (else
    /// `device:/dev/tpmrm0`). Reads the environment; touches no file. The keys' blobs are in
    /// their private items; the store keeps no TPM database.
    public var tpmConfiguration: RSATPMConfiguration {
        RSATPMConfiguration()
    }

    /// Generate a key pair inside this machine's TPM and store it under `tag`
    /// (``RSATokenKey/generateInTPM(_:bits:usage:pin:)`` with ``tpmConfiguration``, then
    /// ``addTokenKeyPair(_:tag:label:replace:)``): the counterpart of a
    /// `kSecAttrTokenIDSecureEnclave` key. The TPM work comes first, so a TPM failure writes
    /// nothing to the store; the tag is checked before it.
    ///
    /// - Parameters: `tag`, `label`, `replace` as ``addTokenKeyPair(_:tag:label:replace:)``;
    ///   `bits` 2048 or 3072; `usage` the key's one usage, fixed in the TPM; `pin` the key's
    ///   PIN, or nil for none.
    /// - Returns: the key and the attributes of the new items.
    /// - Throws: as ``RSATokenKey/generateInTPM(_:bits:usage:pin:)`` and
    ///   ``addTokenKeyPair(_:tag:label:replace:)`` (`RSAError.duplicateItem` before any TPM work).
    @discardableResult
    public func generateTPMKeyPair(
        tag: String, bits: Int = 2048, usage: RSATPMKeyUsage = .decryptOAEP, label: String? = nil,
        pin: RSASecretBytes?, replace: Bool = false
    ) throws -> (key: RSATokenKey, public: RSAKeyItemAttributes, private: RSAKeyItemAttributes) {
        try RSAKeyStore.validateTag(tag)
        try RSAKeyStore.validateLabel(label)
        if !replace {
            for keyClass in [RSAKeyClass.public, .private] where (try? keyItem(tag: tag, keyClass: keyClass)) != nil {
                throw RSAError.duplicateItem(.key(tag: tag, keyClass: keyClass))
            }
        }
        let key = try RSATokenKey.generateInTPM(tpmConfiguration, bits: bits, usage: usage, pin: pin)
        let items = try addTokenKeyPair(key, tag: tag, label: label, replace: replace)
        return (key, items.public, items.private)
    }
}
