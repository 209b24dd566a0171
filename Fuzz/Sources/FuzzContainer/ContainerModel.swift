// The container harness's reference model: the container layout of docs/container-format.md
// (versions 1 and 2), written plainly and without the library's container code.
// RSA itself comes from the library's variable-time reference RSADP (the `mpz` path, not the
// constant-time one the decoder uses) and its RSAEP; the padding decodes (RFC 8017 §7.1.2,
// §7.2.2) and MGF1 are written out here; hashes come from Nettle through RSAHashAlgorithm.
@_spi(Fuzzing) import RSAKit
import FuzzSupport

/// What the model knows of one container shape: version, block padding, key.
struct ContainerModel {
    let version: UInt8
    let padding: RSAEncryptionPadding
    let key: RSAPrivateKey

    var k: Int { key.modulusByteCount }
    var headerLength: Int { version == 1 ? 60 : 64 }
    var frameLength: Int { version == 1 ? 17 : 57 }
    /// mLen: the longest message one block's padding carries.
    var messageMax: Int {
        switch padding {
        case .pkcs1v15: return k - 11
        case let .oaep(parameters): return k - 2 * parameters.hash.digestByteCount - 2
        }
    }
    /// Payload bytes of every block but the last.
    var payloadMax: Int { messageMax - frameLength }

    /// The header bytes, laid out by hand from the tables of docs/container-format.md.
    func header(messageID: [UInt8]) -> [UInt8] {
        let magic: [UInt8] = [0x89, 0x52, 0x53, 0x41, 0x4B, 0x49, 0x54, 0x0A]
        let size = [UInt8(k >> 8), UInt8(k & 0xFF)]
        let fingerprint = key.publicKey.fingerprint.bytes
        if version == 1 { return magic + [1, 1] + size + fingerprint + messageID }
        var scheme: [UInt8] = [1, 0, 0]
        if case let .oaep(parameters) = padding {
            scheme = [2, hashID(parameters.hash), hashID(parameters.mgf1Hash)]
        }
        return magic + [2] + scheme + [0, 0] + size + fingerprint + messageID
    }

    /// The frame of one block: (v1) message id[0..<8] or (v2) secret || SHA-256(header),
    /// then the index (8 bytes, big-endian) and the final flag, then the payload.
    func frame(header: [UInt8], secret: [UInt8], index: UInt64, isFinal: Bool, payload: [UInt8]) -> [UInt8] {
        var frame = version == 1 ? Array(header[44..<52]) : secret + RSAHashAlgorithm.sha256.hash(header)
        for shift in stride(from: 56, through: 0, by: -8) {
            frame.append(UInt8(truncatingIfNeeded: index >> UInt64(shift)))
        }
        frame.append(isFinal ? 1 : 0)
        return frame + payload
    }

    /// The frame rules: the message the frames carry, or nil when the container must fail.
    /// `frames[i]` is block i's decoded plaintext (nil: the block itself does not decrypt).
    func message(_ frames: [[UInt8]?], header: [UInt8]) -> [UInt8]? {
        guard !frames.isEmpty else { return nil }  // no final block: truncated
        guard let first = frames[0], first.count >= frameLength else { return nil }
        let secret = Array(first[0..<16])
        var message: [UInt8] = []
        for (index, frame) in frames.enumerated() {
            guard let frame, frame.count >= frameLength else { return nil }
            let isLast = index == frames.count - 1
            let expected = self.frame(
                header: header, secret: secret, index: UInt64(index), isFinal: isLast, payload: [])
            guard Array(frame[0..<frameLength]) == expected,
                isLast || frame.count - frameLength == payloadMax,
                frame.count > frameLength || index == 0
            else { return nil }  // empty final block only alone
            message += frame[frameLength...]
        }
        return message
    }

    /// Decode every block of a whole container body with the reference RSADP and padding
    /// decode, then apply the frame rules. nil when the container must fail.
    func decrypt(header: [UInt8], body: [UInt8]) -> [UInt8]? {
        guard body.count % k == 0 else { return nil }
        let frames = stride(from: 0, to: body.count, by: k).map { start -> [UInt8]? in
            let block = Array(body[start..<(start + k)])
            guard let em = try? RSAKitFuzzing.rsadpReference(key, block, random: FuzzRandomSource(seed: 3)) else {
                return nil
            }
            return decode(em)
        }
        return message(frames, header: header)
    }

    /// The padding decode of one EM (k bytes).
    func decode(_ em: [UInt8]) -> [UInt8]? {
        switch padding {
        case .pkcs1v15: return referencePKCS1Decode(em)
        case let .oaep(parameters): return referenceOAEPDecode(em, hash: parameters.hash, mgf1Hash: parameters.mgf1Hash)
        }
    }

    /// A version 1 container written by the model (the library writes version 2 only), with
    /// the library's PKCS#1 v1.5 encryption of each frame.
    func encryptVersion1(_ plaintext: [UInt8], messageID: [UInt8]) -> (container: [UInt8], blocks: Int) {
        let header = self.header(messageID: messageID)
        var container = header
        let chunks =
            plaintext.isEmpty
            ? [[]]
            : stride(from: 0, to: plaintext.count, by: payloadMax).map {
                Array(plaintext[$0..<min($0 + payloadMax, plaintext.count)])
            }
        for (index, chunk) in chunks.enumerated() {
            let frame = self.frame(
                header: header, secret: [], index: UInt64(index), isFinal: index == chunks.count - 1, payload: chunk)
            guard let block = try? key.publicKey.encrypt(frame, random: FuzzRandomSource(seed: UInt64(index) + 5))
            else {
                unreachable("a version 1 frame of \(frame.count) bytes does not encrypt")
            }
            container += block
        }
        return (container, chunks.count)
    }
}

/// The hash ids of docs/container-format.md.
func hashID(_ hash: RSAHashAlgorithm) -> UInt8 {
    let order: [RSAHashAlgorithm] = [
        .sha1, .sha224, .sha256, .sha384, .sha512, .sha512_224, .sha512_256,
        .sha3_224, .sha3_256, .sha3_384, .sha3_512
    ]
    return UInt8(order.firstIndex(of: hash)! + 1)
}

/// RFC 8017 §7.2.2 step 3, written plainly: EM = 0x00 || 0x02 || PS (>= 8 non-zero) || 0x00 || M.
func referencePKCS1Decode(_ em: [UInt8]) -> [UInt8]? {
    guard em.count >= 11, em[0] == 0, em[1] == 2 else { return nil }
    guard let separator = em[2...].firstIndex(of: 0), separator - 2 >= 8 else { return nil }
    return Array(em[(separator + 1)...])
}

/// RFC 8017 §7.1.2 step 3 (empty label), written plainly:
/// EM = 0x00 || maskedSeed || maskedDB, DB = lHash || PS (zeros) || 0x01 || M.
func referenceOAEPDecode(_ em: [UInt8], hash: RSAHashAlgorithm, mgf1Hash: RSAHashAlgorithm) -> [UInt8]? {
    let hLen = hash.digestByteCount
    guard em.count >= 2 * hLen + 2, em[0] == 0 else { return nil }
    let maskedSeed = Array(em[1...hLen])
    let maskedDB = Array(em[(hLen + 1)...])
    let seed = zip(maskedSeed, referenceMGF1(maskedDB, count: hLen, hash: mgf1Hash)).map { $0 ^ $1 }
    let db = zip(maskedDB, referenceMGF1(seed, count: maskedDB.count, hash: mgf1Hash)).map { $0 ^ $1 }
    guard Array(db[0..<hLen]) == hash.hash([]) else { return nil }
    guard let one = db[hLen...].firstIndex(where: { $0 != 0 }), db[one] == 1 else { return nil }
    return Array(db[(one + 1)...])
}

/// MGF1 (RFC 8017 §B.2.1): Hash(seed || counter) for counter = 0, 1, ..., cut to `count` bytes.
func referenceMGF1(_ seed: [UInt8], count: Int, hash: RSAHashAlgorithm) -> [UInt8] {
    var output: [UInt8] = []
    var counter: UInt32 = 0
    while output.count < count {
        output += hash.hash(
            seed + [
                UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)
            ])
        counter += 1
    }
    return Array(output[0..<count])
}
