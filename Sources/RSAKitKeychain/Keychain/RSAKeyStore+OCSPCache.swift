// OCSP responses cached in the keychain until their nextUpdate: one file per
// certificate asked about, `ocsp/<kk>/<K>.item`, K = the cache key (SHA-256 of the issuer
// certificate's DER and the serial number). A magic line, a JSON record, the DER response as
// PEM "OCSP RESPONSE". A cached response is checked again (signature, CertID, dates) each
// time it is used; it is never trusted because it is in the store.
import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The metadata record of a cached OCSP response.
internal struct StoreOCSPMetadata: Codable, Equatable {
    static let magicLine = "rsakit ocsp item 1"
    var format = 1
    var key: String
    var nextUpdate: String
    var creationDate: String
}

extension RSAKeyStore: RSAOCSPResponseCache {
    /// The cached response under `key` whose nextUpdate is after `now`; nil otherwise (also
    /// for a damaged or unreadable file). Needs no passphrase.
    public func cachedOCSPResponse(key: [UInt8], now: Date) -> [UInt8]? {
        let keyHex = StoreHex.encode(key)
        let path = layout.absolute(StoreLayout.ocspPath(keyHex: keyHex))
        guard let file = try? withReadLock({ try StoreFileSystem.readFile(path, maximumByteCount: 256 * 1024) }) ?? nil
        else { return nil }
        let lines = file.bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count == 3, lines[0].elementsEqual(StoreOCSPMetadata.magicLine.utf8),
            let metadata = try? JSONDecoder().decode(StoreOCSPMetadata.self, from: Data(lines[1])),
            metadata.format == 1, metadata.key == keyHex,
            let next = StoreItemRecord.parseDate(metadata.nextUpdate),
            StoreItemRecord.date(milliseconds: next) > now
        else { return nil }
        let document = PEMDocument(scanning: Array(lines[2]))
        guard document.blocks.count == 1, document.blocks[0].label == "OCSP RESPONSE" else { return nil }
        return try? document.decode(document.blocks[0]).der
    }

    /// Store `response` under `key` until `nextUpdate` (one atomic write; a write error is ignored).
    public func cacheOCSPResponse(_ response: [UInt8], key: [UInt8], nextUpdate: Date) {
        let keyHex = StoreHex.encode(key)
        let metadata = StoreOCSPMetadata(
            key: keyHex,
            nextUpdate: StoreItemRecord.formatDate(
                milliseconds: Int64((nextUpdate.timeIntervalSince1970 * 1000).rounded(.down))),
            creationDate: StoreItemRecord.formatDate(milliseconds: StoreItemRecord.nowMilliseconds()))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let json = try? encoder.encode(metadata) else { return }
        let contents =
            Array((StoreOCSPMetadata.magicLine + "\n").utf8) + Array(json) + [0x0A]
            + Array(PEMDocument.encode(response, label: "OCSP RESPONSE").utf8)
        _ = try? withWriteTransaction { tx in
            try tx.stageFile(StoreLayout.ocspPath(keyHex: keyHex), contents: contents)
        }
    }
}
