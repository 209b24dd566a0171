// Foundation form of the one store lookup that takes bytes (issue 28).
import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAKeyStore {
    /// The certificate whose DER has this SHA-256 fingerprint, given as 32 bytes in `Data`
    /// (or any `DataProtocol`); see ``certificate(fingerprint:)-([UInt8])``.
    /// - Throws: every error of the `[UInt8]` form (no such certificate; the store's read errors).
    public func certificate(fingerprint: some DataProtocol) throws -> RSACertificateAttributes {
        try certificate(fingerprint: [UInt8](fingerprint))
    }
}
