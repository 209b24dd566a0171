import Foundation
import XCTest
import RSAKit

/// A store made by rsakit before the keychain (Fixtures/legacy-store-v1, written by main at
/// 921fd08; commands in Fixtures/README.md) opens, reads, and migrates on its first write.
final class KeychainMigrationTests: KeychainTestCase {
    private var fixture: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/legacy-store-v1")
    }

    /// Copy the fixture store into the test folder with the modes git does not keep.
    private func legacyStore() throws -> String {
        try FileManager.default.copyItem(atPath: fixture.appendingPathComponent("store").path, toPath: storePath)
        for path in [storePath]
            + (FileManager.default.enumerator(atPath: storePath)?.allObjects as? [String] ?? []).map({
                storePath + "/" + $0
            })
        {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            XCTAssertEqual(chmod(path, isDirectory.boolValue ? 0o700 : 0o600), 0)
        }
        return storePath
    }

    func testLegacyStore_ItemsReadAsGroupDefault() throws {
        let path = try legacyStore()
        let all = try RSAKeyStore(path: path)
        XCTAssertEqual(Set(try all.allKeyItems().items.map(\.accessGroup)), ["default"])
        // Opened with group "default" it sees every old item; with another group, none.
        XCTAssertEqual(try RSAKeyStore(path: path, accessGroups: ["default"]).allKeyItems().items.count, 3)
        let other = try RSAKeyStore(path: path, accessGroups: ["com.example.other"])
        XCTAssertEqual(try other.allKeyItems().items, [])
        // Its names are the default group's: another group does not find them.
        assertThrows(.itemNotFound(.key(tag: "legacy.pair")), try other.deleteKey(tag: "legacy.pair"))
        // A write through a grouped store migrates the store as any first write does.
        try other.addGenericPassword(RSASecretBytes(utf8: "pw"), service: "svc", account: "a")
        XCTAssertEqual(try String(contentsOfFile: path + "/VERSION", encoding: .utf8), "rsakit keychain 2\n")
        XCTAssertEqual(try all.genericPassword(service: "svc", account: "a").accessGroup, "com.example.other")
        XCTAssertEqual(try all.keyItem(tag: "legacy.pair", keyClass: .private).accessGroup, "default")
    }

    func testLegacyStore_OpensReadsAndMigratesOnTheFirstWrite() throws {
        let path = try legacyStore()
        XCTAssertEqual(try String(contentsOfFile: path + "/VERSION", encoding: .utf8), "rsakit key store 1\n")
        let key = try RSAPrivateKey(
            pemRepresentation: String(contentsOf: fixture.appendingPathComponent("legacy-key.pem"), encoding: .utf8))
        let store = try RSAKeyStore(path: path)
        // Reading changes nothing.
        XCTAssertEqual(try store.privateKey(tag: "legacy.pair"), key)
        XCTAssertEqual(try store.publicKey(tag: "legacy.public"), key.publicKey)
        XCTAssertEqual(try store.keyItem(tag: "legacy.pair", keyClass: .private).label, "made by main 921fd08")
        let listing = try store.allItems()
        XCTAssertEqual(listing.keys.count, 3)
        XCTAssertEqual(listing.problems, [])
        XCTAssertEqual(try store.keyItems(fingerprint: key.publicKey.fingerprint).count, 3)
        let id = try store.keyItem(tag: "legacy.pair", keyClass: .public).itemID
        XCTAssertEqual(try store.item(id: id), .key(try store.keyItem(tag: "legacy.pair", keyClass: .public)))
        XCTAssertEqual(try String(contentsOfFile: path + "/VERSION", encoding: .utf8), "rsakit key store 1\n")
        // The first write migrates (VERSION in the same journal) and the new classes work.
        try store.addGenericPassword(RSASecretBytes(utf8: "pw"), service: "svc", account: "a")
        XCTAssertEqual(try String(contentsOfFile: path + "/VERSION", encoding: .utf8), "rsakit keychain 2\n")
        XCTAssertEqual(try RSAKeyStore(path: path).privateKey(tag: "legacy.pair"), key)
        // Protection converts the legacy private item too.
        try store.protect(passphrase: RSASecretBytes(utf8: "pass"), parameters: .interactive)
        XCTAssertEqual(files(under: path, containing: key.prime1), [])
        let reopened = try RSAKeyStore(path: path)
        try reopened.unlock(passphrase: RSASecretBytes(utf8: "pass"))
        XCTAssertEqual(try reopened.privateKey(tag: "legacy.pair"), key)
        XCTAssertEqual(try reopened.rebuildIndex().removed, 0)
    }

    func testLegacyStore_DeleteAloneAlsoMigrates() throws {
        let path = try legacyStore()
        let store = try RSAKeyStore(path: path)
        try store.deleteKey(tag: "legacy.public")
        XCTAssertEqual(try String(contentsOfFile: path + "/VERSION", encoding: .utf8), "rsakit keychain 2\n")
        XCTAssertEqual(try store.allItems().keys.count, 2)
        assertThrows(.itemNotFound(.key(tag: "legacy.public")), try store.deleteKey(tag: "legacy.public"))
    }
}
