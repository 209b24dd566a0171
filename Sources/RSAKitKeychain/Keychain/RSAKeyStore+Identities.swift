// Identities added in one journaled write: a private key (as a key pair) and its
// certificate with the chain (SecPKCS12Import followed by SecItemAdd of the identity).

import RSAKitCore
import RSAKitPKI

extension RSAKeyStore {
    /// Add an identity: the key pair under `tag` and the certificate (label `label`) with
    /// its chain, in ONE write transaction, so a failure stores nothing.
    ///
    /// Re-import: a key is stored once (found by its SPKI fingerprint). When the store already
    /// holds this key under another tag, `replace` moves it to `tag` (the items under the old
    /// tag are removed in the same write) and without `replace` the call throws
    /// `RSAError.keyStoredUnderAnotherTag`. The certificate (unique on issuer + serial) is
    /// replaced with its new label, so the result is one identity under the new names.
    ///
    /// - Parameters:
    ///   - privateKey: the key; `certificate` must hold its public key.
    ///   - certificate: the leaf certificate.
    ///   - chain: the chain certificates (stored as certificate items when absent).
    ///   - tag: the application tag of the key pair.
    ///   - label: the certificate's label (default: its subject summary); also the key's label.
    ///   - replace: replace existing items with the same tag or issuer + serial.
    /// - Returns: the identity as stored.
    /// - Throws: `RSAError.keyTypeMismatch` when the certificate is not the key's,
    ///   `RSAError.keyStoredUnderAnotherTag` (without `replace`),
    ///   `RSAError.duplicateItem` without `replace`: naming the identity (class identity, key
    ///   tag, label and certificate fingerprint) when this key and certificate are stored
    ///   already, else the key with `tag` or the certificate's issuer and serial that is in the
    ///   way; `RSAError.invalidTag`,
    ///   `RSAError.invalidLabel`, `RSAError.keychainLocked` (protected store, locked),
    ///   `RSAError.storeIOError`.
    @discardableResult
    public func addIdentity(
        privateKey: RSAPrivateKey, certificate: X509Certificate, chain: [X509Certificate] = [],
        tag: String, label: String? = nil, replace: Bool = false
    ) throws -> RSAIdentityItem {
        let fingerprint = privateKey.publicKey.fingerprint
        guard certificate.publicKeyFingerprint == fingerprint else {
            throw RSAError.keyTypeMismatch(
                expected: "the certificate of the private key",
                found: "a certificate for another key (\(certificate.subjectSummary))")
        }
        let certificateLabel =
            label ?? (certificate.subjectSummary.isEmpty ? certificate.subject : certificate.subjectSummary)
        try RSAKeyStore.validateTag(tag)
        try RSAKeyStore.validateLabel(certificateLabel)
        let requests = [
            NewItem(
                keyClass: .public, tag: tag, label: certificateLabel, keySizeInBits: privateKey.modulusBitCount,
                fingerprint: fingerprint, pem: privateKey.publicKey.pemRepresentation,
                pssRestriction: privateKey.pssRestriction),
            NewItem(
                keyClass: .private, tag: tag, label: certificateLabel, keySizeInBits: privateKey.modulusBitCount,
                fingerprint: fingerprint, pem: privateKey.pkcs8PEMRepresentation, privateKey: privateKey,
                pssRestriction: privateKey.pssRestriction)
        ]
        let keys: [RSAKeyItemAttributes], certificates: [RSACertificateAttributes]
        do {
            (keys, certificates) = try addIdentityItems(
                requests, certificate: certificate, chain: chain, label: certificateLabel,
                tag: tag, replace: replace)
        } catch let RSAError.duplicateItem(query) where !replace {
            // The same identity again: say so, as SecItemAdd names the item it refused, rather
            // than naming the first of its parts that was in the way.
            if let existing = try identities(tag: tag).first(where: {
                $0.certificate.fingerprint == certificate.fingerprint
            }) {
                throw RSAError.duplicateItem(
                    RSAKeychainItemQuery(
                        itemClass: .identity, applicationTag: tag, label: existing.certificate.label,
                        certificateFingerprint: certificate.fingerprint))
            }
            throw RSAError.duplicateItem(query)
        }
        return try identityIfPresent(for: certificates[0])
            ?? RSAIdentityItem(certificate: certificates[0], privateKey: keys[1], chain: [])
    }

    /// Import a PKCS#12 file as an identity in one call (Apple's `SecPKCS12Import` followed
    /// by `SecItemAdd` of the identity): `RSAPKCS12(derRepresentation:passphrase:)`
    /// (the MAC is verified first), then ``addIdentity(privateKey:certificate:chain:tag:label:replace:)``
    /// in one write, so a failure stores nothing. `importIdentityAsync(pkcs12:passphrase:tag:label:replace:)`
    /// is its async form.
    ///
    /// - Parameters:
    ///   - pkcs12: the file's DER bytes, at most ``RSAPKCS12/maximumByteCount``.
    ///   - passphrase: the file's passphrase, as UTF-8 bytes (empty for none).
    ///   - tag: the key pair's application tag (default: the label).
    ///   - label: the certificate's label (default: the file's friendly name, else the
    ///     certificate's subject summary), as `rsakit identity import` chooses it.
    ///   - replace: replace items with the same tag or issuer + serial (only then is an
    ///     existing label replaced).
    /// - Returns: the identity as stored, and the file's contents (its warnings, chain and
    ///   ``RSAPKCS12/trust``, to evaluate with the app's anchors).
    /// - Throws: `RSAError.pkcs12Unusable` or `.wrongPassphrase` for the file; every error of
    ///   ``addIdentity(privateKey:certificate:chain:tag:label:replace:)``.
    @discardableResult
    public func importIdentity(
        pkcs12: [UInt8], passphrase: [UInt8], tag: String? = nil, label: String? = nil,
        replace: Bool = false
    ) throws -> (identity: RSAIdentityItem, contents: RSAPKCS12) {
        let contents = try RSAPKCS12(derRepresentation: pkcs12, passphrase: passphrase)
        let label = label ?? contents.friendlyName ?? contents.certificate.subjectSummary
        let identity = try addIdentity(
            privateKey: contents.privateKey, certificate: contents.certificate,
            chain: contents.chain, tag: tag ?? label, label: label, replace: replace)
        return (identity, contents)
    }

    private func addIdentityItems(
        _ requests: [NewItem], certificate: X509Certificate, chain: [X509Certificate], label certificateLabel: String,
        tag: String, replace: Bool
    ) throws -> ([RSAKeyItemAttributes], [RSACertificateAttributes]) {
        let fingerprint = requests[0].fingerprint
        return try withWriteTransaction { tx in
            // Per group, as uniqueness: the same key under another tag in another group is
            // another group's business.
            let group = accessGroupForNewItems
            let elsewhere = try itemsHoldingLock(fingerprint: fingerprint, skippingDamaged: true)
                .filter { $0.applicationTag != tag && $0.accessGroup == group }
            if let first = elsewhere.first {
                guard replace else {
                    throw RSAError.keyStoredUnderAnotherTag(tag: first.applicationTag, requestedTag: tag)
                }
                for item in elsewhere {
                    let tagHash = StoreLayout.tagHash(item.applicationTag, group: item.accessGroup)
                    tx.remove(StoreLayout.itemPath(item.keyClass, tagHash: tagHash))
                    tx.remove(
                        StoreLayout.fingerprintEntry(
                            fingerprintHex: StoreHex.encode(fingerprint.bytes),
                            tagHash: tagHash, keyClass: item.keyClass))
                }
            }
            let keys = try stage(requests, replace: replace, into: &tx)
            let certificates = try stageCertificates(
                [(certificate, certificateLabel, .unspecified, chain)], replace: replace, into: &tx)
            return (keys, certificates)
        }
    }
}
