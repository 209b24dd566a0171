internal import CNettle

// NOTE: AES-GCM lives beside the hashes because Sources/RSAKit/Hashing/ is the one folder that
// imports CNettle (COMMON.md); the folder name stays so as not to move the schemes branch's files.

/// AES-GCM (NIST SP 800-38D) with a 128- or 256-bit key, computed by Nettle
/// (`nettle_gcm_aes128_*` / `nettle_gcm_aes256_*` from <nettle/gcm.h>), for Apple's
/// RSA-OAEP + AES-GCM message format.
///
/// One context encrypts or decrypts one message: set the IV once (any length; a 16-byte IV
/// makes GCM derive J0 through GHASH, SP 800-38D §7.1 step 2), add the authenticated data
/// once, then feed the text in pieces whose length is a multiple of 16 bytes except the last,
/// then read the 16-byte tag. The key schedule is zeroed when the context is freed.
/// Nettle's AES and GHASH are table-free on CPUs with AES-NI/PCLMUL and otherwise use tables
/// (not constant-time there); that is Nettle's property, not RSAKit's.
internal final class AESGCMContext {
    /// The GCM tag length used here (16 bytes, the full tag).
    static let tagByteCount = 16

    private let context128: UnsafeMutablePointer<gcm_aes128_ctx>?
    private let context256: UnsafeMutablePointer<gcm_aes256_ctx>?

    /// - Parameters:
    ///   - key: 16 bytes (AES-128) or 32 bytes (AES-256); any other length is a programming error.
    ///   - iv: the IV, at least 1 byte.
    ///   - authenticatedData: the additional authenticated data (AAD), any length.
    init(key: SecretBytes, iv: [UInt8], authenticatedData: [UInt8]) {
        precondition(key.count == 16 || key.count == 32, "AES-GCM key must be 16 or 32 bytes")
        if key.count == 16 {
            let context = UnsafeMutablePointer<gcm_aes128_ctx>.allocate(capacity: 1)
            context.initialize(to: gcm_aes128_ctx())
            key.withBytes { nettle_gcm_aes128_set_key(context, $0.baseAddress) }
            iv.withUnsafeBufferPointer { nettle_gcm_aes128_set_iv(context, $0.count, $0.baseAddress) }
            authenticatedData.withUnsafeBufferPointer { nettle_gcm_aes128_update(context, $0.count, $0.baseAddress) }
            context128 = context
            context256 = nil
        } else {
            let context = UnsafeMutablePointer<gcm_aes256_ctx>.allocate(capacity: 1)
            context.initialize(to: gcm_aes256_ctx())
            key.withBytes { nettle_gcm_aes256_set_key(context, $0.baseAddress) }
            iv.withUnsafeBufferPointer { nettle_gcm_aes256_set_iv(context, $0.count, $0.baseAddress) }
            authenticatedData.withUnsafeBufferPointer { nettle_gcm_aes256_update(context, $0.count, $0.baseAddress) }
            context128 = nil
            context256 = context
        }
    }

    deinit {
        if let context128 {
            UnsafeMutableRawPointer(context128).initializeMemory(
                as: UInt8.self, repeating: 0, count: MemoryLayout<gcm_aes128_ctx>.size)
            context128.deallocate()
        }
        if let context256 {
            UnsafeMutableRawPointer(context256).initializeMemory(
                as: UInt8.self, repeating: 0, count: MemoryLayout<gcm_aes256_ctx>.size)
            context256.deallocate()
        }
    }

    /// Encrypt the next piece (a multiple of 16 bytes unless it is the last).
    /// - Returns: the ciphertext, as long as `plaintext`.
    func encrypt(_ plaintext: [UInt8]) -> [UInt8] {
        transform(plaintext, encrypting: true)
    }

    /// Decrypt the next piece (a multiple of 16 bytes unless it is the last). The result is
    /// unauthenticated until ``tag()`` has been checked.
    func decrypt(_ ciphertext: [UInt8]) -> [UInt8] {
        transform(ciphertext, encrypting: false)
    }

    private func transform(_ input: [UInt8], encrypting: Bool) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: input.count)
        guard !input.isEmpty else { return output }
        input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                if let context128 {
                    if encrypting {
                        nettle_gcm_aes128_encrypt(context128, source.count, destination.baseAddress, source.baseAddress)
                    } else {
                        nettle_gcm_aes128_decrypt(context128, source.count, destination.baseAddress, source.baseAddress)
                    }
                } else if let context256 {
                    if encrypting {
                        nettle_gcm_aes256_encrypt(context256, source.count, destination.baseAddress, source.baseAddress)
                    } else {
                        nettle_gcm_aes256_decrypt(context256, source.count, destination.baseAddress, source.baseAddress)
                    }
                }
            }
        }
        return output
    }

    /// The 16-byte authentication tag over the AAD and everything processed so far.
    /// Call once, after the last piece.
    func tag() -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: Self.tagByteCount)
        tag.withUnsafeMutableBufferPointer { buffer in
            if let context128 { nettle_gcm_aes128_digest(context128, buffer.count, buffer.baseAddress) }
            if let context256 { nettle_gcm_aes256_digest(context256, buffer.count, buffer.baseAddress) }
        }
        return tag
    }

    /// Constant-time equality of two tags (Nettle's `memeql_sec`).
    static func tagsEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in nettle_memeql_sec(x.baseAddress, y.baseAddress, x.count) != 0 }
        }
    }
}
