import Foundation
import XCTest
import RSAKit

/// The agent in-process: a second store object unlocked through it reads and writes secrets
/// without the passphrase; lock and a vanished agent make it fall back (keychainLocked).
final class KeychainAgentTests: KeychainTestCase {
    func testSecondObject_UnlockedThroughTheAgent_ThenLockedWhenTheAgentIs() throws {
        let passphrase = RSASecretBytes(utf8: "agent library test")
        let store = try RSAKeyStore(path: storePath)
        try store.addGenericPassword(RSASecretBytes(utf8: "v1"), service: "svc", account: "a")
        try store.protect(passphrase: passphrase, parameters: .interactive)
        let socket = folder + "/run/agent.sock"
        let agent = try RSAKeychainAgent(store: store, socketPath: socket)
        let listening = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let thread = Thread {
            do { try agent.serve { listening.signal() } } catch { XCTFail("\(error)"); listening.signal() }
            ended.signal()
        }
        thread.start()
        XCTAssertEqual(listening.wait(timeout: .now() + 10), .success)

        let client = try RSAKeyStore(path: storePath)
        assertThrows(.keychainLocked, try client.genericPasswordValue(service: "svc", account: "a"))
        // Another store's object is not served; this one is.
        let otherStore = try RSAKeyStore(path: folder + "/other", createIfMissing: true)
        try otherStore.protect(passphrase: passphrase, parameters: .interactive)
        XCTAssertFalse(try RSAKeyStore(path: folder + "/other").unlock(agentSocketPath: socket))
        XCTAssertTrue(try client.unlock(agentSocketPath: socket))
        XCTAssertTrue(client.isUnlockedByAgent)
        XCTAssertEqual(try client.genericPasswordValue(service: "svc", account: "a").testBytes, Array("v1".utf8))
        try client.addGenericPassword(RSASecretBytes(utf8: "v2"), service: "svc", account: "b")
        // Sealed by the agent under the store key: the passphrase holder opens it too.
        XCTAssertEqual(try store.genericPasswordValue(service: "svc", account: "b").testBytes, Array("v2".utf8))

        agent.lock()
        assertThrows(.keychainLocked, try client.genericPasswordValue(service: "svc", account: "a"))
        XCTAssertFalse(
            try RSAKeyStore(path: storePath).unlock(agentSocketPath: socket), "a locked agent unlocks nothing")
        XCTAssertTrue(RSAKeychainAgent.send(.stop, to: socket))
        XCTAssertEqual(ended.wait(timeout: .now() + 10), .success)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket))
        XCTAssertFalse(RSAKeychainAgent.send(.stop, to: socket), "nothing listens any more")
    }

    func testDefaultSocketPath_Order() {
        XCTAssertEqual(
            RSAKeychainAgent.defaultSocketPath(environment: [
                "RSAKIT_AGENT_SOCK": "/a/s", "XDG_RUNTIME_DIR": "/run/user/7"
            ]), "/a/s")
        XCTAssertEqual(
            RSAKeychainAgent.defaultSocketPath(environment: ["RSAKIT_AGENT_SOCK": "", "XDG_RUNTIME_DIR": "/run/user/7"]
            ), "/run/user/7/rsakit/agent.sock")
        XCTAssertEqual(RSAKeychainAgent.defaultSocketPath(environment: [:]), "/tmp/rsakit-\(getuid())/agent.sock")
    }

    func testAgentOfAnUnprotectedStore_IsRefused() throws {
        let store = try RSAKeyStore(path: storePath, createIfMissing: true)
        assertThrows(
            .keychainProtection(reason: "the store is not protected: it needs no agent"),
            try RSAKeychainAgent(store: store, socketPath: folder + "/s"))
    }
}
