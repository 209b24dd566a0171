import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The user's trust setting of a stored certificate (`cert add --trust` / `--distrust`,
/// like `security add-trusted-cert` and its deny setting). Trust evaluation treats a
/// trusted certificate as an anchor (result "proceed") and a distrusted one as "deny".
public enum RSACertificateTrust: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Marked trusted by the user: an anchor.
    case trusted
    /// Marked distrusted by the user: any chain through it is denied.
    case distrusted
    /// No setting (the default): the certificate is only a candidate for chain building.
    case unspecified

    /// "trusted", "distrusted" or "unspecified".
    public var description: String { rawValue }
}

/// The attributes of one certificate item (Apple's `kSecClassCertificate`), as
/// `SecItemCopyMatching` with `kSecReturnAttributes` reports them. Two items never share
/// (``issuer``, ``serialNumber``).
public struct RSACertificateAttributes: Sendable, Hashable, CustomStringConvertible {
    /// The label (`kSecAttrLabel`); by default the subject summary (the common name, as
    /// `SecCertificateCopySubjectSummary` gives it).
    public let label: String
    /// The subject name, RFC 4514 string.
    public let subject: String
    /// The issuer name, RFC 4514 string.
    public let issuer: String
    /// The serial number, big-endian bytes as in the certificate.
    public let serialNumber: [UInt8]
    /// The start of the validity period.
    public let notValidBefore: Date
    /// The end of the validity period.
    public let notValidAfter: Date
    /// SHA-256 of the certificate's DER (32 bytes).
    public let fingerprint: [UInt8]
    /// SHA-256 of the subject public key's SPKI DER, which links the certificate to a stored
    /// private key with the same fingerprint (an identity); nil when GnuTLS gave no SPKI.
    public let publicKeyFingerprint: RSAKeyFingerprint?
    /// The user's trust setting.
    public let trust: RSACertificateTrust
    /// SHA-256 fingerprints of the chain certificates stored with this one (issuer first),
    /// for identities; empty for most certificates.
    public let chainFingerprints: [[UInt8]]
    /// When the item was added (UTC, to the millisecond).
    public let creationDate: Date
    /// The stable item id (persistent reference).
    public let itemID: String
    /// The access group (`kSecAttrAccessGroup`): ``RSAKeyStore/defaultAccessGroup`` for an
    /// item added without one and for every item of a store written before access groups.
    public internal(set) var accessGroup: String = RSAKeyStore.defaultAccessGroup

    /// Build attributes (the store does this; public for tests and tools).
    public init(
        label: String, subject: String, issuer: String, serialNumber: [UInt8], notValidBefore: Date,
        notValidAfter: Date, fingerprint: [UInt8], publicKeyFingerprint: RSAKeyFingerprint?,
        trust: RSACertificateTrust, chainFingerprints: [[UInt8]], creationDate: Date, itemID: String
    ) {
        self.label = label
        self.subject = subject
        self.issuer = issuer
        self.serialNumber = serialNumber
        self.notValidBefore = notValidBefore
        self.notValidAfter = notValidAfter
        self.fingerprint = fingerprint
        self.publicKeyFingerprint = publicKeyFingerprint
        self.trust = trust
        self.chainFingerprints = chainFingerprints
        self.creationDate = creationDate
        self.itemID = itemID
    }

    /// Lower-case hex of ``fingerprint`` (64 digits).
    public var fingerprintHex: String { StoreHex.encode(fingerprint) }
    /// Lower-case hex of ``serialNumber``.
    public var serialNumberHex: String { StoreHex.encode(serialNumber) }

    /// One line for logs.
    public var description: String {
        "certificate item \(itemID): label \"\(label)\", subject \(subject), serial \(serialNumberHex), \(trust)"
    }
}

/// An identity (Apple's `kSecClassIdentity`): a stored certificate whose public key
/// fingerprint equals a stored private key's. Not stored twice: derived from the two items.
public struct RSAIdentityItem: Sendable, Hashable {
    /// The certificate item.
    public let certificate: RSACertificateAttributes
    /// The private key item (open it with ``RSAKeyStore/privateKey(tag:)``).
    public let privateKey: RSAKeyItemAttributes
    /// The chain certificates stored with the certificate, in the order recorded, when
    /// present in the store.
    public let chain: [RSACertificateAttributes]
    /// The identity's access group: its private key's (the item that access protects).
    public var accessGroup: String { privateKey.accessGroup }
}

/// A certificate item file:
///
///   rsakit certificate item 1
///   {"fingerprint":"...","issuer":"...","itemID":"C-certificate-R","label":"...",...}
///   -----BEGIN CERTIFICATE-----
///   ...
///   -----END CERTIFICATE-----
internal struct StoreCertificateMetadata: Codable, Equatable {
    static let magicLine = "rsakit certificate item 1"
    var format: Int = 1
    var itemID: String
    var label: String
    var subject: String
    var issuer: String
    var serialNumber: String
    var notValidBefore: String
    var notValidAfter: String
    var fingerprint: String
    var publicKeyFingerprint: String?
    var trust: RSACertificateTrust
    var chain: [String]
    var creationDate: String
    /// The access group; absent for the default group.
    var accessGroup: String? = nil

    func attributes() -> RSACertificateAttributes? {
        guard let created = StoreItemRecord.parseDate(creationDate),
            let before = StoreItemRecord.parseDate(notValidBefore),
            let after = StoreItemRecord.parseDate(notValidAfter),
            let fingerprintBytes = StoreHex.decode(fingerprint), fingerprintBytes.count == 32,
            let serial = StoreHex.decode(serialNumber)
        else { return nil }
        var spki: RSAKeyFingerprint?
        if let text = publicKeyFingerprint {
            guard let bytes = StoreHex.decode(text), let value = RSAKeyFingerprint(bytes: bytes) else { return nil }
            spki = value
        }
        var chainBytes: [[UInt8]] = []
        for entry in chain {
            guard let bytes = StoreHex.decode(entry), bytes.count == 32 else { return nil }
            chainBytes.append(bytes)
        }
        var attributes = RSACertificateAttributes(
            label: label, subject: subject, issuer: issuer, serialNumber: serial,
            notValidBefore: StoreItemRecord.date(milliseconds: before),
            notValidAfter: StoreItemRecord.date(milliseconds: after),
            fingerprint: fingerprintBytes, publicKeyFingerprint: spki, trust: trust,
            chainFingerprints: chainBytes, creationDate: StoreItemRecord.date(milliseconds: created), itemID: itemID)
        guard let group = RSAKeyStore.checkedGroup(accessGroup) else { return nil }
        attributes.accessGroup = group
        return attributes
    }
}

extension StoreHex {
    /// The bytes of lower-case (or upper-case) hexadecimal text, or nil.
    static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
