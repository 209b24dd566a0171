import Foundation
import XCTest
import RSAKitTestSupport
import RSAKit
#if canImport(Glibc)
import Glibc
@testable import RSAKitKeychain
#endif

/// Secrets at rest: protect, unlock, change the passphrase, unprotect, sealed values bound to
/// their item, no secret byte on disk, crashes and concurrent writers.
final class KeychainProtectionTests: KeychainTestCase {
    private let passphrase = RSASecretBytes(utf8: "correct horse battery staple")
    private let fast = RSAArgon2idParameters.interactive

    /// A store with a key pair "k" (key 0) and a password (svc, a) = "s3cr3t\0value".
    private func populatedStore() throws -> RSAKeyStore {
        let store = try RSAKeyStore(path: storePath)
        try store.addKeyPair(KeychainTestKeys.keys[0], tag: "k", label: "pair")
        try store.addGenericPassword(
            RSASecretBytes(copying: Array("s3cr3t\u{0}value".utf8)), service: "svc", account: "a")
        return store
    }

    /// Byte strings that would betray the secrets: the primes (raw and hex), the PKCS#8 PEM's
    /// first base64 line after the header, the password (raw and base64).
    private func secretNeedles() -> [(String, [UInt8])] {
        let key = KeychainTestKeys.keys[0]
        let pemLines = key.pkcs8PEMRepresentation.split(separator: "\n")
        return [
            ("p", key.prime1), ("q", key.prime2), ("d", key.privateExponent),
            ("p hex", Array(StoreHex.encode(key.prime1).utf8)), ("q hex", Array(StoreHex.encode(key.prime2).utf8)),
            ("PKCS#8 line 3", Array(pemLines[3].utf8)),
            ("password", Array("s3cr3t\u{0}value".utf8)),
            ("password base64", Array(Base64.encode(Array("s3cr3t\u{0}value".utf8)).utf8))
        ]
    }

    func testProtect_NoSecretByteInAnyFileAndListingNeedsNoPassphrase() throws {
        let store = try populatedStore()
        // The search finds the secrets of an unprotected store (so it can fail).
        for (name, needle) in secretNeedles() where name == "PKCS#8 line 3" || name == "password base64" {
            XCTAssertFalse(
                files(under: storePath, containing: needle).isEmpty, "control: \(name) is on disk before protect")
        }
        try store.protect(passphrase: passphrase, parameters: fast)
        for (name, needle) in secretNeedles() {
            XCTAssertEqual(files(under: storePath, containing: needle), [], "\(name) found on disk")
        }
        XCTAssertTrue(try store.protectionInfo().isProtected)
        XCTAssertEqual(try store.protectionInfo().parameters, fast)
        // A new object: metadata and public keys without a passphrase, secrets locked.
        let reopened = try RSAKeyStore(path: storePath)
        XCTAssertEqual(try reopened.allItems().keys.count, 2)
        XCTAssertEqual(try reopened.genericPassword(service: "svc", account: "a").valueByteCount, 12)
        XCTAssertEqual(try reopened.publicKey(tag: "k"), KeychainTestKeys.keys[0].publicKey)
        XCTAssertEqual(try reopened.publicKeyOfAnyItem(tag: "k"), KeychainTestKeys.keys[0].publicKey)
        XCTAssertEqual(try reopened.keyItem(tag: "k", keyClass: .private).label, "pair")
        assertThrows(.keychainLocked, try reopened.privateKey(tag: "k"))
        assertThrows(.keychainLocked, try reopened.genericPasswordValue(service: "svc", account: "a"))
        // A public key needs no passphrase; a secret does.
        try reopened.addPublicKey(KeychainTestKeys.keys[1].publicKey, tag: "pub")
        assertThrows(.keychainLocked, try reopened.addKeyPair(KeychainTestKeys.keys[1], tag: "k2"))
        assertThrows(
            .keychainLocked, try reopened.addGenericPassword(RSASecretBytes(utf8: "x"), service: "svc", account: "b"))
        try reopened.unlock(passphrase: passphrase)
        XCTAssertEqual(try reopened.privateKey(tag: "k"), KeychainTestKeys.keys[0])
        XCTAssertEqual(
            try reopened.genericPasswordValue(service: "svc", account: "a").testBytes, Array("s3cr3t\u{0}value".utf8))
        // New secrets are sealed too.
        try reopened.addKeyPair(KeychainTestKeys.keys[1], tag: "k2")
        XCTAssertEqual(files(under: storePath, containing: KeychainTestKeys.keys[1].prime1), [])
        XCTAssertEqual(try RSAKeyStore(path: storePath).allItems().problems, [])
    }

    func testWrongPassphrase_IsRefusedAndChangesNothing() throws {
        let store = try populatedStore()
        try store.protect(passphrase: passphrase, parameters: fast)
        let before = allFiles(storePath).map { "\($0.path) \($0.bytes)" }
        let other = try RSAKeyStore(path: storePath)
        assertThrows(
            .wrongPassphrase, try other.unlock(passphrase: RSASecretBytes(utf8: "Correct horse battery staple")))
        assertThrows(
            .wrongPassphrase,
            try other.changePassphrase(from: RSASecretBytes(utf8: "nope"), to: RSASecretBytes(utf8: "new")))
        assertThrows(.wrongPassphrase, try other.unprotect(passphrase: RSASecretBytes(utf8: "")))
        assertThrows(.keychainLocked, try other.privateKey(tag: "k"))
        XCTAssertEqual(allFiles(storePath).map { "\($0.path) \($0.bytes)" }, before)
        assertThrows(
            .keychainProtection(reason: "the store is already protected"),
            try other.protect(passphrase: passphrase, parameters: fast))
    }

    func testChangePassphrase_ResealsOnlyTheStoreKey() throws {
        let store = try populatedStore()
        try store.protect(passphrase: passphrase, parameters: fast)
        let itemsBefore = allFiles(storePath).filter { !$0.path.hasSuffix("/protection") }.map {
            "\($0.path) \($0.bytes)"
        }
        let new = RSASecretBytes(utf8: "tr0ub4dor&3")
        try RSAKeyStore(path: storePath).changePassphrase(from: passphrase, to: new)
        XCTAssertEqual(
            allFiles(storePath).filter { !$0.path.hasSuffix("/protection") }.map { "\($0.path) \($0.bytes)" },
            itemsBefore,
            "no item file changed")
        let reopened = try RSAKeyStore(path: storePath)
        assertThrows(.wrongPassphrase, try reopened.unlock(passphrase: passphrase))
        try reopened.unlock(passphrase: new)
        XCTAssertEqual(try reopened.privateKey(tag: "k"), KeychainTestKeys.keys[0])
        // Unprotect writes the secrets back in the clear and removes the record.
        try reopened.unprotect(passphrase: new)
        XCTAssertNil(mode(storePath + "/protection"))
        XCTAssertFalse(try RSAKeyStore(path: storePath).protectionInfo().isProtected)
        XCTAssertEqual(try RSAKeyStore(path: storePath).privateKey(tag: "k"), KeychainTestKeys.keys[0])
        XCTAssertFalse(
            files(under: storePath, containing: Array(Base64.encode(Array("s3cr3t\u{0}value".utf8)).utf8)).isEmpty)
    }

    func testSealedValueCopiedOntoAnotherItemsFile_DoesNotOpen() throws {
        let store = try RSAKeyStore(path: storePath)
        try store.addKeyPair(KeychainTestKeys.keys[0], tag: "alice")
        try store.addKeyPair(KeychainTestKeys.keys[1], tag: "mallory")
        try store.addGenericPassword(RSASecretBytes(utf8: "alice-secret"), service: "svc", account: "alice")
        try store.addGenericPassword(RSASecretBytes(utf8: "mallory-secret"), service: "svc", account: "mallory")
        try store.protect(passphrase: passphrase, parameters: fast)
        func sealedLine(_ path: String) -> Substring {
            String(decoding: FileManager.default.contents(atPath: path)!, as: UTF8.self).split(separator: "\n").last!
        }
        func replaceSealedLine(_ path: String, with line: Substring) throws {
            var lines = String(decoding: FileManager.default.contents(atPath: path)!, as: UTF8.self).split(
                separator: "\n", omittingEmptySubsequences: false)
            lines[lines.count - 2] = line
            try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        }
        // Passwords: mallory's sealed value moved onto alice's item.
        let alicePassword =
            storePath + "/"
            + StoreLayout.passwordPath(
                hash: StoreLayout.passwordHash(service: "svc", account: "alice", group: "default"))
        let malloryPassword =
            storePath + "/"
            + StoreLayout.passwordPath(
                hash: StoreLayout.passwordHash(service: "svc", account: "mallory", group: "default"))
        // The value lengths differ; pad mallory's length in alice's metadata would be caught too,
        // so copy within items of equal length: give alice a value as long as mallory's first.
        try store.updateGenericPassword(service: "svc", account: "alice", value: RSASecretBytes(utf8: "alice-secret!!"))
        try replaceSealedLine(alicePassword, with: sealedLine(malloryPassword))
        XCTAssertThrowsError(try store.genericPasswordValue(service: "svc", account: "alice")) { error in
            guard case RSAError.damagedItem(_, _, let reason)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("does not open"), reason)
        }
        XCTAssertEqual(
            try store.genericPasswordValue(service: "svc", account: "mallory").testBytes, Array("mallory-secret".utf8))
        // Keys: mallory's sealed private key moved onto alice's private item (same size).
        let aliceKey =
            storePath + "/" + StoreLayout.itemPath(.private, tagHash: StoreLayout.tagHash("alice", group: "default"))
        let malloryKey =
            storePath + "/" + StoreLayout.itemPath(.private, tagHash: StoreLayout.tagHash("mallory", group: "default"))
        try replaceSealedLine(aliceKey, with: sealedLine(malloryKey))
        XCTAssertThrowsError(try store.privateKey(tag: "alice")) { error in
            guard case RSAError.damagedItem? = error as? RSAError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try store.privateKey(tag: "mallory"), KeychainTestKeys.keys[1])
    }

    func testCrashPoints_ProtectAndChangePassphraseGiveOldOrNewState() throws {
        for point in [StoreCrashPoint.beforeJournal, .afterJournal, .afterFirstOperation] {
            try? FileManager.default.removeItem(atPath: storePath)
            let store = try populatedStore()
            XCTAssertThrowsError(try store.protect(passphrase: passphrase, parameters: fast, crashPoint: point))
            let reopened = try RSAKeyStore(path: storePath)
            if point == .beforeJournal {
                XCTAssertFalse(try reopened.protectionInfo().isProtected)
            } else {
                XCTAssertTrue(try reopened.protectionInfo().isProtected, "\(point)")
                try reopened.unlock(passphrase: passphrase)
            }
            XCTAssertEqual(try reopened.privateKey(tag: "k"), KeychainTestKeys.keys[0], "\(point)")
            XCTAssertEqual(try reopened.allItems().problems, [], "\(point)")
            if point == .beforeJournal { try reopened.protect(passphrase: passphrase, parameters: fast) }
            let new = RSASecretBytes(utf8: "new passphrase")
            // (A change of passphrase is one operation, so .afterFirstOperation completes it.)
            _ = try? reopened.changePassphrase(from: passphrase, to: new, parameters: fast, crashPoint: point)
            let again = try RSAKeyStore(path: storePath)
            assertThrows(.wrongPassphrase, try again.unlock(passphrase: point == .beforeJournal ? new : passphrase))
            try again.unlock(passphrase: point == .beforeJournal ? passphrase : new)
            XCTAssertEqual(
                try again.genericPasswordValue(service: "svc", account: "a").testBytes, Array("s3cr3t\u{0}value".utf8))
        }
    }

    func testProcesses_Kill9DuringProtectAndChangePassphraseLeavesAStoreAPassphraseOpens() throws {
        let helper = try helperPath()
        let passphraseFile = try secretFile("pass1", "first passphrase")
        let newFile = try secretFile("pass2", "second passphrase")
        let known = [RSASecretBytes(utf8: "first passphrase"), RSASecretBytes(utf8: "second passphrase")]
        var generator = SystemRandomNumberGenerator()
        var outcomes: [String: Int] = [:]
        for round in 0..<10 {
            try? FileManager.default.removeItem(atPath: storePath)
            _ = try populatedStore()
            let protecting = round % 2 == 0
            if !protecting { try RSAKeyStore(path: storePath).protect(passphrase: known[0], parameters: fast) }
            let arguments =
                protecting
                ? ["protect", "--store", storePath, "--passphrase", passphraseFile]
                : [
                    "change-passphrase", "--store", storePath, "--passphrase", passphraseFile, "--new-passphrase",
                    newFile
                ]
            let started = try ChildProcess.start([helper] + arguments)
            XCTAssertTrue(started.waitForStdout(startingWith: "ready\n"), "round \(round)")
            // Argon2id (interactive, 64 MiB) takes a few hundred milliseconds here; the write follows it.
            usleep(UInt32.random(in: 0...1_500_000, using: &generator))
            started.process.kill9()  // it may have finished already: then this only reaps it
            let reopened = try RSAKeyStore(path: storePath)
            let info = try reopened.protectionInfo()
            var opened = "clear"
            if info.isProtected {
                opened = "none"
                for (index, candidate) in known.enumerated() where (try? reopened.unlock(passphrase: candidate)) != nil
                {
                    opened = "passphrase \(index + 1)"
                }
            }
            XCTAssertNotEqual(opened, "none", "round \(round): no known passphrase opens the store")
            XCTAssertTrue(protecting || opened != "clear", "round \(round): change-passphrase never unprotects")
            XCTAssertEqual(try reopened.privateKey(tag: "k"), KeychainTestKeys.keys[0], "round \(round)")
            XCTAssertEqual(
                try reopened.genericPasswordValue(service: "svc", account: "a").testBytes,
                Array("s3cr3t\u{0}value".utf8), "round \(round)")
            XCTAssertEqual(try reopened.allItems().problems, [], "round \(round)")
            outcomes["\(protecting ? "protect" : "change"): \(opened)", default: 0] += 1
        }
        print("kill -9 outcomes: \(outcomes.sorted { $0.key < $1.key })")
    }

    func testProcesses_TwoWritersOnAProtectedStoreBothLandSealed() throws {
        let helper = try helperPath()
        let store = try RSAKeyStore(path: storePath)
        try store.protect(passphrase: passphrase, parameters: fast)
        let passphraseFile = try secretFile("pass", "correct horse battery staple")
        let keyFiles = try KeychainTestKeys.keys.enumerated().map { index, key -> String in
            let path = folder + "/key\(index).pem"
            try key.pkcs8PEMRepresentation.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let writers = try (0..<2).map { index in
            try ChildProcess.start([
                helper, "add-pairs", "--store", storePath, "--key", keyFiles[index], "--prefix", "w\(index)-",
                "--count", "20", "--passphrase", passphraseFile
            ])
        }
        for writer in writers {
            let result = try writer.finish()
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(result.stdoutText.split(separator: "\n").count, 20)
        }
        let reopened = try RSAKeyStore(path: storePath)
        try reopened.unlock(passphrase: passphrase)
        XCTAssertEqual(try reopened.allItems().keys.count, 80)
        for i in 0..<20 {
            XCTAssertEqual(try reopened.privateKey(tag: "w0-\(i)"), KeychainTestKeys.keys[0])
            XCTAssertEqual(try reopened.privateKey(tag: "w1-\(i)"), KeychainTestKeys.keys[1])
        }
        for key in KeychainTestKeys.keys { XCTAssertEqual(files(under: storePath, containing: key.prime1), []) }
    }
}
