import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitKeychain

/// One rule for damaged item files, in every class: a lookup that meets one (of one item, or
/// of every item matching a query) throws `RSAError.damagedItem` naming its path; a listing
/// (`allItems()`, `allKeyItems()`, `snapshot()`) reports it among its problems, beside the items
/// that read, and leaves none out. Each test damages one item of a class next to a sound one.
final class KeychainDamagedItemTests: KeychainTestCase {
    /// Asserts that `expression` throws `damagedItem` for the file at `path`.
    private func assertDamaged<T>(
        _ path: String, _ expression: @autoclosure () throws -> T,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try expression(), file: file, line: line) { error in
            guard case let .damagedItem(_, damagedPath, _)? = error as? RSAError else {
                return XCTFail("expected damagedItem, got \(error)", file: file, line: line)
            }
            XCTAssertEqual(damagedPath, path, file: file, line: line)
        }
    }

    func testDamagedCertificate_LookupsThrowDamagedItem_ListingsReportItBesideTheOthers() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let server = try pki.certificate("server")
        let damaged = try store.addCertificate(server, label: "shared label")
        let sound = try store.addCertificate(try pki.certificate("intermediate"), label: "sound")
        let path =
            storePath + "/"
            + StoreLayout.certificatePath(
                hash: StoreLayout.certificateHash(
                    issuer: server.issuer, serialNumber: server.serialNumber, group: "default"))
        // The metadata still reads (so every index entry still leads here); the PEM block does not.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try text.replacingOccurrences(of: "CERTIFICATE-----", with: "X509 CRL-----").write(
            toFile: path, atomically: true, encoding: .utf8)
        let expected = RSAError.damagedItem(tag: nil, path: path, reason: "the PEM block is not one \"CERTIFICATE\"")

        // Lookups of one item.
        assertThrows(expected, try store.certificate(id: damaged.itemID))
        assertThrows(expected, try store.certificateValue(id: damaged.itemID))
        assertThrows(expected, try store.certificate(fingerprint: server.fingerprint))
        assertThrows(expected, try store.item(id: damaged.itemID))
        assertThrows(expected, try store.updateCertificate(id: damaged.itemID, label: "renamed"))
        // Lookups of every match: the damaged item is not passed over.
        assertThrows(expected, try store.certificates(label: "shared label"))
        assertThrows(expected, try store.certificates(publicKeyFingerprint: try XCTUnwrap(server.publicKeyFingerprint)))
        assertThrows(expected, try store.identities(label: "shared label"))
        assertThrows(expected, try store.allIdentities())
        // The sound item is found as before.
        XCTAssertEqual(try store.certificates(label: "sound"), [sound])
        XCTAssertEqual(try store.certificate(id: sound.itemID), sound)

        // Listings: the sound item listed, the damaged one in problems, with a lookup's error.
        let listing = try store.allItems()
        XCTAssertEqual(listing.certificates, [sound])
        XCTAssertEqual(listing.problems.map(\.path), [path])
        XCTAssertEqual(listing.problems.map(\.error), [expected])
        let snapshot = try store.snapshot()
        XCTAssertEqual(snapshot.certificates.map(\.attributes), [sound])
        XCTAssertEqual(snapshot.problems.map(\.path), [path])
    }

    func testDamagedGenericPassword_LookupsThrowDamagedItem_ListingReportsItBesideTheOthers() throws {
        let store = try RSAKeyStore(path: storePath)
        let damaged = try store.addGenericPassword(RSASecretBytes(utf8: "va"), service: "svc", account: "a")
        let sameService = try store.addGenericPassword(RSASecretBytes(utf8: "vb"), service: "svc", account: "b")
        let otherService = try store.addGenericPassword(RSASecretBytes(utf8: "vx"), service: "other", account: "x")
        let path =
            storePath + "/"
            + StoreLayout.passwordPath(hash: StoreLayout.passwordHash(service: "svc", account: "a", group: "default"))
        var bytes = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: path)))
        bytes.removeLast(3)  // the value line, cut short
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        assertDamaged(path, try store.genericPassword(service: "svc", account: "a"))
        assertDamaged(path, try store.genericPasswordValue(service: "svc", account: "a"))
        assertDamaged(path, try store.item(id: damaged.itemID))
        assertDamaged(path, try store.genericPasswords(service: "svc"))
        // Internet passwords share the folder: a damaged file there might be one of them.
        assertDamaged(path, try store.internetPasswords())
        XCTAssertEqual(try store.genericPasswords(service: "other"), [otherService])
        XCTAssertEqual(try store.genericPassword(service: "svc", account: "b"), sameService)

        let listing = try store.allItems()
        XCTAssertEqual(listing.passwords, [otherService, sameService])
        XCTAssertEqual(listing.problems.map(\.path), [path])
        guard case .damagedItem? = listing.problems.first?.error else { return XCTFail("\(listing.problems)") }
    }

    func testDamagedKey_FingerprintLookupThrowsDamagedItem_KeyListingReportsIt() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = KeychainTestKeys.keys[0]
        let pair = try store.addKeyPair(key, tag: "mail")
        let path =
            storePath + "/" + StoreLayout.itemPath(.public, tagHash: StoreLayout.tagHash("mail", group: "default"))
        try "not an item\n".write(toFile: path, atomically: true, encoding: .utf8)

        assertDamaged(path, try store.keyItem(tag: "mail", keyClass: .public))
        assertDamaged(path, try store.keyItems(fingerprint: key.fingerprint))
        XCTAssertEqual(try store.keyItem(tag: "mail", keyClass: .private), pair.private)

        let listing = try store.allKeyItems()
        XCTAssertEqual(listing.items, [pair.private])
        XCTAssertEqual(listing.problems.map(\.path), [path])
        XCTAssertEqual(try store.allItems().problems.map(\.path), [path])
    }

    func testDamagedCRL_LookupsThrowDamagedItem_ListingReportsIt() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let crl = try XCTUnwrap(try X509CRL.crls(from: Array(try pki.read("crl-good.pem").utf8)).first)
        let item = try store.addCRL(crl).attributes
        let path = storePath + "/" + StoreLayout.crlPath(hash: StoreLayout.crlHash(issuer: crl.issuer))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try text.replacingOccurrences(of: "X509 CRL-----", with: "X509 CRX-----").write(
            toFile: path, atomically: true, encoding: .utf8)

        assertDamaged(path, try store.crl(issuer: crl.issuer))
        assertDamaged(path, try store.item(id: item.itemID))
        assertDamaged(path, try store.allCRLs())
        assertDamaged(path, try store.allCRLValues())

        let listing = try store.allItems()
        XCTAssertEqual(listing.crls, [])
        XCTAssertEqual(listing.problems.map(\.path), [path])
    }
}
