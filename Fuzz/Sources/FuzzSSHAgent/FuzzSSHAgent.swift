// The agent's ssh-agent socket (SSHAgentProtocol, served by RSAKeychainAgent+SSH.swift) as an
// ssh client of the same user can drive it: the input is everything one client sends on one
// connection (frame lengths, message numbers, key blobs, data, flags, in any shape), served by
// a fresh agent for a protected store that holds one RSA key (the fixed 1024-bit fuzz key,
// tag "ssh-fuzz"), unlocked once per process.
// Properties:
// 1. The codec against a model written here from draft-miller-ssh-agent: a frame header is
//    refused exactly when its length is 0 or over the limit; a request parses exactly when its
//    fields fill the payload (11: nothing; 13: string, string, uint32), a sign request
//    re-encodes to its own bytes, and any other number is "unsupported" whatever follows.
// 2. The agent answers every request it reads with exactly one frame, stops at the first
//    refused header, short frame or malformed request, and never writes a partial frame.
// 3. Each answer is the right one: a list is exactly the one key with its tag; a sign request
//    for that key with rsa-sha2-256 or -512 gets that algorithm and a k-byte PKCS#1 v1.5
//    signature that verifies over the data (SHA-256 when both flags are set, as OpenSSH
//    prefers); every other request (SHA-1, another key, other numbers) gets SSH_AGENT_FAILURE.
// 4. The private key never leaves: no answer contains its private exponent or either prime.
// 5. An mpint of the input's first bytes is minimal (no needless 0x00, one where the top bit is
//    set) and holds the same magnitude.
#if canImport(Glibc)
import Glibc
#endif
@_spi(Fuzzing) import RSAKit
import FuzzSupport

/// The store the agent serves: protected (Argon2id "interactive"), unlocked, one key pair.
/// Made afresh by each process at a fixed path; one fuzzing process at a time.
nonisolated(unsafe) let sshStore: RSAKeyStore = {
    let folder = "/tmp/rsakit-fuzz-ssh-agent"
    removeTree(folder)
    mkdir(folder, 0o700)
    do {
        let store = try RSAKeyStore(path: folder + "/store", createIfMissing: true)
        try store.addKeyPair(fuzzPrivateKey1024, tag: "ssh-fuzz")
        try store.protect(passphrase: RSASecretBytes(utf8: "fuzz"), parameters: .interactive)
        try store.unlock(passphrase: RSASecretBytes(utf8: "fuzz"))
        return store
    } catch {
        unreachable("cannot make the ssh agent's store: \(error)")
    }
}()

/// The served key's blob, as ssh-add -L would show it.
let keyBlob = RSAKitFuzzing.sshAgentPublicKeyBlob(
    modulus: fuzzPrivateKey1024.publicKey.modulus,
    publicExponent: fuzzPrivateKey1024.publicKey.publicExponent)
/// The secret halves a leak would show: 32-byte runs of the private exponent and each prime.
let secrets: [[UInt8]] = [fuzzPrivateKey1024.privateExponent, fuzzPrivateKey1024.prime1, fuzzPrivateKey1024.prime2].map
{ Array($0.prefix(32)) }

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

func uint32(_ n: Int) -> [UInt8] {
    [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
}
func string(_ bytes: [UInt8]) -> [UInt8] { uint32(bytes.count) + bytes }
func readUInt32(_ bytes: [UInt8], _ at: Int) -> Int {
    Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
}

/// The model's reading of a request payload (property 1).
func modelRequest(_ payload: [UInt8]) -> RSAKitFuzzing.SSHAgentRequest? {
    guard let number = payload.first else { return nil }
    switch number {
    case 11:
        return payload.count == 1 ? .requestIdentities : nil
    case 13:
        var at = 1
        func field() -> [UInt8]? {
            guard payload.count - at >= 4 else { return nil }
            let length = readUInt32(payload, at)
            guard length <= payload.count - at - 4 else { return nil }
            defer { at += 4 + length }
            return Array(payload[(at + 4)..<(at + 4 + length)])
        }
        guard let blob = field(), let data = field(), payload.count - at == 4 else { return nil }
        return .sign(keyBlob: blob, data: data, flags: UInt32(readUInt32(payload, at)))
    default:
        return .unsupported(number)
    }
}

func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, bytes.count >= needle.count else { return false }
    return (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSSHAgent(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    guard input.count <= 16 * 1024 else { return 0 }
    let store = sshStore
    // 5. mpint of the first bytes.
    let magnitude = Array(input.prefix(40))
    let mpint = RSAKitFuzzing.sshAgentMPInt(magnitude)
    require(mpint.count >= 4 && readUInt32(mpint, 0) == mpint.count - 4, "an mpint's length prefix is wrong")
    let digits = Array(mpint.dropFirst(4))
    let significant = Array(magnitude.drop { $0 == 0 })
    require(digits.first.map { $0 & 0x80 == 0 } ?? true, "an mpint of a magnitude is negative")
    require(Array(digits.drop { $0 == 0 }) == significant, "an mpint holds another magnitude")
    require(
        digits.count == significant.count + (significant.first.map { $0 & 0x80 != 0 ? 1 : 0 } ?? 0),
        "an mpint is not minimal")

    // 1. The requests the agent can read, by the model, each checked against the codec.
    var expected: [RSAKitFuzzing.SSHAgentRequest] = []
    var offset = 0
    while input.count - offset >= 4 {
        let header = Array(input[offset..<(offset + 4)])
        let length = readUInt32(header, 0)
        let accepted = RSAKitFuzzing.sshAgentPayloadLength(header: header)
        let fits = length > 0 && length <= RSAKitFuzzing.sshAgentMaximumFrameByteCount
        require(accepted == (fits ? length : nil), "header \(header) read as \(String(describing: accepted))")
        guard fits, length <= input.count - offset - 4 else { break }
        let payload = Array(input[(offset + 4)..<(offset + 4 + length)])
        let parsed = RSAKitFuzzing.sshAgentParseRequest(payload)
        require(
            parsed == modelRequest(payload), "request \(payload.prefix(16)) parsed as \(String(describing: parsed))")
        guard let parsed else { break }
        if case let .sign(blob, data, flags) = parsed {
            require(
                [13] + string(blob) + string(data) + uint32(Int(flags)) == payload,
                "a sign request does not re-encode to itself")
        }
        expected.append(parsed)
        offset += 4 + length
    }

    // A signature with the served key costs tens of milliseconds under ASan (the key is
    // opened, checked and used blinded, as the agent does for ssh): inputs asking for more
    // than two are skipped after the codec checks, so that the fuzzer's time goes to shapes.
    let signings = expected.filter {
        if case let .sign(blob, _, flags) = $0 { return blob == keyBlob && flags & 6 != 0 } else { return false }
    }
    guard signings.count <= 2 else { return 0 }

    // 2. One connection: one whole frame per request read, nothing partial.
    let written: [UInt8]
    do { written = try RSAKitFuzzing.sshAgentConnection(store: store, clientBytes: input) } catch {
        unreachable("the connection could not be served: \(error)")
    }
    var answers: [[UInt8]] = []
    var at = 0
    while written.count - at >= 4 {
        let length = readUInt32(written, at)
        guard length <= written.count - at - 4 else { break }
        answers.append(Array(written[(at + 4)..<(at + 4 + length)]))
        at += 4 + length
    }
    require(at == written.count, "the agent wrote a partial frame")
    require(answers.count == expected.count, "\(expected.count) requests read, \(answers.count) answers")

    // 3. and 4. Each answer.
    let identities = [12] + uint32(1) + string(keyBlob) + string(Array("ssh-fuzz".utf8))
    for (request, answer) in zip(expected, answers) {
        for secret in secrets { require(!contains(answer, secret), "an answer carries the private key") }
        switch request {
        case .requestIdentities:
            require(answer == identities, "the identities answer is not the one key")
        case let .sign(blob, data, flags):
            let algorithm: (name: String, hash: RSAHashAlgorithm)? =
                flags & 2 != 0 ? ("rsa-sha2-256", .sha256) : flags & 4 != 0 ? ("rsa-sha2-512", .sha512) : nil
            guard blob == keyBlob, let algorithm else {
                require(answer == [5], "a sign request it must refuse was answered \(answer.prefix(8))")
                continue
            }
            let k = fuzzPrivateKey1024.publicKey.modulusByteCount
            let name = Array(algorithm.name.utf8)
            let head = [14] + uint32(4 + name.count + 4 + k) + string(name) + uint32(k)
            require(
                answer.count == head.count + k && Array(answer.prefix(head.count)) == head,
                "the sign response is not \(algorithm.name) with a \(k)-byte signature")
            let signature = Array(answer.suffix(k))
            require(
                fuzzPrivateKey1024.publicKey.isValidSignature(
                    signature, for: data, hash: algorithm.hash, padding: .pkcs1v15),
                "the \(algorithm.name) signature does not verify")
        case .unsupported:
            require(answer == [5], "an unsupported request was answered \(answer.prefix(8))")
        }
    }
    return 0
}
