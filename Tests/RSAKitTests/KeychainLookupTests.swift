import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// One lookup rule for every item class, as Apple's `SecItemCopyMatching`. A call
/// that returns a list gives `[]` when nothing matches; a call that returns one item throws
/// `RSAError.itemNotFound` naming the class and the attributes it looked for. Each test shows
/// both for one class, then that the same calls find the item once it exists.
final class KeychainLookupTests: KeychainTestCase {
    func testKeys_ListIsEmpty_OneItemIsNotFound() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = KeychainTestKeys.keys[0]
        XCTAssertEqual(try store.keyItems(fingerprint: key.fingerprint), [])
        XCTAssertEqual(try store.allKeyItems().items, [])
        assertThrows(.itemNotFound(.key(tag: "mail", keyClass: .public)), try store.publicKey(tag: "mail"))
        assertThrows(.itemNotFound(.key(tag: "mail", keyClass: .private)), try store.privateKey(tag: "mail"))
        assertThrows(
            .itemNotFound(.key(tag: "mail", keyClass: .private)), try store.keyItem(tag: "mail", keyClass: .private))
        assertThrows(.itemNotFound(.key(tag: "mail")), try store.publicKeyOfAnyItem(tag: "mail"))
        assertThrows(
            .itemNotFound(
                RSAKeychainItemQuery(itemClass: .key, keyClass: .private, publicKeyFingerprint: key.fingerprint)),
            try RSAMessage.recipientPrivateKey(in: store, fingerprint: key.fingerprint))
        XCTAssertEqual(
            RSAError.itemNotFound(.key(tag: "mail", keyClass: .private)).description,
            "no private key with tag \"mail\" found")

        let added = try store.addKeyPair(key, tag: "mail")
        XCTAssertEqual(try store.keyItems(fingerprint: key.fingerprint), [added.public, added.private])
        XCTAssertEqual(try store.keyItem(tag: "mail", keyClass: .private), added.private)
        XCTAssertEqual(try RSAMessage.recipientPrivateKey(in: store, fingerprint: key.fingerprint), key)
        try store.deleteKey(tag: "mail")
        assertThrows(
            .itemNotFound(.item(id: added.public.itemID, itemClass: .key)), try store.keyItem(id: added.public.itemID))
    }

    /// allItems() and each key item's public key by item id (a private item's public
    /// half), from one reading of the files.
    func testKeys_ListingWithPublicKeys_EveryItemHasItsKey() throws {
        let store = try RSAKeyStore(path: storePath)
        XCTAssertTrue(try store.allItemsWithPublicKeys().publicKeys.isEmpty)
        let pair = try store.addKeyPair(KeychainTestKeys.keys[0], tag: "pair")
        let lone = try store.addPublicKey(KeychainTestKeys.keys[1].publicKey, tag: "lone")
        let (listing, publicKeys) = try store.allItemsWithPublicKeys()
        XCTAssertEqual(listing.keys, try store.allItems().keys)
        XCTAssertEqual(
            listing.keys.map(\.itemID).sorted(), [pair.public.itemID, pair.private.itemID, lone.itemID].sorted())
        XCTAssertEqual(publicKeys.count, 3)
        XCTAssertEqual(publicKeys[pair.public.itemID], KeychainTestKeys.keys[0].publicKey)
        XCTAssertEqual(publicKeys[pair.private.itemID], KeychainTestKeys.keys[0].publicKey)
        XCTAssertEqual(publicKeys[lone.itemID], KeychainTestKeys.keys[1].publicKey)
    }

    func testCertificates_ListIsEmpty_OneItemIsNotFound() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let server = try pki.certificate("server")
        let publicKeyFingerprint = try XCTUnwrap(server.publicKeyFingerprint)
        XCTAssertEqual(try store.certificates(label: "server.rsakit.test"), [])
        XCTAssertEqual(try store.certificates(publicKeyFingerprint: publicKeyFingerprint), [])
        assertThrows(
            .itemNotFound(RSAKeychainItemQuery(itemClass: .certificate, certificateFingerprint: server.fingerprint)),
            try store.certificate(fingerprint: server.fingerprint))

        let item = try store.addCertificate(server)
        XCTAssertEqual(try store.certificates(label: "server.rsakit.test"), [item])
        XCTAssertEqual(try store.certificates(publicKeyFingerprint: publicKeyFingerprint), [item])
        XCTAssertEqual(try store.certificate(fingerprint: server.fingerprint), item)
        try store.deleteCertificate(id: item.itemID)
        assertThrows(
            .itemNotFound(.item(id: item.itemID, itemClass: .certificate)), try store.certificateValue(id: item.itemID))
        XCTAssertEqual(
            RSAError.itemNotFound(.item(id: item.itemID, itemClass: .certificate)).description,
            "no certificate with item id \(item.itemID) found")
    }

    func testIdentities_ListIsEmpty_OneItemIsNotFound() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let leafKey = try RSAPrivateKey(pemRepresentation: pki.read("leaf.key"))
        // Nothing stored, then a certificate without its key, then a key without a certificate:
        // no identity in any of them.
        let labelQuery = RSAKeychainItemQuery(itemClass: .identity, label: "server.rsakit.test")
        let tagQuery = RSAKeychainItemQuery(itemClass: .identity, applicationTag: "server-key")
        XCTAssertEqual(try store.identities(label: "server.rsakit.test"), [])
        XCTAssertEqual(try store.identities(tag: "server-key"), [], "no key with this tag: an empty list, not an error")
        XCTAssertEqual(try store.allIdentities(), [])
        assertThrows(.itemNotFound(labelQuery), try RSATLSClientIdentity(store: store, label: "server.rsakit.test"))
        assertThrows(.itemNotFound(tagQuery), try RSATLSClientIdentity(store: store, tag: "server-key"))

        let certificate = try store.addCertificate(try pki.certificate("server"))
        XCTAssertEqual(try store.identities(label: "server.rsakit.test"), [])
        assertThrows(.itemNotFound(labelQuery), try RSATLSClientIdentity(store: store, label: "server.rsakit.test"))
        assertThrows(
            .itemNotFound(
                RSAKeychainItemQuery(
                    itemClass: .identity, label: certificate.label,
                    certificateFingerprint: certificate.fingerprint)),
            try store.identity(for: certificate))
        try store.deleteCertificate(id: certificate.itemID)
        try store.addKeyPair(leafKey, tag: "server-key")
        XCTAssertEqual(try store.identities(tag: "server-key"), [], "a key without a certificate is no identity")
        assertThrows(.itemNotFound(tagQuery), try RSATLSClientIdentity(store: store, tag: "server-key"))
        XCTAssertEqual(RSAError.itemNotFound(tagQuery).description, "no identity with key tag \"server-key\" found")

        // Key and certificate together: found by every call.
        let stored = try store.addCertificate(try pki.certificate("server"))
        XCTAssertEqual(
            try store.identities(label: "server.rsakit.test").map(\.privateKey.applicationTag), ["server-key"])
        XCTAssertEqual(try store.identities(tag: "server-key").map(\.certificate), [stored])
        XCTAssertEqual(try store.identity(for: stored).certificate, stored)
        XCTAssertEqual(try RSATLSClientIdentity(store: store, label: "server.rsakit.test").privateKey, leafKey)
        XCTAssertEqual(
            try RSATLSClientIdentity(store: store, tag: "server-key").certificate.fingerprint, stored.fingerprint)
    }

    /// An identity whose private key is on a token: without a tokenPIN closure the store
    /// initialisers throw keyOnToken; with one, they ask it (once, with the item's reference)
    /// and give a `.token` key. No token is touched here (the module path does not exist).
    func testIdentities_KeyOnAToken_PINAskedOnlyThenAndTheKeyIsATokenKey() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let leafKey = try RSAPrivateKey(pemRepresentation: pki.read("leaf.key"))
        let reference = RSATokenReference(
            modulePath: "/nonexistent/module.so", tokenLabel: "T", tokenSerial: "1234", objectID: [0xAB, 0x01])
        try store.addTokenKeyPair(RSATokenKey(reference: reference, publicKey: leafKey.publicKey), tag: "server-key")
        try store.addCertificate(try pki.certificate("server"))
        assertThrows(.keyOnToken(tag: "server-key"), try RSATLSClientIdentity(store: store, tag: "server-key"))
        assertThrows(
            .keyOnToken(tag: "server-key"), try RSATLSClientIdentity(store: store, label: "server.rsakit.test"))
        var asked: [RSATokenReference] = []
        let identity = try RSATLSClientIdentity(store: store, tag: "server-key") {
            asked.append($0); return RSASecretBytes(utf8: "1234")
        }
        XCTAssertEqual(asked, [reference])
        XCTAssertNil(identity.privateKey)
        guard case let .token(tokenKey, pin) = identity.key else {
            return XCTFail("expected a token key, got \(identity.key)")
        }
        XCTAssertEqual(tokenKey.reference, reference)
        XCTAssertEqual(tokenKey.publicKey, leafKey.publicKey)
        XCTAssertEqual(identity.key.publicKey, leafKey.publicKey)
        XCTAssertEqual(pin.withUnsafeBytes { Array($0) }, Array("1234".utf8))
        // A PIN source that fails: its error, nothing else.
        assertThrows(
            .tokenPINIncorrect,
            try RSATLSClientIdentity(store: store, label: "server.rsakit.test") { _ in throw RSAError.tokenPINIncorrect
            })
    }

    func testGenericPasswords_ListIsEmpty_OneItemIsNotFound() throws {
        let store = try RSAKeyStore(path: storePath)
        let query = RSAKeychainItemQuery.genericPassword(service: "mail", account: "romeo")
        XCTAssertEqual(try store.genericPasswords(service: "mail"), [])
        XCTAssertEqual(try store.allItems().passwords, [])
        assertThrows(.itemNotFound(query), try store.genericPassword(service: "mail", account: "romeo"))
        assertThrows(.itemNotFound(query), try store.genericPasswordValue(service: "mail", account: "romeo"))
        assertThrows(.itemNotFound(query), try store.deleteGenericPassword(service: "mail", account: "romeo"))

        let added = try store.addGenericPassword(RSASecretBytes(utf8: "pw"), service: "mail", account: "romeo")
        XCTAssertEqual(try store.genericPasswords(service: "mail"), [added])
        XCTAssertEqual(try store.genericPassword(service: "mail", account: "romeo"), added)
        // Another account of the same service is still not found.
        assertThrows(
            .itemNotFound(.genericPassword(service: "mail", account: "juliet")),
            try store.genericPassword(service: "mail", account: "juliet"))
    }

    func testInternetPasswords_ListIsEmpty_OneItemIsNotFound() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = try RSAInternetPasswordKey(url: "https://alice@example.com")
        XCTAssertEqual(try store.internetPasswords(matching: RSAInternetPasswordQuery(server: "example.com")), [])
        XCTAssertEqual(try store.internetPasswords(), [])
        assertThrows(.itemNotFound(.internetPassword(key)), try store.internetPassword(key))
        assertThrows(.itemNotFound(.internetPassword(key)), try store.internetPasswordValue(key))
        assertThrows(.itemNotFound(.internetPassword(key)), try store.deleteInternetPassword(key))

        let added = try store.addInternetPassword(RSASecretBytes(utf8: "pw"), for: key)
        XCTAssertEqual(try store.internetPasswords(matching: RSAInternetPasswordQuery(server: "example.com")), [added])
        XCTAssertEqual(try store.internetPassword(key), added)
        XCTAssertEqual(try store.internetPasswords(matching: RSAInternetPasswordQuery(account: "bob")), [])
    }

    func testItemsByID_AnyClassIsNotFoundWithoutAClass() throws {
        let store = try RSAKeyStore(path: storePath)
        let password = try store.addGenericPassword(RSASecretBytes(utf8: "pw"), service: "svc", account: "a")
        let key = try store.addPublicKey(KeychainTestKeys.keys[1].publicKey, tag: "k")
        try store.deleteItem(id: password.itemID)
        try store.deleteItem(id: key.itemID)
        for id in [password.itemID, key.itemID, "not-an-id"] {
            assertThrows(.itemNotFound(.item(id: id)), try store.item(id: id))
            assertThrows(.itemNotFound(.item(id: id)), try store.deleteItem(id: id))
        }
        XCTAssertEqual(RSAError.itemNotFound(.item(id: "x")).description, "no key store item with id x found")
    }
}
