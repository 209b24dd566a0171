import Foundation
import XCTest
import RSAKit

/// The library half of keys on a token that needs no token: RFC 7512 URI parsing, and the
/// store's reference items (a token key's private item holds the SPKI and the reference).
/// CLITokenTests drives a real token (SoftHSM2).
final class TokenReferenceTests: KeychainTestCase {
    func testTokenURI_ParsesTokenObjectIDAndModulePath() throws {
        let uri = try RSATokenURI("pkcs11:token=My%20Card;serial=0123;object=k;id=%01%ff?module-path=/usr/lib/x.so&pin-source=file:/p")
        XCTAssertEqual(uri.tokenLabel, "My Card")
        XCTAssertEqual(uri.tokenSerial, "0123")
        XCTAssertEqual(uri.objectLabel, "k")
        XCTAssertEqual(uri.objectID, [0x01, 0xFF])
        XCTAssertEqual(uri.modulePath, "/usr/lib/x.so")
        XCTAssertEqual(try RSATokenURI(uri.description), uri)
    }

    func testTokenURI_RejectsOtherSchemesBadEscapesAndNoModule() {
        for text in ["file:/x", "pkcs11:token=%zz?module-path=/m.so", "pkcs11:token"] {
            XCTAssertThrowsError(try RSATokenURI(text), text)
        }
        if getenv("RSAKIT_PKCS11_MODULE") == nil {
            XCTAssertThrowsError(try RSATokenURI("pkcs11:token=T"))
        }
    }

    func testTokenKeyPair_StoredAsReference() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = KeychainTestKeys.keys[0]
        let reference = RSATokenReference(modulePath: "/m.so", tokenLabel: "T", tokenSerial: "S", objectID: [0x0A, 0xB0])
        let items = try store.addTokenKeyPair(RSATokenKey(reference: reference, publicKey: key.publicKey), tag: "tk")
        XCTAssertNil(items.public.token)
        XCTAssertEqual(items.private.token, reference)
        XCTAssertEqual(reference.objectIDHex, "0ab0")
        XCTAssertEqual(reference.objectID, [0x0A, 0xB0])
        XCTAssertEqual(try store.keyItem(tag: "tk", keyClass: .private).token, reference)
        XCTAssertEqual(try store.tokenKey(tag: "tk")?.publicKey, key.publicKey)
        assertThrows(.keyOnToken(tag: "tk"), try store.privateKey(tag: "tk"))
        // The private item file holds the public key only.
        let file = allFiles(storePath).first { $0.path.contains("/private/") }!
        let text = String(decoding: file.bytes, as: UTF8.self)
        XCTAssertTrue(text.contains("-----BEGIN PUBLIC KEY-----"))
        XCTAssertFalse(text.contains("PRIVATE KEY-----"))
        // A key held in the store is not a token key.
        try store.addKeyPair(key, tag: "local")
        XCTAssertNil(try store.tokenKey(tag: "local"))
    }
}
