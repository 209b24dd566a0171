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
        assertThrows(
            .itemNotFound(.key(tag: "k.web", keyClass: .private)),
            try mailStore.keyItem(tag: "k.web", keyClass: .private))
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

    func testKeys_AnotherGroupsItemIsNotFoundByNameAndRefusedByID() throws {
        let webStore = try RSAKeyStore(path: storePath, accessGroups: [web])
        let webItems = try webStore.addKeyPair(KeychainTestKeys.keys[0], tag: "k", label: "web key")
        let mailStore = try RSAKeyStore(path: storePath, accessGroups: [mail])
        let before = allFiles(storePath).map { $0.path + ":" + StoreHex.encode($0.bytes) }
        // By name, the tag in another group is another item: not found, as on Apple platforms.
        assertThrows(.itemNotFound(.key(tag: "k")), try mailStore.deleteKey(tag: "k"))
        assertThrows(.itemNotFound(.key(tag: "k")), try mailStore.updateKey(tag: "k", label: "taken"))
        // By item id, the item is named exactly: refused (exit 77 in the CLI), not "not found".
        let refused = RSAError.accessGroupNotAllowed(group: web, allowed: [mail])
        assertThrows(refused, try mailStore.deleteItem(id: webItems.private.itemID))
        assertThrows(refused, try mailStore.deleteItem(id: webItems.public.itemID))
        XCTAssertEqual(
            refused.description,
            "access group \"com.example.web\" is not one this store was opened with (\"com.example.mail\")")
        XCTAssertEqual(allFiles(storePath).map { $0.path + ":" + StoreHex.encode($0.bytes) }, before)
        // A read by id passes over it, as a lookup does.
        assertThrows(.itemNotFound(.item(id: webItems.private.itemID)), try mailStore.item(id: webItems.private.itemID))
        let item = try webStore.keyItem(tag: "k", keyClass: .private)
        XCTAssertEqual(item.label, "web key")
        XCTAssertEqual(try webStore.privateKey(tag: "k"), KeychainTestKeys.keys[0])
        try webStore.deleteItem(id: webItems.public.itemID)
        assertThrows(
            .itemNotFound(.key(tag: "k", keyClass: .public)), try webStore.keyItem(tag: "k", keyClass: .public))
    }

    func testPasswords_GenericAndInternetPerGroup() throws {
        let mailStore = try RSAKeyStore(path: storePath, accessGroups: [mail])
        let webStore = try RSAKeyStore(path: storePath, accessGroups: [web])
        let generic = try mailStore.addGenericPassword(RSASecretBytes(utf8: "pw"), service: "imap", account: "romeo")
        XCTAssertEqual(generic.accessGroup, mail)
        let url = try RSAInternetPasswordKey(url: "https://romeo@example.com")
        let internet = try webStore.addInternetPassword(RSASecretBytes(utf8: "web"), for: url)
        XCTAssertEqual(internet.accessGroup, web)
        XCTAssertEqual(
            try mailStore.genericPasswordValue(service: "imap", account: "romeo").testBytes, Array("pw".utf8))
        assertThrows(
            .itemNotFound(.genericPassword(service: "imap", account: "romeo")),
            try webStore.genericPassword(service: "imap", account: "romeo"))
        XCTAssertEqual(try webStore.genericPasswords(service: "imap"), [])
        assertThrows(.itemNotFound(.internetPassword(url)), try mailStore.internetPassword(url))
        assertThrows(.itemNotFound(.item(id: generic.itemID)), try webStore.item(id: generic.itemID))
        assertThrows(
            .itemNotFound(.genericPassword(service: "imap", account: "romeo")),
            try webStore.updateGenericPassword(service: "imap", account: "romeo", value: RSASecretBytes(utf8: "x")))
        assertThrows(
            .itemNotFound(.genericPassword(service: "imap", account: "romeo")),
            try webStore.deleteGenericPassword(service: "imap", account: "romeo"))
        assertThrows(.itemNotFound(.internetPassword(url)), try mailStore.deleteInternetPassword(url))
        assertThrows(.accessGroupNotAllowed(group: mail, allowed: [web]), try webStore.deleteItem(id: generic.itemID))
        assertThrows(.accessGroupNotAllowed(group: web, allowed: [mail]), try mailStore.deleteItem(id: internet.itemID))
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
        assertThrows(
            .accessGroupNotAllowed(group: web, allowed: [mail]), try mailStore.updateCertificate(id: id, label: "x"))
        assertThrows(.accessGroupNotAllowed(group: web, allowed: [mail]), try mailStore.deleteItem(id: id))
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
        for bad in [
            "", ".", "..", "../x", "a/b", "/etc", "com..example", "com.example.", ".hidden", "a b", "café",
            String(repeating: "a", count: 129)
        ] {
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

/// Uniqueness per group: the same tag, service and account, internet key, or issuer and serial
/// once in each group; lookups by name through groups in order, and the ambiguity of a store
/// opened without groups.
final class KeychainAccessGroupUniquenessTests: KeychainTestCase {
    private let mail = "com.example.mail", web = "com.example.web"

    func testKeys_SameTagOncePerGroup_FirstGroupWins_AmbiguousWithoutGroups() throws {
        let plain = try RSAKeyStore(path: storePath)
        let mailStore = try RSAKeyStore(path: storePath, accessGroups: [mail])
        let webStore = try RSAKeyStore(path: storePath, accessGroups: [web])
        let (k0, k1, k2) = (StoreTestKeys.a, StoreTestKeys.b, StoreTestKeys.c)
        let inDefault = try plain.addKeyPair(k0, tag: "k")
        let inMail = try mailStore.addKeyPair(k1, tag: "k")
        // Once per group: a second add in the same group is a duplicate.
        assertThrows(.duplicateItem(.key(tag: "k", keyClass: .public)), try mailStore.addKeyPair(k2, tag: "k"))
        // The default group's file name is the one it always had; another group's differs.
        XCTAssertTrue(FileManager.default.fileExists(atPath: keyItemPath(plain, "k", .private)))
        XCTAssertNotEqual(inDefault.private.itemID.prefix(64), inMail.private.itemID.prefix(64))
        XCTAssertEqual(try mailStore.privateKey(tag: "k"), k1)
        XCTAssertEqual(try RSAKeyStore(path: storePath, accessGroups: ["default"]).privateKey(tag: "k"), k0)
        // Groups in order: the first that holds the name wins.
        XCTAssertEqual(try RSAKeyStore(path: storePath, accessGroups: [mail, "default"]).privateKey(tag: "k"), k1)
        XCTAssertEqual(try RSAKeyStore(path: storePath, accessGroups: ["default", mail]).privateKey(tag: "k"), k0)
        XCTAssertEqual(try RSAKeyStore(path: storePath, accessGroups: [web, mail]).privateKey(tag: "k"), k1)
        // Without groups: refused as ambiguous, naming the groups, for reads and writes alike.
        let ambiguous = RSAError.ambiguousItem(
            .key(tag: "k", keyClass: .private), accessGroups: [mail, "default"].sorted())
        assertThrows(ambiguous, try plain.privateKey(tag: "k"))
        assertThrows(ambiguous, try plain.keyItem(tag: "k", keyClass: .private))
        assertThrows(ambiguous, try plain.deleteKey(tag: "k", keyClass: .private))
        XCTAssertEqual(
            ambiguous.description,
            "a private key with tag \"k\" exists in several access groups (\"com.example.mail\", \"default\"); name "
                + "the group"
        )
        // Listings show every copy with its group; a tag held by one group is found without groups.
        let groups = try plain.allKeyItems().items.map { "\($0.keyClass)/\($0.accessGroup)" }.sorted()
        XCTAssertEqual(
            groups, ["private/com.example.mail", "private/default", "public/com.example.mail", "public/default"])
        try webStore.addKeyPair(k2, tag: "only.web")
        XCTAssertEqual(try plain.privateKey(tag: "only.web"), k2)
        // Each group deletes its own copy; the other stays and is then found without groups.
        try mailStore.deleteKey(tag: "k")
        XCTAssertEqual(try plain.privateKey(tag: "k"), k0)
        // The same key pair under the same tag in two groups is two identities' worth of items.
        try webStore.addKeyPair(k0, tag: "k")
        XCTAssertEqual(
            try plain.keyItems(fingerprint: k0.publicKey.fingerprint).map(\.accessGroup).sorted(),
            ["com.example.web", "com.example.web", "default", "default"])
    }

    func testPasswordsAndCertificates_OncePerGroup() throws {
        let plain = try RSAKeyStore(path: storePath)
        let mailStore = try RSAKeyStore(path: storePath, accessGroups: [mail])
        try plain.addGenericPassword(RSASecretBytes(utf8: "plain"), service: "imap", account: "romeo")
        try mailStore.addGenericPassword(RSASecretBytes(utf8: "mail"), service: "imap", account: "romeo")
        assertThrows(
            .duplicateItem(.genericPassword(service: "imap", account: "romeo")),
            try mailStore.addGenericPassword(RSASecretBytes(utf8: "again"), service: "imap", account: "romeo"))
        XCTAssertEqual(
            try mailStore.genericPasswordValue(service: "imap", account: "romeo").testBytes, Array("mail".utf8))
        assertThrows(
            .ambiguousItem(.genericPassword(service: "imap", account: "romeo"), accessGroups: [mail, "default"]),
            try plain.genericPasswordValue(service: "imap", account: "romeo"))
        // By service: every group's account, each with its group.
        XCTAssertEqual(try plain.genericPasswords(service: "imap").map(\.accessGroup), [mail, "default"])
        XCTAssertEqual(try mailStore.genericPasswords(service: "imap").map(\.accessGroup), [mail])
        try mailStore.updateGenericPassword(service: "imap", account: "romeo", value: RSASecretBytes(utf8: "mail2"))
        XCTAssertEqual(
            try RSAKeyStore(path: storePath, accessGroups: ["default"]).genericPasswordValue(
                service: "imap", account: "romeo"
            ).testBytes, Array("plain".utf8))
        let url = try RSAInternetPasswordKey(url: "https://romeo@example.com")
        try plain.addInternetPassword(RSASecretBytes(utf8: "a"), for: url)
        try mailStore.addInternetPassword(RSASecretBytes(utf8: "b"), for: url)
        assertThrows(
            .ambiguousItem(.internetPassword(url), accessGroups: [mail, "default"]), try plain.internetPassword(url))
        XCTAssertEqual(try mailStore.internetPasswordValue(url).testBytes, Array("b".utf8))
        // The same certificate (issuer and serial) once per group.
        let server = try TestPKI.shared().certificate("server")
        try plain.addCertificate(server)
        try mailStore.addCertificate(server)
        assertThrows(.duplicateItem(RSAKeyStore.certificateQuery(server)), try mailStore.addCertificate(server))
        XCTAssertEqual(try plain.allItems().certificates.map(\.accessGroup).sorted(), [mail, "default"].sorted())
        // The registry names the groups with items; rebuilding the index restores it.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: storePath + "/index/group"), [mail])
        try FileManager.default.removeItem(atPath: storePath + "/index/group")
        XCTAssertEqual(try plain.genericPasswordValue(service: "imap", account: "romeo").testBytes, Array("plain".utf8))
        XCTAssertEqual(try plain.rebuildIndex().added, 1)
        assertThrows(
            .ambiguousItem(.genericPassword(service: "imap", account: "romeo"), accessGroups: [mail, "default"]),
            try plain.genericPassword(service: "imap", account: "romeo"))
    }

    func testDeleteByID_DeletesExactlyThatCopy() throws {
        let plain = try RSAKeyStore(path: storePath)
        let mailStore = try RSAKeyStore(path: storePath, accessGroups: [mail])
        try plain.addKeyPair(KeychainTestKeys.keys[0], tag: "k")
        let grouped = try mailStore.addKeyPair(KeychainTestKeys.keys[1], tag: "k")
        let password = try mailStore.addGenericPassword(RSASecretBytes(utf8: "m"), service: "s", account: "a")
        try plain.addGenericPassword(RSASecretBytes(utf8: "p"), service: "s", account: "a")
        // Without groups the names are ambiguous, but ids are exact.
        try plain.deleteItem(id: grouped.private.itemID)
        try plain.deleteItem(id: password.itemID)
        XCTAssertEqual(try plain.privateKey(tag: "k"), KeychainTestKeys.keys[0])
        XCTAssertEqual(try plain.genericPasswordValue(service: "s", account: "a").testBytes, Array("p".utf8))
        // The public halves were left: both copies, so still ambiguous by name.
        assertThrows(
            .ambiguousItem(.key(tag: "k", keyClass: .public), accessGroups: [mail, "default"]),
            try plain.keyItem(tag: "k", keyClass: .public))
    }

    /// The TLS client's identity comes through the store it is given: opened with a group, from
    /// that group only.
    func testTLSClientIdentity_FromTheGroupsOfTheStoreOnly() throws {
        let pki = try TestPKI.shared()
        let key = try RSAPrivateKey(pemRepresentation: pki.read("leaf.key"))
        try RSAKeyStore(path: storePath, accessGroups: [web]).addIdentity(
            privateKey: key, certificate: try pki.certificate("server"), tag: "server.key")
        let identity = try RSATLSClientIdentity(
            store: RSAKeyStore(path: storePath, accessGroups: [web]), label: "server.rsakit.test")
        XCTAssertEqual(identity.name, "server.rsakit.test")
        assertThrows(
            .itemNotFound(RSAKeychainItemQuery(itemClass: .identity, label: "server.rsakit.test")),
            try RSATLSClientIdentity(
                store: RSAKeyStore(path: storePath, accessGroups: [mail]), label: "server.rsakit.test"))
    }

    private func keyItemPath(_ store: RSAKeyStore, _ tag: String, _ keyClass: RSAKeyClass) -> String {
        store.path + "/" + StoreLayout.itemPath(keyClass, tagHash: StoreLayout.tagHash(tag, group: "default"))
    }
}
