internal import CNettle
internal import CRSAKitShims

/// An incremental hash computation: `update` any number of times, then `finalize`.
///
/// A value type over Nettle's hash context (`nettle_hash` init/update/digest): a copy is an
/// independent computation (the context is duplicated when a shared one is about to
/// change), and ``finalize()`` leaves the hasher usable, so a prefix can be hashed once and
/// finished several ways. The context is zeroed when freed, because RSAKit hashes secrets
/// (OAEP seeds, PSS salts). Constant-time in the data (Nettle's hashes do not branch on it).
public struct RSAHasher: Sendable {
    /// The algorithm being computed.
    public let algorithm: RSAHashAlgorithm
    private var context: HashContext

    /// A fresh computation of `algorithm` (the hash of the empty message so far).
    public init(algorithm: RSAHashAlgorithm) {
        self.algorithm = algorithm
        self.context = HashContext(algorithm.nettle)
    }

    /// Absorb `bytes` (any length).
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update(bufferPointer: $0) }
    }

    /// Absorb the bytes of `buffer` (any length).
    public mutating func update(bufferPointer buffer: UnsafeRawBufferPointer) {
        guard buffer.count > 0 else { return }
        if !isKnownUniquelyReferenced(&context) { context = context.copy() }
        context.update(buffer)
    }

    /// The digest of everything absorbed so far: exactly `algorithm.digestByteCount` bytes.
    /// The hasher itself is unchanged and may be updated further.
    public func finalize() -> [UInt8] {
        context.copy().digest()
    }
}

/// The owned Nettle context: `context_size` bytes, zeroed before they are freed.
internal final class HashContext: @unchecked Sendable {
    // @unchecked: only RSAHasher holds it, and it copies the context before mutating a shared one.
    let descriptor: nettle_hash
    let memory: UnsafeMutableRawPointer

    init(_ descriptor: nettle_hash) {
        self.descriptor = descriptor
        memory = UnsafeMutableRawPointer.allocate(byteCount: Int(descriptor.context_size), alignment: 16)
        descriptor.`init`(memory)
    }

    private init(copying other: HashContext) {
        descriptor = other.descriptor
        memory = UnsafeMutableRawPointer.allocate(byteCount: Int(descriptor.context_size), alignment: 16)
        memory.copyMemory(from: other.memory, byteCount: Int(descriptor.context_size))
    }

    func copy() -> HashContext { HashContext(copying: self) }

    func update(_ buffer: UnsafeRawBufferPointer) {
        descriptor.update(memory, buffer.count, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
    }

    /// Finish (Nettle then resets the context) and return the digest.
    func digest() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(descriptor.digest_size))
        out.withUnsafeMutableBufferPointer { buffer in
            // NOTE: Nettle 3.8 takes the output length; Nettle 3.10 dropped that parameter.
            descriptor.digest(memory, buffer.count, buffer.baseAddress)
        }
        return out
    }

    deinit {
        rsakit_secure_zero(memory, Int(descriptor.context_size))
        memory.deallocate()
    }
}
