import Foundation
import XCTest
import RSAKit
@testable import RSAKitKeychain

/// Generic password items: add, find, update, delete, duplicates, hostile services.
final class KeychainPasswordTests: KeychainTestCase {
    func testAddAndFind_ValueWithNULBytesComesBackExactly() throws {
        let store = try RSAKeyStore(path: storePath)
        let value: [UInt8] = [0x70, 0x00, 0x61, 0x73, 0x00, 0x00, 0xFF]
        let added = try store.addGenericPassword(
            RSASecretBytes(copying: value), service: "com.example.mail", account: "romeo", label: "Mail",
            comment: "imap")
        let found = try store.genericPassword(service: "com.example.mail", account: "romeo")
        XCTAssertEqual(found, added)
        XCTAssertEqual(found.label, "Mail")
        XCTAssertEqual(found.comment, "imap")
        XCTAssertEqual(found.valueByteCount, 7)
        XCTAssertEqual(try store.genericPasswordValue(service: "com.example.mail", account: "romeo").testBytes, value)
        // The id finds the item (persistent reference).
        XCTAssertEqual(try store.item(id: added.itemID), .genericPassword(added))
    }

    func testAdd_ExistingItemIsADuplicateAndStaysUnchanged() throws {
        let store = try RSAKeyStore(path: storePath)
        let first = try store.addGenericPassword(
            RSASecretBytes(utf8: "one"), service: "svc", account: "a", label: "L", comment: "C")
        let duplicate = RSAError.duplicateItem(.genericPassword(service: "svc", account: "a"))
        assertThrows(
            duplicate,
            try store.addGenericPassword(RSASecretBytes(utf8: "two"), service: "svc", account: "a", label: "X"))
        XCTAssertEqual(duplicate.description, "a generic password for service \"svc\" and account \"a\" already exists")
        // The stored item is as it was: value, label, comment, dates, id.
        XCTAssertEqual(try store.genericPasswordValue(service: "svc", account: "a").testBytes, Array("one".utf8))
        XCTAssertEqual(try store.genericPassword(service: "svc", account: "a"), first)
        // The same pair twice in one batch: nothing of the batch is written.
        assertThrows(
            .duplicateItem(.genericPassword(service: "svc", account: "b")),
            try store.addGenericPasswords([
                (RSASecretBytes(utf8: "1"), "svc", "b", nil, nil), (RSASecretBytes(utf8: "2"), "svc", "b", nil, nil)
            ]))
        XCTAssertEqual(try store.genericPasswords(service: "svc").map(\.account), ["a"])
    }

    func testUpdate_ChangesTheValueAndKeepsTheRest() throws {
        let store = try RSAKeyStore(path: storePath)
        let first = try store.addGenericPassword(
            RSASecretBytes(utf8: "one"), service: "svc", account: "a", label: "L", comment: "C")
        usleep(5_000)
        let second = try store.updateGenericPassword(
            service: "svc", account: "a", value: RSASecretBytes(copying: [0, 0xFF, 2]))
        XCTAssertEqual(try store.genericPasswordValue(service: "svc", account: "a").testBytes, [0, 0xFF, 2])
        XCTAssertEqual(second.itemID, first.itemID)
        XCTAssertEqual(second.creationDate, first.creationDate)
        XCTAssertGreaterThan(second.modificationDate, first.modificationDate)
        XCTAssertEqual(second.label, "L")
        XCTAssertEqual(second.comment, "C")
        XCTAssertEqual(second.valueByteCount, 3)
        XCTAssertEqual(try store.genericPassword(service: "svc", account: "a"), second)
        XCTAssertEqual(try store.item(id: first.itemID), .genericPassword(second))
    }

    func testUpdate_ChangesLabelAndCommentNotTheValue() throws {
        let store = try RSAKeyStore(path: storePath)
        try store.addGenericPassword(RSASecretBytes(utf8: "v"), service: "svc", account: "a", label: "old")
        let updated = try store.updateGenericPassword(service: "svc", account: "a", label: "new", comment: "c")
        XCTAssertEqual(updated.label, "new")
        XCTAssertEqual(updated.valueByteCount, 1)
        XCTAssertEqual(try store.genericPassword(service: "svc", account: "a").comment, "c")
        XCTAssertEqual(try store.genericPasswordValue(service: "svc", account: "a").testBytes, [0x76])
        // nil leaves the label and comment; an empty string removes them.
        XCTAssertEqual(try store.updateGenericPassword(service: "svc", account: "a", label: nil).label, "new")
        let removed = try store.updateGenericPassword(service: "svc", account: "a", label: "", comment: "")
        XCTAssertNil(removed.label)
        XCTAssertNil(try store.genericPassword(service: "svc", account: "a").comment)
        let key = try RSAInternetPasswordKey(url: "https://alice@example.com")
        try store.addInternetPassword(RSASecretBytes(utf8: "w"), for: key, label: "web")
        XCTAssertNil(try store.updateInternetPassword(key, label: "").label)
        try store.addKeyPair(try TestKeys.generated(bits: 1024), tag: "labelled", label: "kept")
        XCTAssertEqual(try store.updateKey(tag: "labelled", label: "").map(\.label), [nil, nil])
    }

    func testUpdate_MissingItemIsNotFoundAndCreatesNothing() throws {
        let store = try RSAKeyStore(path: storePath)
        try store.addGenericPassword(RSASecretBytes(utf8: "v"), service: "svc", account: "a")
        assertThrows(
            .itemNotFound(.genericPassword(service: "svc", account: "b")),
            try store.updateGenericPassword(
                service: "svc", account: "b", value: RSASecretBytes(utf8: "new"), label: "x"))
        assertThrows(
            .itemNotFound(.genericPassword(service: "svc", account: "b")),
            try store.genericPassword(service: "svc", account: "b"))
        XCTAssertEqual(try store.allItems().passwords.map(\.account), ["a"])
        XCTAssertFalse(
            FileManager.default.fileExists(
                atPath: storePath + "/"
                    + StoreLayout.passwordPath(
                        hash: StoreLayout.passwordHash(service: "svc", account: "b", group: "default"))))
    }

    func testDelete_RemovesOnlyThatItemAndMissingIsNotFound() throws {
        let store = try RSAKeyStore(path: storePath)
        try store.addGenericPassword(RSASecretBytes(utf8: "1"), service: "svc", account: "a")
        try store.addGenericPassword(RSASecretBytes(utf8: "2"), service: "svc", account: "b")
        try store.deleteGenericPassword(service: "svc", account: "a")
        assertThrows(
            .itemNotFound(.genericPassword(service: "svc", account: "a")),
            try store.genericPassword(service: "svc", account: "a"))
        assertThrows(
            .itemNotFound(.genericPassword(service: "svc", account: "a")),
            try store.deleteGenericPassword(service: "svc", account: "a"))
        XCTAssertEqual(try store.genericPasswordValue(service: "svc", account: "b").testBytes, [0x32])
    }

    func testFindByService_ListsEveryAccountOfThatServiceOnly() throws {
        let store = try RSAKeyStore(path: storePath)
        for account in ["carol", "alice", "bob"] {
            try store.addGenericPassword(RSASecretBytes(utf8: account), service: "svc", account: account)
        }
        try store.addGenericPassword(RSASecretBytes(utf8: "x"), service: "other", account: "alice")
        XCTAssertEqual(try store.genericPasswords(service: "svc").map(\.account), ["alice", "bob", "carol"])
        XCTAssertEqual(try store.genericPasswords(service: "nothing"), [])
        XCTAssertEqual(try store.allItems().passwords.count, 4)
    }

    func testHostileServicesAndAccounts_StayInsideTheStoreAndAreDistinct() throws {
        let store = try RSAKeyStore(path: storePath)
        let hostile = ["../../etc/passwd", "/absolute", "a\u{0}b", "e\u{301}", "\u{e9}", "A", "a", "..", "svc\nline"]
        for (index, service) in hostile.enumerated() {
            try store.addGenericPassword(RSASecretBytes(utf8: "v\(index)"), service: service, account: service)
        }
        for (index, service) in hostile.enumerated() {
            XCTAssertEqual(
                try store.genericPasswordValue(service: service, account: service).testBytes, Array("v\(index)".utf8))
        }
        // Nothing was written outside the store folder, and file names never contain the names.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder), ["store"])
        for file in allFiles(storePath) {
            XCTAssertFalse(file.path.contains("passwd"), file.path)
        }
        assertThrows(
            .invalidAttribute(reason: "the service is empty"),
            try store.addGenericPassword(RSASecretBytes(utf8: "v"), service: "", account: "a"))
        XCTAssertThrowsError(
            try store.addGenericPassword(
                RSASecretBytes(utf8: "v"), service: String(repeating: "s", count: 256), account: "a"))
    }

    func testPasswordFile_Is0600AndDamageIsReportedWhileTheRestWorks() throws {
        let store = try RSAKeyStore(path: storePath)
        let a = try store.addGenericPassword(RSASecretBytes(utf8: "va"), service: "svc", account: "a")
        try store.addGenericPassword(RSASecretBytes(utf8: "vb"), service: "svc", account: "b")
        let path =
            storePath + "/"
            + StoreLayout.passwordPath(hash: StoreLayout.passwordHash(service: "svc", account: "a", group: "default"))
        XCTAssertEqual(mode(path), 0o600)
        // Truncate the first item's value line.
        var bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        bytes.removeLast(3)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try store.genericPasswordValue(service: "svc", account: "a")) { error in
            guard case RSAError.damagedItem(_, let damagedPath, _)? = error as? RSAError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(damagedPath, path)
        }
        let listing = try store.allItems()
        XCTAssertEqual(listing.passwords.map(\.account), ["b"])
        XCTAssertEqual(listing.problems.map(\.path), [path])
        // A damaged item can still be deleted by service and account.
        try store.deleteGenericPassword(service: "svc", account: "a")
        assertThrows(.itemNotFound(.item(id: a.itemID)), try store.item(id: a.itemID))
    }
}
