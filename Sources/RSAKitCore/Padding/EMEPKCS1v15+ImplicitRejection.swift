extension RSAHazmat.EMEPKCS1v15 {
    /// Decode an EM, or, when its padding is wrong, return the synthetic message instead
    /// (implicit rejection, draft-irtf-cfrg-rsa-guidance §7.2 step 4): the last
    /// `syntheticLength` bytes of `syntheticMessage`.
    ///
    /// The verdict of ``check(_:)`` is never branched on: the output length is selected
    /// between the real length (k - 1 - separator index) and `syntheticLength` with masks,
    /// every octet of EM and of the synthetic message is read and combined with masks, and
    /// only the selected length is declassified (it is the length of the returned array,
    /// which the caller sees either way).
    ///
    /// - Parameters:
    ///   - em: EM, k >= 11 octets.
    ///   - syntheticMessage: exactly k octets.
    ///   - syntheticLength: 0 ... k - 11 (secret).
    /// - Returns: M or the synthetic message, 0 ... k - 11 bytes.
    /// - Note: Constant-time in the contents of `em`, `syntheticMessage` and
    ///   `syntheticLength` except for the length of the result.
    static func decode(_ em: [UInt8], otherwise syntheticMessage: [UInt8], length syntheticLength: UInt) -> [UInt8] {
        let k = em.count
        precondition(
            k >= overheadByteCount && syntheticMessage.count == k,
            "EM and the synthetic message must both be k >= 11 bytes")
        return em.withUnsafeBufferPointer { bytes -> [UInt8] in
            syntheticMessage.withUnsafeBufferPointer { synthetic -> [UInt8] in
                let (good, separatorIndex) = check(bytes)
                // For a bad EM separatorIndex may be 0: the subtraction is masked out below.
                let realLength = UInt(k - 1) &- separatorIndex
                var length = ConstantTime.select(good, realLength, syntheticLength)
                ConstantTimeAudit.declassify(&length)
                // Both messages end at EM's last octet, so one offset serves them.
                let start = k - Int(length)
                let byteMask = UInt8(truncatingIfNeeded: good)
                var message = [UInt8](repeating: 0, count: Int(length))
                for i in 0..<Int(length) {
                    message[i] = (bytes[start + i] & byteMask) | (synthetic[start + i] & ~byteMask)
                }
                return message
            }
        }
    }
}
