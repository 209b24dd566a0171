// Container harness: header and block stream, versions 1 and 2, with two fixed keys
// (FuzzSupport): the 512-bit key (version 1 only: too small for version 2) and the 1024-bit
// key (both versions; version 2 with PKCS#1 v1.5 or OAEP).
//
// The fuzzer cannot compute RSA, but an attacker can: anyone holding the public key can
// encrypt chosen block plaintexts. So besides raw container bytes (mode bit 0 clear), the
// input can describe a message (mode bit 0 set): a message id, (version 2) a message secret,
// then per block either a chosen frame (each field right or fuzzed) that the harness encrypts
// with valid padding, or a chosen encoded message EM that the harness raises to e with RSAEP
// (so the padding check sees any EM, valid or not).
//
// Mode byte: bit 0 described message; bit 1 trailing bytes after the blocks; bit 2 two worker
// threads; bit 3 the 1024-bit key; bit 4 (described) version 2, which implies the 1024-bit
// key; bits 5-6 (described, version 2) the padding: PKCS#1 v1.5, OAEP SHA-1, OAEP SHA-256,
// OAEP SHA-224 with MGF1 SHA-1; bit 7 (described) change the last message id byte after the
// blocks are made (version 2 binds it through the header digest; version 1 does not check it).
// Block kind byte: bit 7 chosen EM; bit 6 a frame too short for the fields; otherwise bit 0
// right id/secret (else one bit off), bit 1 right index, bit 2 right final flag, bit 3 full
// payload, bit 4 a header digest one bit off (version 2).
//
// Properties:
// 1. Every failure is RSAError.containerInvalid, .encryptedForAnotherKey,
//    .ciphertextLengthInvalid or .decryptionFailed, and a failure caused by a block (padding or
//    frame) is the one opaque .decryptionFailed.
// 2. A reference model (ContainerModel.swift: the documented layout, plain padding decodes over
//    the variable-time reference RSADP) predicts success or failure and the plaintext exactly,
//    for described messages and for raw containers whose header parses; the decoder must agree.
// 3. Whatever decrypts re-encrypts under the same frame rules and padding: the same number of
//    blocks, the model accepts the new container (version 2, written by the library) and the
//    decoder gives the same bytes again (version 1 is re-encrypted by the model).
// 4. The result does not depend on the number of worker threads (mode bit 2 picks 1 or 2).
import RSAKit
import FuzzSupport

let paddings: [RSAEncryptionPadding] = [
    .pkcs1v15,
    .oaep(RSAOAEPParameters(hash: .sha1)),
    .oaep(RSAOAEPParameters(hash: .sha256)),
    .oaep(RSAOAEPParameters(hash: .sha224, mgf1Hash: .sha1))
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContainer(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var reader = FuzzReader(fuzzInput(start, count))
    let mode = reader.byte()
    let concurrency = mode & 4 != 0 ? 2 : 1
    if mode & 1 == 0 {
        let key = mode & 8 != 0 ? fuzzPrivateKey1024 : fuzzPrivateKey
        checkRawContainer(reader.rest(), key: key, concurrency: concurrency)
        return 0
    }
    // A described message.
    let version: UInt8 = mode & 0x10 != 0 ? 2 : 1
    let key = mode & 8 != 0 || version == 2 ? fuzzPrivateKey1024 : fuzzPrivateKey
    let model = ContainerModel(
        version: version, padding: version == 2 ? paddings[Int(mode >> 5) & 3] : .pkcs1v15, key: key)
    let k = model.k
    var messageID = padded(reader.take(16), 16)
    let secret = version == 2 ? padded(reader.take(16), 16) : []
    var header = model.header(messageID: messageID)
    let idOrSecret = version == 1 ? Array(messageID[0..<8]) : secret
    let blockCount = Int(reader.byte() % 6)
    var body: [UInt8] = []
    var frames: [[UInt8]?] = []  // what each block decodes to, by the model
    for index in 0..<blockCount {
        let kind = reader.byte()
        let isLast = index == blockCount - 1
        if kind & 0x80 == 0 {
            var frame: [UInt8]
            if kind & 0x40 != 0 {
                frame = reader.take(Int(reader.byte()) % model.frameLength)  // too short to hold the fields
            } else {
                // A wrong id/secret or digest differs in one bit and takes no input bytes, so a
                // one-bit change of the kind byte keeps the rest of the description in place.
                frame = kind & 1 != 0 ? idOrSecret : flipped(idOrSecret, at: index)
                if version == 2 {
                    let digest = RSAHashAlgorithm.sha256.hash(header)
                    frame += kind & 0x10 == 0 ? digest : flipped(digest, at: index)
                }
                let blockIndex = kind & 2 != 0 ? UInt64(index) : UInt64(bigEndian: padded(reader.take(8), 8))
                for shift in stride(from: 56, through: 0, by: -8) {
                    frame.append(UInt8(truncatingIfNeeded: blockIndex >> UInt64(shift)))
                }
                frame.append(kind & 4 != 0 ? (isLast ? 1 : 0) : reader.byte())
                let length = kind & 8 != 0 ? model.payloadMax : Int(reader.byte()) % (model.payloadMax + 1)
                frame += padded(reader.take(length), length)
            }
            let seed = UInt64(kind) << 32 | UInt64(index)
            guard
                let block = try? key.publicKey.encrypt(
                    frame, padding: model.padding, random: FuzzRandomSource(seed: seed))
            else {
                unreachable("a frame of \(frame.count) bytes does not encrypt with \(model.padding)")
            }
            require(block.count == k, "encryption gave \(block.count) bytes, not k = \(k)")
            body += block
            frames.append(frame)
        } else {
            let em = padded(reader.take(k), k)
            if let block = try? RSAHazmat.rsaep(em, key: key.publicKey) {
                body += block
                frames.append(model.decode(em))
            } else {
                body += em  // EM >= n: as a ciphertext it is out of range, so it must fail
                frames.append(nil)
            }
        }
    }
    if mode & 0x80 != 0 {
        messageID[15] ^= 0x01
        header = model.header(messageID: messageID)
    }
    let extra = mode & 2 != 0 ? reader.rest() : []
    let outcome = decryptContainer(header + body + extra, key: key, concurrency: concurrency)
    guard extra.isEmpty else {
        if case let .success(plaintext) = outcome {
            checkReencryption(plaintext, model: model, blocks: (body.count + extra.count) / k)
        }
        return 0
    }
    let expected = model.message(frames, header: header)
    compare(outcome, expected, model: model, blocks: blockCount)
    return 0
}

/// Raw bytes: if the header parses for this key, the model decodes the body too.
func checkRawContainer(_ bytes: [UInt8], key: RSAPrivateKey, concurrency: Int) {
    let outcome = decryptContainer(bytes, key: key, concurrency: concurrency)
    guard let header = try? RSAMessageContainer.Header(parsing: bytes),
        header.recipientFingerprint == key.publicKey.fingerprint, header.blockSize == key.modulusByteCount,
        (bytes.count - header.byteCount) % header.blockSize == 0
    else {
        if case .success = outcome { unreachable("a container with a bad header or length decrypted") }
        return
    }
    let model = ContainerModel(version: header.version, padding: header.padding, key: key)
    let headerBytes = Array(bytes[0..<model.headerLength])
    require(
        headerBytes == model.header(messageID: header.messageID) || header.version == 1,
        "the parsed header is not the model's layout of its fields")
    let expected = model.decrypt(header: headerBytes, body: Array(bytes[model.headerLength...]))
    compare(outcome, expected, model: model, blocks: (bytes.count - model.headerLength) / model.k)
}

/// Properties 1-3 for one container whose expected outcome the model knows.
func compare(_ outcome: Result<[UInt8], RSAError>, _ expected: [UInt8]?, model: ContainerModel, blocks: Int) {
    switch (outcome, expected) {
    case let (.success(plaintext), .some(reference)):
        require(plaintext == reference, "plaintext differs from the reference model")
        checkReencryption(plaintext, model: model, blocks: blocks)
    case (.success, nil):
        unreachable("decryption succeeded where the reference model rejects the message")
    case let (.failure(error), .some):
        unreachable("decryption failed (\(error)) where the reference model accepts the message")
    case let (.failure(error), nil):
        require(error == .decryptionFailed, "a bad block failed with \(error), not the opaque decryptionFailed")
    }
}

/// `bytes` with one bit changed (byte index % count).
func flipped(_ bytes: [UInt8], at index: Int) -> [UInt8] {
    var bytes = bytes
    bytes[index % bytes.count] ^= 0x01
    return bytes
}

func padded(_ bytes: [UInt8], _ count: Int) -> [UInt8] {
    bytes + [UInt8](repeating: 0, count: max(0, count - bytes.count))
}

extension UInt64 {
    init(bigEndian bytes: [UInt8]) { self = bytes.reduce(0) { $0 << 8 | UInt64($1) } }
}

/// Header, then blocks; the first failure, or the plaintext. Stops on a disallowed error.
func decryptContainer(_ bytes: [UInt8], key: RSAPrivateKey, concurrency: Int) -> Result<[UInt8], RSAError> {
    do {
        let header = try RSAMessageContainer.Header(parsing: bytes)
        require(
            header.bytes == Array(bytes[0..<header.byteCount]),
            "header does not re-encode to its \(header.byteCount) bytes")
        var source = RSAArrayByteSource(Array(bytes[header.byteCount...]))
        var sink = RSAArrayByteSink()
        try RSAMessageContainer.decrypt(
            header: header, from: &source, to: &sink, with: key,
            random: FuzzRandomSource(seed: 7), concurrency: concurrency)
        return .success(sink.bytes)
    } catch let error as RSAError {
        switch error {
        case .containerInvalid, .encryptedForAnotherKey, .ciphertextLengthInvalid, .decryptionFailed:
            return .failure(error)
        default: unreachable("container decryption threw \(error)")
        }
    } catch {
        unreachable("container decryption threw a non-RSAError: \(error)")
    }
}

/// Property 3: re-encrypt under the same rules and padding, check with the model, decrypt again.
func checkReencryption(_ plaintext: [UInt8], model: ContainerModel, blocks: Int) {
    let expectedBlocks = max(1, (plaintext.count + model.payloadMax - 1) / model.payloadMax)
    require(expectedBlocks == blocks, "the plaintext takes \(expectedBlocks) blocks, the container had \(blocks)")
    let container: [UInt8]
    if model.version == 1 {
        container = model.encryptVersion1(plaintext, messageID: Array(repeating: 0x5A, count: 16)).container
    } else {
        var source = RSAArrayByteSource(plaintext)
        var sink = RSAArrayByteSink()
        guard
            let written = try? RSAMessageContainer.encrypt(
                from: &source, to: &sink, with: model.key.publicKey, padding: model.padding,
                random: FuzzRandomSource(seed: 11), concurrency: 1)
        else {
            unreachable("decrypted plaintext does not re-encrypt")
        }
        require(Int(written) == blocks, "re-encryption gives \(written) blocks, the container had \(blocks)")
        container = sink.bytes
        require(container.count == 64 + blocks * model.k, "re-encrypted container is \(container.count) bytes")
        let header = Array(container[0..<64])
        require(
            header == model.header(messageID: Array(header[48..<64])), "re-encrypted header is not the model's layout")
        require(
            model.decrypt(header: header, body: Array(container[64...])) == plaintext,
            "the reference model does not accept the re-encrypted container")
    }
    guard case let .success(again) = decryptContainer(container, key: model.key, concurrency: 1) else {
        unreachable("re-encrypted container does not decrypt")
    }
    require(again == plaintext, "re-encrypted container decrypts to other bytes")
}
