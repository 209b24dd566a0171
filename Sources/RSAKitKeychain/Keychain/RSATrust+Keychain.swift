import RSAKitCore
import RSAKitPKI

extension RSATrust {
    /// Search `store` as Apple's SecTrust searches the keychains (SecTrustSetKeychains):
    ///
    /// - every certificate in the store (added with `cert add`, or the chain of an identity)
    ///   becomes a candidate for building the chain, appended to ``certificates`` after the
    ///   ones already there; being in the store does not make a certificate trusted;
    /// - certificates marked trusted (`cert add --trust`) become anchors and user-trusted
    ///   (``userTrustedFingerprints``: a chain through one evaluates to
    ///   ``RSATrustResult/proceed``); certificates marked distrusted deny;
    /// - the store's CRLs (``RSAKeyStore/addCRL(_:at:)``) are appended to ``crls``;
    /// - the store becomes the ``ocspResponseCache``.
    ///
    /// Reads attributes and certificates only: a protected store need not be unlocked.
    /// - Throws: the store's read errors (`RSAError.storeIOError`, `RSAError.damagedItem`).
    public mutating func addKeychain(_ store: RSAKeyStore) throws {
        var present = Set(certificates.map(\.derRepresentation))
        for item in try store.allItems().certificates {
            let certificate = try store.certificateValue(id: item.itemID)
            if present.insert(certificate.derRepresentation).inserted {
                certificates.append(certificate)
            }
            switch item.trust {
            case .trusted:
                userTrustedFingerprints.insert(item.fingerprint)
                anchorCertificates.append(certificate)
            case .distrusted:
                userDistrustedFingerprints.insert(item.fingerprint)
            default:
                break
            }
        }
        let givenCRLs = Set(crls.map(\.derRepresentation))
        crls += try store.allCRLValues().filter { !givenCRLs.contains($0.derRepresentation) }
        ocspResponseCache = store
    }
}
