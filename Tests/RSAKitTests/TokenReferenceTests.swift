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

    func testTPMReference_BlobsRecordedAndReadBackWithTheStoresTCTI() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = KeychainTestKeys.keys[0]
        let blobs = RSATPMKeyBlobs(
            usage: .decryptOAEP, publicBlob: [0x00, 0x02, 0xAB, 0xCD], privateBlob: [0x00, 0x01, 0xEF],
            signsPSSWithDigestLengthSalt: false)
        let reference = RSATokenReference(tpmKey: blobs, requiresPIN: false)
        let tpm = RSATPMConfiguration(tcti: "swtpm:host=127.0.0.1,port=1")
        try store.addTokenKeyPair(RSATokenKey(reference: reference, publicKey: key.publicKey, tpm: tpm), tag: "tk")
        let item = try store.keyItem(tag: "tk", keyClass: .private)
        XCTAssertEqual(item.token, reference)
        XCTAssertEqual(item.token?.tpmKey, blobs)
        XCTAssertEqual(item.token?.isTPM, true)
        XCTAssertEqual(item.token?.requiresPIN, false)
        // The id is the first 8 bytes of SHA-256 of the public blob.
        let id = RSAHashAlgorithm.sha256.hash([0x00, 0x02, 0xAB, 0xCD]).prefix(8)
        XCTAssertEqual(reference.objectIDHex, id.map { String(format: "%02x", $0) }.joined())
        XCTAssertEqual(reference.description, "tpm (decrypt (RSAES-OAEP SHA-256)), id \(reference.objectIDHex)")
        // The key read back reaches the TPM through RSAKIT_TPM_TCTI (else the kernel's manager).
        let expected = ProcessInfo.processInfo.environment["RSAKIT_TPM_TCTI"].flatMap { $0.isEmpty ? nil : $0 }
        XCTAssertEqual(try store.tokenKey(tag: "tk")?.tpm?.tcti, expected ?? "device:/dev/tpmrm0")
        // The blobs are base64 text in the record, and read back the same.
        let encoded = String(decoding: try JSONEncoder().encode(reference), as: UTF8.self)
        XCTAssertTrue(encoded.contains(#""public":"AAKrzQ==""#), encoded)
        XCTAssertEqual(try JSONDecoder().decode(RSATokenReference.self, from: Data(encoded.utf8)), reference)
    }

    func testTPMKey_OtherUsageOrSchemeRefusedBeforeTheTPM() throws {
        // No TPM answers on this TCTI: every refusal below comes before the TPM is reached.
        let tpm = RSATPMConfiguration(tcti: "device:/nonexistent/tpm")
        let publicKey = KeychainTestKeys.keys[0].publicKey
        func key(_ usage: RSATPMKeyUsage, pss: Bool = true) -> RSATokenKey {
            let blobs = RSATPMKeyBlobs(
                usage: usage, publicBlob: [1], privateBlob: [2], signsPSSWithDigestLengthSalt: pss)
            return RSATokenKey(
                reference: RSATokenReference(tpmKey: blobs, requiresPIN: false), publicKey: publicKey, tpm: tpm)
        }
        let none = RSASecretBytes(zeroedCount: 0)
        let block = [UInt8](repeating: 1, count: publicKey.modulusByteCount)
        let oaep256 = RSAEncryptionPadding.oaep(RSAOAEPParameters(hash: .sha256))
        func assertRestricted(_ body: @autoclosure () throws -> Any, _ words: String, line: UInt = #line) {
            XCTAssertThrowsError(try body(), line: line) { error in
                guard case let RSAError.keyRestricted(reason) = error else {
                    return XCTFail("\(error)", line: line)
                }
                XCTAssertTrue(reason.contains(words), reason, line: line)
            }
        }
        assertRestricted(
            try key(.decryptOAEP).signature(for: [1], hash: .sha256, padding: .pkcs1v15, pin: none), "can only decrypt")
        assertRestricted(try key(.sign).decrypt(block, padding: oaep256, pin: none), "can only sign")
        assertRestricted(
            try key(.decryptOAEP).decrypt(block, padding: .pkcs1v15, pin: none),
            "decrypts RSAES-OAEP with SHA-256 (MGF1-SHA-256, no label) only")
        assertRestricted(
            try key(.decryptOAEP).decrypt(block, padding: .oaep(RSAOAEPParameters(hash: .sha1)), pin: none),
            "not RSAES-OAEP with SHA-1")
        assertRestricted(try key(.decryptPKCS1v15).decrypt(block, padding: oaep256, pin: none), "RSAES-PKCS1-v1_5 only")
        assertRestricted(
            try key(.sign).signature(for: [1], hash: .sha256, padding: .pss(saltLength: .maximum), pin: none),
            "salt as long as the hash")
        assertRestricted(
            try key(.sign, pss: false).signature(
                for: [1], hash: .sha256, padding: .pss(saltLength: .digestLength), pin: none),
            "this TPM does not make RSA-PSS signatures")
        // The right usage goes on to the TPM, which is not there.
        XCTAssertThrowsError(try key(.sign).signature(for: [1], hash: .sha256, padding: .pkcs1v15, pin: none)) {
            guard case let RSAError.tpmUnavailable(reason) = $0 else { return XCTFail("\($0)") }
            XCTAssertTrue(reason.contains("no TPM: /nonexistent/tpm does not exist"), reason)
        }
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
