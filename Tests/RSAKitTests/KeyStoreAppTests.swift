import Foundation
import RSAKit
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The store as an app uses it. Real folders under a fresh temporary folder.
final class KeyStoreAppTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rsakit-app-" + UUID().uuidString)
        XCTAssertEqual(mkdir(folder.path, 0o700), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func mode(_ path: String) -> UInt32? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return UInt32(st.st_mode & 0o7777)
    }

    func testOpenByURL_AFolderMadeByFileManager_IsTightenedAndUsed() throws {
        let url = folder.appendingPathComponent("made-by-filemanager")
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        XCTAssertEqual(mode(url.path), 0o755)
        let store = try RSAKeyStore(url: url)
        XCTAssertEqual(mode(url.path), 0o700)
        XCTAssertEqual(store.url.standardizedFileURL.path, url.standardizedFileURL.path)
        XCTAssertTrue(FileManager.default.fileExists(atPath: url.appendingPathComponent("VERSION").path))
    }

    func testOpenByURL_AnOpenStoreWithItems_IsStillRefused() throws {
        let url = folder.appendingPathComponent("store")
        let store = try RSAKeyStore(url: url)
        try store.addKeyPair(try TestKeys.generated(bits: 1024), tag: "t")
        XCTAssertEqual(chmod(url.path, 0o755), 0)
        XCTAssertThrowsError(try RSAKeyStore(url: url)) { error in
            XCTAssertEqual(error as? RSAError, .insecureStorePermissions(path: url.path, mode: 0o755))
        }
        XCTAssertThrowsError(try RSAKeyStore(url: URL(string: "https://example.com/store")!))
    }

    func testGenerateKeyPair_OneCall_ChecksTheTagBeforeGenerating() throws {
        let store = try RSAKeyStore(url: folder.appendingPathComponent("store"))
        let made = try store.generateKeyPair(tag: "app.key", label: "made in one call", bitCount: 1024)
        XCTAssertEqual(made.public.fingerprint, made.key.fingerprint)
        XCTAssertEqual(made.private.label, "made in one call")
        XCTAssertEqual(try store.privateKey(tag: "app.key"), made.key)

        // A taken tag fails before any generation: the progress callback is never called.
        var generationStarted = false
        XCTAssertThrowsError(
            try store.generateKeyPair(tag: "app.key", bitCount: 4096) { _ in
                generationStarted = true
                return true
            }
        ) { error in
            XCTAssertEqual(error as? RSAError, .duplicateItem(.key(tag: "app.key", keyClass: .public)))
        }
        XCTAssertFalse(generationStarted)
        XCTAssertEqual(try store.privateKey(tag: "app.key"), made.key, "nothing replaced")

        let replaced = try store.generateKeyPair(tag: "app.key", bitCount: 1024, replace: true)
        XCTAssertNotEqual(replaced.key, made.key)
        XCTAssertEqual(try store.publicKey(tag: "app.key"), replaced.key.publicKey)
    }

    func testKeyWithAttributes_OneCall() throws {
        let store = try RSAKeyStore(url: folder.appendingPathComponent("store"))
        let key = try TestKeys.generated(bits: 1024)
        try store.addKeyPair(key, tag: "pair", label: "L")
        let privateItem = try store.privateKeyItem(tag: "pair")
        XCTAssertEqual(privateItem.key, key)
        XCTAssertEqual(privateItem.attributes.keyClass, .private)
        XCTAssertEqual(privateItem.attributes.label, "L")
        XCTAssertEqual(privateItem.attributes.keySizeInBits, 1024)
        XCTAssertEqual(privateItem.key.blockSize, 128)
        let publicItem = try store.publicKeyItem(tag: "pair")
        XCTAssertEqual(publicItem.key, key.publicKey)
        XCTAssertEqual(publicItem.attributes.fingerprint, key.fingerprint)
        XCTAssertThrowsError(try store.privateKeyItem(tag: "absent")) { error in
            XCTAssertEqual(error as? RSAError, .itemNotFound(.key(tag: "absent", keyClass: .private)))
        }
    }

    func testApplicationLocation_IsPerIdentifier_AndBesideTheCLIStore() throws {
        let data = folder.appendingPathComponent("xdg").path
        let environment = ["XDG_DATA_HOME": data, "RSAKIT_STORE": "/elsewhere/cli-store", "HOME": "/nonexistent"]
        XCTAssertEqual(
            try RSAKeyStore.defaultLocation(applicationIdentifier: "com.example.notes", environment: environment),
            data + "/rsakit/com.example.notes")
        XCTAssertEqual(
            try RSAKeyStore.defaultLocation(
                applicationIdentifier: "com.example.notes",
                environment: ["HOME": "/home/someone"]),
            "/home/someone/.local/share/rsakit/com.example.notes")
        for bad in ["", "notes", "../evil.app", ".hidden.app", "com/example.app", "com.example..app", "-x.y"] {
            XCTAssertThrowsError(
                try RSAKeyStore.defaultLocation(applicationIdentifier: bad, environment: environment), bad
            ) { error in
                guard case .invalidApplicationIdentifier? = error as? RSAError else {
                    return XCTFail("\(bad): \(error)")
                }
            }
        }

        // Two apps and the CLI store in the enclosing folder: tags do not meet.
        let notes = try RSAKeyStore(path: data + "/rsakit/com.example.notes")
        let mail = try RSAKeyStore(path: data + "/rsakit/com.example.mail")
        let cli = try RSAKeyStore(path: data + "/rsakit")
        try notes.addKeyPair(try TestKeys.generated(bits: 1024), tag: "shared-name")
        XCTAssertThrowsError(try mail.publicKey(tag: "shared-name"))
        XCTAssertThrowsError(try cli.publicKey(tag: "shared-name"))
        XCTAssertEqual(try RSAKeyStore(path: data + "/rsakit").allKeyItems().items.count, 0)
    }
}
