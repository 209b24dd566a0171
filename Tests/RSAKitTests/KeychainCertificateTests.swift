import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitKeychain

/// Certificate items and identities, with certificates made by the real openssl (TestPKI).
final class KeychainCertificateTests: KeychainTestCase {
    private func leafKey(_ pki: TestPKI) throws -> RSAPrivateKey {
        try RSAPrivateKey(pemRepresentation: pki.read("leaf.key"))
    }

    func testAddAndFind_ByLabelFingerprintAndIDWithTheAttributesOfTheCertificate() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let server = try pki.certificate("server")
        let item = try store.addCertificate(server)
        XCTAssertEqual(item.label, "server.rsakit.test", "default label: the subject summary")
        XCTAssertEqual(item.subject, server.subject)
        XCTAssertEqual(item.issuer, server.issuer)
        XCTAssertEqual(item.serialNumber, [0x5e, 0x5e, 0x01])
        XCTAssertEqual(item.fingerprint, server.fingerprint)
        XCTAssertEqual(item.publicKeyFingerprint, server.publicKeyFingerprint)
        XCTAssertEqual(
            item.notValidAfter.timeIntervalSince1970, server.notValidAfter.timeIntervalSince1970, accuracy: 0.001)
        XCTAssertEqual(item.trust, .unspecified)
        XCTAssertEqual(try store.certificates(label: "server.rsakit.test"), [item])
        XCTAssertEqual(try store.certificate(fingerprint: server.fingerprint), item)
        XCTAssertEqual(try store.item(id: item.itemID), .certificate(item))
        XCTAssertEqual(try store.certificateValue(id: item.itemID).derRepresentation, server.derRepresentation)
        XCTAssertEqual(try store.certificates(label: "nobody"), [])
        XCTAssertThrowsError(try store.certificate(fingerprint: [UInt8](repeating: 7, count: 32)))
    }

    func testAdd_SameIssuerAndSerialIsADuplicateUnlessReplaced() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let server = try pki.certificate("server")
        let first = try store.addCertificate(server, label: "Romeo Montegue")
        assertThrows(
            .duplicateItem(
                RSAKeychainItemQuery(itemClass: .certificate, issuer: server.issuer, serialNumber: [0x5e, 0x5e, 0x01])),
            try store.addCertificate(server))
        // tampered.pem has the same issuer and serial (only the signature differs).
        let tampered = try pki.certificate("tampered")
        XCTAssertThrowsError(try store.addCertificate(tampered))
        let replaced = try store.addCertificate(tampered, label: "Juliet", replace: true)
        XCTAssertNotEqual(replaced.itemID, first.itemID)
        XCTAssertEqual(
            try store.certificates(label: "Romeo Montegue"), [], "the old label entry went with the old item")
        XCTAssertEqual(try store.certificates(label: "Juliet").map(\.fingerprint), [tampered.fingerprint])
        XCTAssertEqual(try store.allItems().certificates.count, 1)
    }

    func testUpdateAndDelete_LabelAndTrustChangeAndTheItemGoes() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let root = try store.addCertificate(try pki.certificate("root"), trust: .trusted)
        XCTAssertEqual(root.trust, .trusted)
        let updated = try store.updateCertificate(id: root.itemID, label: "My Root", trust: .distrusted)
        XCTAssertEqual(updated.itemID, root.itemID)
        XCTAssertEqual(try store.certificates(label: "My Root").map(\.trust), [.distrusted])
        XCTAssertEqual(try store.certificates(label: "RSAKit Test Root CA"), [])
        try store.deleteItem(id: root.itemID)
        assertThrows(.itemNotFound(.item(id: root.itemID)), try store.item(id: root.itemID))
        XCTAssertEqual(try store.certificates(label: "My Root"), [])
        assertThrows(
            .itemNotFound(.item(id: root.itemID, itemClass: .certificate)), try store.deleteCertificate(id: root.itemID)
        )
    }

    func testIdentity_LinksCertificateAndPrivateKeyByFingerprintWithItsChain() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let chain = try X509Certificate.certificates(from: Array(pki.read("chain.pem").utf8))
        let server = try store.addCertificate(try pki.certificate("server"), chain: chain)
        // No private key yet: a certificate, not an identity.
        assertThrows(
            .itemNotFound(
                RSAKeychainItemQuery(
                    itemClass: .identity, label: server.label, certificateFingerprint: server.fingerprint)),
            try store.identity(for: server))
        XCTAssertEqual(try store.identities(label: "server.rsakit.test"), [])
        let key = try leafKey(pki)
        try store.addKeyPair(key, tag: "com.example.server")
        let identities = try store.identities(label: "server.rsakit.test")
        XCTAssertEqual(identities.count, 1)
        XCTAssertEqual(identities[0].privateKey.applicationTag, "com.example.server")
        XCTAssertEqual(identities[0].privateKey.keyClass, .private)
        XCTAssertEqual(identities[0].chain.map(\.label), ["RSAKit Test Intermediate", "RSAKit Test Root CA"])
        XCTAssertEqual(try store.privateKey(tag: identities[0].privateKey.applicationTag), key)
        // By the key's tag: every certificate of that key (client.pem shares the leaf key).
        try store.addCertificate(try pki.certificate("client"))
        XCTAssertEqual(
            try store.identities(tag: "com.example.server").map(\.certificate.label),
            ["RSAKit Test Client", "server.rsakit.test"])
        XCTAssertEqual(try store.allIdentities().count, 2)
        // The chain certificates are items of their own (stored once).
        XCTAssertEqual(try store.allItems().certificates.count, 4)
        // The root is not an identity (no private key of its own).
        let root = try store.certificates(label: "RSAKit Test Root CA")[0]
        let rootQuery = RSAKeychainItemQuery(
            itemClass: .identity, label: root.label, certificateFingerprint: root.fingerprint)
        assertThrows(.itemNotFound(rootQuery), try store.identity(for: root))
        XCTAssertEqual(try store.identity(for: server).privateKey.applicationTag, "com.example.server")
    }

    func testRebuildIndex_KeepsCertificateEntriesAndRestoresThem() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        try store.addKeyPair(try leafKey(pki), tag: "k")
        try store.addCertificate(try pki.certificate("server"))
        XCTAssertEqual(try store.rebuildIndex().removed, 0, "certificate entries are not strays")
        try FileManager.default.removeItem(atPath: storePath + "/index")
        XCTAssertEqual(try store.identities(tag: "k"), [])
        let rebuilt = try store.rebuildIndex()
        XCTAssertEqual(rebuilt.added, 5, "2 key entries, label, certificate fingerprint, key fingerprint")
        XCTAssertEqual(try store.identities(tag: "k").count, 1)
        XCTAssertEqual(try store.certificates(label: "server.rsakit.test").count, 1)
    }

    func testDamagedCertificate_IsReportedAndOthersStayUsable() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let server = try store.addCertificate(try pki.certificate("server"))
        try store.addCertificate(try pki.certificate("root"))
        let hash = StoreLayout.certificateHash(
            issuer: server.issuer, serialNumber: server.serialNumber, group: "default")
        let path = storePath + "/" + StoreLayout.certificatePath(hash: hash)
        var text = String(decoding: FileManager.default.contents(atPath: path)!, as: UTF8.self)
        // Change one base64 character of the certificate: its fingerprint no longer matches.
        let index = text.index(text.endIndex, offsetBy: -60)
        text.replaceSubrange(index...index, with: text[index] == "A" ? "B" : "A")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let listing = try store.allItems()
        XCTAssertEqual(listing.certificates.map(\.label), ["RSAKit Test Root CA"])
        XCTAssertEqual(listing.problems.map(\.path), [path])
        XCTAssertThrowsError(try store.certificateValue(id: server.itemID))
    }

    /// Re-importing an identity under a new tag moves its key (replace) or is
    /// refused naming the present tag; one key pair, one certificate, one identity remain.
    func testAddIdentity_AgainUnderANewTag_MovesTheKeyOnlyWithReplace() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let key = try leafKey(pki), server = try pki.certificate("server")
        try store.addIdentity(privateKey: key, certificate: server, tag: "alice", label: "alice")
        assertThrows(
            .keyStoredUnderAnotherTag(tag: "alice", requestedTag: "alice-sp"),
            try store.addIdentity(privateKey: key, certificate: server, tag: "alice-sp", label: "alice-sp"))
        XCTAssertEqual(
            try store.keyItems(fingerprint: key.publicKey.fingerprint).map(\.applicationTag), ["alice", "alice"])
        let moved = try store.addIdentity(
            privateKey: key, certificate: server, tag: "alice-sp", label: "alice-sp", replace: true)
        XCTAssertEqual(moved.privateKey.applicationTag, "alice-sp")
        XCTAssertEqual(moved.certificate.label, "alice-sp")
        XCTAssertEqual(
            try store.keyItems(fingerprint: key.publicKey.fingerprint).map(\.applicationTag), ["alice-sp", "alice-sp"])
        XCTAssertEqual(try store.allIdentities().map(\.certificate.label), ["alice-sp"])
        XCTAssertThrowsError(try store.privateKey(tag: "alice"))
        XCTAssertEqual(try store.privateKey(tag: "alice-sp").publicKey.fingerprint, key.publicKey.fingerprint)
    }

    /// The same identity added twice is refused as a duplicate identity (SecItemAdd's
    /// errSecDuplicateItem names the item added), not as a duplicate public key.
    func testAddIdentity_Twice_IsADuplicateIdentity() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let key = try leafKey(pki), server = try pki.certificate("server")
        try store.addIdentity(privateKey: key, certificate: server, tag: "alice", label: "alice")
        let query = RSAKeychainItemQuery(
            itemClass: .identity, applicationTag: "alice", label: "alice", certificateFingerprint: server.fingerprint)
        assertThrows(
            .duplicateItem(query),
            try store.addIdentity(privateKey: key, certificate: server, tag: "alice", label: "other label"))
        XCTAssertEqual(
            RSAError.duplicateItem(query).description.contains("identity with key tag \"alice\" and label \"alice\""),
            true,
            RSAError.duplicateItem(query).description)
        XCTAssertEqual(try store.allIdentities().map(\.certificate.label), ["alice"], "nothing changed")
    }
}
