// One item file: a magic line, the metadata record as one line of JSON, then the key as PEM
// (PKCS#8 "PRIVATE KEY" or SPKI "PUBLIC KEY"):
//
//   rsakit key item 1
//   {"applicationTag":"com.example.key","creationDate":"2025-01-31T12:00:00.000Z",...}
//   -----BEGIN PRIVATE KEY-----
//   ...
//   -----END PRIVATE KEY-----
//
// A private item whose key is on a PKCS#11 token carries "token" (module path, token label and
// serial, CKA_ID in hex) in its metadata and the SPKI "PUBLIC KEY" in place of the PKCS#8.
//
// PEM readers skip text before the BEGIN line (RFC 7468 §2), so `openssl pkey -in FILE`
// reads an item file as it is. One file per item keeps every item write one rename.

import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The metadata record of an item file (JSON keys in sorted order; `label` absent when nil).
package struct StoreItemMetadata: Codable, Equatable {
    /// Format of this record; 1.
    package var format: Int
    package var itemID: String
    package var keyClass: RSAKeyClass
    package var applicationTag: String
    package var label: String?
    package var keySizeInBits: Int
    /// Lower-case hex SHA-256 of the SPKI DER (64 digits).
    package var fingerprint: String
    /// "YYYY-MM-DDTHH:MM:SS.mmmZ", UTC.
    package var creationDate: String
    /// True for a private item whose key is sealed (protected store); absent otherwise.
    var sealed: Bool?
    /// For a private item whose key is on a PKCS#11 token: where (the PEM is then the SPKI
    /// "PUBLIC KEY"); absent otherwise.
    var token: RSATokenReference? = nil
    /// The access group; absent for the default group.
    var accessGroup: String? = nil

    /// The associated data of a sealed private key: ("private", tag, fingerprint, item id).
    var sealedAssociatedData: [UInt8] {
        StoreSealing.associatedData(kind: keyClass.rawValue, identity: [applicationTag, fingerprint], itemID: itemID)
    }
}

extension StoreItemMetadata {
    /// A key item's record as the store writes it, unsealed and in memory (its memberwise
    /// initialiser is not visible outside this module: the fuzzing entry points build one).
    package static func record(
        format: Int, itemID: String, keyClass: RSAKeyClass, applicationTag: String, label: String?,
        keySizeInBits: Int, fingerprint: String, creationDate: String
    ) -> StoreItemMetadata {
        StoreItemMetadata(
            format: format, itemID: itemID, keyClass: keyClass, applicationTag: applicationTag, label: label,
            keySizeInBits: keySizeInBits, fingerprint: fingerprint, creationDate: creationDate)
    }
}

package enum StoreItemRecord {
    static let magicLine = "rsakit key item 1"
    static let format = 1
    /// No item file is larger: a 16384-bit PKCS#8 PEM is about 12.7 KiB; a label of
    /// 4096 bytes escaped as JSON at most 24 KiB.
    static let maximumFileByteCount = 64 * 1024

    /// How many times `needle` (not empty) occurs in `text`, compared as UTF-8 bytes. For
    /// "-----BEGIN ", which cannot overlap itself, the count `ranges(of:)` gives; a byte
    /// loop instead of _StringProcessing's search, which took about a quarter of the time of
    /// reading an item file (callgrind, a PKCS#11 signing process).
    static func occurrenceCount(of needle: String, in text: String) -> Int {
        let pattern = Array(needle.utf8), bytes = Array(text.utf8)
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return 0 }
        var count = 0
        for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
            if bytes[start..<start + pattern.count].elementsEqual(pattern) { count += 1 }
        }
        return count
    }

    /// The bytes of an item file.
    package static func encode(_ metadata: StoreItemMetadata, pem: String) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = try encoder.encode(metadata)
        // JSONEncoder escapes control characters (including "\n"), so the record is one line.
        var out = Array((magicLine + "\n").utf8)
        out += json
        out.append(0x0A)
        out += Array(pem.utf8)
        if out.last != 0x0A { out.append(0x0A) }
        return out
    }

    /// Split an item file into its metadata and its PEM text.
    ///
    /// - Throws: a `String` reason (the caller wraps it in `RSAError.damagedItem`).
    package static func decode(_ bytes: [UInt8]) throws -> (metadata: StoreItemMetadata, pem: String) {
        guard !bytes.isEmpty else { throw StoreDamage("the file is empty") }
        guard let firstNewline = bytes.firstIndex(of: 0x0A),
            bytes[..<firstNewline].elementsEqual(magicLine.utf8)
        else {
            throw StoreDamage("the file does not start with \"\(magicLine)\"")
        }
        let jsonStart = firstNewline + 1
        guard let secondNewline = bytes[jsonStart...].firstIndex(of: 0x0A) else {
            throw StoreDamage("the metadata record is truncated")
        }
        let metadata: StoreItemMetadata
        do {
            metadata = try JSONDecoder().decode(StoreItemMetadata.self, from: Data(bytes[jsonStart..<secondNewline]))
        } catch {
            throw StoreDamage("the metadata record is not valid")
        }
        guard metadata.format == format else {
            throw StoreDamage("unsupported item format \(metadata.format)")
        }
        let pemBytes = bytes[(secondNewline + 1)...]
        guard pemBytes.starts(with: "-----BEGIN ".utf8) else {
            throw StoreDamage("no PEM block after the metadata record")
        }
        guard let pem = String(validating: pemBytes, as: UTF8.self) else {
            throw StoreDamage("the PEM block is not text")
        }
        return (metadata, pem)
    }

    // MARK: Dates

    /// Milliseconds since 1970-01-01T00:00:00Z, now.
    static func nowMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// The `Date` of a millisecond count (the one conversion used both ways, so a date read
    /// back equals the date returned when the item was added).
    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// "YYYY-MM-DDTHH:MM:SS.mmmZ" for a millisecond count (UTC).
    package static func formatDate(milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds.dividedRoundingDown(by: 1000))
        let millis = Int(milliseconds - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return pad(Int(parts.tm_year) + 1900, 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-"
            + pad(Int(parts.tm_mday), 2) + "T" + pad(Int(parts.tm_hour), 2) + ":"
            + pad(Int(parts.tm_min), 2) + ":" + pad(Int(parts.tm_sec), 2) + "." + pad(millis, 3) + "Z"
    }

    /// The millisecond count of "YYYY-MM-DDTHH:MM:SS.mmmZ", or nil when the text is not
    /// exactly in that form (or names an impossible date).
    package static func parseDate(_ text: String) -> Int64? {
        let chars = Array(text.utf8)
        // 0123456789012345678901234
        // YYYY-MM-DDTHH:MM:SS.mmmZ
        guard chars.count == 24, chars[4] == 0x2D, chars[7] == 0x2D, chars[10] == 0x54,
            chars[13] == 0x3A, chars[16] == 0x3A, chars[19] == 0x2E, chars[23] == 0x5A
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for c in chars[range] {
                guard (0x30...0x39).contains(c) else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            let millis = number(20..<23)
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        let result = Int64(seconds) * 1000 + Int64(millis)
        // timegm normalises out-of-range fields; a round trip rejects them.
        return formatDate(milliseconds: result) == text ? result : nil
    }
}

/// Why an item file is damaged (wrapped into `RSAError.damagedItem` by the store).
internal struct StoreDamage: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

extension Int64 {
    /// Floor division (so that dates before 1970 format correctly).
    fileprivate func dividedRoundingDown(by divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor < 0) ? q - 1 : q
    }
}
