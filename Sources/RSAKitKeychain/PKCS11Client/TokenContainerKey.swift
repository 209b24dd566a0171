// Container decryption with a token key: the container's block loop (MessageContainer) with
// each block's RSADP and padding decode done by C_Decrypt on the token, in one login.

import RSAKitCore
import RSAKitPKI
internal import CP11Kit

/// A token key's logged-in session, as container decryption's block key. The session is used
/// under a lock (PKCS#11 sessions are single-threaded; the pipeline may call from workers).
internal final class TokenContainerKey: ContainerBlockKey, @unchecked Sendable {
    // NOTE: @unchecked: `session` and `object` are used only inside `lock`.
    private let lock = RSAPThreadMutex(())
    private let session: TokenSession
    private let object: CK_OBJECT_HANDLE
    let modulusByteCount: Int
    let containerFingerprint: RSAKeyFingerprint
    var preferredBlockGroupSize: Int { 1 }

    init(session: TokenSession, object: CK_OBJECT_HANDLE, publicKey: RSAPublicKey) {
        self.session = session
        self.object = object
        modulusByteCount = publicKey.modulusByteCount
        containerFingerprint = publicKey.fingerprint
    }

    /// C_Decrypt of each block. The token answers "bad padding" with an error code, so the
    /// verdict is public here already (the token's own check decides what timing it shows);
    /// a failed block gives a zero verdict and the container's one opaque error.
    func decryptMasked(blocks: [ArraySlice<UInt8>], padding: RSAEncryptionPadding, random: RSARandomSource) throws
        -> [MaskedMessage]
    {
        let k = modulusByteCount
        let capacity: Int
        let mechanism: CK_MECHANISM_TYPE
        var parameter: [UInt8]? = nil
        switch padding {
        case .pkcs1v15:
            capacity = k - EMEPKCS1v15.overheadByteCount
            mechanism = CK_MECHANISM_TYPE(CKM_RSA_PKCS)
        case let .oaep(oaep):
            capacity = k - oaep.overheadByteCount
            (mechanism, parameter) = try RSATokenKey.oaepMechanism(oaep)
        }
        guard capacity > 0, blocks.allSatisfy({ $0.count == k }) else { throw RSAError.decryptionFailed }
        return try lock.withLock { _ in
            try maskedMessages(blocks, capacity: capacity) { block in
                try session.run(
                    .decrypt, mechanism: mechanism, parameter: parameter, object: object,
                    input: Array(block), outputCapacity: k)
            }
        }
    }

    /// C_Decrypt with CKM_RSA_PKCS of each block (version 1 containers).
    func decryptPKCS1v15(blocks: [ArraySlice<UInt8>], random: RSARandomSource) throws -> [[UInt8]] {
        try lock.withLock { _ in
            try blocks.map {
                try session.run(
                    .decrypt, mechanism: CK_MECHANISM_TYPE(CKM_RSA_PKCS), parameter: nil, object: object,
                    input: Array($0), outputCapacity: modulusByteCount)
            }
        }
    }
}

/// A TPM key's context, as container decryption's block key: TPM2_RSA_Decrypt of each block
/// under a lock (a TPM context is single-threaded; the pipeline may call from workers).
internal final class TPMContainerKey: ContainerBlockKey, @unchecked Sendable {
    // NOTE: @unchecked: `session` is used only inside `lock`.
    private let lock = RSAPThreadMutex(())
    private let session: TPMKeySession
    let modulusByteCount: Int
    let containerFingerprint: RSAKeyFingerprint
    var preferredBlockGroupSize: Int { 1 }

    init(session: TPMKeySession) {
        self.session = session
        modulusByteCount = session.key.publicKey.modulusByteCount
        containerFingerprint = session.key.publicKey.fingerprint
    }

    /// TPM2_RSA_Decrypt of each block. The TPM answers a bad padding with an error code, so
    /// the verdict is public here already; a failed block gives a zero verdict and the
    /// container's one opaque error. A padding the key does not have is refused by name.
    func decryptMasked(blocks: [ArraySlice<UInt8>], padding: RSAEncryptionPadding, random: RSARandomSource) throws
        -> [MaskedMessage]
    {
        let k = modulusByteCount
        let capacity: Int
        switch padding {
        case .pkcs1v15: capacity = k - EMEPKCS1v15.overheadByteCount
        case let .oaep(oaep): capacity = k - oaep.overheadByteCount
        }
        guard capacity > 0, blocks.allSatisfy({ $0.count == k }) else { throw RSAError.decryptionFailed }
        return try lock.withLock { _ in
            try maskedMessages(blocks, capacity: capacity) { try session.decrypt(Array($0), padding: padding) }
        }
    }

    /// TPM2_RSA_Decrypt with RSAES of each block (version 1 containers).
    func decryptPKCS1v15(blocks: [ArraySlice<UInt8>], random: RSARandomSource) throws -> [[UInt8]] {
        try lock.withLock { _ in try blocks.map { try session.decrypt(Array($0), padding: .pkcs1v15) } }
    }
}

extension RSATokenKey {
    /// Decrypt an rsakit container (version 1 or 2) whose recipient is this key, every
    /// block's RSA decryption done on the token in one login. Nothing is written unless each
    /// block checks, as for a key in memory (``RSAMessageContainer/decrypt(header:from:to:with:random:concurrency:)``).
    ///
    /// - Parameters: `header` the container's parsed header; `source` the body after it;
    ///   `sink` receives the plaintext; `pin` the token's user PIN.
    /// - Returns: the number of blocks.
    /// - Throws: `RSAError.encryptedForAnotherKey`, `RSAError.containerInvalid`,
    ///   `RSAError.ciphertextLengthInvalid`, `RSAError.decryptionFailed` (one opaque error
    ///   for every block failure); the token's errors (``generate(on:bits:label:pin:)``).
    @discardableResult
    public func decryptContainer<Source: RSAByteSource, Sink: RSAByteSink>(
        header: RSAMessageContainer.Header, from source: inout Source, to sink: inout Sink, pin: RSASecretBytes
    ) throws -> UInt64 {
        guard header.recipientFingerprint == publicKey.fingerprint else {
            throw RSAError.encryptedForAnotherKey(expected: header.recipientFingerprint)
        }
        if let blobs = reference.tpmKey {
            // The padding the header names is checked before the TPM is reached.
            _ = try TPMKeySession.decryptionScheme(blobs, padding: header.padding)
            let session = try openTPMKey(pin: pin)
            defer { session.close() }
            return try RSAMessageContainer.decrypt(
                header: header, from: &source, to: &sink, blockKey: TPMContainerKey(session: session),
                random: SystemRandomSource(), concurrency: 1)
        }
        return try withPrivateKey(pin: pin) { session, object in
            try RSAMessageContainer.decrypt(
                header: header, from: &source, to: &sink,
                blockKey: TokenContainerKey(session: session, object: object, publicKey: publicKey),
                random: SystemRandomSource(), concurrency: 1)
        }
    }
}

extension RSATokenKey {
    /// Decrypt a stream with this key, the RSA operations on the token: an rsakit container
    /// (detected by its magic, armored or not), else raw k-byte blocks with `rawPadding`
    /// (also when `format` says raw). The token-key counterpart of
    /// ``RSAMessage/decrypt(from:to:with:format:rawPadding:temporaryDirectory:)``.
    ///
    /// Apple's format (named by `format`) takes one private operation on the token, the
    /// session key's RSAES-OAEP unwrap; AES-GCM runs here.
    ///
    /// - Throws: as
    ///   ``decryptContainer(header:from:to:pin:)`` and ``decrypt(_:padding:pin:)-([UInt8],_,_)``.
    public func decryptMessage<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, format: RSAMessageFormat? = nil,
        rawPadding: RSAEncryptionPadding = .pkcs1v15, pin: RSASecretBytes
    ) throws {
        var body: any RSAByteSource
        var header: RSAMessageContainer.Header?
        switch format?.kind {
        case .appleAESGCM:
            // One private operation for the whole message: the session key's OAEP unwrap.
            try RSAAppleAESGCM.decrypt(from: &source, to: &sink, publicKey: publicKey, hash: format!.appleHash) {
                wrapped, padding in
                try decrypt(wrapped, padding: padding, pin: pin)
            }
            return
        case .raw:
            body = source
        case .container, nil:
            let reader = try MessageReader(source)
            body = reader.source
            if case let .container(parsed) = reader.detected {
                header = parsed
            } else if format?.kind == .container {
                throw RSAError.containerInvalid(reason: "not an rsakit container (wrong magic)")
            } else if reader.isEmpty {
                throw RSAError.messageInvalid(reason: "input is empty: nothing to decrypt")
            }
        }
        if let header {
            try decryptContainer(header: header, from: &body, to: &sink, pin: pin)
            return
        }
        let k = publicKey.modulusByteCount
        let padding = format?.kind == .raw ? format!.padding : rawPadding
        var blocks: [[UInt8]] = []
        while true {
            let block = try body.readFully(k)
            if block.isEmpty { break }
            guard block.count == k else { throw RSAError.ciphertextLengthInvalid(byteCount: block.count, blockSize: k) }
            blocks.append(block)
        }
        guard !blocks.isEmpty else { throw RSAError.messageInvalid(reason: "no ciphertext blocks: the input is empty") }
        var messages = try decrypt(blocks: blocks, padding: padding, pin: pin)
        defer { for i in messages.indices { wipe(&messages[i]) } }
        for message in messages { try sink.write(message) }
    }
}

/// Each block's message from `decrypt` (a token's or the TPM's, whose verdict on the padding is
/// public already: it answers an error), as a masked message of `capacity` bytes for the
/// container's frame check. A block it refuses (`RSAError.decryptionFailed`), or whose message
/// is longer than `capacity`, gets a zero verdict, so the container fails with its one opaque
/// error; any other error is thrown. Each message is wiped once copied.
private func maskedMessages(
    _ blocks: [ArraySlice<UInt8>], capacity: Int, decrypt: (ArraySlice<UInt8>) throws -> [UInt8]
) throws -> [MaskedMessage] {
    try blocks.map { block in
        do {
            var message = try decrypt(block)
            defer { wipe(&message) }
            guard message.count <= capacity else { throw RSAError.decryptionFailed }
            return MaskedMessage(
                good: ~0, buffer: message + [UInt8](repeating: 0, count: capacity - message.count),
                length: UInt(message.count))
        } catch RSAError.decryptionFailed {
            return MaskedMessage(good: 0, buffer: [UInt8](repeating: 0, count: capacity), length: 0)
        }
    }
}
