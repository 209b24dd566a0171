import Foundation
import XCTest
import RSAKit
#if canImport(Glibc)
import Glibc
#endif
import RSAKitTestSupport
@testable import RSAKitKeychain

/// RSAKeyStore: location, adding and finding, tags, permissions, replace and delete, queries and
/// the item-file format. Damage, crashes and concurrency are in KeyStoreRecoveryTests.
final class KeyStoreTests: KeychainTestCase {
    // MARK: Location

    func testDefaultLocation_PrefersRSAKIT_STOREThenXDGThenHome() throws {
        XCTAssertEqual(
            try RSAKeyStore.defaultLocation(environment: [
                "RSAKIT_STORE": "/srv/keys", "XDG_DATA_HOME": "/x", "HOME": "/home/u"
            ]), "/srv/keys")
        XCTAssertEqual(
            try RSAKeyStore.defaultLocation(environment: [
                "RSAKIT_STORE": "", "XDG_DATA_HOME": "/x/data/", "HOME": "/home/u"
            ]), "/x/data/rsakit")
        // A relative XDG_DATA_HOME is invalid per the XDG spec and ignored.
        XCTAssertEqual(
            try RSAKeyStore.defaultLocation(environment: [
                "XDG_DATA_HOME": "relative", "HOME": "/home/u"
            ]), "/home/u/.local/share/rsakit")
        XCTAssertEqual(
            try RSAKeyStore.defaultLocation(environment: ["HOME": "/home/u"]),
            "/home/u/.local/share/rsakit")
        // Without HOME, the password database gives the home folder.
        let fromPasswd = try RSAKeyStore.defaultLocation(environment: [:])
        XCTAssertTrue(fromPasswd.hasSuffix("/.local/share/rsakit"), fromPasswd)
    }

    func testOpen_UsesRSAKIT_STOREWhenNoPathIsGiven() throws {
        setenv("RSAKIT_STORE", storePath, 1)
        defer { unsetenv("RSAKIT_STORE") }
        let store = try RSAKeyStore()
        XCTAssertEqual(store.path, storePath)
        XCTAssertNotNil(mode(storePath + "/VERSION"))
    }

    func testOpen_CreatesFoldersAndParentsWithMode0700() throws {
        let nested = folder + "/a/b/store"
        let store = try RSAKeyStore(path: nested + "/")
        XCTAssertEqual(store.path, nested)
        for path in [
            folder + "/a", folder + "/a/b", nested, nested + "/public", nested + "/private",
            nested + "/index", nested + "/index/fingerprint", nested + "/passwords", nested + "/certificates"
        ] {
            XCTAssertEqual(mode(path), 0o700, path)
        }
        XCTAssertEqual(mode(nested + "/lock"), 0o600)
        XCTAssertEqual(mode(nested + "/VERSION"), 0o600)
        // New stores are made in the keychain layout (KeychainMigrationTests covers version 1).
        XCTAssertEqual(try String(contentsOfFile: nested + "/VERSION", encoding: .utf8), "rsakit keychain 2\n")
    }

    func testOpen_RefusesAFolderThatIsNotAStore() throws {
        let other = folder + "/documents"
        XCTAssertEqual(mkdir(other, 0o700), 0)
        XCTAssertTrue(FileManager.default.createFile(atPath: other + "/notes.txt", contents: Data("x".utf8)))
        XCTAssertThrowsError(try RSAKeyStore(path: other)) { error in
            guard case let .storeIOError(path, reason)? = error as? RSAError else {
                return XCTFail("expected storeIOError, got \(error)")
            }
            XCTAssertEqual(path, other)
            XCTAssertTrue(reason.contains("not an rsakit key store"), reason)
        }
        XCTAssertEqual(tree(other), ["notes.txt"], "nothing was created in the foreign folder")
    }

    /// A read-only caller opens with createIfMissing: false; a missing store is
    /// reported and nothing is made, not even the folder or its parents.
    func testOpen_WithoutCreateIfMissing_ReportsAMissingStoreAndCreatesNothing() throws {
        let missing = folder + "/typo/store"
        assertThrows(.storeNotFound(path: missing), try RSAKeyStore(path: missing, createIfMissing: false))
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/typo"))
        // An empty folder is not a store either, and stays as it is.
        XCTAssertEqual(mkdir(storePath, 0o700), 0)
        assertThrows(
            .storeNotFound(path: storePath),
            try RSAKeyStore(url: URL(fileURLWithPath: storePath), createIfMissing: false))
        XCTAssertEqual(tree(storePath), [])
        // Once created, it opens.
        _ = try RSAKeyStore(path: storePath)
        XCTAssertEqual(try RSAKeyStore(path: storePath, createIfMissing: false).path, storePath)
    }

    func testOpen_RefusesAnUnknownStoreFormat() throws {
        _ = try RSAKeyStore(path: storePath)
        try Data("rsakit key store 2\n".utf8).write(to: URL(fileURLWithPath: storePath + "/VERSION"))
        XCTAssertThrowsError(try RSAKeyStore(path: storePath)) { error in
            guard case let .storeIOError(_, reason)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("unsupported store format"), reason)
        }
    }

    /// Several openers creating one new store at once all succeed: a VERSION file that appears
    /// while another opener looks at the folder is a store being made, not a foreign file (the
    /// race behind a failed CI run of testConcurrentGenpair_TwoProcesses).
    func testOpen_ConcurrentCreationOfOneNewStoreAllSucceed() throws {
        for round in 0..<40 {
            let path = folder + "/race-\(round)/store"
            let failures = LockedList()
            DispatchQueue.concurrentPerform(iterations: 6) { i in
                usleep(UInt32(i % 2 * round) * 250)  // staggered by 0-10 ms: some open while others create
                do { _ = try RSAKeyStore(path: path) } catch { failures.append("\(error)") }
            }
            XCTAssertEqual(failures.values, [], "round \(round)")
            XCTAssertEqual(try String(contentsOfFile: path + "/VERSION", encoding: .utf8), "rsakit keychain 2\n")
            XCTAssertEqual(tree(path).filter { $0.contains(".tmp-") }, [], "no temporary file is left")
        }
    }

    // MARK: Adding and finding

    func testAddKeyPair_FindsEachHalfByTagAndClass() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = StoreTestKeys.a
        let before = Date()
        let added = try store.addKeyPair(key, tag: "com.example.keys.mykey", label: "My key")
        XCTAssertEqual(try store.publicKey(tag: "com.example.keys.mykey"), key.publicKey)
        XCTAssertEqual(try store.privateKey(tag: "com.example.keys.mykey"), key)

        XCTAssertEqual(added.public.keyClass, .public)
        XCTAssertEqual(added.private.keyClass, .private)
        for attributes in [added.public, added.private] {
            XCTAssertEqual(attributes.applicationTag, "com.example.keys.mykey")
            XCTAssertEqual(attributes.label, "My key")
            XCTAssertEqual(attributes.keySizeInBits, 1024)
            XCTAssertEqual(attributes.fingerprint.bytes, RSAHashAlgorithm.sha256.hash(key.publicKey.derRepresentation))
            XCTAssertLessThanOrEqual(abs(attributes.creationDate.timeIntervalSince(before)), 5)
        }
        XCTAssertNotEqual(added.public.itemID, added.private.itemID)
        // What the store reads back is exactly what add returned (date to the millisecond).
        XCTAssertEqual(try store.keyItem(tag: "com.example.keys.mykey", keyClass: .public), added.public)
        XCTAssertEqual(try store.keyItem(tag: "com.example.keys.mykey", keyClass: .private), added.private)
        // A second store object on the same folder sees the same items.
        let again = try RSAKeyStore(path: storePath)
        XCTAssertEqual(try again.keyItem(tag: "com.example.keys.mykey", keyClass: .private), added.private)
    }

    func testAddKeyPair_WithSeparatePrivateTag() throws {
        let store = try RSAKeyStore(path: storePath)
        let key = StoreTestKeys.b
        let added = try store.addKeyPair(key, tag: "com.example.publickey", privateTag: "com.example.privatekey")
        XCTAssertEqual(added.public.applicationTag, "com.example.publickey")
        XCTAssertEqual(added.private.applicationTag, "com.example.privatekey")
        XCTAssertEqual(try store.publicKey(tag: "com.example.publickey"), key.publicKey)
        XCTAssertEqual(try store.privateKey(tag: "com.example.privatekey"), key)
        // Each tag holds only its own class.
        assertThrows(
            .itemNotFound(.key(tag: "com.example.publickey", keyClass: .private)),
            try store.privateKey(tag: "com.example.publickey"))
        assertThrows(
            .itemNotFound(.key(tag: "com.example.privatekey", keyClass: .public)),
            try store.publicKey(tag: "com.example.privatekey"))
        XCTAssertEqual(try store.allKeyItems().items.count, 2)
    }

    func testAddPublicKey_CreatesOnlyAPublicItem() throws {
        let store = try RSAKeyStore(path: storePath)
        let imported = try store.addPublicKey(StoreTestKeys.c.publicKey, tag: "peer", label: "from iOS")
        XCTAssertEqual(imported.keyClass, .public)
        XCTAssertEqual(try store.publicKey(tag: "peer"), StoreTestKeys.c.publicKey)
        assertThrows(.itemNotFound(.key(tag: "peer", keyClass: .private)), try store.privateKey(tag: "peer"))
        XCTAssertEqual(try store.allKeyItems().items, [imported])
        XCTAssertTrue(tree(storePath + "/private").isEmpty, "no private file: \(tree(storePath + "/private"))")
    }

    func testLookups_OnAnEmptyStoreReportNotFound() throws {
        let store = try RSAKeyStore(path: storePath)
        assertThrows(.itemNotFound(.key(tag: "nothing", keyClass: .public)), try store.publicKey(tag: "nothing"))
        assertThrows(
            .itemNotFound(.key(tag: "nothing", keyClass: .private)),
            try store.keyItem(tag: "nothing", keyClass: .private))
        assertThrows(.itemNotFound(.item(id: "bogus", itemClass: .key)), try store.keyItem(id: "bogus"))
        XCTAssertEqual(try store.keyItems(fingerprint: StoreTestKeys.a.publicKey.fingerprint), [])
        let listing = try store.allKeyItems()
        XCTAssertEqual(listing.items, [])
        XCTAssertEqual(listing.problems, [])
    }

    // MARK: Tags

    func testTags_PathLikeUnicodeAndCaseVariantsAreDistinctAndStayInside() throws {
        let store = try RSAKeyStore(path: storePath)
        let maximal = String(repeating: "é", count: 127) + "x"  // 2 * 127 + 1 = 255 bytes
        XCTAssertEqual(maximal.utf8.count, 255)
        let tags = [
            "com.example.pub", "a/b", "..", ".", "../../../../tmp/escape", "/etc/passwd", "x y",
            "🔑 key", "A", "a", "e\u{301}", "\u{e9}", "tab\there", "nul\u{0}byte", "line\nbreak", maximal
        ]
        // "e\u{301}" and "\u{e9}" are equal as Swift strings but distinct byte strings.
        XCTAssertEqual("e\u{301}", "\u{e9}")
        let keys = StoreTestKeys.keys
        for (i, tag) in tags.enumerated() {
            try store.addPublicKey(keys[i % keys.count].publicKey, tag: tag, label: "item \(i)")
        }
        for (i, tag) in tags.enumerated() {
            let attributes = try store.keyItem(tag: tag, keyClass: .public)
            XCTAssertTrue(attributes.applicationTag.utf8.elementsEqual(tag.utf8), "tag \(i)")
            XCTAssertEqual(attributes.label, "item \(i)")
            XCTAssertEqual(try store.publicKey(tag: tag), keys[i % keys.count].publicKey)
        }
        XCTAssertEqual(try store.allKeyItems().items.count, tags.count)
        // Nothing was written outside the store, and no file name carries a tag.
        XCTAssertEqual(tree(folder).filter { !$0.hasPrefix("store") }, [])
        XCTAssertEqual(mode(NSTemporaryDirectory() + "escape"), nil)
        let itemNames = tree(storePath + "/public").filter { $0.hasSuffix(".pem") }
        XCTAssertEqual(itemNames.count, tags.count)
        for name in itemNames {
            // "hh/<64 hex>.pem"
            XCTAssertNotNil(name.range(of: "^[0-9a-f]{2}/[0-9a-f]{64}\\.pem$", options: .regularExpression), name)
        }
        // The file name is the lower-case hex SHA-256 of the tag's UTF-8 bytes.
        XCTAssertTrue(
            itemNames.contains(
                StoreHex.encode(RSAHashAlgorithm.sha256.hash(Array("a/b".utf8))).prefix(2) + "/"
                    + StoreHex.encode(RSAHashAlgorithm.sha256.hash(Array("a/b".utf8))) + ".pem"))
    }

    func testTags_EmptyAndOver255BytesAreRejected() throws {
        let store = try RSAKeyStore(path: storePath)
        let tooLong = String(repeating: "é", count: 128)  // 256 bytes
        XCTAssertEqual(tooLong.utf8.count, 256)
        for call in [
            { _ = try store.addPublicKey(StoreTestKeys.a.publicKey, tag: tooLong) },
            { _ = try store.addKeyPair(StoreTestKeys.a, tag: "ok", privateTag: tooLong) },
            { _ = try store.publicKey(tag: tooLong) },
            { try store.deleteKey(tag: tooLong) }
        ] {
            XCTAssertThrowsError(try call()) { error in
                guard case let .invalidTag(reason)? = error as? RSAError else { return XCTFail("\(error)") }
                XCTAssertTrue(reason.contains("256 bytes"), reason)
            }
        }
        assertThrows(
            .invalidTag(reason: "the application tag is empty"),
            try store.addPublicKey(StoreTestKeys.a.publicKey, tag: ""))
        XCTAssertEqual(try store.allKeyItems().items, [], "a rejected pair writes neither half")
    }

    func testLabel_OverTheLimitIsRejected() throws {
        let store = try RSAKeyStore(path: storePath)
        let label = String(repeating: "l", count: RSAKeyStore.maximumLabelByteCount + 1)
        XCTAssertThrowsError(try store.addKeyPair(StoreTestKeys.a, tag: "t", label: label)) { error in
            guard case .invalidLabel? = error as? RSAError else { return XCTFail("\(error)") }
        }
        let longest = String(repeating: "\u{1}", count: RSAKeyStore.maximumLabelByteCount)
        try store.addKeyPair(StoreTestKeys.a, tag: "t", label: longest)
        XCTAssertEqual(try store.keyItem(tag: "t", keyClass: .private).label, longest)
    }

    // MARK: Permissions

    func testPermissions_FoldersAre0700AndFiles0600WhateverTheUmask() throws {
        for (index, mask) in [mode_t(0o000), 0o022, 0o277].enumerated() {
            let path = folder + "/store\(index)"
            let old = umask(mask)
            defer { umask(old) }
            let store = try RSAKeyStore(path: path)
            try store.addKeyPair(StoreTestKeys.a, tag: "t\(index)")
            umask(old)
            var checked = 0
            for relative in tree(path) {
                let full = path + "/" + relative
                var st = stat()
                XCTAssertEqual(lstat(full, &st), 0)
                let expected: UInt32 = (st.st_mode & S_IFMT) == S_IFDIR ? 0o700 : 0o600
                XCTAssertEqual(UInt32(st.st_mode & 0o7777), expected, "umask 0\(String(mask, radix: 8)): \(relative)")
                checked += 1
            }
            XCTAssertGreaterThan(checked, 10)
        }
    }

    func testPermissions_GroupReadablePrivateFileIsReportedOnOpen() throws {
        let store = try RSAKeyStore(path: storePath)
        try store.addKeyPair(StoreTestKeys.a, tag: "mine")
        let file = itemFile(store, "mine", .private)
        XCTAssertEqual(chmod(file, 0o640), 0)

        assertThrows(.insecureStorePermissions(path: file, mode: 0o640), try RSAKeyStore(path: storePath))
        // The already-open store refuses the private key too (the check is made at each read).
        assertThrows(.insecureStorePermissions(path: file, mode: 0o640), try store.privateKey(tag: "mine"))
        XCTAssertEqual(try store.publicKey(tag: "mine"), StoreTestKeys.a.publicKey)
        XCTAssertEqual(
            try store.allKeyItems().problems.map(\.error), [.insecureStorePermissions(path: file, mode: 0o640)])

        let overridden = try RSAKeyStore(path: storePath, allowInsecurePermissions: true)
        XCTAssertEqual(overridden.permissionWarnings, [.insecureStorePermissions(path: file, mode: 0o640)])
        XCTAssertEqual(try overridden.privateKey(tag: "mine"), StoreTestKeys.a)

        XCTAssertEqual(chmod(file, 0o600), 0)
        XCTAssertEqual(try RSAKeyStore(path: storePath).permissionWarnings, [])
    }

    func testPermissions_WideStoreFolderIsReportedOnOpen() throws {
        let store = try RSAKeyStore(path: storePath)
        try store.addKeyPair(StoreTestKeys.a, tag: "mine")
        XCTAssertEqual(chmod(storePath + "/private", 0o755), 0)
        assertThrows(
            .insecureStorePermissions(path: storePath + "/private", mode: 0o755), try RSAKeyStore(path: storePath))
        XCTAssertEqual(chmod(storePath + "/private", 0o700), 0)
        XCTAssertEqual(chmod(storePath, 0o750), 0)
        assertThrows(.insecureStorePermissions(path: storePath, mode: 0o750), try RSAKeyStore(path: storePath))
    }

    // MARK: Duplicates, replace, delete, label

    func testAdd_ExistingTagAndClassFailsWithAlreadyExists() throws {
        let store = try RSAKeyStore(path: storePath)
        let first = try store.addKeyPair(StoreTestKeys.a, tag: "dup")
        assertThrows(
            .duplicateItem(.key(tag: "dup", keyClass: .public)), try store.addKeyPair(StoreTestKeys.b, tag: "dup"))
        assertThrows(
            .duplicateItem(.key(tag: "dup", keyClass: .public)),
            try store.addPublicKey(StoreTestKeys.b.publicKey, tag: "dup"))
        // A pair whose private half collides writes no public half either.
        assertThrows(
            .duplicateItem(.key(tag: "dup", keyClass: .private)),
            try store.addKeyPair(StoreTestKeys.b, tag: "fresh", privateTag: "dup"))
        assertThrows(.itemNotFound(.key(tag: "fresh", keyClass: .public)), try store.publicKey(tag: "fresh"))
        // The same tag twice in one batch.
        assertThrows(
            .duplicateItem(.key(tag: "twice", keyClass: .public)),
            try store.addPublicKeys([
                (StoreTestKeys.a.publicKey, "twice", nil), (StoreTestKeys.b.publicKey, "twice", nil)
            ]))
        // Nothing changed.
        XCTAssertEqual(try store.privateKey(tag: "dup"), StoreTestKeys.a)
        XCTAssertEqual(try store.allKeyItems().items, [first.public, first.private])
        XCTAssertTrue(tree(storePath).allSatisfy { !$0.contains(".tmp-") }, "\(tree(storePath))")
    }

    func testAdd_ReplaceSwapsTheKeyAndGivesNewItemIDs() throws {
        let store = try RSAKeyStore(path: storePath)
        let old = try store.addKeyPair(StoreTestKeys.a, tag: "rot", label: "v1")
        let new = try store.addKeyPair(StoreTestKeys.b, tag: "rot", label: "v2", replace: true)
        XCTAssertEqual(try store.privateKey(tag: "rot"), StoreTestKeys.b)
        XCTAssertEqual(try store.publicKey(tag: "rot"), StoreTestKeys.b.publicKey)
        XCTAssertEqual(try store.keyItem(tag: "rot", keyClass: .public).label, "v2")
        XCTAssertNotEqual(old.private.itemID, new.private.itemID)
        assertThrows(
            .itemNotFound(.item(id: old.private.itemID, itemClass: .key)), try store.keyItem(id: old.private.itemID))
        XCTAssertEqual(try store.keyItem(id: new.private.itemID), new.private)
        // The fingerprint index follows: the old key no longer lists this tag.
        XCTAssertEqual(try store.keyItems(fingerprint: StoreTestKeys.a.publicKey.fingerprint), [])
        XCTAssertEqual(
            try store.keyItems(fingerprint: StoreTestKeys.b.publicKey.fingerprint), [new.public, new.private])
        XCTAssertEqual(tree(storePath + "/index/fingerprint").filter { $0.contains(".") }.count, 2)
        // Replacing with a public key alone replaces only the public item.
        try store.addPublicKey(StoreTestKeys.c.publicKey, tag: "rot", replace: true)
        XCTAssertEqual(try store.publicKey(tag: "rot"), StoreTestKeys.c.publicKey)
        XCTAssertEqual(try store.privateKey(tag: "rot"), StoreTestKeys.b)
    }

    func testReplace_ReadersAlwaysSeeOldOrNewKey() throws {
        let store = try RSAKeyStore(path: storePath)
        try store.addKeyPair(StoreTestKeys.a, tag: "hot")
        let valid = Set(StoreTestKeys.keys.prefix(2).map(\.publicKey))
        let done = DispatchSemaphore(value: 0)
        let writeErrors = LockedList()
        DispatchQueue.global().async {
            for round in 0..<40 {
                do {
                    try store.addKeyPair(StoreTestKeys.keys[round % 2], tag: "hot", replace: true)
                } catch {
                    writeErrors.append("\(error)")
                }
            }
            done.signal()
        }
        defer { XCTAssertEqual(writeErrors.values, []) }
        var reads = 0
        while done.wait(timeout: .now()) == .timedOut {
            // A second object, so that reads do not share anything with the writer but the disk.
            let reader = try RSAKeyStore(path: storePath)
            XCTAssertTrue(valid.contains(try reader.publicKey(tag: "hot")))
            let privateKey = try reader.privateKey(tag: "hot")
            XCTAssertTrue(valid.contains(privateKey.publicKey))
            reads += 1
        }
        XCTAssertGreaterThan(reads, 0)
    }

    func testDelete_RemovesExactlyTheItemsAskedFor() throws {
        let store = try RSAKeyStore(path: storePath)
        try store.addKeyPair(StoreTestKeys.a, tag: "one")
        let two = try store.addKeyPair(StoreTestKeys.a, tag: "two")
        try store.deleteKey(tag: "one", keyClass: .private)
        assertThrows(.itemNotFound(.key(tag: "one", keyClass: .private)), try store.privateKey(tag: "one"))
        XCTAssertEqual(try store.publicKey(tag: "one"), StoreTestKeys.a.publicKey)
        assertThrows(
            .itemNotFound(.key(tag: "one", keyClass: .private)), try store.deleteKey(tag: "one", keyClass: .private))
        try store.deleteKey(tag: "one")
        assertThrows(.itemNotFound(.key(tag: "one", keyClass: .public)), try store.publicKey(tag: "one"))
        assertThrows(.itemNotFound(.key(tag: "one")), try store.deleteKey(tag: "one"))
        assertThrows(.itemNotFound(.key(tag: "never")), try store.deleteKey(tag: "never"))
        // "two" is untouched, and the index lists only it.
        XCTAssertEqual(try store.allKeyItems().items, [two.public, two.private])
        XCTAssertEqual(
            try store.keyItems(fingerprint: StoreTestKeys.a.publicKey.fingerprint), [two.public, two.private])
        XCTAssertEqual(tree(storePath + "/index/fingerprint").filter { $0.contains(".") }.count, 2)
        XCTAssertEqual(tree(storePath + "/private").filter { $0.hasSuffix(".pem") }.count, 1)
    }

    func testUpdateLabel_KeepsIDDateAndKey() throws {
        let store = try RSAKeyStore(path: storePath)
        let added = try store.addKeyPair(StoreTestKeys.a, tag: "lbl", label: "old")
        let updated = try store.updateKey(tag: "lbl", keyClass: .private, label: "new ✓")
        XCTAssertEqual(updated.count, 1)
        let item = try store.keyItem(tag: "lbl", keyClass: .private)
        XCTAssertEqual(item, updated[0])
        XCTAssertEqual(item.label, "new ✓")
        XCTAssertEqual(item.itemID, added.private.itemID)
        XCTAssertEqual(item.creationDate, added.private.creationDate)
        XCTAssertEqual(try store.keyItem(tag: "lbl", keyClass: .public).label, "old")
        try store.updateKey(tag: "lbl", label: nil)
        XCTAssertNil(try store.keyItem(tag: "lbl", keyClass: .public).label)
        XCTAssertNil(try store.keyItem(id: added.private.itemID).label)
        XCTAssertEqual(try store.privateKey(tag: "lbl"), StoreTestKeys.a)
        assertThrows(.itemNotFound(.key(tag: "nope")), try store.updateKey(tag: "nope", label: "x"))
    }

    // MARK: Queries

    func testItemsByFingerprint_FindsBothHalvesAndCopiesUnderOtherTags() throws {
        let store = try RSAKeyStore(path: storePath)
        let pair = try store.addKeyPair(StoreTestKeys.a, tag: "p")
        let copy = try store.addPublicKey(StoreTestKeys.a.publicKey, tag: "copy")
        try store.addKeyPair(StoreTestKeys.b, tag: "other")
        XCTAssertEqual(
            try store.keyItems(fingerprint: StoreTestKeys.a.publicKey.fingerprint),
            [copy, pair.public, pair.private])
        XCTAssertEqual(
            try store.keyItems(fingerprint: StoreTestKeys.b.publicKey.fingerprint).map(\.applicationTag),
            ["other", "other"])
    }

    func testItemByID_FindsTheItemAndRejectsForgedIDs() throws {
        let store = try RSAKeyStore(path: storePath)
        let pair = try store.addKeyPair(StoreTestKeys.a, tag: "byid")
        XCTAssertEqual(try store.keyItem(id: pair.public.itemID), pair.public)
        XCTAssertEqual(try store.keyItem(id: pair.private.itemID), pair.private)
        // Same location, different random part: not this item.
        let forged = String(pair.private.itemID.dropLast(1)) + (pair.private.itemID.hasSuffix("0") ? "1" : "0")
        assertThrows(.itemNotFound(.item(id: forged, itemClass: .key)), try store.keyItem(id: forged))
        let crossed = pair.private.itemID.replacingOccurrences(of: "-private-", with: "-public-")
        assertThrows(.itemNotFound(.item(id: crossed, itemClass: .key)), try store.keyItem(id: crossed))
        assertThrows(.itemNotFound(.item(id: "../../x", itemClass: .key)), try store.keyItem(id: "../../x"))
    }

    func testAllItems_ListsAThousandItemsSorted() throws {
        let store = try RSAKeyStore(path: storePath)
        let keys = StoreTestKeys.keys
        // 300 pairs (600 items) one by one, 400 public items in batches.
        var expected: [String: RSAPublicKey] = [:]
        for i in 0..<300 {
            let tag = String(format: "pair-%04d", i)
            try store.addKeyPair(keys[i % 3], tag: tag)
            expected[tag] = keys[i % 3].publicKey
        }
        for start in stride(from: 0, to: 400, by: 100) {
            try store.addPublicKeys(
                (start..<start + 100).map { i in
                    let tag = String(format: "pub-%04d", i)
                    expected[tag] = keys[(i + 1) % 3].publicKey
                    return (keys[(i + 1) % 3].publicKey, tag, "batch \(start)")
                })
        }
        let listing = try store.allKeyItems()
        XCTAssertEqual(listing.problems, [])
        XCTAssertEqual(listing.items.count, 1000)
        XCTAssertEqual(Set(listing.items.map(\.itemID)).count, 1000)
        XCTAssertEqual(listing.items.filter { $0.keyClass == .private }.count, 300)
        // Sorted by tag bytes, public before private.
        XCTAssertEqual(listing.items.first?.applicationTag, "pair-0000")
        XCTAssertEqual(listing.items.first?.keyClass, .public)
        XCTAssertEqual(listing.items[1].keyClass, .private)
        XCTAssertEqual(listing.items.last?.applicationTag, "pub-0399")
        for item in listing.items {
            XCTAssertEqual(item.fingerprint, expected[item.applicationTag]?.fingerprint, item.applicationTag)
        }
        XCTAssertEqual(try store.keyItems(fingerprint: keys[0].publicKey.fingerprint).count, 100 * 2 + 133)
    }

    // MARK: File format and interoperability

    func testItemFile_IsReadableByOpenSSLDirectly() throws {
        guard OpenSSL.path != nil else { throw XCTSkip("openssl CLI not found: cannot check that it reads item files") }
        let store = try RSAKeyStore(path: storePath)
        try store.addKeyPair(StoreTestKeys.a, tag: "interop", label: "label with \"quotes\"\nand a newline")
        // The private item file, as it is, gives OpenSSL the private key (checked via its
        // public half, which must equal ours byte for byte). OpenSSL.run fails the test with
        // openssl's stderr when it exits non-zero.
        let derived = try OpenSSL.run(["pkey", "-in", itemFile(store, "interop", .private), "-pubout"])
        XCTAssertEqual(String(decoding: derived, as: UTF8.self), StoreTestKeys.a.publicKey.pemRepresentation)
        let check = String(
            decoding: try OpenSSL.run(["rsa", "-in", itemFile(store, "interop", .private), "-check", "-noout"]),
            as: UTF8.self)
        XCTAssertTrue(check.contains("RSA key ok"), check)
        let pub = try OpenSSL.run(["pkey", "-pubin", "-in", itemFile(store, "interop", .public), "-outform", "DER"])
        XCTAssertEqual(pub, StoreTestKeys.a.publicKey.derRepresentation)
        // The metadata record is one line, whatever the label holds.
        let text = try String(contentsOfFile: itemFile(store, "interop", .private), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines[0], "rsakit key item 1")
        XCTAssertTrue(lines[1].hasPrefix("{") && lines[1].hasSuffix("}"), String(lines[1]))
        XCTAssertEqual(lines[2], "-----BEGIN PRIVATE KEY-----")
    }

    func testImport_OpenSSLPrivateKeyMakesAPairAndComesBackByteForByte() throws {
        guard OpenSSL.path != nil else { throw XCTSkip("openssl CLI not found: cannot make a key to import") }
        let keyFile = folder + "/openssl-key.pem"
        try OpenSSL.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", keyFile])
        let original = try String(contentsOfFile: keyFile, encoding: .utf8)
        let key = try RSAPrivateKey(pemRepresentation: original)
        let store = try RSAKeyStore(path: storePath)
        // Importing a private key creates both items.
        let added = try store.addKeyPair(key, tag: "imported")
        XCTAssertEqual(try store.allKeyItems().items, [added.public, added.private])
        // OpenSSL re-encodes the private item file to exactly the PKCS#8 it generated.
        let back = try OpenSSL.run(["pkey", "-in", itemFile(store, "imported", .private)])
        XCTAssertEqual(String(decoding: back, as: UTF8.self), original)
    }

    func testItemRecord_DatesRoundTripToTheMillisecond() throws {
        XCTAssertEqual(StoreItemRecord.formatDate(milliseconds: 0), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(StoreItemRecord.formatDate(milliseconds: 1_700_000_000_123), "2023-11-14T22:13:20.123Z")
        XCTAssertEqual(StoreItemRecord.formatDate(milliseconds: -1), "1969-12-31T23:59:59.999Z")
        XCTAssertEqual(StoreItemRecord.parseDate("2023-11-14T22:13:20.123Z"), 1_700_000_000_123)
        XCTAssertEqual(StoreItemRecord.parseDate("1969-12-31T23:59:59.999Z"), -1)
        for bad in [
            "2023-02-30T00:00:00.000Z", "2023-11-14T22:13:20Z", "2023-11-14 22:13:20.123Z",
            "2023-11-14T25:13:20.123Z", "2023-11-14T22:13:20.123+01", ""
        ] {
            XCTAssertNil(StoreItemRecord.parseDate(bad), bad)
        }
    }
}
