// Certificates (Apple's kSecClassCertificate) and the identities derived from them.
// One file per certificate, named after the SHA-256 of (issuer, serial), with index entries
// by label, by certificate fingerprint and by public-key fingerprint (beside the keys', which
// is how a certificate finds its private key and a key its certificates).

import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAKeyStore {
    /// Add a certificate (`SecItemAdd` with `kSecClassCertificate`), with the chain
    /// certificates that go with it (stored as certificate items too, unless already present;
    /// their fingerprints are recorded on this item for identities). One atomic write.
    ///
    /// - Parameters:
    ///   - certificate: the certificate.
    ///   - label: the label (default: the subject summary, as `SecCertificateCopySubjectSummary`).
    ///   - trust: the user's trust setting (`--trust`, `--distrust`).
    ///   - chain: issuer certificates to keep with it (issuer first).
    ///   - replace: replace an existing item with the same issuer and serial.
    /// - Returns: the new item's attributes.
    /// - Throws: `RSAError.duplicateItem` (class certificate, its issuer and serial) when a
    ///   certificate with the same issuer and serial exists and `replace` is false (nothing is
    ///   written); `RSAError.invalidLabel`;
    ///   `RSAError.storeIOError`.
    @discardableResult
    public func addCertificate(
        _ certificate: X509Certificate, label: String? = nil, trust: RSACertificateTrust = .unspecified,
        chain: [X509Certificate] = [], replace: Bool = false
    ) throws -> RSACertificateAttributes {
        try addCertificates([(certificate, label, trust, chain)], replace: replace)[0]
    }

    /// Add several certificates in one atomic step (all or none), for importing.
    ///
    /// - Throws: as ``addCertificate(_:label:trust:chain:replace:)`` for the first that fails;
    ///   a certificate given twice is a duplicate.
    @discardableResult
    public func addCertificates(
        _ entries: [(
            certificate: X509Certificate, label: String?, trust: RSACertificateTrust, chain: [X509Certificate]
        )],
        replace: Bool = false
    ) throws -> [RSACertificateAttributes] {
        func defaultLabel(_ c: X509Certificate) -> String { c.subjectSummary.isEmpty ? c.subject : c.subjectSummary }
        for entry in entries { try RSAKeyStore.validateLabel(entry.label ?? defaultLabel(entry.certificate)) }
        return try withWriteTransaction { tx in
            try stageCertificates(entries, replace: replace, into: &tx)
        }
    }

    /// Plan the writes of ``addCertificates(_:replace:)`` inside a write transaction (also
    /// used by ``addIdentity(privateKey:certificate:chain:tag:label:replace:)``, which
    /// stages the key pair in the same transaction).
    func stageCertificates(
        _ entries: [(
            certificate: X509Certificate, label: String?, trust: RSACertificateTrust, chain: [X509Certificate]
        )],
        replace: Bool, into tx: inout StoreTransaction
    ) throws -> [RSACertificateAttributes] {
        func defaultLabel(_ c: X509Certificate) -> String { c.subjectSummary.isEmpty ? c.subject : c.subjectSummary }
        do {
            let now = StoreItemRecord.nowMilliseconds()
            let group = accessGroupForNewItems
            if !entries.isEmpty { try registerGroup(group, in: &tx) }
            var staged = Set<String>()
            var result: [RSACertificateAttributes] = []
            for (certificate, label, trust, chain) in entries {
                let hash = StoreLayout.certificateHash(
                    issuer: certificate.issuer, serialNumber: certificate.serialNumber, group: group)
                guard staged.insert(hash).inserted else {
                    throw RSAError.duplicateItem(Self.certificateQuery(certificate))
                }
                if let old = try? loadCertificate(hash: hash, anyGroup: true) {
                    guard replace else { throw RSAError.duplicateItem(Self.certificateQuery(certificate)) }
                    try checkWritable(old.attributes.accessGroup)
                    removeCertificateIndex(old.metadata, hash: hash, into: &tx)
                } else if try StoreFileSystem.status(layout.absolute(StoreLayout.certificatePath(hash: hash))) != nil {
                    guard replace else { throw RSAError.duplicateItem(Self.certificateQuery(certificate)) }
                    // A damaged item's group cannot be read: only a store opened without
                    // groups replaces it (this throws its damage otherwise).
                    if accessGroups != nil { _ = try loadCertificate(hash: hash, anyGroup: true) }
                }
                result.append(
                    try stageCertificate(
                        certificate, label: label ?? defaultLabel(certificate), trust: trust,
                        chain: chain.map(\.fingerprint), milliseconds: now, into: &tx))
                for issuer in chain where issuer.fingerprint != certificate.fingerprint {
                    let issuerHash = StoreLayout.certificateHash(
                        issuer: issuer.issuer, serialNumber: issuer.serialNumber, group: group)
                    guard
                        try StoreFileSystem.status(layout.absolute(StoreLayout.certificatePath(hash: issuerHash)))
                            == nil,
                        staged.insert(issuerHash).inserted
                    else { continue }
                    _ = try stageCertificate(
                        issuer, label: defaultLabel(issuer), trust: .unspecified, chain: [], milliseconds: now,
                        into: &tx)
                }
            }
            return result
        }
    }

    /// Every certificate with this label (`SecItemCopyMatching` with `kSecClassCertificate`,
    /// `kSecAttrLabel` and `kSecMatchLimitAll`), sorted by label, subject, then serial.
    /// Lists one index folder and reads each certificate it names.
    ///
    /// - Returns: the matching certificates; `[]` when none has the label (a list lookup
    ///   never throws `RSAError.itemNotFound`).
    /// - Throws: `RSAError.damagedItem` when a certificate the label index names is damaged
    ///   (a lookup does not drop it; ``allItems()`` lists it with the others);
    ///   `RSAError.storeIOError`.
    public func certificates(label: String) throws -> [RSACertificateAttributes] {
        let found = try withReadLock {
            try indexedCertificates(StoreLayout.labelEntry(label: label, certificateHash: "")).filter {
                $0.attributes.label.utf8.elementsEqual(label.utf8)
            }
        }
        return Self.sortedCertificates(found.map(\.attributes))
    }

    /// The certificate whose DER has this SHA-256 fingerprint (32 bytes), as
    /// `SecItemCopyMatching` with `kSecClassCertificate` and `kSecMatchLimitOne`. Lists one
    /// index folder.
    ///
    /// - Throws: `RSAError.itemNotFound` (class certificate, `certificateFingerprint`) when no
    ///   certificate has it; `RSAError.damagedItem` when the certificate the index names is
    ///   damaged; `RSAError.storeIOError`.
    public func certificate(fingerprint: [UInt8]) throws -> RSACertificateAttributes {
        let hex = StoreHex.encode(fingerprint)
        let found = try withReadLock {
            try indexedCertificates(StoreLayout.certificateFingerprintEntry(fingerprintHex: hex, certificateHash: ""))
                .first { $0.metadata.fingerprint == hex }
        }
        guard let found else {
            throw RSAError.itemNotFound(
                RSAKeychainItemQuery(itemClass: .certificate, certificateFingerprint: fingerprint))
        }
        return found.attributes
    }

    /// The certificates whose public key has this fingerprint (the SPKI SHA-256), sorted as
    /// ``certificates(label:)``.
    ///
    /// - Returns: the matching certificates; `[]` when none matches.
    /// - Throws: `RSAError.damagedItem` when a certificate the index names is damaged;
    ///   `RSAError.storeIOError`.
    public func certificates(publicKeyFingerprint: RSAKeyFingerprint) throws -> [RSACertificateAttributes] {
        let hex = StoreHex.encode(publicKeyFingerprint.bytes)
        let found: [RSACertificateAttributes] = try withReadLock {
            try StoreFileSystem.listDirectory(layout.absolute(StoreLayout.fingerprintShard(hex))).compactMap { file in
                guard let hash = StoreLayout.certificateHash(fromKeyEntry: file, fingerprintHex: hex),
                    let loaded = try loadCertificate(hash: hash),
                    loaded.metadata.publicKeyFingerprint == hex
                else { return nil }
                return loaded.attributes
            }
        }
        return Self.sortedCertificates(found)
    }

    /// The attributes of the certificate with this item id (persistent reference), as
    /// `SecItemCopyMatching` with `kSecValuePersistentRef` and `kSecReturnAttributes`. Opens
    /// one file.
    ///
    /// - Throws: `RSAError.itemNotFound` (class certificate, this item id) when no certificate
    ///   has the id; `RSAError.damagedItem`; `RSAError.storeIOError`.
    public func certificate(id: String) throws -> RSACertificateAttributes {
        try withReadLock { try loadCertificate(id: id) }.attributes
    }

    /// The certificate itself (`kSecReturnRef`), parsed by GnuTLS and checked against the
    /// item's attributes. Opens one file.
    ///
    /// - Throws: `RSAError.itemNotFound` (class certificate, this item id) when no certificate
    ///   has the id; `RSAError.damagedItem` when the file is damaged or its certificate does
    ///   not parse or match its attributes; `RSAError.storeIOError`.
    public func certificateValue(id: String) throws -> X509Certificate {
        try Self.parsedCertificate(try withReadLock { try loadCertificate(id: id) })
    }

    /// The certificate of a read item, parsed by GnuTLS and checked against its metadata.
    /// - Throws: `RSAError.damagedItem` when it does not parse or does not match.
    static func parsedCertificate(_ loaded: LoadedCertificate) throws -> X509Certificate {
        let certificate: X509Certificate
        do {
            certificate = try X509Certificate(derRepresentation: loaded.der)
        } catch let error as RSAError {
            throw RSAError.damagedItem(
                tag: nil, path: loaded.path, reason: "the certificate does not parse (\(error.description))")
        }
        guard certificate.issuer == loaded.metadata.issuer, certificate.serialNumber == loaded.attributes.serialNumber,
            certificate.subject == loaded.metadata.subject,
            certificate.publicKeyFingerprint.map({ StoreHex.encode($0.bytes) }) == loaded.metadata.publicKeyFingerprint
        else {
            throw RSAError.damagedItem(
                tag: nil, path: loaded.path, reason: "the metadata does not match the certificate")
        }
        return certificate
    }

    /// Change a certificate's label or trust setting (`SecItemUpdate` with
    /// `kSecValuePersistentRef`; nil leaves the attribute as it is). The item id stays. Only
    /// updates: a missing item is not created.
    ///
    /// - Parameters:
    ///   - id: the certificate's item id (``RSACertificateAttributes/itemID``).
    ///   - label: the new label (at most ``maximumLabelByteCount`` bytes), or nil.
    ///   - trust: the new trust setting, or nil.
    /// - Returns: the item's attributes after the change.
    /// - Throws: `RSAError.itemNotFound` (class certificate, this item id); `RSAError.damagedItem`;
    ///   `RSAError.invalidLabel`; `RSAError.storeIOError`.
    @discardableResult
    public func updateCertificate(id: String, label: String? = nil, trust: RSACertificateTrust? = nil) throws
        -> RSACertificateAttributes
    {
        try RSAKeyStore.validateLabel(label)
        return try withWriteTransaction { tx in
            let loaded = try loadCertificate(id: id, anyGroup: true)
            try checkWritable(loaded.attributes.accessGroup)
            let hash = loaded.hash
            var metadata = loaded.metadata
            if let label {
                if !label.utf8.elementsEqual(metadata.label.utf8) {
                    tx.remove(StoreLayout.labelEntry(label: metadata.label, certificateHash: hash))
                    try tx.createEmpty(StoreLayout.labelEntry(label: label, certificateHash: hash))
                }
                metadata.label = label
            }
            if let trust { metadata.trust = trust }
            try tx.stageFile(
                StoreLayout.certificatePath(hash: hash), contents: try Self.encodeCertificate(metadata, der: loaded.der)
            )
            return metadata.attributes()!
        }
    }

    /// Delete a certificate item (`SecItemDelete` with `kSecValuePersistentRef`). Its private
    /// key, if any, stays.
    ///
    /// - Throws: `RSAError.itemNotFound` (class certificate, this item id); `RSAError.damagedItem`
    ///   when the item is damaged (its index entries cannot be found without its metadata, so
    ///   it is left for ``rebuildIndex()`` and removal by hand); `RSAError.storeIOError`.
    public func deleteCertificate(id: String) throws {
        try withWriteTransaction { tx in
            let loaded = try loadCertificate(id: id, anyGroup: true)
            try checkWritable(loaded.attributes.accessGroup)
            removeCertificateIndex(loaded.metadata, hash: loaded.hash, into: &tx)
            tx.remove(StoreLayout.certificatePath(hash: loaded.hash))
        }
    }

    // MARK: Identities

    /// The identities whose certificate has this label (`SecItemCopyMatching` with
    /// `kSecClassIdentity`, `kSecAttrLabel` and `kSecMatchLimitAll`): certificate, private key
    /// and chain.
    ///
    /// - Returns: the identities; `[]` when no certificate has the label or none of them has
    ///   its private key in the store (a list lookup never throws `RSAError.itemNotFound`;
    ///   ``RSATLSClientIdentity/init(store:label:tokenPIN:)``, which takes one, does).
    /// - Throws: `RSAError.storeIOError`.
    public func identities(label: String) throws -> [RSAIdentityItem] {
        try certificates(label: label).compactMap { try identityIfPresent(for: $0) }
    }

    /// The identities of the private key stored under `tag` (one per certificate of its key).
    ///
    /// - Returns: the identities; `[]` when no private key has this tag or no certificate is
    ///   stored for it (a list lookup never throws `RSAError.itemNotFound`).
    /// - Throws: `RSAError.damagedItem` when the private key item is damaged;
    ///   `RSAError.invalidTag`; `RSAError.storeIOError`.
    public func identities(tag: String) throws -> [RSAIdentityItem] {
        let key: RSAKeyItemAttributes
        do {
            key = try keyItem(tag: tag, keyClass: .private)
        } catch RSAError.itemNotFound {
            return []
        }
        return try certificates(publicKeyFingerprint: key.fingerprint).filter { $0.accessGroup == key.accessGroup }
            .compactMap { certificate in
                RSAIdentityItem(certificate: certificate, privateKey: key, chain: try chainAttributes(certificate))
            }
    }

    /// Every identity in the store (each certificate with a stored private key of the same
    /// public-key fingerprint), sorted by label: `SecItemCopyMatching` with `kSecClassIdentity`
    /// and `kSecMatchLimitAll`. Reads every certificate file.
    ///
    /// - Returns: the identities; `[]` when there is none.
    /// - Throws: `RSAError.damagedItem` when a certificate file, or the key item a certificate
    ///   leads to, is damaged (a lookup does not drop it; ``allItems()`` lists it with the
    ///   others); `RSAError.storeIOError`.
    public func allIdentities() throws -> [RSAIdentityItem] {
        let certificates = try withReadLock {
            try certificateFileHashes().compactMap { try loadCertificate(hash: $0)?.attributes }
        }
        return try Self.sortedCertificates(certificates).compactMap { try identityIfPresent(for: $0) }
    }

    /// The identity of one certificate: the certificate with the stored private key of its
    /// public key (as `SecIdentityCreateWithCertificate`).
    ///
    /// - Returns: the identity, with the chain certificates stored with it.
    /// - Throws: `RSAError.itemNotFound` (class identity, the certificate's label and
    ///   fingerprint) when no private key in the store matches the certificate's public key;
    ///   `RSAError.storeIOError`.
    public func identity(for certificate: RSACertificateAttributes) throws -> RSAIdentityItem {
        guard let identity = try identityIfPresent(for: certificate) else {
            throw RSAError.itemNotFound(
                RSAKeychainItemQuery(
                    itemClass: .identity, label: certificate.label, certificateFingerprint: certificate.fingerprint))
        }
        return identity
    }

    /// ``identity(for:)``, or nil when no private key matches the certificate.
    func identityIfPresent(for certificate: RSACertificateAttributes) throws -> RSAIdentityItem? {
        guard let fingerprint = certificate.publicKeyFingerprint,
            // An identity is a certificate and a private key of the same group, as an add
            // makes it: the same key in another group is that group's identity.
            let key = try keyItems(fingerprint: fingerprint).first(where: {
                $0.keyClass == .private && $0.accessGroup == certificate.accessGroup
            })
        else { return nil }
        return RSAIdentityItem(certificate: certificate, privateKey: key, chain: try chainAttributes(certificate))
    }

    // MARK: Internals

    private func chainAttributes(_ certificate: RSACertificateAttributes) throws -> [RSACertificateAttributes] {
        // A chain certificate deleted since is left out; a damaged one is reported, as any lookup reports it.
        try certificate.chainFingerprints.compactMap { fingerprint in
            do {
                return try self.certificate(fingerprint: fingerprint)
            } catch RSAError.itemNotFound {
                return nil
            }
        }
    }

    /// The unique attributes of a certificate item: issuer and serial number.
    static func certificateQuery(_ certificate: X509Certificate) -> RSAKeychainItemQuery {
        RSAKeychainItemQuery(
            itemClass: .certificate, issuer: certificate.issuer, serialNumber: certificate.serialNumber)
    }

    static func sortedCertificates(_ items: [RSACertificateAttributes]) -> [RSACertificateAttributes] {
        items.sorted(by: certificatePrecedes)
    }

    /// The listing order of certificates: label (UTF-8 bytes), then subject, then serial number.
    static func certificatePrecedes(_ a: RSACertificateAttributes, _ b: RSACertificateAttributes) -> Bool {
        if !a.label.utf8.elementsEqual(b.label.utf8) { return a.label.utf8.lexicographicallyPrecedes(b.label.utf8) }
        if a.subject != b.subject { return a.subject < b.subject }
        return a.serialNumber.lexicographicallyPrecedes(b.serialNumber)
    }

    /// The hash C of every certificate item file ("certificates/hh/C.item"), shard by shard in
    /// order, names sorted. Call under a lock.
    /// - Throws: `RSAError.storeIOError` when a folder cannot be listed.
    func certificateFileHashes() throws -> [String] {
        try recordFileHashes(in: StoreLayout.certificateDirectory, digits: 64)
    }

    /// Stage one certificate file and its index entries; returns its attributes.
    private func stageCertificate(
        _ certificate: X509Certificate, label: String, trust: RSACertificateTrust, chain: [[UInt8]],
        milliseconds: Int64, into tx: inout StoreTransaction
    ) throws -> RSACertificateAttributes {
        let group = accessGroupForNewItems
        let hash = StoreLayout.certificateHash(
            issuer: certificate.issuer, serialNumber: certificate.serialNumber, group: group)
        let metadata = StoreCertificateMetadata(
            itemID: StoreLayout.newItemID(hash: hash, kind: .certificate), label: label,
            subject: certificate.subject, issuer: certificate.issuer,
            serialNumber: StoreHex.encode(certificate.serialNumber),
            notValidBefore: StoreItemRecord.formatDate(
                milliseconds: Int64((certificate.notValidBefore.timeIntervalSince1970 * 1000).rounded(.down))),
            notValidAfter: StoreItemRecord.formatDate(
                milliseconds: Int64((certificate.notValidAfter.timeIntervalSince1970 * 1000).rounded(.down))),
            fingerprint: StoreHex.encode(certificate.fingerprint),
            publicKeyFingerprint: certificate.publicKeyFingerprint.map { StoreHex.encode($0.bytes) },
            trust: trust, chain: chain.map(StoreHex.encode),
            creationDate: StoreItemRecord.formatDate(milliseconds: milliseconds),
            accessGroup: RSAKeyStore.recordedGroup(group))
        try tx.stageFile(
            StoreLayout.certificatePath(hash: hash),
            contents: try Self.encodeCertificate(metadata, der: certificate.derRepresentation))
        for entry in Self.indexEntries(metadata, hash: hash) { try tx.createEmpty(entry) }
        return metadata.attributes()!
    }

    /// The index entries of a certificate item.
    static func indexEntries(_ metadata: StoreCertificateMetadata, hash: String) -> [String] {
        var entries = [
            StoreLayout.labelEntry(label: metadata.label, certificateHash: hash),
            StoreLayout.certificateFingerprintEntry(fingerprintHex: metadata.fingerprint, certificateHash: hash)
        ]
        if let spki = metadata.publicKeyFingerprint {
            entries.append(StoreLayout.certificateKeyEntry(fingerprintHex: spki, certificateHash: hash))
        }
        return entries
    }

    func removeCertificateIndex(_ metadata: StoreCertificateMetadata, hash: String, into tx: inout StoreTransaction) {
        for entry in Self.indexEntries(metadata, hash: hash) { tx.remove(entry) }
    }

    static func encodeCertificate(_ metadata: StoreCertificateMetadata, der: [UInt8]) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((StoreCertificateMetadata.magicLine + "\n").utf8) + Array(try encoder.encode(metadata)) + [0x0A]
            + Array(PEMDocument.encode(der, label: "CERTIFICATE").utf8)
    }

    /// A certificate file read and checked.
    struct LoadedCertificate {
        var metadata: StoreCertificateMetadata
        var attributes: RSACertificateAttributes
        var der: [UInt8]
        var path: String
        /// C, the file's name (``StoreLayout/certificateHash(issuer:serialNumber:group:)``).
        var hash: String
    }

    /// The readable certificates an index folder names: the entries "<prefix>C" of the folder
    /// of `entry` (an index entry made with an empty certificate hash). An entry whose file is
    /// gone is skipped (the index is rebuilt by writes); a damaged file throws. Call under a lock.
    ///
    /// - Throws: `RSAError.damagedItem`, `RSAError.storeIOError`.
    private func indexedCertificates(_ entry: String) throws -> [LoadedCertificate] {
        let prefix = StoreFileSystem.baseName(entry)
        return try StoreFileSystem.listDirectory(layout.absolute(StoreFileSystem.parent(of: entry))).compactMap {
            file in
            let hash = String(file.dropFirst(prefix.count))
            guard file.hasPrefix(prefix), StoreHex.isLowerHex(Substring(hash), count: 64) else { return nil }
            return try loadCertificate(hash: hash)
        }
    }

    /// The certificate item with this id (the caller holds a lock).
    ///
    /// - Throws: `RSAError.itemNotFound` (class certificate, this id) when the id names no
    ///   certificate, or one since replaced or deleted; `RSAError.damagedItem`; `RSAError.storeIOError`.
    func loadCertificate(id: String, anyGroup: Bool = false) throws -> LoadedCertificate {
        guard case let .certificate(hash)? = StoreLayout.parseAnyItemID(id),
            let loaded = try loadCertificate(hash: hash, anyGroup: anyGroup), loaded.metadata.itemID == id
        else {
            throw RSAError.itemNotFound(.item(id: id, itemClass: .certificate))
        }
        return loaded
    }

    /// Read and check the certificate file of `hash`; nil when absent, or when its access
    /// group is not visible through this store object (unless `anyGroup`).
    ///
    /// - Throws: `RSAError.damagedItem`, `RSAError.storeIOError`.
    func loadCertificate(hash: String, anyGroup: Bool = false) throws -> LoadedCertificate? {
        guard
            let file = try StorePEMItemFile<StoreCertificateMetadata>.read(
                layout.absolute(StoreLayout.certificatePath(hash: hash)),
                magicLine: StoreCertificateMetadata.magicLine,
                maximumByteCount: 4 * StoreItemRecord.maximumFileByteCount)
        else {
            return nil
        }
        let metadata = file.metadata
        guard metadata.format == 1, let attributes = metadata.attributes() else {
            throw file.damaged("the metadata record is not valid")
        }
        guard
            StoreLayout.certificateHash(
                issuer: metadata.issuer, serialNumber: attributes.serialNumber,
                group: attributes.accessGroup) == hash
        else {
            throw file.damaged("the issuer, serial and access group in the metadata do not match the file name")
        }
        guard case .certificate(let idHash)? = StoreLayout.parseAnyItemID(metadata.itemID), idHash == hash else {
            throw file.damaged("the item id does not belong to this item")
        }
        let der = try file.der(label: "CERTIFICATE", fingerprint: metadata.fingerprint, noun: "certificate")
        guard anyGroup || isVisible(attributes.accessGroup) else { return nil }
        return LoadedCertificate(metadata: metadata, attributes: attributes, der: der, path: file.path, hash: hash)
    }
}
