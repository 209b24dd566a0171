// The attributes of a stored CRL item (rsakit's CRL class: Apple's keychain keeps CRLs as
// kSecClassCertificate's neighbour in the old CSSM keychains; here they are their own class),
// and the metadata record of its file:
//
//   rsakit crl item 1
//   {"crlNumber":"02","creationDate":"...","fingerprint":"...","format":1,"issuer":"CN=...",...}
//   -----BEGIN X509 CRL-----
//   ...
//   -----END X509 CRL-----
import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the store knows about one CRL item without parsing the CRL. One item per issuer:
/// the newest CRL that issuer published (RFC 5280 §5.2.3 cRLNumber, else thisUpdate).
public struct RSACRLAttributes: Sendable, Hashable {
    /// The item id (persistent reference): "I-crl-R", I the SHA-256 of the issuer name.
    public let itemID: String
    /// The issuer name, RFC 4514 (`CN=RSAKit Test Intermediate,O=RSAKit Tests`).
    public let issuer: String
    /// The cRLNumber (RFC 5280 §5.2.3), big-endian bytes; nil when the CRL has none.
    public let crlNumber: [UInt8]?
    /// thisUpdate.
    public let thisUpdate: Date
    /// nextUpdate; nil when absent.
    public let nextUpdate: Date?
    /// SHA-256 of the CRL's DER (32 bytes).
    public let fingerprint: [UInt8]
    /// How many certificates the CRL lists.
    public let revokedCount: Int
    /// When the item was added.
    public let creationDate: Date

    /// The cRLNumber in lower-case hex, or nil.
    public var crlNumberHex: String? { crlNumber.map(StoreHex.encode) }
    /// The fingerprint in lower-case hex (64 digits).
    public var fingerprintHex: String { StoreHex.encode(fingerprint) }
}

/// The metadata record of a CRL item file (JSON keys sorted; optional keys absent when nil).
internal struct StoreCRLMetadata: Codable, Equatable {
    static let magicLine = "rsakit crl item 1"
    var format = 1
    var itemID: String
    var issuer: String
    /// Lower-case hex, as encoded.
    var crlNumber: String?
    /// "YYYY-MM-DDTHH:MM:SS.mmmZ", UTC (as every store date).
    var thisUpdate: String
    var nextUpdate: String?
    /// Lower-case hex SHA-256 of the DER.
    var fingerprint: String
    var revokedCount: Int
    var creationDate: String

    /// The public attributes, or nil when a field does not parse.
    func attributes() -> RSACRLAttributes? {
        guard let thisMs = StoreItemRecord.parseDate(thisUpdate),
            let createdMs = StoreItemRecord.parseDate(creationDate),
            let fingerprintBytes = StoreHex.decode(fingerprint), fingerprintBytes.count == 32
        else { return nil }
        var next: Date?
        if let nextUpdate {
            guard let ms = StoreItemRecord.parseDate(nextUpdate) else { return nil }
            next = StoreItemRecord.date(milliseconds: ms)
        }
        var number: [UInt8]?
        if let crlNumber {
            guard let bytes = StoreHex.decode(crlNumber) else { return nil }
            number = bytes
        }
        return RSACRLAttributes(
            itemID: itemID, issuer: issuer, crlNumber: number, thisUpdate: StoreItemRecord.date(milliseconds: thisMs),
            nextUpdate: next, fingerprint: fingerprintBytes, revokedCount: revokedCount,
            creationDate: StoreItemRecord.date(milliseconds: createdMs))
    }
}
