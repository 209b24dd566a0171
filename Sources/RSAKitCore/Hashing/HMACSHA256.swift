internal import CNettle
internal import CRSAKitShims

/// HMAC-SHA256 (RFC 2104 with SHA-256; FIPS 198-1) over Nettle's `hmac_sha256_*`: the PRF of
/// implicit rejection (``RSAPaddingRejection/implicit``). Internal: RSAKit offers no MAC API.
internal enum HMACSHA256 {
    /// The tag length: 32 bytes.
    static let tagByteCount = 32

    /// HMAC-SHA256(key, parts[0] || parts[1] || ...): exactly 32 bytes.
    ///
    /// - Parameters:
    ///   - key: any length (keys longer than 64 bytes are hashed first, as RFC 2104 says).
    ///   - parts: the message, in pieces that are absorbed in order.
    /// - Note: Constant-time in key and message contents (Nettle's SHA-256 does not branch on
    ///   data); the context, which holds key-derived state, is zeroed before returning.
    static func authenticationCode(key: [UInt8], _ parts: [UInt8]...) -> [UInt8] {
        var context = hmac_sha256_ctx()
        defer { withUnsafeMutableBytes(of: &context) { rsakit_secure_zero($0.baseAddress, $0.count) } }
        key.withUnsafeBufferPointer { nettle_hmac_sha256_set_key(&context, $0.count, $0.baseAddress) }
        for part in parts where !part.isEmpty {
            part.withUnsafeBufferPointer { nettle_hmac_sha256_update(&context, $0.count, $0.baseAddress) }
        }
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        // NOTE: Nettle 3.8 takes the output length; Nettle 3.10 dropped that parameter.
        tag.withUnsafeMutableBufferPointer { nettle_hmac_sha256_digest(&context, $0.count, $0.baseAddress) }
        return tag
    }
}
