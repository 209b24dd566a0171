internal import CNettle

/// The SHAKE extendable-output functions of FIPS 202 §6.2, for RSASSA-PSS with SHAKE
/// (RFC 8702 §3.1: the message hash and the mask generation function are both SHAKE).
///
/// SHAKE256 is Nettle's (`sha3_256_shake`). SHAKE128 is the Keccak sponge with rate 168
/// octets around Nettle's Keccak-f[1600] permutation (`sha3_permute`), because Nettle 3.8
/// (Debian 12) has no SHAKE128 of its own (Nettle 3.10 adds `sha3_128_shake`).
/// NOTE: the SHAKE128 absorb/pad/squeeze loop below is the only hashing glue RSAKit writes;
/// it is checked against `openssl dgst -shake128 -xoflen` and Wycheproof's SHAKE128 PSS files.
/// Constant-time in the data (no data-dependent branches or indexing).
public enum RSAPSSSHAKE: String, Sendable, Hashable, CaseIterable {
    /// SHAKE128, 32-octet message hash (RFC 8702 id-RSASSA-PSS-SHAKE128, salt 32 octets).
    case shake128
    /// SHAKE256, 64-octet message hash (RFC 8702 id-RSASSA-PSS-SHAKE256, salt 64 octets).
    case shake256

    /// The output length RFC 8702 fixes for the message hash and for H: 32 or 64 octets.
    public var digestByteCount: Int { self == .shake128 ? 32 : 64 }

    /// SHAKE(bytes, outputByteCount): any output length.
    ///
    /// - Parameters:
    ///   - bytes: the input, any length.
    ///   - outputByteCount: how many octets to squeeze (0 or more).
    /// - Returns: exactly `outputByteCount` bytes.
    public func output(_ bytes: [UInt8], byteCount outputByteCount: Int) -> [UInt8] {
        switch self {
        case .shake256: return Self.shake256(bytes, outputByteCount)
        case .shake128: return Self.shake128(bytes, outputByteCount)
        }
    }

    /// The RFC 8702 message hash: SHAKE(bytes, ``digestByteCount``).
    public func hash(_ bytes: [UInt8]) -> [UInt8] { output(bytes, byteCount: digestByteCount) }

    private static func shake256(_ bytes: [UInt8], _ count: Int) -> [UInt8] {
        var context = sha3_256_ctx()
        nettle_sha3_256_init(&context)
        bytes.withUnsafeBufferPointer { nettle_sha3_256_update(&context, $0.count, $0.baseAddress) }
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBufferPointer { nettle_sha3_256_shake(&context, $0.count, $0.baseAddress) }
        withUnsafeMutableBytes(of: &context) { for i in $0.indices { $0[i] = 0 } }
        return out
    }

    /// Keccak[c = 256] with the SHAKE domain padding 0x1F ... 0x80 (FIPS 202 §6.2, B.2).
    private static func shake128(_ bytes: [UInt8], _ count: Int) -> [UInt8] {
        let rate = 168
        var state = sha3_state()
        func absorb(_ block: UnsafeRawBufferPointer) {
            withUnsafeMutableBytes(of: &state.a) { lanes in
                // Lanes are little-endian 64-bit words; XOR byte i into byte i of the lane array
                // (valid on little-endian hosts, which is all RSAKit builds for).
                for i in 0..<block.count { lanes[i] ^= block[i] }
            }
            nettle_sha3_permute(&state)
        }
        bytes.withUnsafeBytes { input in
            var offset = 0
            while input.count - offset >= rate {
                absorb(UnsafeRawBufferPointer(rebasing: input[offset..<(offset + rate)]))
                offset += rate
            }
            var last = [UInt8](repeating: 0, count: rate)
            for i in 0..<(input.count - offset) { last[i] = input[offset + i] }
            last[input.count - offset] ^= 0x1F
            last[rate - 1] ^= 0x80
            last.withUnsafeBytes { absorb($0) }
        }
        var out: [UInt8] = []
        out.reserveCapacity(count + rate)
        while true {
            withUnsafeBytes(of: &state.a) { lanes in out += lanes[0..<min(rate, count - out.count)] }
            if out.count >= count { break }
            nettle_sha3_permute(&state)
        }
        withUnsafeMutableBytes(of: &state) { for i in $0.indices { $0[i] = 0 } }
        return out
    }
}

#if _endian(big)
#error("RSAPSSSHAKE.shake128 assumes a little-endian host")
#endif
