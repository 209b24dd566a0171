import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitKeychain

/// The store's layout on disk, as docs/keychain.md describes it and StoreLayout spells
/// it: stores written by earlier versions must keep opening, so every path is pinned here.
final class KeychainLayoutTests: KeychainTestCase {
    func testLayout_EveryFileOfEveryClassIsWhereTheDocumentedLayoutPutsIt() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        XCTAssertEqual(
            Set(try FileManager.default.contentsOfDirectory(atPath: storePath)),
            ["VERSION", "lock", "public", "private", "index", "passwords", "certificates"])
        try store.addKeyPair(KeychainTestKeys.keys[0], tag: "mail")
        try store.addGenericPassword(RSASecretBytes(utf8: "v"), service: "svc", account: "a")
        try store.addInternetPassword(
            RSASecretBytes(utf8: "v"), for: RSAInternetPasswordKey(server: "example.com", account: "a"))
        try store.addCertificate(try pki.certificate("server"))
        try store.addCRL(try XCTUnwrap(try X509CRL.crls(from: Array(try pki.read("crl-good.pem").utf8)).first))
        store.cacheOCSPResponse([0x30, 0x00], key: [0xAB, 0xCD], nextUpdate: Date(timeIntervalSinceNow: 3600))

        let hex = "[0-9a-f]"
        let patterns = [
            "VERSION", "lock",
            "public/\(hex){2}/\(hex){64}\\.pem", "private/\(hex){2}/\(hex){64}\\.pem",
            "index/fingerprint/\(hex){2}/\(hex){64}\\.\(hex){64}\\.(public|private|certificate)",
            "index/label/\(hex){2}/\(hex){64}\\.\(hex){64}", "index/certificate/\(hex){2}/\(hex){64}\\.\(hex){64}",
            "passwords/\(hex){2}/\(hex){128}\\.item", "certificates/\(hex){2}/\(hex){64}\\.item",
            "crls/\(hex){2}/\(hex){64}\\.item", "ocsp/ab/abcd\\.item"
        ].map { try! NSRegularExpression(pattern: "^(" + $0 + ")$") }
        let files = allFiles(storePath).map { String($0.path.dropFirst(storePath.count + 1)) }
        // VERSION, lock; two key items; three fingerprint, one label and one certificate index
        // entries; two passwords; one certificate, one CRL, one OCSP response.
        XCTAssertEqual(files.count, 14, "\(files)")
        for file in files {
            let range = NSRange(file.startIndex..., in: file)
            XCTAssertTrue(
                patterns.contains { $0.firstMatch(in: file, range: range) != nil }, "\(file) is outside the layout")
        }
        XCTAssertTrue(
            Set(try FileManager.default.contentsOfDirectory(atPath: storePath)).isSubset(of: StoreLayout.topLevelNames))
    }
}
