import Foundation
import XCTest
import RSAKit
@testable import RSAKitKeychain

/// The ssh-agent codec on hand-built frames (no keys), then the agent's ssh socket in-process:
/// identities listed, signatures that verify, SHA-1 and foreign requests refused, a locked
/// agent listing nothing, a malformed frame closing its connection only.
final class SSHAgentProtocolTests: KeychainTestCase {
    private func u32(_ n: Int) -> [UInt8] {
        [UInt8(n >> 24 & 0xff), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
    }
    private func string(_ bytes: [UInt8]) -> [UInt8] { u32(bytes.count) + bytes }

    // MARK: Codec

    func testMpint_RFC4251Examples() {
        // RFC 4251 §5: 0 -> 00000000; 0x80 -> 00000002 00 80; 0x9a378f9b2e332a7 -> 00000008 09 a3 78 f9 b2 e3 32 a7.
        XCTAssertEqual(SSHAgentProtocol.mpint([]), [0, 0, 0, 0])
        XCTAssertEqual(SSHAgentProtocol.mpint([0, 0]), [0, 0, 0, 0])
        XCTAssertEqual(SSHAgentProtocol.mpint([0x80]), [0, 0, 0, 2, 0x00, 0x80])
        XCTAssertEqual(
            SSHAgentProtocol.mpint([0x00, 0x09, 0xa3, 0x78, 0xf9, 0xb2, 0xe3, 0x32, 0xa7]),
            [0, 0, 0, 8, 0x09, 0xa3, 0x78, 0xf9, 0xb2, 0xe3, 0x32, 0xa7])
    }

    func testPublicKeyBlob_IsSSHRSAThenEThenN() {
        let blob = SSHAgentProtocol.publicKeyBlob(modulus: [0xc1, 0x02], publicExponent: [0x01, 0x00, 0x01])
        XCTAssertEqual(blob, string(Array("ssh-rsa".utf8)) + string([0x01, 0x00, 0x01]) + string([0x00, 0xc1, 0x02]))
    }

    func testIdentitiesAnswer_Encoding() {
        let answer = SSHAgentProtocol.identitiesAnswer([
            .init(keyBlob: [1, 2, 3], comment: "work"), .init(keyBlob: [4], comment: "Café")
        ])
        let payload =
            [12] + u32(2) + string([1, 2, 3]) + string(Array("work".utf8)) + string([4]) + string(Array("Café".utf8))
        XCTAssertEqual(answer, u32(payload.count) + payload)
        XCTAssertEqual(SSHAgentProtocol.identitiesAnswer([]), [0, 0, 0, 5, 12, 0, 0, 0, 0])
        XCTAssertEqual(SSHAgentProtocol.failure, [0, 0, 0, 1, 5])
    }

    func testSignResponse_Encoding() {
        let response = SSHAgentProtocol.signResponse(algorithm: "rsa-sha2-512", signature: [9, 8])
        let signature = string(Array("rsa-sha2-512".utf8)) + string([9, 8])
        XCTAssertEqual(response, u32(1 + 4 + signature.count) + [14] + string(signature))
    }

    func testParseRequest_IdentitiesSignAndOthers() throws {
        XCTAssertEqual(try SSHAgentProtocol.parseRequest([11]), .requestIdentities)
        XCTAssertEqual(
            try SSHAgentProtocol.parseRequest([13] + string([7, 7]) + string([1, 2, 3]) + u32(4)),
            .sign(keyBlob: [7, 7], data: [1, 2, 3], flags: 4))
        // Add, remove, remove all, lock, unlock, an extension: not read, answered with failure.
        for number: UInt8 in [17, 18, 19, 22, 23, 25, 27, 200] {
            XCTAssertEqual(try SSHAgentProtocol.parseRequest([number, 0xde, 0xad]), .unsupported(number))
        }
    }

    func testParseRequest_MalformedFramesAreRefused() {
        let malformed: [(String, [UInt8])] = [
            ("empty", []),
            ("identities with trailing bytes", [11, 0]),
            ("sign without anything", [13]),
            ("key blob longer than the frame", [13] + u32(100) + [1, 2]),
            ("data longer than the frame", [13] + string([1]) + u32(5) + [1]),
            ("no flags", [13] + string([1]) + string([2])),
            ("truncated flags", [13] + string([1]) + string([2]) + [0, 0, 1]),
            ("trailing bytes", [13] + string([1]) + string([2]) + u32(2) + [0]),
            ("string length 0xffffffff", [13] + [0xff, 0xff, 0xff, 0xff])
        ]
        for (name, payload) in malformed {
            XCTAssertThrowsError(try SSHAgentProtocol.parseRequest(payload), name)
        }
    }

    func testPayloadLength_BoundedAndNotEmpty() throws {
        XCTAssertEqual(try SSHAgentProtocol.payloadLength(header: u32(1)), 1)
        XCTAssertEqual(try SSHAgentProtocol.payloadLength(header: u32(256 * 1024)), 256 * 1024)
        XCTAssertThrowsError(try SSHAgentProtocol.payloadLength(header: u32(0)))
        XCTAssertThrowsError(try SSHAgentProtocol.payloadLength(header: u32(256 * 1024 + 1)))
        XCTAssertThrowsError(try SSHAgentProtocol.payloadLength(header: [0xff, 0xff, 0xff, 0xff]))
    }

    func testSignatureAlgorithm_SHA2OnlyAndSHA256First() {
        XCTAssertEqual(SSHAgentProtocol.signatureAlgorithm(flags: 2)?.name, "rsa-sha2-256")
        XCTAssertEqual(SSHAgentProtocol.signatureAlgorithm(flags: 4)?.name, "rsa-sha2-512")
        XCTAssertEqual(SSHAgentProtocol.signatureAlgorithm(flags: 6)?.name, "rsa-sha2-256")
        XCTAssertEqual(SSHAgentProtocol.signatureAlgorithm(flags: 4 | 1)?.hash, .sha512)
        XCTAssertNil(SSHAgentProtocol.signatureAlgorithm(flags: 0), "SHA-1 ssh-rsa is refused")
        XCTAssertNil(SSHAgentProtocol.signatureAlgorithm(flags: 1))
    }

    // MARK: The agent's ssh socket

    /// One request on `fd`, its answer's payload (nil when the agent closed the connection).
    private func exchange(_ fd: Int32, _ payload: [UInt8]) throws -> [UInt8]? {
        try AgentWire.writeAll(fd, u32(payload.count) + payload)
        guard let header = try? AgentWire.readExactly(fd, 4) else { return nil }
        return try AgentWire.readExactly(fd, Int(AgentWire.readBigEndian(header, 0)))
    }

    func testAgentSSHSocket_ListsSignsRefusesAndSurvivesMalformedFrames() throws {
        let passphrase = RSASecretBytes(utf8: "ssh agent library test")
        let store = try RSAKeyStore(path: storePath, createIfMissing: true)
        let key = try TestKeys.generated(bits: 1024)
        try store.addKeyPair(key, tag: "laptop")
        try store.addKeyPair(key, tag: "same-key-again", replace: false)
        try store.addPublicKey(try TestKeys.generated(bits: 1024, exponent: 3).publicKey, tag: "public-only")
        try store.protect(passphrase: passphrase, parameters: .interactive)
        try store.unlock(passphrase: passphrase)
        let socket = folder + "/run/agent.sock", sshSocket = folder + "/run/ssh.sock"
        let agent = try RSAKeychainAgent(store: store, socketPath: socket)
        let listening = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        Thread {
            do { try agent.serve(sshSocketPath: sshSocket) { listening.signal() } } catch {
                XCTFail("\(error)"); listening.signal()
            }
            ended.signal()
        }.start()
        XCTAssertEqual(listening.wait(timeout: .now() + 10), .success)
        var info = stat()
        XCTAssertEqual(stat(sshSocket, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)

        let fd = try XCTUnwrap(try AgentWire.connect(sshSocket))
        defer { close(fd) }
        let blob = SSHAgentProtocol.publicKeyBlob(modulus: key.modulus, publicExponent: key.publicExponent)
        // One key, once, under its first tag; the public-only key is not offered.
        XCTAssertEqual(
            try exchange(fd, [11]),
            Array(SSHAgentProtocol.identitiesAnswer([.init(keyBlob: blob, comment: "laptop")]).dropFirst(4)))
        let data = Array("session id and user-auth request".utf8)
        for (flags, name, hash) in [(UInt32(2), "rsa-sha2-256", RSAHashAlgorithm.sha256), (4, "rsa-sha2-512", .sha512)]
        {
            let answer = try XCTUnwrap(try exchange(fd, [13] + string(blob) + string(data) + u32(Int(flags))))
            var reader = SSHAgentProtocol.Reader(answer, offset: 1)
            XCTAssertEqual(answer.first, 14)
            var signature = SSHAgentProtocol.Reader(try reader.string(), offset: 0)
            XCTAssertEqual(String(decoding: try signature.string(), as: UTF8.self), name)
            let s = try signature.string()
            XCTAssertEqual(s.count, key.modulusByteCount)
            XCTAssertTrue(key.publicKey.isValidSignature(s, for: data, hash: hash, padding: .pkcs1v15), name)
        }
        XCTAssertEqual(try exchange(fd, [13] + string(blob) + string(data) + u32(0)), [5], "SHA-1 is refused")
        var otherBlob = blob
        otherBlob[otherBlob.count - 1] ^= 1
        XCTAssertEqual(try exchange(fd, [13] + string(otherBlob) + string(data) + u32(2)), [5], "an unknown key")
        XCTAssertEqual(try exchange(fd, [17] + string(Array("ssh-rsa".utf8))), [5], "adding keys is refused")
        XCTAssertEqual(try exchange(fd, [22] + string(Array("pw".utf8))), [5], "ssh-add -x is refused")
        XCTAssertEqual(try exchange(fd, [27] + string(Array("session-bind@openssh.com".utf8))), [5])

        // A locked agent lists nothing and signs nothing.
        agent.lock()
        XCTAssertEqual(try exchange(fd, [11]), [12, 0, 0, 0, 0])
        XCTAssertEqual(try exchange(fd, [13] + string(blob) + string(data) + u32(2)), [5])

        // A malformed frame, and an oversized one, close that connection; the agent serves on.
        XCTAssertNil(try exchange(fd, [11, 0]))
        let big = try XCTUnwrap(try AgentWire.connect(sshSocket))
        defer { close(big) }
        try AgentWire.writeAll(big, u32(256 * 1024 + 1) + [11])
        XCTAssertThrowsError(try AgentWire.readExactly(big, 4))
        let again = try XCTUnwrap(try AgentWire.connect(sshSocket))
        defer { close(again) }
        XCTAssertEqual(try exchange(again, [11]), [12, 0, 0, 0, 0])

        XCTAssertTrue(RSAKeychainAgent.send(.stop, to: socket))
        XCTAssertEqual(ended.wait(timeout: .now() + 10), .success)
        XCTAssertFalse(FileManager.default.fileExists(atPath: sshSocket), "the ssh socket is removed on stop")
    }
}
