import Foundation
import XCTest
import RSAKit

/// The library half of keys on a token that needs no token: RFC 7512 URI parsing, and the
/// store's reference items (a token key's private item holds the SPKI and the reference).
/// CLITokenTests drives a real token (SoftHSM2).
final class TokenReferenceTests: KeychainTestCase {
    func testTokenURI_ParsesTokenObjectIDAndModulePath() throws {
        let uri = try RSATokenURI(
            "pkcs11:token=My%20Card;serial=0123;object=k;id=%01%ff?module-path=/usr/lib/x.so&pin-source=file:/p")
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
        let reference = RSATokenReference(
            modulePath: "/m.so", tokenLabel: "T", tokenSerial: "S", objectID: [0x0A, 0xB0])
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

    func testTPMReference_RecordedAndReadBackWithTheStoresTPMConfiguration() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = KeychainTestKeys.keys[0]
        let reference = RSATokenReference(
            modulePath: "/m.so", tokenLabel: "rsakit 0011", tokenSerial: "0", objectID: [1],
            isTPM: true, requiresPIN: false)
        let tpm = RSATPMConfiguration(databaseDirectory: storePath + "/tpm", tcti: "swtpm:host=127.0.0.1,port=1")
        try store.addTokenKeyPair(RSATokenKey(reference: reference, publicKey: key.publicKey, tpm: tpm), tag: "tk")
        let item = try store.keyItem(tag: "tk", keyClass: .private)
        XCTAssertEqual(item.token, reference)
        XCTAssertEqual(item.token?.isTPM, true)
        XCTAssertEqual(item.token?.requiresPIN, false)
        XCTAssertEqual(reference.description, "tpm (token rsakit 0011), id 01")
        // The key read back reaches the TPM through this store's database folder.
        XCTAssertEqual(try store.tokenKey(tag: "tk")?.tpm?.databaseDirectory, store.path + "/tpm")
        XCTAssertEqual(store.tpmConfiguration.databaseDirectory, store.path + "/tpm")
    }

    func testTokenReference_ItemsWithoutTPMFieldsDecodeAsOrdinaryTokens() throws {
        // The record an ordinary token item has always had: no "tpm", no "pinRequired".
        let old = #"{"modulePath":"/m.so","objectIDHex":"0ab0","tokenLabel":"T","tokenSerial":"S"}"#
        let decoded = try JSONDecoder().decode(RSATokenReference.self, from: Data(old.utf8))
        XCTAssertFalse(decoded.isTPM)
        XCTAssertTrue(decoded.requiresPIN)
        XCTAssertEqual(
            decoded, RSATokenReference(modulePath: "/m.so", tokenLabel: "T", tokenSerial: "S", objectID: [0x0A, 0xB0]))
        // And an ordinary token item is written as before, byte for byte.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        XCTAssertEqual(String(decoding: try encoder.encode(decoded), as: UTF8.self), old)
        let tpm = RSATokenReference(
            modulePath: "/m.so", tokenLabel: "T", tokenSerial: "S", objectID: [1], isTPM: true, requiresPIN: true)
        XCTAssertEqual(try JSONDecoder().decode(RSATokenReference.self, from: encoder.encode(tpm)), tpm)
    }

    func testPrivateOperationCount_PerFormat() {
        // k = 256: container v2 PKCS#1 v1.5 blocks carry 256 - 11 - 57 = 188 bytes.
        XCTAssertEqual(
            RSAMessageFormat.container().privateOperationCount(plaintextByteCount: 0, modulusByteCount: 256), 1)
        XCTAssertEqual(
            RSAMessageFormat.container().privateOperationCount(plaintextByteCount: 188, modulusByteCount: 256), 1)
        XCTAssertEqual(
            RSAMessageFormat.container().privateOperationCount(plaintextByteCount: 189, modulusByteCount: 256), 2)
        XCTAssertEqual(
            RSAMessageFormat.rawBlocks(padding: .pkcs1v15).privateOperationCount(
                plaintextByteCount: 246, modulusByteCount: 256), 2)
        XCTAssertEqual(
            RSAMessageFormat.appleAESGCM().privateOperationCount(plaintextByteCount: 1 << 30, modulusByteCount: 256), 1)
        XCTAssertNil(RSAMessageFormat.container().privateOperationCount(plaintextByteCount: 10, modulusByteCount: 64))
    }
}
