import Foundation
import XCTest
import RSAKit
#if canImport(Glibc)
import Glibc
@testable import RSAKitKeychain
#endif

/// The system keychain's agent and client in-process, as whatever user runs the tests (the
/// rules name that user; root may use every group): a password and a signature of an allowed
/// group, another group refused, many callers at once answered right, a rule change refused
/// unless root. The refusals between real Unix users are CLISystemKeychainTests'.
final class SystemKeychainTests: KeychainTestCase {
    func testAllowedGroupServed_OtherGroupRefused_ConcurrentCallersAnswered() throws {
        let me = String(cString: getpwuid(getuid())!.pointee.pw_name)
        let store = try RSAKeyStore(path: storePath, createIfMissing: true)
        try RSAKeyStore(path: storePath, accessGroups: ["com.example.b"]).addGenericPassword(
            RSASecretBytes(utf8: "b-secret"), service: "svc", account: "b")
        try RSAKeyStore(path: storePath, accessGroups: ["com.example.a"]).addKeyPair(
            KeychainTestKeys.keys[0], tag: "a.key")
        try store.setSystemAccessRules([RSASystemAccessRule(accessGroup: "com.example.a", subject: .user(me))])

        let socket = folder + "/run/system.sock"
        let agent = try RSASystemKeychainAgent(storePath: storePath, socketPath: socket)
        let listening = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        Thread {
            do { try agent.serve { listening.signal() } } catch { XCTFail("\(error)"); listening.signal() }
            ended.signal()
        }.start()
        XCTAssertEqual(listening.wait(timeout: .now() + 10), .success)
        var info = stat()
        XCTAssertEqual(stat(socket, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o666)

        let client = RSASystemKeychainClient(socketPath: socket)
        XCTAssertEqual(
            try client.addGenericPassword(
                RSASecretBytes(utf8: "a-secret"), service: "svc", account: "a",
                accessGroup: "com.example.a"), "com.example.a")
        XCTAssertEqual(
            Array(try client.genericPasswordValue(service: "svc", account: "a").bytes), Array("a-secret".utf8))
        assertThrows(
            .duplicateItem(.genericPassword(service: "svc", account: "a")),
            try client.addGenericPassword(
                RSASecretBytes(utf8: "x"), service: "svc", account: "a", accessGroup: "com.example.a"))
        let digest = RSAHashAlgorithm.sha256.hash(Array("message".utf8))
        let signature = try client.signature(forDigest: digest, hash: .sha256, tag: "a.key")
        XCTAssertTrue(
            KeychainTestKeys.keys[0].publicKey.isValidSignature(
                signature, for: Array("message".utf8), hash: .sha256, padding: .pkcs1v15))
        if getuid() == 0 {
            // Root uses every group and edits the rules; a Unix user that does not exist is refused.
            XCTAssertEqual(
                Array(try client.genericPasswordValue(service: "svc", account: "b").bytes), Array("b-secret".utf8))
            XCTAssertThrowsError(
                try client.setRule(
                    RSASystemAccessRule(accessGroup: "com.example.a", subject: .user("no-such-user-x9")), allow: true)
            ) {
                XCTAssertEqual($0 as? RSAError, .invalidAttribute(reason: "no Unix user is named \"no-such-user-x9\""))
            }
        } else {
            // Another group: not found, refused when named; no rule change.
            assertThrows(
                .itemNotFound(.genericPassword(service: "svc", account: "b")),
                try client.genericPasswordValue(service: "svc", account: "b"))
            XCTAssertThrowsError(
                try client.genericPasswordValue(service: "svc", account: "b", accessGroup: "com.example.b")
            ) {
                guard case .storeAccessDenied? = $0 as? RSAError else { return XCTFail("\($0)") }
            }
            XCTAssertThrowsError(
                try client.setRule(RSASystemAccessRule(accessGroup: "com.example.b", subject: .user(me)), allow: true)
            ) {
                guard case .storeAccessDenied? = $0 as? RSAError else { return XCTFail("\($0)") }
            }
            XCTAssertEqual(try client.itemLines().filter { $0.contains("com.example.b") }, [])
        }
        XCTAssertEqual(try client.rules(), ["com.example.a user \(me)"])

        // Callers at once (the agent answers each on a thread of its own): every answer right.
        let failures = LockedList()
        DispatchQueue.concurrentPerform(iterations: 24) { index in
            do {
                let value = try client.genericPasswordValue(service: "svc", account: "a")
                if Array(value.bytes) != Array("a-secret".utf8) { failures.append("\(index): wrong value") }
            } catch {
                failures.append("\(index): \(error)")
            }
        }
        XCTAssertEqual(failures.values, [])

        agent.stop()
        XCTAssertEqual(ended.wait(timeout: .now() + 10), .success)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket))
        XCTAssertThrowsError(try client.rules()) {
            XCTAssertEqual(
                $0 as? RSAError, .storeIOError(path: socket, reason: "no system keychain agent listens there"))
        }
    }

    func testDefaultPaths() {
        XCTAssertEqual(RSASystemKeychain.defaultStorePath(environment: [:]), "/var/lib/rsakit/system")
        XCTAssertEqual(RSASystemKeychain.defaultStorePath(environment: ["RSAKIT_SYSTEM_STORE": "/s"]), "/s")
        XCTAssertEqual(RSASystemKeychain.defaultSocketPath(environment: [:]), "/run/rsakit/system.sock")
        XCTAssertEqual(
            RSASystemKeychain.defaultSocketPath(environment: ["RSAKIT_SYSTEM_SOCKET": "/r/s.sock"]), "/r/s.sock")
    }
}
