import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// RSAKeyStore.stamp() and snapshot(): what the PKCS#11 module reads once and keeps while the
/// store does not change. On the real file system.
final class KeyStoreSnapshotTests: KeychainTestCase {
    /// Set the modification time of the store folder and of every folder below it to
    /// `secondsAgo` seconds before now (what a quiet spell leaves).
    private func ageFolders(_ root: String, secondsAgo: Int) throws {
        var folders = [root]
        for name in FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? [] {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory),
                isDirectory.boolValue
            {
                folders.append(root + "/" + name)
            }
        }
        let then = timespec(tv_sec: time(nil) - secondsAgo, tv_nsec: 0)
        for folder in folders {
            var times = [then, then]
            XCTAssertEqual(utimensat(AT_FDCWD, folder, &times, 0), 0, folder)
        }
    }

    func testSnapshot_KeysPublicKeysAndParsedCertificatesFromOneReading() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let leafKey = try RSAPrivateKey(pemRepresentation: pki.read("leaf.key"))
        let pair = try store.addKeyPair(leafKey, tag: "leaf")
        let lone = try store.addPublicKey(KeychainTestKeys.keys[1].publicKey, tag: "lone")
        let leaf = try pki.certificate("client")
        let server = try pki.certificate("server")
        let leafItem = try store.addCertificate(leaf, label: "b leaf")
        let serverItem = try store.addCertificate(server, label: "a server")

        let snapshot = try store.snapshot()
        XCTAssertEqual(snapshot.keys, try store.allItems().keys)
        XCTAssertEqual(Set(snapshot.keys.map(\.itemID)), [pair.public.itemID, pair.private.itemID, lone.itemID])
        XCTAssertEqual(snapshot.publicKeys[pair.private.itemID], leafKey.publicKey, "a private item's public half")
        XCTAssertEqual(snapshot.publicKeys[pair.public.itemID], leafKey.publicKey)
        XCTAssertEqual(snapshot.publicKeys[lone.itemID], KeychainTestKeys.keys[1].publicKey)
        XCTAssertEqual(
            snapshot.certificates.map(\.attributes), [serverItem, leafItem], "in the listing's order (by label)")
        XCTAssertEqual(
            snapshot.certificates.map(\.certificate.derRepresentation),
            [server.derRepresentation, leaf.derRepresentation])
        XCTAssertEqual(snapshot.stamp, try store.stamp(), "nothing changed since")
    }

    func testSnapshot_DamagedCertificateIsLeftOut() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let kept = try store.addCertificate(try pki.certificate("server"))
        let damaged = try store.addCertificate(try pki.certificate("client"))
        let path = try XCTUnwrap(
            allFiles(storePath + "/certificates").first { file in
                String(decoding: file.bytes, as: UTF8.self).contains(damaged.itemID)
            }?.path)
        XCTAssertEqual(truncate(path, 200), 0)
        XCTAssertEqual(try store.snapshot().certificates.map(\.attributes), [kept])
    }

    func testStamp_ChangesWithEveryWriteAndWithAnItemFileRemovedByHand() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        var stamps = [try store.stamp()]
        func changed(_ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
            let stamp = try store.stamp()
            XCTAssertFalse(stamps.contains(stamp), "the stamp did not change: \(what)", file: file, line: line)
            stamps.append(stamp)
        }
        _ = try store.addKeyPair(KeychainTestKeys.keys[0], tag: "pair")
        try changed("a key pair added")
        _ = try store.addCertificate(try pki.certificate("server"))
        try changed("a certificate added")
        _ = try store.updateKey(tag: "pair", label: "renamed")
        try changed("a label changed")
        _ = try store.addPublicKey(KeychainTestKeys.keys[1].publicKey, tag: "lone")
        try ageFolders(storePath, secondsAgo: 60)
        stamps.append(try store.stamp())
        let lonePath = try XCTUnwrap(
            allFiles(storePath + "/public").first {
                $0.path.hasSuffix(".pem") && !String(decoding: $0.bytes, as: UTF8.self).contains("pair")
            }?.path)
        XCTAssertEqual(unlink(lonePath), 0)
        try changed("an item file removed by hand (no journal)")
        try store.deleteKey(tag: "pair")
        try changed("a key pair deleted")
    }

    func testStamp_SettledOnlyWhenTheNewestFolderTimeIsOldEnough() throws {
        let store = try RSAKeyStore(path: storePath)
        _ = try store.addKeyPair(KeychainTestKeys.keys[0], tag: "pair")
        XCTAssertFalse(
            try store.stamp().isSettled, "just written: a write in the same clock tick could leave the same times")
        try ageFolders(storePath, secondsAgo: RSAKeyStoreStamp.settlingInterval + 1)
        let settled = try store.stamp()
        XCTAssertTrue(settled.isSettled)
        XCTAssertEqual(settled, try store.stamp())
        // One shard folder touched now: unsettled again, and different.
        let shard = try XCTUnwrap(tree(storePath).first { $0.hasPrefix("private/") && !$0.dropFirst(8).contains("/") })
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        var now = [clock, clock]
        XCTAssertEqual(utimensat(AT_FDCWD, storePath + "/" + shard, &now, 0), 0)
        let touched = try store.stamp()
        XCTAssertFalse(touched.isSettled)
        XCTAssertNotEqual(touched, settled)
    }
}
