import Foundation
import XCTest
import RSAKitTestSupport
import RSAKit
#if canImport(Glibc)
import Glibc
@testable import RSAKitKeychain
#endif

/// Keys generated once for the keychain suites (1024 bits, the fastest size generate() takes).
enum KeychainTestKeys {
    static let keys: [RSAPrivateKey] = (0..<2).map { _ in try! RSAPrivateKey.generate(bitCount: 1024) }
}

/// Keys generated once for the store suites, KeyStoreTests and KeyStoreRecoveryTests (1024 bits:
/// the fastest size generate() accepts). Generating per test would dominate the suites' time.
enum StoreTestKeys {
    static let keys: [RSAPrivateKey] = (0..<3).map { _ in try! RSAPrivateKey.generate(bitCount: 1024) }
    static var a: RSAPrivateKey { keys[0] }
    static var b: RSAPrivateKey { keys[1] }
    static var c: RSAPrivateKey { keys[2] }
}

/// Strings appended from several threads.
final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ value: String) { lock.lock(); list.append(value); lock.unlock() }
    var values: [String] { lock.lock(); defer { lock.unlock() }; return list }
}

/// A fresh temporary folder per test, and helpers shared by the keychain suites.
class KeychainTestCase: XCTestCase {
    var folder = ""
    var storePath: String { folder + "/store" }

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "rsakit-keychain-" + UUID().uuidString
        XCTAssertEqual(mkdir(folder, 0o700), 0)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func assertThrows<T>(
        _ expected: RSAError, _ expression: @autoclosure () throws -> T,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try expression(), file: file, line: line) { error in
            XCTAssertEqual(error as? RSAError, expected, file: file, line: line)
        }
    }

    /// Every regular file under `root` with its bytes (from the real file system).
    func allFiles(_ root: String) -> [(path: String, bytes: [UInt8])] {
        let names = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).sorted()
        return names.compactMap { name in
            let path = root + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                let data = FileManager.default.contents(atPath: path)
            else { return nil }
            return (path, [UInt8](data))
        }
    }

    /// The paths of files under `root` containing `needle`.
    func files(under root: String, containing needle: [UInt8]) -> [String] {
        precondition(needle.count >= 4)
        return allFiles(root).filter { file in
            guard file.bytes.count >= needle.count else { return false }
            for i in 0...(file.bytes.count - needle.count) where file.bytes[i] == needle[0] {
                if file.bytes[i..<(i + needle.count)].elementsEqual(needle) { return true }
            }
            return false
        }.map(\.path)
    }

    /// Every file and folder under `root` (relative paths), from the real file system.
    func tree(_ root: String) -> [String] {
        (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).sorted()
    }

    /// The item file of `tag`'s `keyClass` item in `store` (the layout's path, whether or not it exists).
    func itemFile(_ store: RSAKeyStore, _ tag: String, _ keyClass: RSAKeyClass) -> String {
        store.path + "/" + StoreLayout.itemPath(keyClass, tagHash: StoreLayout.tagHash(tag, group: "default"))
    }

    /// Permission bits of `path` (lstat), or nil.
    func mode(_ path: String) -> UInt32? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return UInt32(st.st_mode & 0o7777)
    }

    /// Write `text` to a 0600 file in the test folder; returns its path.
    func secretFile(_ name: String, _ text: String) throws -> String {
        let path = folder + "/" + name
        XCTAssertTrue(
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
        return path
    }
}

/// The StoreStressHelper executable built beside the test bundle (used by KeyStoreRecoveryTests and
/// the keychain suites).
func helperPath() throws -> String {
    let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    var products = URL(fileURLWithPath: executable).deletingLastPathComponent()
    // On Linux the test binary is <products>/rsakitPackageTests.xctest.
    if products.lastPathComponent.hasSuffix(".xctest") { products.deleteLastPathComponent() }
    let helper = products.appendingPathComponent("StoreStressHelper").path
    guard FileManager.default.isExecutableFile(atPath: helper) else {
        // A failure, not a skip: the helper is part of the package and `swift build` makes it.
        throw RSAError.storeIOError(path: helper, reason: "StoreStressHelper is not built; run `swift build` first")
    }
    return helper
}

extension RSASecretBytes {
    /// The bytes, for assertions.
    var testBytes: [UInt8] { bytes }
}
