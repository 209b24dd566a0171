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
        _ entries: [(certificate: X509Certificate, label: String?, trust: RSACertificateTrust, chain: [X509Certificate])],
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
        _ entries: [(certificate: X509Certificate, label: String?, trust: RSACertificateTrust, chain: [X509Certificate])],
        replace: Bool, into tx: inout StoreTransaction
    ) throws -> [RSACertificateAttributes] {
        func defaultLabel(_ c: X509Certificate) -> String { c.subjectSummary.isEmpty ? c.subject : c.subjectSummary }
        do {
            let now = StoreItemRecord.nowMilliseconds()
            var staged = Set<String>()
            var result: [RSACertificateAttributes] = []
            for (certificate, label, trust, chain) in entries {
                let hash = StoreLayout.certificateHash(issuer: certificate.issuer, serialNumber: certificate.serialNumber)
                guard staged.insert(hash).inserted else { throw RSAError.duplicateItem(Self.certificateQuery(certificate)) }
                if let old = try? loadCertificate(hash: hash) {
                    guard replace else { throw RSAError.duplicateItem(Self.certificateQuery(certificate)) }
                    removeCertificateIndex(old.metadata, hash: hash, into: &tx)
                } else if try StoreFileSystem.status(layout.absolute(StoreLayout.certificatePath(hash: hash))) != nil {
                    guard replace else { throw RSAError.duplicateItem(Self.certificateQuery(certificate)) }
                }
                result.append(try stageCertificate(
                    certificate, label: label ?? defaultLabel(certificate), trust: trust,
                    chain: chain.map(\.fingerprint), milliseconds: now, into: &tx))
                for issuer in chain where issuer.fingerprint != certificate.fingerprint {
                    let issuerHash = StoreLayout.certificateHash(issuer: issuer.issuer, serialNumber: issuer.serialNumber)
                    guard try StoreFileSystem.status(layout.absolute(StoreLayout.certificatePath(hash: issuerHash))) == nil,
                          staged.insert(issuerHash).inserted else { continue }
                    _ = try stageCertificate(issuer, label: defaultLabel(issuer), trust: .unspecified, chain: [], milliseconds: now, into: &tx)
                }
            }
            return result
        }
    }

    /// Every certificate with this label (`kSecAttrLabel`), sorted by subject then serial.
    /// Lists one index folder.
    ///
    /// - Returns: the matching certificates; `[]` when none has the label (a list lookup
    ///   never throws `RSAError.itemNotFound`).
    /// - Throws: `RSAError.storeIOError`. Damaged items are left out.
    public func certificates(label: String) throws -> [RSACertificateAttributes] {
        let entry = StoreLayout.labelEntry(label: label, certificateHash: "")
        let name = StoreFileSystem.baseName(entry)
        let found: [RSACertificateAttributes] = try withReadLock {
            try StoreFileSystem.listDirectory(layout.absolute(StoreFileSystem.parent(of: entry))).compactMap { file in
                let hash = String(file.dropFirst(name.count))
                guard file.hasPrefix(name), StoreHex.isLowerHex(Substring(hash), count: 64),
                      let loaded = try? loadCertificate(hash: hash),
                      loaded.attributes.label.utf8.elementsEqual(label.utf8) else { return nil }
                return loaded.attributes
            }
        }
        return Self.sortedCertificates(found)
    }

    /// The certificate whose DER has this SHA-256 fingerprint (32 bytes). Lists one index folder.
    ///
    /// - Throws: `RSAError.itemNotFound` (class certificate, `certificateFingerprint`) when no
    ///   certificate has it; `RSAError.storeIOError`.
    public func certificate(fingerprint: [UInt8]) throws -> RSACertificateAttributes {
        let hex = StoreHex.encode(fingerprint)
        let entry = StoreLayout.certificateFingerprintEntry(fingerprintHex: hex, certificateHash: "")
        let name = StoreFileSystem.baseName(entry)
        let found: RSACertificateAttributes? = try withReadLock {
            for file in try StoreFileSystem.listDirectory(layout.absolute(StoreFileSystem.parent(of: entry))) where file.hasPrefix(name) {
                let hash = String(file.dropFirst(name.count))
                guard StoreHex.isLowerHex(Substring(hash), count: 64),
                      let loaded = try? loadCertificate(hash: hash), loaded.metadata.fingerprint == hex else { continue }
                return loaded.attributes
            }
            return nil
        }
        guard let found else {
            throw RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .certificate, certificateFingerprint: fingerprint))
        }
        return found
    }

    /// The certificates whose public key has this fingerprint (the SPKI SHA-256).
    ///
    /// - Returns: the matching certificates; `[]` when none matches.
    /// - Throws: `RSAError.storeIOError`.
    public func certificates(publicKeyFingerprint: RSAKeyFingerprint) throws -> [RSACertificateAttributes] {
        let hex = StoreHex.encode(publicKeyFingerprint.bytes)
        let found: [RSACertificateAttributes] = try withReadLock {
            try StoreFileSystem.listDirectory(layout.absolute(StoreLayout.fingerprintShard(hex))).compactMap { file in
                let parts = file.split(separator: ".")
                guard parts.count == 3, parts[0] == Substring(hex), parts[2] == "certificate",
                      StoreHex.isLowerHex(parts[1], count: 64),
                      let loaded = try? loadCertificate(hash: String(parts[1])),
                      loaded.metadata.publicKeyFingerprint == hex else { return nil }
                return loaded.attributes
            }
        }
        return Self.sortedCertificates(found)
    }

    /// The certificate itself (`kSecReturnRef`), parsed by GnuTLS and checked against the
    /// item's attributes. Opens one file.
    ///
    /// - Throws: `RSAError.itemNotFound` (class certificate, this item id) when no certificate
    ///   has the id; `RSAError.damagedItem`; `RSAError.storeIOError`.
    public func certificate(itemID: String) throws -> X509Certificate {
        guard case let .certificate(hash)? = StoreLayout.parseAnyItemID(itemID),
              let loaded = try withReadLock({ try loadCertificate(hash: hash) }), loaded.metadata.itemID == itemID else {
            throw RSAError.itemNotFound(.item(id: itemID, itemClass: .certificate))
        }
        return try Self.parsedCertificate(loaded)
    }

    /// The certificate of a read item, parsed by GnuTLS and checked against its metadata.
    /// - Throws: `RSAError.damagedItem` when it does not parse or does not match.
    static func parsedCertificate(_ loaded: LoadedCertificate) throws -> X509Certificate {
        let certificate: X509Certificate
        do {
            certificate = try X509Certificate(derRepresentation: loaded.der)
        } catch let error as RSAError {
            throw RSAError.damagedItem(tag: nil, path: loaded.path, reason: "the certificate does not parse (\(error.description))")
        }
        guard certificate.issuer == loaded.metadata.issuer, certificate.serialNumber == loaded.attributes.serialNumber,
              certificate.subject == loaded.metadata.subject,
              certificate.publicKeyFingerprint.map({ StoreHex.encode($0.bytes) }) == loaded.metadata.publicKeyFingerprint else {
            throw RSAError.damagedItem(tag: nil, path: loaded.path, reason: "the metadata does not match the certificate")
        }
        return certificate
    }

    /// Change a certificate's label or trust setting (`SecItemUpdate`; nil leaves it). The
    /// item id stays.
    ///
    /// - Throws: `RSAError.itemNotFound` (class certificate, this item id); `RSAError.invalidLabel`;
    ///   `RSAError.storeIOError`.
    @discardableResult
    public func updateCertificate(itemID: String, label: String? = nil, trust: RSACertificateTrust? = nil) throws -> RSACertificateAttributes {
        try RSAKeyStore.validateLabel(label)
        guard case let .certificate(hash)? = StoreLayout.parseAnyItemID(itemID) else { throw RSAError.itemNotFound(.item(id: itemID, itemClass: .certificate)) }
        return try withWriteTransaction { tx in
            guard let loaded = try loadCertificate(hash: hash), loaded.metadata.itemID == itemID else {
                throw RSAError.itemNotFound(.item(id: itemID, itemClass: .certificate))
            }
            var metadata = loaded.metadata
            if let label {
                if !label.utf8.elementsEqual(metadata.label.utf8) {
                    tx.remove(StoreLayout.labelEntry(label: metadata.label, certificateHash: hash))
                    try tx.createEmpty(StoreLayout.labelEntry(label: label, certificateHash: hash))
                }
                metadata.label = label
            }
            if let trust { metadata.trust = trust }
            try tx.stageFile(StoreLayout.certificatePath(hash: hash), contents: try Self.encodeCertificate(metadata, der: loaded.der))
            return metadata.attributes()!
        }
    }

    /// Delete a certificate item (`SecItemDelete`). Its private key, if any, stays.
    ///
    /// - Throws: `RSAError.itemNotFound` (class certificate, this item id); `RSAError.storeIOError`.
    public func deleteCertificate(itemID: String) throws {
        guard case let .certificate(hash)? = StoreLayout.parseAnyItemID(itemID) else { throw RSAError.itemNotFound(.item(id: itemID, itemClass: .certificate)) }
        try withWriteTransaction { tx in
            guard let loaded = try loadCertificate(hash: hash), loaded.metadata.itemID == itemID else {
                throw RSAError.itemNotFound(.item(id: itemID, itemClass: .certificate))
            }
            removeCertificateIndex(loaded.metadata, hash: hash, into: &tx)
            tx.remove(StoreLayout.certificatePath(hash: hash))
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
            key = try item(tag: tag, keyClass: .private)
        } catch RSAError.itemNotFound {
            return []
        }
        return try certificates(publicKeyFingerprint: key.fingerprint).compactMap { certificate in
            RSAIdentityItem(certificate: certificate, privateKey: key, chain: try chainAttributes(certificate))
        }
    }

    /// Every identity in the store (each certificate with a stored private key of the same
    /// public-key fingerprint), sorted by label.
    ///
    /// - Returns: the identities; `[]` when there is none.
    /// - Throws: `RSAError.storeIOError`.
    public func allIdentities() throws -> [RSAIdentityItem] {
        try allKeychainItems().certificates.compactMap { try identityIfPresent(for: $0) }
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
            throw RSAError.itemNotFound(RSAKeychainItemQuery(
                itemClass: .identity, label: certificate.label, certificateFingerprint: certificate.fingerprint))
        }
        return identity
    }

    /// ``identity(for:)``, or nil when no private key matches the certificate.
    func identityIfPresent(for certificate: RSACertificateAttributes) throws -> RSAIdentityItem? {
        guard let fingerprint = certificate.publicKeyFingerprint,
              let key = try items(fingerprint: fingerprint).first(where: { $0.keyClass == .private }) else { return nil }
        return RSAIdentityItem(certificate: certificate, privateKey: key, chain: try chainAttributes(certificate))
    }

    // MARK: Internals

    private func chainAttributes(_ certificate: RSACertificateAttributes) throws -> [RSACertificateAttributes] {
        certificate.chainFingerprints.compactMap { try? self.certificate(fingerprint: $0) }
    }

    /// The unique attributes of a certificate item: issuer and serial number.
    static func certificateQuery(_ certificate: X509Certificate) -> RSAKeychainItemQuery {
        RSAKeychainItemQuery(itemClass: .certificate, issuer: certificate.issuer, serialNumber: certificate.serialNumber)
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
        let hash = StoreLayout.certificateHash(issuer: certificate.issuer, serialNumber: certificate.serialNumber)
        let metadata = StoreCertificateMetadata(
            itemID: StoreLayout.newItemID(hash: hash, kind: "certificate"), label: label,
            subject: certificate.subject, issuer: certificate.issuer,
            serialNumber: StoreHex.encode(certificate.serialNumber),
            notValidBefore: StoreItemRecord.formatDate(milliseconds: Int64((certificate.notValidBefore.timeIntervalSince1970 * 1000).rounded(.down))),
            notValidAfter: StoreItemRecord.formatDate(milliseconds: Int64((certificate.notValidAfter.timeIntervalSince1970 * 1000).rounded(.down))),
            fingerprint: StoreHex.encode(certificate.fingerprint),
            publicKeyFingerprint: certificate.publicKeyFingerprint.map { StoreHex.encode($0.bytes) },
            trust: trust, chain: chain.map(StoreHex.encode),
            creationDate: StoreItemRecord.formatDate(milliseconds: milliseconds))
        try tx.stageFile(StoreLayout.certificatePath(hash: hash), contents: try Self.encodeCertificate(metadata, der: certificate.derRepresentation))
        for entry in Self.indexEntries(metadata, hash: hash) { try tx.createEmpty(entry) }
        return metadata.attributes()!
    }

    /// The index entries of a certificate item.
    static func indexEntries(_ metadata: StoreCertificateMetadata, hash: String) -> [String] {
        var entries = [
            StoreLayout.labelEntry(label: metadata.label, certificateHash: hash),
            StoreLayout.certificateFingerprintEntry(fingerprintHex: metadata.fingerprint, certificateHash: hash),
        ]
        if let spki = metadata.publicKeyFingerprint {
            entries.append(StoreLayout.certificateKeyEntry(fingerprintHex: spki, certificateHash: hash))
        }
        return entries
    }

    private func removeCertificateIndex(_ metadata: StoreCertificateMetadata, hash: String, into tx: inout StoreTransaction) {
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
    }

    /// Read and check the certificate file of `hash`; nil when absent.
    ///
    /// - Throws: `RSAError.damagedItem`, `RSAError.storeIOError`.
    func loadCertificate(hash: String) throws -> LoadedCertificate? {
        guard let file = try StorePEMItemFile<StoreCertificateMetadata>.read(layout.absolute(StoreLayout.certificatePath(hash: hash)),
                                                                             magicLine: StoreCertificateMetadata.magicLine,
                                                                             maximumByteCount: 4 * StoreItemRecord.maximumFileByteCount) else {
            return nil
        }
        let metadata = file.metadata
        guard metadata.format == 1, let attributes = metadata.attributes() else { throw file.damaged("the metadata record is not valid") }
        guard StoreLayout.certificateHash(issuer: metadata.issuer, serialNumber: attributes.serialNumber) == hash else {
            throw file.damaged("the issuer and serial in the metadata do not match the file name")
        }
        guard case .certificate(let idHash)? = StoreLayout.parseAnyItemID(metadata.itemID), idHash == hash else {
            throw file.damaged("the item id does not belong to this item")
        }
        let der = try file.der(label: "CERTIFICATE", fingerprint: metadata.fingerprint, noun: "certificate")
        return LoadedCertificate(metadata: metadata, attributes: attributes, der: der, path: file.path)
    }
}
