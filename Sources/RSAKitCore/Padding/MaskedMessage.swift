/// A padding decode whose verdict has not been revealed yet: what a caller that checks more
/// than the padding (the container's frame) needs so that it can fold its own checks into
/// the same verdict and reveal one bit, "everything held", instead of first "the padding
/// held" and then "the frame held" (two outcomes that take different times, which is a
/// padding oracle: Bleichenbacher's for PKCS#1 v1.5, Manger's for OAEP).
///
/// Everything here is secret until the caller declassifies its combined verdict.
package struct MaskedMessage {
    /// All-ones when the padding is valid, else zero.
    var good: UInt
    /// The largest message the padding allows (k - 11 bytes for PKCS#1 v1.5, k - 2 hLen - 2
    /// for OAEP), M left-aligned in it; what follows M, and the whole buffer of a bad
    /// padding, is whatever the EM held there.
    var buffer: [UInt8]
    /// |M| for a good padding, else 0.
    var length: UInt

    package init(good: UInt, buffer: [UInt8], length: UInt) {
        self.good = good
        self.buffer = buffer
        self.length = length
    }

    /// Zero the buffer and forget the verdict.
    mutating func wipeContents() {
        wipe(&buffer)
        good = 0
        length = 0
    }
}

extension ConstantTime {
    /// Move buffer[shift...] to the front of `buffer`, for a secret `shift` below its count:
    /// one pass per bit of the shift, each a conditional move of every octet (OpenSSL's
    /// rsa_oaep.c and rsa_pk1.c do the same), so no address depends on `shift`. The octets
    /// left at the end are unspecified.
    static func shiftLeft(_ out: UnsafeMutableBufferPointer<UInt8>, by shift: UInt) {
        let count = out.count
        var distance = 1
        var bit: UInt = 0
        while distance < count {
            let move = UInt8(truncatingIfNeeded: ConstantTimeAudit.opaque(0 &- ((shift >> bit) & 1)))
            for i in 0..<(count - distance) {
                out[i] = (out[i + distance] & move) | (out[i] & ~move)
            }
            distance <<= 1
            bit += 1
        }
    }

    /// All-ones when a == b (words).
    @inline(__always)
    static func equalWords(_ a: UInt, _ b: UInt) -> UInt {
        let v = a ^ b
        return ((v | (0 &- v)) >> (UInt.bitWidth - 1)) &- 1
    }
}

extension RSAHazmat.EMEPKCS1v15 {
    /// ``decode(_:)`` without revealing anything: the verdict of ``check(_:)`` and M moved to
    /// the front of a (k - 11)-byte buffer by ``ConstantTime/shiftLeft(_:by:)``.
    /// - Parameter em: EM, k >= 11 octets (checked by the caller: public).
    static func decodeMasked(_ em: [UInt8]) -> MaskedMessage {
        let k = em.count
        precondition(k >= overheadByteCount, "EM must be k >= 11 bytes")
        return em.withUnsafeBufferPointer { bytes -> MaskedMessage in
            let (good, separatorIndex) = check(bytes)
            // M = EM[separatorIndex + 1 ..< k], and separatorIndex >= 10 when good, so M lies in
            // EM[11 ..< k] from offset separatorIndex - 10 (0 for a bad EM: masked).
            var buffer = Array(bytes[overheadByteCount..<k])
            let shift = (separatorIndex &- 10) & good
            buffer.withUnsafeMutableBufferPointer { ConstantTime.shiftLeft($0, by: shift) }
            return MaskedMessage(good: good, buffer: buffer, length: (UInt(k - 1) &- separatorIndex) & good)
        }
    }
}
