// Certificate revocation lists in the keychain: one item per issuer, the newest CRL that
// issuer published (RFC 5280 §5.2.3: a higher cRLNumber supersedes a lower one). Trust
// evaluation over a store uses them as it uses ``RSATrust/crls`` (RSATrust+Keychain.swift).
import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAKeyStore {
    /// What ``addCRL(_:at:)`` did.
    public struct CRLAddition: Sendable, Hashable {
        /// The stored item.
        public let attributes: RSACRLAttributes
        /// The item it replaced: an older CRL of the same issuer (lower cRLNumber, or an
        /// earlier thisUpdate when either has no number); nil when there was none.
        public let superseded: RSACRLAttributes?
    }

    /// Add a CRL, superseding the stored CRL of the same issuer when this one is newer.
    ///
    /// Checks, each refusing the CRL by name (and writing nothing):
    /// - dates (RFC 5280 §5.1.2.4-5): thisUpdate after `date` ("not yet valid"), nextUpdate
    ///   before `date` ("stale");
    /// - signature, where the issuer is known: when the store holds certificates whose subject
    ///   is the CRL's issuer name, the CRL's signature must verify with the key of one of them
    ///   (GnuTLS `gnutls_x509_crl_verify`); an issuer the store does not hold is checked when a
    ///   trust evaluation uses the CRL;
    /// - order: unique on issuer + cRLNumber; a CRL older than the stored one (lower number,
    ///   or an earlier thisUpdate when either has no number) is refused, the same number with
    ///   other bytes is a duplicate, and the same bytes again are a duplicate.
    ///
    /// - Parameters:
    ///   - crl: the CRL (``X509CRL``).
    ///   - date: the date the dates are checked against; now by default.
    /// - Returns: the new item and the item it superseded.
    /// - Throws: `RSAError.crlRefused(reason:)` for the date, signature and order checks and
    ///   for a delta CRL (RFC 5280 §5.2.4: it would supersede the complete CRL it updates);
    ///   `RSAError.duplicateItem` (class CRL, issuer) for the same CRL number or bytes;
    ///   `RSAError.damagedItem`, `RSAError.storeIOError`.
    @discardableResult
    public func addCRL(_ crl: X509CRL, at date: Date = Date()) throws -> CRLAddition {
        try addCRLs([crl], at: date)[0]
    }

    /// Add several CRLs (a PEM bundle) in one atomic step: all or none, each checked as
    /// ``addCRL(_:at:)`` checks it, in order (a later CRL of the same issuer must be newer
    /// than an earlier one).
    ///
    /// - Returns: one ``CRLAddition`` per CRL, in order.
    /// - Throws: as ``addCRL(_:at:)``, for the first CRL refused; nothing is written then.
    @discardableResult
    public func addCRLs(_ crls: [X509CRL], at date: Date = Date()) throws -> [CRLAddition] {
        let storedCertificates = try allItems().certificates
        for crl in crls {
            try Self.checkCRL(
                crl, at: date, issuers: storedCertificates.filter { $0.subject == crl.issuer }, store: self)
        }
        return try withWriteTransaction { tx in
            var staged: [String: (der: [UInt8], attributes: RSACRLAttributes)] = [:]
            var additions: [CRLAddition] = []
            for crl in crls {
                let hash = StoreLayout.crlHash(issuer: crl.issuer)
                let old: (der: [UInt8], attributes: RSACRLAttributes)?
                if let earlier = staged[hash] {
                    old = earlier
                } else {
                    old = try loadCRL(hash: hash).map { ($0.der, $0.attributes) }
                }
                if let old {
                    if old.der == crl.derRepresentation
                        || (crl.crlNumber != nil && old.attributes.crlNumber == crl.crlNumber)
                    {
                        throw RSAError.duplicateItem(
                            RSAKeychainItemQuery(itemClass: .crl, issuer: crl.issuer, serialNumber: crl.crlNumber))
                    }
                    let stored = try X509CRL(derRepresentation: old.der)
                    if !RSATrust.isOlder(stored, crl) {
                        let number =
                            old.attributes.crlNumberHex.map { "number 0x\($0)" }
                            ?? "thisUpdate \(stored.thisUpdate.formatted(.iso8601))"
                        throw RSAError.crlRefused(
                            reason: "a newer CRL of \"\(crl.issuer)\" is stored (\(number)): this one is superseded")
                    }
                }
                let metadata = StoreCRLMetadata(
                    itemID: StoreLayout.newItemID(hash: hash, kind: .crl), issuer: crl.issuer,
                    crlNumber: crl.crlNumber.map(StoreHex.encode),
                    thisUpdate: Self.storeDate(crl.thisUpdate), nextUpdate: crl.nextUpdate.map(Self.storeDate),
                    fingerprint: StoreHex.encode(RSAHashAlgorithm.sha256.hash(crl.derRepresentation)),
                    revokedCount: crl.revokedCertificates.count,
                    creationDate: StoreItemRecord.formatDate(milliseconds: StoreItemRecord.nowMilliseconds()))
                try tx.stageFile(
                    StoreLayout.crlPath(hash: hash), contents: try Self.encodeCRL(metadata, der: crl.derRepresentation))
                let attributes = metadata.attributes()!
                // A CRL superseded inside the same bundle is not reported as replaced in the store.
                additions.append(
                    CRLAddition(attributes: attributes, superseded: staged[hash] == nil ? old?.attributes : nil))
                staged[hash] = (crl.derRepresentation, attributes)
            }
            return additions
        }
    }

    /// The checks of ``addCRL(_:at:)`` that need no lock: dates, and the signature when the
    /// store holds certificates of the issuer (`issuers`).
    private static func checkCRL(_ crl: X509CRL, at date: Date, issuers: [RSACertificateAttributes], store: RSAKeyStore)
        throws
    {
        // One CRL per issuer is kept: a delta CRL would supersede the complete CRL it updates.
        if let base = crl.baseCRLNumber {
            throw RSAError.crlRefused(
                reason:
                    "the CRL of \"\(crl.issuer)\" is a delta CRL (deltaCRLIndicator, base number "
                    + "0x\(StoreHex.encode(base))): "
                    + "the keychain keeps complete CRLs only; give a delta CRL to the evaluation (--crl)")
        }
        if crl.thisUpdate > date {
            throw RSAError.crlRefused(
                reason:
                    "the CRL of \"\(crl.issuer)\" is not yet valid: thisUpdate \(crl.thisUpdate.formatted(.iso8601))")
        }
        if let next = crl.nextUpdate, next < date {
            throw RSAError.crlRefused(
                reason: "the CRL of \"\(crl.issuer)\" is stale: nextUpdate \(next.formatted(.iso8601)) has passed")
        }
        guard !issuers.isEmpty else { return }
        let native = try GnuTLSCRL(der: crl.derRepresentation)
        let signed = try issuers.contains { item in
            native.isSigned(by: try store.certificateValue(id: item.itemID).gnutlsCertificate())
        }
        guard signed else {
            throw RSAError.crlRefused(
                reason:
                    "the signature of the CRL of \"\(crl.issuer)\" does not verify with the key of the stored "
                    + "certificate of that name"
            )
        }
    }

    /// The CRL item of this issuer (RFC 4514 name, exactly as ``RSACRLAttributes/issuer``):
    /// the store keeps one per issuer. Opens one file.
    ///
    /// - Throws: `RSAError.itemNotFound` (class CRL, issuer) when there is none;
    ///   `RSAError.damagedItem`; `RSAError.storeIOError`.
    public func crl(issuer: String) throws -> RSACRLAttributes {
        guard let loaded = try withReadLock({ try loadCRL(hash: StoreLayout.crlHash(issuer: issuer)) }),
            loaded.attributes.issuer == issuer
        else {
            throw RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .crl, issuer: issuer))
        }
        return loaded.attributes
    }

    /// Every CRL item, sorted by issuer name (UTF-8 bytes). Reads every CRL file; needs no
    /// passphrase. A lookup, not a listing: a damaged CRL file throws (``allItems()`` lists it
    /// among its problems beside the readable CRLs).
    ///
    /// - Returns: the attributes; `[]` when there is none.
    /// - Throws: `RSAError.damagedItem` for a CRL file that does not read; `RSAError.storeIOError`.
    public func allCRLs() throws -> [RSACRLAttributes] {
        try loadAllCRLs().map(\.attributes)
    }

    /// The CRLs themselves (parsed), in the order of ``allCRLs()``: what trust evaluation uses.
    ///
    /// - Throws: `RSAError.damagedItem` for a file that does not read, or whose CRL does not
    ///   parse or does not match its metadata; `RSAError.storeIOError`.
    public func allCRLValues() throws -> [X509CRL] {
        try loadAllCRLs().map { loaded in
            guard let crl = try? X509CRL(derRepresentation: loaded.der), crl.issuer == loaded.attributes.issuer else {
                throw RSAError.damagedItem(
                    tag: nil, path: loaded.path, reason: "the CRL does not parse or does not match its metadata")
            }
            return crl
        }
    }

    /// Delete the CRL of this issuer (RFC 4514 name, exactly as ``RSACRLAttributes/issuer``).
    ///
    /// - Returns: the deleted item.
    /// - Throws: `RSAError.itemNotFound` (class CRL, issuer) when there is none; `RSAError.storeIOError`.
    @discardableResult
    public func deleteCRL(issuer: String) throws -> RSACRLAttributes {
        let hash = StoreLayout.crlHash(issuer: issuer)
        return try withWriteTransaction { tx in
            guard let loaded = try loadCRL(hash: hash), loaded.attributes.issuer == issuer else {
                throw RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .crl, issuer: issuer))
            }
            tx.remove(StoreLayout.crlPath(hash: hash))
            return loaded.attributes
        }
    }

    /// Delete the CRL whose DER has this SHA-256 fingerprint (32 bytes).
    ///
    /// - Returns: the deleted item.
    /// - Throws: `RSAError.itemNotFound` (class CRL, fingerprint) when there is none; `RSAError.storeIOError`.
    @discardableResult
    public func deleteCRL(fingerprint: [UInt8]) throws -> RSACRLAttributes {
        guard let item = try allCRLs().first(where: { $0.fingerprint == fingerprint }) else {
            throw RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .crl, certificateFingerprint: fingerprint))
        }
        return try deleteCRL(issuer: item.issuer)
    }

    /// Delete the CRL whose DER has this SHA-256 fingerprint (32 bytes), given as `Data`.
    ///
    /// - Returns: the deleted item.
    /// - Throws: `RSAError.itemNotFound` (class CRL, fingerprint) when there is none; `RSAError.storeIOError`.
    @discardableResult
    public func deleteCRL(fingerprint: Data) throws -> RSACRLAttributes {
        try deleteCRL(fingerprint: [UInt8](fingerprint))
    }

    // MARK: Internals

    /// A CRL file read and checked.
    struct LoadedCRL {
        var attributes: RSACRLAttributes
        var der: [UInt8]
        var path: String
    }

    private static func storeDate(_ date: Date) -> String {
        StoreItemRecord.formatDate(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    static func encodeCRL(_ metadata: StoreCRLMetadata, der: [UInt8]) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((StoreCRLMetadata.magicLine + "\n").utf8) + Array(try encoder.encode(metadata)) + [0x0A]
            + Array(PEMDocument.encode(der, label: "X509 CRL").utf8)
    }

    private func loadAllCRLs() throws -> [LoadedCRL] {
        let found = try withReadLock { try crlFileHashes().compactMap { try loadCRL(hash: $0) } }
        return found.sorted { Self.crlPrecedes($0.attributes, $1.attributes) }
    }

    /// The listing order of CRLs: issuer name (UTF-8 bytes).
    static func crlPrecedes(_ a: RSACRLAttributes, _ b: RSACRLAttributes) -> Bool {
        a.issuer.utf8.lexicographicallyPrecedes(b.issuer.utf8)
    }

    static func sortedCRLs(_ items: [RSACRLAttributes]) -> [RSACRLAttributes] {
        items.sorted(by: crlPrecedes)
    }

    /// The hash I of every CRL item file ("crls/ii/I.item"). Call under a lock.
    /// - Throws: `RSAError.storeIOError` when a folder cannot be listed.
    func crlFileHashes() throws -> [String] {
        try recordFileHashes(in: StoreLayout.crlDirectory, digits: 64)
    }

    /// Read and check the CRL file of `hash`; nil when absent.
    ///
    /// - Throws: `RSAError.damagedItem`, `RSAError.storeIOError`.
    func loadCRL(hash: String) throws -> LoadedCRL? {
        guard
            let file = try StorePEMItemFile<StoreCRLMetadata>.read(
                layout.absolute(StoreLayout.crlPath(hash: hash)),
                magicLine: StoreCRLMetadata.magicLine, maximumByteCount: 32 * 1024 * 1024)
        else {
            return nil
        }
        let metadata = file.metadata
        guard metadata.format == 1, let attributes = metadata.attributes() else {
            throw file.damaged("the metadata record is not valid")
        }
        guard StoreLayout.crlHash(issuer: metadata.issuer) == hash,
            case .crl(let idHash)? = StoreLayout.parseAnyItemID(metadata.itemID), idHash == hash
        else {
            throw file.damaged("the issuer or item id in the metadata does not match the file name")
        }
        let der = try file.der(label: "X509 CRL", fingerprint: metadata.fingerprint, noun: "CRL")
        return LoadedCRL(attributes: attributes, der: der, path: file.path)
    }
}
