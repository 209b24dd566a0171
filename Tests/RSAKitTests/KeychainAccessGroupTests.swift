import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitKeychain

/// Access groups: every item class carries one, a store opened with groups sees and changes
/// only those, and items without one (old stores) read as group "default".
final class KeychainAccessGroupTests: KeychainTestCase {
    private let mail = "com.example.mail", web = "com.example.web"

    func testKeys_AddFindListAndDeletePerGroup() throws {
        let key = KeychainTestKeys.keys[0], other = KeychainTestKeys.keys[1]
        let mailStore = try RSAKeyStore(path: storePath, accessGroups: [mail])
        let webStore = try RSAKeyStore(path: storePath, accessGroups: [web])
        let added = try mailStore.addKeyPair(key, tag: "k.mail")
        XCTAssertEqual(added.private.accessGroup, mail)
        try webStore.addKeyPair(other, tag: "k.web")
        XCTAssertEqual(try mailStore.keyItem(tag: "k.mail", keyClass: .private).accessGroup, mail)
        XCTAssertEqual(try mailStore.privateKey(tag: "k.mail"), key)
        // Another group's item is not found, listed or matched by fingerprint.
        assertThrows(.itemNotFound(.key(tag: "k.web", keyClass: .private)), try mailStore.keyItem(tag: "k.web", keyClass: .private))
        XCTAssertEqual(try mailStore.allKeyItems().items.map(\.applicationTag), ["k.mail", "k.mail"])
        XCTAssertEqual(try mailStore.keyItems(fingerprint: other.publicKey.fingerprint), [])
        // A store opened without groups sees both, each with its group.
        let all = try RSAKeyStore(path: storePath)
        XCTAssertNil(all.accessGroups)
        XCTAssertEqual(Set(try all.allKeyItems().items.map(\.accessGroup)), [mail, web])
        // A store opened with both sees both.
        XCTAssertEqual(try RSAKeyStore(path: storePath, accessGroups: [web, mail]).allKeyItems().items.count, 4)
        try mailStore.deleteKey(tag: "k.mail")
        XCTAssertEqual(try all.allKeyItems().items.map(\.applicationTag), ["k.web", "k.web"])
    }

    func testKeys_ChangingAnotherGroupsItemIsRefusedAndChangesNothing() throws {
        let webStore = try RSAKeyStore(path: storePath, accessGroups: [web])
        try webStore.addKeyPair(KeychainTestKeys.keys[0], tag: "k", label: "web key")
        let mailStore = try RSAKeyStore(path: storePath, accessGroups: [mail])
        let refused = RSAError.accessGroupNotAllowed(group: web, allowed: [mail])
        assertThrows(refused, try mailStore.deleteKey(tag: "k"))
        assertThrows(refused, try mailStore.updateKey(tag: "k", label: "taken"))
        assertThrows(refused, try mailStore.addKeyPair(KeychainTestKeys.keys[1], tag: "k", replace: true))
        XCTAssertEqual(refused.description,
                       "access group \"com.example.web\" is not one this store was opened with (\"com.example.mail\")")
        // One tag exists once across groups for now: a plain add is a duplicate.
        assertThrows(.duplicateItem(.key(tag: "k", keyClass: .public)), try mailStore.addKeyPair(KeychainTestKeys.keys[1], tag: "k"))
        let item = try webStore.keyItem(tag: "k", keyClass: .private)
        XCTAssertEqual(item.label, "web key")
        XCTAssertEqual(try webStore.privateKey(tag: "k"), KeychainTestKeys.keys[0])
    }

    func testPasswords_GenericAndInternetPerGroup() throws {
        let mailStore = try RSAKeyStore(path: storePath, accessGroups: [mail])
        let webStore = try RSAKeyStore(path: storePath, accessGroups: [web])
        let generic = try mailStore.addGenericPassword(RSASecretBytes(utf8: "pw"), service: "imap", account: "romeo")
        XCTAssertEqual(generic.accessGroup, mail)
        let url = try RSAInternetPasswordKey(url: "https://romeo@example.com")
        let internet = try webStore.addInternetPassword(RSASecretBytes(utf8: "web"), for: url)
        XCTAssertEqual(internet.accessGroup, web)
        XCTAssertEqual(try mailStore.genericPasswordValue(service: "imap", account: "romeo").testBytes, Array("pw".utf8))
        assertThrows(.itemNotFound(.genericPassword(service: "imap", account: "romeo")),
                     try webStore.genericPassword(service: "imap", account: "romeo"))
        XCTAssertEqual(try webStore.genericPasswords(service: "imap"), [])
        assertThrows(.itemNotFound(.internetPassword(url)), try mailStore.internetPassword(url))
        assertThrows(.itemNotFound(.item(id: generic.itemID)), try webStore.item(id: generic.itemID))
        let refused = RSAError.accessGroupNotAllowed(group: mail, allowed: [web])
        assertThrows(refused, try webStore.updateGenericPassword(service: "imap", account: "romeo", value: RSASecretBytes(utf8: "x")))
        assertThrows(refused, try webStore.deleteGenericPassword(service: "imap", account: "romeo"))
        assertThrows(.accessGroupNotAllowed(group: web, allowed: [mail]), try mailStore.deleteInternetPassword(url))
        let listing = try RSAKeyStore(path: storePath).allItems()
        XCTAssertEqual(listing.passwords.map(\.accessGroup), [mail])
        XCTAssertEqual(listing.internetPasswords.map(\.accessGroup), [web])
        XCTAssertEqual(try mailStore.allItems().internetPasswords, [])
        try mailStore.deleteGenericPassword(service: "imap", account: "romeo")
        try webStore.deleteInternetPassword(url)
        XCTAssertTrue(try RSAKeyStore(path: storePath).allItems().passwords.isEmpty)
    }

    func testCertificatesAndIdentities_PerGroup() throws {
        let pki = try TestPKI.shared()
        let server = try pki.certificate("server")
        let key = try RSAPrivateKey(pemRepresentation: pki.read("leaf.key"))
        let webStore = try RSAKeyStore(path: storePath, accessGroups: [web])
        let identity = try webStore.addIdentity(privateKey: key, certificate: server, tag: "server.key")
        XCTAssertEqual(identity.accessGroup, web)
        XCTAssertEqual(identity.certificate.accessGroup, web)
        XCTAssertEqual(try webStore.identities(label: "server.rsakit.test").map(\.accessGroup), [web])
        let mailStore = try RSAKeyStore(path: storePath, accessGroups: [mail])
        XCTAssertEqual(try mailStore.identities(label: "server.rsakit.test"), [])
        XCTAssertEqual(try mailStore.allIdentities(), [])
        XCTAssertEqual(try mailStore.certificates(label: "server.rsakit.test"), [])
        let id = identity.certificate.itemID
        assertThrows(.accessGroupNotAllowed(group: web, allowed: [mail]), try mailStore.deleteCertificate(id: id))
        assertThrows(.accessGroupNotAllowed(group: web, allowed: [mail]), try mailStore.updateCertificate(id: id, label: "x"))
        XCTAssertEqual(try RSAKeyStore(path: storePath).certificate(id: id).accessGroup, web)
        try webStore.deleteCertificate(id: id)
        XCTAssertEqual(try webStore.allIdentities(), [])
    }

    func testGroupSurvivesProtectAndUnprotect() throws {
        let mailStore = try RSAKeyStore(path: storePath, accessGroups: [mail])
        try mailStore.addKeyPair(KeychainTestKeys.keys[0], tag: "k")
        try mailStore.addGenericPassword(RSASecretBytes(utf8: "pw"), service: "s", account: "a")
        let all = try RSAKeyStore(path: storePath)
        try all.protect(passphrase: RSASecretBytes(utf8: "correct horse"), parameters: .interactive)
        XCTAssertEqual(try all.keyItem(tag: "k", keyClass: .private).accessGroup, mail)
        try all.unprotect(passphrase: RSASecretBytes(utf8: "correct horse"))
        XCTAssertEqual(try mailStore.keyItem(tag: "k", keyClass: .private).accessGroup, mail)
        XCTAssertEqual(try mailStore.genericPassword(service: "s", account: "a").accessGroup, mail)
        XCTAssertEqual(try mailStore.privateKey(tag: "k"), KeychainTestKeys.keys[0])
    }

    func testGroupNames_MistypedOrPathLikeAreRefused() throws {
        for bad in ["", ".", "..", "../x", "a/b", "/etc", "com..example", "com.example.", ".hidden", "a b", "café",
                    String(repeating: "a", count: 129)] {
            XCTAssertThrowsError(try RSAKeyStore.validateAccessGroup(bad), bad) { error in
                guard case RSAError.invalidAttribute = error else { return XCTFail("\(bad): \(error)") }
            }
        }
        for good in ["default", "com.example.mail", "TEAMID.com.example-app_2", "a"] {
            XCTAssertNoThrow(try RSAKeyStore.validateAccessGroup(good), good)
        }
        // Refused before anything is created.
        XCTAssertThrowsError(try RSAKeyStore(path: storePath, accessGroups: ["../x"]))
        XCTAssertThrowsError(try RSAKeyStore(path: storePath, accessGroups: []))
        XCTAssertThrowsError(try RSAKeyStore(path: storePath, accessGroups: [mail, mail]))
        XCTAssertFalse(FileManager.default.fileExists(atPath: storePath))
    }

    func testItemsWithoutAGroupReadAsDefaultAndOnDiskStayAsBefore() throws {
        let store = try RSAKeyStore(path: storePath)
        XCTAssertEqual(store.accessGroupForNewItems, "default")
        let added = try store.addKeyPair(KeychainTestKeys.keys[0], tag: "k")
        XCTAssertEqual(added.public.accessGroup, "default")
        // No "accessGroup" field is written for the default group: such files are as before.
        let text = String(decoding: allFiles(storePath).filter { $0.path.hasSuffix(".pem") }[0].bytes, as: UTF8.self)
        XCTAssertFalse(text.contains("accessGroup"))
        let grouped = try RSAKeyStore(path: storePath, accessGroups: [mail]).addGenericPassword(
            RSASecretBytes(utf8: "pw"), service: "s", account: "a")
        let record = String(decoding: allFiles(storePath).filter { $0.path.hasSuffix(".item") }[0].bytes, as: UTF8.self)
        XCTAssertTrue(record.contains("\"accessGroup\":\"com.example.mail\""), record)
        XCTAssertEqual(grouped.accessGroup, mail)
        XCTAssertEqual(try RSAKeyStore(path: storePath, accessGroups: ["default"]).allItems().keys.count, 2)
        XCTAssertEqual(try RSAKeyStore(path: storePath, accessGroups: ["default"]).allItems().passwords, [])
    }
}
