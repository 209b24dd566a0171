import Foundation
import XCTest
import RSAKit
@testable import RSAKitKeychain

/// Internet password items: the seven-attribute key, URL form, queries, sealing, item ids.
final class KeychainInternetPasswordTests: KeychainTestCase {
    func testKey_FromURLAndValidation() throws {
        let key = try RSAInternetPasswordKey(url: "HTTPS://alice%40corp@Git.Example.COM:8443/team/repo.git")
        XCTAssertEqual(key.protocol, "https")
        XCTAssertEqual(key.server, "git.example.com")
        XCTAssertEqual(key.port, 8443)
        XCTAssertEqual(key.path, "team/repo.git")
        XCTAssertEqual(key.account, "alice@corp")
        XCTAssertEqual(key.description, "https://alice@corp@git.example.com:8443/team/repo.git")
        assertThrows(
            .invalidAttribute(reason: "the URL holds a password; give the value on standard input, never in a URL"),
            try RSAInternetPasswordKey(url: "https://a:b@example.com"))
        assertThrows(.invalidAttribute(reason: "the server is empty"), try RSAInternetPasswordKey(server: ""))
        assertThrows(
            .invalidAttribute(reason: "the port 70000 is not 0 (none) or 1 to 65535"),
            try RSAInternetPasswordKey(server: "h", port: 70000))
        assertThrows(
            .invalidAttribute(
                reason: "the protocol \"ht tp\" is not a URL scheme (letters, digits, +, -, .; at most 32)"),
            try RSAInternetPasswordKey(server: "h", protocol: "ht tp"))
    }

    func testAddQueryDelete_AndGenericPasswordsStayApart() throws {
        let store = try RSAKeyStore(path: storePath)
        let a = try RSAInternetPasswordKey(server: "example.com", protocol: "https", port: 443, account: "alice")
        let b = try RSAInternetPasswordKey(server: "example.com", protocol: "imap", account: "alice")
        let added = try store.addInternetPassword(RSASecretBytes(copying: [0, 1, 2, 0xFF]), for: a, label: "web")
        try store.addInternetPassword(RSASecretBytes(utf8: "mail"), for: b)
        try store.addGenericPassword(RSASecretBytes(utf8: "generic"), service: "example.com", account: "alice")
        assertThrows(
            .duplicateItem(.internetPassword(a)),
            try store.addInternetPassword(RSASecretBytes(utf8: "x"), for: a))
        XCTAssertEqual(try store.internetPassword(a), added)
        XCTAssertEqual(try store.internetPasswordValue(a).testBytes, [0, 1, 2, 0xFF])
        XCTAssertEqual(
            try store.internetPasswords(matching: RSAInternetPasswordQuery(server: "EXAMPLE.com")).map(\.key), [a, b])
        XCTAssertEqual(
            try store.internetPasswords(matching: RSAInternetPasswordQuery(protocol: "imap")).map(\.key), [b])
        XCTAssertEqual(try store.internetPasswords(matching: RSAInternetPasswordQuery(port: 8443)), [])
        // Generic and internet items share the folder but not the class.
        XCTAssertEqual(try store.genericPasswords(service: "example.com").map(\.account), ["alice"])
        let listing = try store.allItems()
        XCTAssertEqual(listing.passwords.count, 1)
        XCTAssertEqual(listing.internetPasswords.map(\.key), [a, b])
        XCTAssertEqual(try store.item(id: added.itemID), .internetPassword(added))
        try store.deleteItem(id: added.itemID)
        assertThrows(.itemNotFound(.internetPassword(a)), try store.internetPassword(a))
        XCTAssertEqual(
            RSAError.itemNotFound(.internetPassword(a)).description,
            "no internet password for https://alice@example.com:443 found")
        XCTAssertEqual(
            try store.genericPasswordValue(service: "example.com", account: "alice").testBytes, Array("generic".utf8))
    }

    func testProtect_SealsTheValueAndTheSealIsBoundToTheItem() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = try RSAInternetPasswordKey(server: "mail.example.com", protocol: "imaps", account: "carol")
        let needle = Array("internet-secret-value".utf8)
        try store.addInternetPassword(RSASecretBytes(copying: needle), for: key)
        XCTAssertFalse(
            files(under: storePath, containing: Array(Base64.encode(needle).utf8)).isEmpty,
            "control: the value is on disk before protect")
        let passphrase = RSASecretBytes(utf8: "correct horse battery staple")
        try store.protect(passphrase: passphrase, parameters: .interactive)
        XCTAssertEqual(files(under: storePath, containing: Array(Base64.encode(needle).utf8)), [])
        XCTAssertEqual(files(under: storePath, containing: needle), [])
        let reopened = try RSAKeyStore(path: storePath)
        XCTAssertEqual(try reopened.internetPassword(key).valueByteCount, needle.count)
        assertThrows(.keychainLocked, try reopened.internetPasswordValue(key))
        try reopened.unlock(passphrase: passphrase)
        XCTAssertEqual(try reopened.internetPasswordValue(key).testBytes, needle)
        // The sealed line moved to another item's file does not open there.
        let other = try RSAInternetPasswordKey(server: "mail.example.com", protocol: "imaps", account: "dave")
        try reopened.addInternetPassword(RSASecretBytes(utf8: "internet-secret-VALUE"), for: other)  // same length
        let path = { (k: RSAInternetPasswordKey) in
            self.storePath + "/" + StoreLayout.passwordPath(hash: StoreLayout.internetPasswordHash(k, group: "default"))
        }
        let carolLines = try String(contentsOfFile: path(key), encoding: .utf8).split(separator: "\n")
        var daveLines = try String(contentsOfFile: path(other), encoding: .utf8).split(separator: "\n")
        daveLines[2] = carolLines[2]
        try (daveLines.joined(separator: "\n") + "\n").write(toFile: path(other), atomically: false, encoding: .utf8)
        XCTAssertThrowsError(try reopened.internetPasswordValue(other)) { error in
            guard case let .damagedItem(_, _, reason)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("does not open under the store key for this item"), reason)
        }
        // Unprotect writes the value back in the clear, readable without a passphrase.
        try reopened.deleteInternetPassword(other)
        try reopened.unprotect(passphrase: passphrase)
        XCTAssertEqual(try RSAKeyStore(path: storePath).internetPasswordValue(key).testBytes, needle)
    }

    // MARK: Add only adds; update only updates (SecItemAdd / SecItemUpdate)

    func testAdd_ExistingKeyIsADuplicateAndTheItemStaysUnchanged() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = try RSAInternetPasswordKey(url: "https://alice@example.com/repo.git")
        let first = try store.addInternetPassword(RSASecretBytes(utf8: "one"), for: key, label: "forge", comment: "c")
        assertThrows(
            .duplicateItem(.internetPassword(key)),
            try store.addInternetPassword(RSASecretBytes(utf8: "two"), for: key, label: "x"))
        XCTAssertEqual(
            RSAError.duplicateItem(.internetPassword(key)).description,
            "an internet password for https://alice@example.com/repo.git already exists")
        XCTAssertEqual(try store.internetPasswordValue(key).testBytes, Array("one".utf8))
        XCTAssertEqual(try store.internetPassword(key), first)
    }

    func testUpdate_ChangesTheValueAndKeepsTheRest() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = try RSAInternetPasswordKey(server: "example.com", protocol: "https", port: 8443, account: "alice")
        let first = try store.addInternetPassword(RSASecretBytes(utf8: "one"), for: key, label: "forge", comment: "c")
        usleep(5_000)
        let second = try store.updateInternetPassword(key, value: RSASecretBytes(copying: [9, 0, 9, 0]))
        XCTAssertEqual(try store.internetPasswordValue(key).testBytes, [9, 0, 9, 0])
        XCTAssertEqual(second.key, key)
        XCTAssertEqual(second.itemID, first.itemID)
        XCTAssertEqual(second.creationDate, first.creationDate)
        XCTAssertGreaterThan(second.modificationDate, first.modificationDate)
        XCTAssertEqual(second.label, "forge")
        XCTAssertEqual(second.comment, "c")
        XCTAssertEqual(second.valueByteCount, 4)
        // The label alone: the value stays.
        let third = try store.updateInternetPassword(key, label: "renamed")
        XCTAssertEqual(third.label, "renamed")
        XCTAssertEqual(third.comment, "c")
        XCTAssertEqual(try store.internetPasswordValue(key).testBytes, [9, 0, 9, 0])
        XCTAssertEqual(try store.internetPassword(key), third)
    }

    func testUpdate_MissingItemIsNotFoundAndCreatesNothing() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = try RSAInternetPasswordKey(server: "example.com", protocol: "https", account: "alice")
        // A generic password with the same server and account is another class: not updated.
        try store.addGenericPassword(RSASecretBytes(utf8: "generic"), service: "example.com", account: "alice")
        assertThrows(
            .itemNotFound(.internetPassword(key)),
            try store.updateInternetPassword(key, value: RSASecretBytes(utf8: "new"), label: "x"))
        XCTAssertEqual(try store.internetPasswords(), [])
        XCTAssertEqual(
            try store.genericPasswordValue(service: "example.com", account: "alice").testBytes, Array("generic".utf8))
        XCTAssertFalse(
            FileManager.default.fileExists(
                atPath: storePath + "/"
                    + StoreLayout.passwordPath(hash: StoreLayout.internetPasswordHash(key, group: "default"))))
    }

    func testUpdate_InAProtectedStoreSealsTheNewValueAndNeedsTheStoreUnlocked() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = try RSAInternetPasswordKey(server: "mail.example.com", protocol: "imaps", account: "carol")
        try store.addInternetPassword(RSASecretBytes(utf8: "old-value"), for: key)
        let passphrase = RSASecretBytes(utf8: "correct horse battery staple")
        try store.protect(passphrase: passphrase, parameters: .interactive)
        let reopened = try RSAKeyStore(path: storePath)
        // A label needs no secret; a value must be sealed, so the store must be unlocked.
        XCTAssertEqual(try reopened.updateInternetPassword(key, label: "mail").label, "mail")
        assertThrows(
            .keychainLocked, try reopened.updateInternetPassword(key, value: RSASecretBytes(utf8: "new-value-1")))
        try reopened.unlock(passphrase: passphrase)
        XCTAssertEqual(
            try reopened.internetPasswordValue(key).testBytes, Array("old-value".utf8),
            "the refused update changed nothing")
        try reopened.updateInternetPassword(key, value: RSASecretBytes(utf8: "new-value-1"))
        XCTAssertEqual(try reopened.internetPasswordValue(key).testBytes, Array("new-value-1".utf8))
        XCTAssertEqual(files(under: storePath, containing: Array("new-value-1".utf8)), [], "the new value is sealed")
        XCTAssertEqual(try reopened.internetPassword(key).label, "mail")
    }
}
