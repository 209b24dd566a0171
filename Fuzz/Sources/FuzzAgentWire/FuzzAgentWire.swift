// The keychain agent's socket protocol (AgentWire) as a local client can drive it: the input
// is everything one client sends on one connection (frames, lengths, operations, fields, in
// any shape), served by a fresh agent for a protected store unlocked once per process.
// Properties:
// 1. The agent answers every request it reads with exactly one well-formed frame (ok 0x80 or
//    error 0x81), and stops at the first malformed or over-long frame, a stop, or the end.
// 2. A payload that decodes encodes back to the same bytes (the frame is its length + itself).
// 3. The store key never leaves: no response contains its 32 bytes, and no response has more
//    than the fields its operation defines (status: path and key id; open: the plaintext;
//    seal: the sealed secret; error: the message).
#if canImport(Glibc)
import Glibc
#endif
@_spi(Fuzzing) import RSAKit
import FuzzSupport

/// A protected store at a fixed path (the seeds and the dictionary name it, so that requests
/// can reach the key), made afresh by each process and unlocked once (Argon2id
/// "interactive"), and its key. One fuzzing process at a time.
nonisolated(unsafe) let agentStore: RSAKeyStore = {
    let path = "/tmp/rsakit-fuzz-agent/store"
    removeTree("/tmp/rsakit-fuzz-agent")
    mkdir("/tmp/rsakit-fuzz-agent", 0o700)
    do {
        let store = try RSAKeyStore(path: path, createIfMissing: true)
        try store.protect(passphrase: RSASecretBytes(utf8: "fuzz"), parameters: .interactive)
        try store.unlock(passphrase: RSASecretBytes(utf8: "fuzz"))
        return store
    } catch {
        unreachable("cannot make the agent's store: \(error)")
    }
}()
nonisolated(unsafe) let agentStoreKey: [UInt8] = {
    guard let key = RSAKitFuzzing.storeKeyBytes(agentStore), key.count == 32 else {
        unreachable("the store is not unlocked")
    }
    return key
}()

/// Remove a folder tree (the previous process's store).
func removeTree(_ path: String) {
    guard let dir = opendir(path) else { _ = unlink(path); return }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name == "." || name == ".." { continue }
        removeTree(path + "/" + name)
    }
    closedir(dir)
    _ = rmdir(path)
}

/// Whether `key` occurs in `bytes`.
func contains(_ bytes: [UInt8], _ key: [UInt8]) -> Bool {
    guard bytes.count >= key.count else { return false }
    return (0...(bytes.count - key.count)).contains { bytes[$0..<($0 + key.count)].elementsEqual(key) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAgentWire(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    guard input.count <= 16 * 1024 else { return 0 }
    let store = agentStore
    // 2. Round trip of the input as one payload.
    if let decoded = RSAKitFuzzing.agentDecode(input) {
        require(Array(decoded.frame.dropFirst(4)) == input, "a decoded payload does not encode back to itself")
    }
    // 1. One connection.
    let connection: (responses: [RSAKitFuzzing.AgentResponse], trailingBytes: Int)
    do { connection = try RSAKitFuzzing.agentConnection(store: store, clientBytes: input) } catch {
        unreachable("the connection could not be served: \(error)")
    }
    // The requests the agent could read: whole frames within the limit, decoding, in order;
    // it stops after the first that does not decode or after a stop request.
    var expected = 0
    var offset = 0
    while input.count - offset >= 4 {
        let length =
            Int(input[offset]) << 24 | Int(input[offset + 1]) << 16 | Int(input[offset + 2]) << 8
            | Int(input[offset + 3])
        guard length <= RSAKeychainAgent.maximumFrameByteCount, length <= input.count - offset - 4 else { break }
        let payload = Array(input[(offset + 4)..<(offset + 4 + length)])
        guard let request = RSAKitFuzzing.agentDecode(payload) else { break }
        expected += 1
        offset += 4 + length
        if request.operation == 5 { break }  // stop
    }
    require(connection.trailingBytes == 0, "the agent wrote a partial frame")
    require(
        connection.responses.count == expected, "\(expected) requests read, \(connection.responses.count) responses")
    for response in connection.responses {
        guard let decoded = response.decoded else { unreachable("a response does not decode") }
        require(decoded.operation == 0x80 || decoded.operation == 0x81, "a response is neither ok nor error")
        // 3. The key never leaves.
        require(!contains(response.payload, agentStoreKey), "a response carries the store key")
        require(decoded.fields.count <= 2, "a response with \(decoded.fields.count) fields")
    }
    return 0
}
