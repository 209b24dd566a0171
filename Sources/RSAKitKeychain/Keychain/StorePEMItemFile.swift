// The reader shared by the store's item files of three lines: a magic line, the metadata
// record as one line of JSON, and the item as one PEM block (certificates/, crls/):
//
//   rsakit crl item 1
//   {"crlNumber":"01","fingerprint":"...","issuer":"CN=...",...}
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

/// One read item file: its path, the decoded metadata, and the PEM body not yet decoded
/// (the caller checks the metadata against the file name first).
internal struct StorePEMItemFile<Metadata: Decodable> {
    /// The absolute path read.
    let path: String
    /// The metadata record (line 2).
    let metadata: Metadata
    /// Line 3 onwards: the PEM.
    private let body: ArraySlice<UInt8>

    /// Read `path`, at most `maximumByteCount` bytes: nil when there is no such file.
    /// - Throws: `RSAError.damagedItem` when the file cannot be read, does not start with
    ///   `magicLine`, or its second line is not a JSON `Metadata`.
    static func read(_ path: String, magicLine: String, maximumByteCount: Int) throws -> StorePEMItemFile? {
        let file: StoreFileSystem.FileContents
        do {
            guard let read = try StoreFileSystem.readFile(path, maximumByteCount: maximumByteCount) else { return nil }
            file = read
        } catch let RSAError.storeIOError(_, reason) {
            throw damaged(path, reason)
        }
        let lines = file.bytes.split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count == 3, lines[0].elementsEqual(magicLine.utf8) else {
            throw damaged(path, "the file does not start with \"\(magicLine)\"")
        }
        guard let metadata = try? JSONDecoder().decode(Metadata.self, from: Data(lines[1])) else {
            throw damaged(path, "the metadata record is not valid")
        }
        return StorePEMItemFile(path: path, metadata: metadata, body: lines[2])
    }

    /// The damaged-item error for this file.
    func damaged(_ reason: String) -> RSAError { Self.damaged(path, reason) }

    private static func damaged(_ path: String, _ reason: String) -> RSAError {
        .damagedItem(tag: nil, path: path, reason: reason)
    }

    /// The DER of the body, which must be exactly one PEM block labelled `label` whose
    /// SHA-256 is `fingerprint` (hex, as the metadata records it).
    /// - Parameter noun: what the item is called in the error ("certificate", "CRL").
    /// - Throws: `RSAError.damagedItem` naming the label or the fingerprint.
    func der(label: String, fingerprint: String, noun: String) throws -> [UInt8] {
        let document = PEMDocument(scanning: Array(body))
        guard document.blocks.count == 1, document.blocks[0].label == label,
            let der = try? document.decode(document.blocks[0]).der
        else {
            throw damaged("the PEM block is not one \"\(label)\"")
        }
        guard StoreHex.encode(RSAHashAlgorithm.sha256.hash(der)) == fingerprint else {
            throw damaged("the fingerprint in the metadata does not match the \(noun)")
        }
        return der
    }
}
