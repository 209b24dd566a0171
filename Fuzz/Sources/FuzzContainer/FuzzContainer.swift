// Container harness: header and block stream, with the fixed 512-bit key (FuzzSupport).
//
// The fuzzer cannot compute RSA, but an attacker can: anyone holding the public key can
// encrypt chosen block plaintexts. So besides raw container bytes (mode bit 0 clear), the
// input can describe a message (mode bit 0 set): a message id, then per block either a chosen
// frame (message id, index, flags, payload; each field right or fuzzed) that the harness
// encrypts with valid PKCS#1 v1.5 padding, or a chosen encoded message EM that the harness
// raises to e with RSAEP (so the padding check sees any EM, valid or not).
//
// Properties:
// 1. Every failure is RSAError.containerInvalid, .ciphertextLengthInvalid or .decryptionFailed,
//    and a failure caused by a block (padding or frame) is the one opaque .decryptionFailed.
// 2. For described messages, a reference model (a plain, obviously-correct PKCS#1 v1.5 decode
//    and the frame rules of RSAMessageContainer's documentation) predicts success or failure and
//    the plaintext exactly; the implementation must agree.
// 3. Whatever decrypts re-encrypts under the same frame rules: the same number of blocks,
//    and decrypting that gives the same bytes.
// 4. The result does not depend on the number of worker threads (mode bit 2 picks 1 or 2).
import RSAKit
import FuzzSupport

let key = fuzzPrivateKey
let k = key.modulusByteCount
let payloadMax = RSAMessageContainer.payloadByteCount(blockSize: k)
let fingerprint = key.publicKey.fingerprint.bytes

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContainer(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var reader = FuzzReader(fuzzInput(start, count))
    let mode = reader.byte()
    let concurrency = mode & 4 != 0 ? 2 : 1
    if mode & 1 == 0 {
        let bytes = reader.rest()
        let outcome = decryptContainer(bytes, concurrency: concurrency)
        if case let .success(plaintext) = outcome { checkReencryption(plaintext, blocks: (bytes.count - 60) / k) }
        return 0
    }
    // A described message.
    var messageID = reader.take(16)
    messageID += [UInt8](repeating: 0, count: 16 - messageID.count)
    let shortID = Array(messageID[0..<8])
    let header = RSAMessageContainer.magic + [RSAMessageContainer.version, RSAMessageContainer.paddingSchemePKCS1v15,
                                           UInt8(k >> 8), UInt8(k & 0xFF)] + fingerprint + messageID
    let blockCount = Int(reader.byte() % 6)
    var body: [UInt8] = []
    var frames: [[UInt8]?] = []  // what the reference model says each block decrypts to
    for index in 0..<blockCount {
        let kind = reader.byte()
        let isLast = index == blockCount - 1
        if kind & 0x80 == 0 {
            var frame: [UInt8]
            if kind & 0x40 != 0 {
                frame = reader.take(Int(reader.byte() % 17))  // a frame too short to hold the fields
            } else {
                frame = kind & 1 != 0 ? shortID : padded(reader.take(8), 8)
                let blockIndex = kind & 2 != 0 ? UInt64(index) : UInt64(bigEndian: padded(reader.take(8), 8))
                for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: blockIndex >> UInt64(shift))) }
                frame.append(kind & 4 != 0 ? (isLast ? 1 : 0) : reader.byte())
                let length = kind & 8 != 0 ? payloadMax : Int(reader.byte()) % (payloadMax + 1)
                frame += padded(reader.take(length), length)
            }
            let seed = UInt64(kind) << 32 | UInt64(index)
            guard let block = try? key.publicKey.encrypt(frame, random: FuzzRandomSource(seed: seed)) else {
                unreachable("a frame of \(frame.count) bytes does not encrypt")
            }
            require(block.count == k, "encryption gave \(block.count) bytes, not k = \(k)")
            body += block
            frames.append(frame)
        } else {
            let em = padded(reader.take(k), k)
            if let block = try? RSAHazmat.rsaep(em, key: key.publicKey) {
                body += block
                frames.append(referenceDecode(em))
            } else {
                body += em  // EM >= n: as a ciphertext it is out of range, so it must fail
                frames.append(nil)
            }
        }
    }
    let extra = mode & 2 != 0 ? reader.rest() : []
    let outcome = decryptContainer(header + body + extra, concurrency: concurrency)
    guard extra.isEmpty else {
        if case let .success(plaintext) = outcome { checkReencryption(plaintext, blocks: (body.count + extra.count) / k) }
        return 0
    }
    let expected = referenceMessage(frames, shortID: shortID)
    switch (outcome, expected) {
    case let (.success(plaintext), .some(reference)):
        require(plaintext == reference, "plaintext differs from the reference model")
        checkReencryption(plaintext, blocks: blockCount)
    case (.success, nil):
        unreachable("decryption succeeded where the reference model rejects the message")
    case let (.failure(error), .some):
        unreachable("decryption failed (\(error)) where the reference model accepts the message")
    case let (.failure(error), nil):
        require(error == .decryptionFailed, "a bad block failed with \(error), not the opaque decryptionFailed")
    }
    return 0
}

func padded(_ bytes: [UInt8], _ count: Int) -> [UInt8] {
    bytes + [UInt8](repeating: 0, count: max(0, count - bytes.count))
}

extension UInt64 {
    init(bigEndian bytes: [UInt8]) { self = bytes.reduce(0) { $0 << 8 | UInt64($1) } }
}

/// Header, then blocks; the first failure, or the plaintext. Stops on a disallowed error.
func decryptContainer(_ bytes: [UInt8], concurrency: Int) -> Result<[UInt8], RSAError> {
    do {
        let header = try RSAMessageContainer.Header(parsing: bytes)
        require(header.bytes == Array(bytes[0..<60]), "header does not re-encode to its 60 bytes")
        var source = RSAArrayByteSource(Array(bytes[60...]))
        var sink = RSAArrayByteSink()
        try RSAMessageContainer.decrypt(header: header, from: &source, to: &sink, with: key,
                                     random: FuzzRandomSource(seed: 7), concurrency: concurrency)
        return .success(sink.bytes)
    } catch let error as RSAError {
        switch error {
        case .containerInvalid, .ciphertextLengthInvalid, .decryptionFailed: return .failure(error)
        default: unreachable("container decryption threw \(error)")
        }
    } catch {
        unreachable("container decryption threw a non-RSAError: \(error)")
    }
}

/// RFC 8017 §7.2.2 step 3, written plainly: EM = 0x00 || 0x02 || PS (>= 8 non-zero) || 0x00 || M.
func referenceDecode(_ em: [UInt8]) -> [UInt8]? {
    guard em.count == k, em[0] == 0, em[1] == 2 else { return nil }
    guard let separator = em[2...].firstIndex(of: 0), separator - 2 >= 8 else { return nil }
    return Array(em[(separator + 1)...])
}

/// The frame rules (RSAMessageContainer's documentation), written plainly.
func referenceMessage(_ frames: [[UInt8]?], shortID: [UInt8]) -> [UInt8]? {
    guard !frames.isEmpty else { return nil }  // no final block: truncated
    var message: [UInt8] = []
    for (index, frame) in frames.enumerated() {
        guard let frame, frame.count >= 17 else { return nil }
        let isLast = index == frames.count - 1
        guard Array(frame[0..<8]) == shortID,
              UInt64(bigEndian: Array(frame[8..<16])) == UInt64(index),
              frame[16] == (isLast ? 1 : 0),
              isLast || frame.count - 17 == payloadMax,
              frame.count > 17 || index == 0 else { return nil }  // empty final block only alone
        message += frame[17...]
    }
    return message
}

/// Property 3: re-encrypt under the same rules and decrypt again.
func checkReencryption(_ plaintext: [UInt8], blocks: Int) {
    var source = RSAArrayByteSource(plaintext)
    var sink = RSAArrayByteSink()
    guard let written = try? RSAMessageContainer.encrypt(from: &source, to: &sink, with: key.publicKey,
                                                      random: FuzzRandomSource(seed: 11), concurrency: 1) else {
        unreachable("decrypted plaintext does not re-encrypt")
    }
    require(Int(written) == blocks, "re-encryption gives \(written) blocks, the container had \(blocks)")
    require(sink.bytes.count == 60 + blocks * k, "re-encrypted container is \(sink.bytes.count) bytes")
    guard case let .success(again) = decryptContainer(sink.bytes, concurrency: 1) else {
        unreachable("re-encrypted container does not decrypt")
    }
    require(again == plaintext, "re-encrypted container decrypts to other bytes")
}
