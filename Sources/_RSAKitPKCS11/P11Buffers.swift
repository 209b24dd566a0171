// Reading the host's buffers and writing results back with PKCS#11's length convention
// (v2.40 §5.2: a NULL output pointer asks for the length; a short buffer gives
// CKR_BUFFER_TOO_SMALL and the needed length). Counts from the host are checked, never
// converted with a trapping initializer.
internal import CP11Kit

/// CK_UNAVAILABLE_INFORMATION, `((unsigned long)-1L)` in the header: a cast Swift does not
/// import as a constant.
let p11UnavailableInformation: CK_ULONG = .max

enum P11Buffers {
    /// The most input bytes one call takes (data to hash-and-sign may be large; 1 GiB keeps
    /// the copy bounded).
    static let maximumInputByteCount = 1 << 30

    /// `count` as an Int, or CKR_ARGUMENTS_BAD when it does not fit.
    static func count(_ count: CK_ULONG, limit: Int = maximumInputByteCount) throws -> Int {
        guard let value = Int(exactly: count), value <= limit else { throw P11Error(CK_RV(CKR_DATA_LEN_RANGE)) }
        return value
    }

    /// A copy of the host's `pointer[0..<length]`; NULL with a non-zero length is
    /// CKR_ARGUMENTS_BAD (NULL with zero length is the empty input).
    static func bytes(_ pointer: UnsafePointer<UInt8>?, _ length: CK_ULONG) throws -> [UInt8] {
        let n = try count(length)
        guard n > 0 else { return [] }
        guard let pointer else { throw P11Error(CK_RV(CKR_ARGUMENTS_BAD)) }
        return Array(UnsafeBufferPointer(start: pointer, count: n))
    }

    /// The host's buffer as a view, for input that must not be copied (a PIN).
    static func view(_ pointer: UnsafePointer<UInt8>?, _ length: CK_ULONG) throws -> UnsafeBufferPointer<UInt8> {
        let n = try count(length)
        guard n > 0 else { return UnsafeBufferPointer(start: nil, count: 0) }
        guard let pointer else { throw P11Error(CK_RV(CKR_ARGUMENTS_BAD)) }
        return UnsafeBufferPointer(start: pointer, count: n)
    }

    /// Write `bytes` to `out` (capacity `*outLength`) and set `*outLength`.
    /// - Returns: CKR_OK, or CKR_BUFFER_TOO_SMALL with `*outLength` set to the needed length.
    static func deliver(
        _ bytes: [UInt8], to out: UnsafeMutablePointer<UInt8>, length outLength: UnsafeMutablePointer<CK_ULONG>
    ) -> CK_RV {
        let needed = CK_ULONG(bytes.count)
        guard outLength.pointee >= needed else {
            outLength.pointee = needed
            return CK_RV(CKR_BUFFER_TOO_SMALL)
        }
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { out.update(from: base, count: source.count) }
        }
        outLength.pointee = needed
        return CK_RV(CKR_OK)
    }

    /// A list in PKCS#11's two-call convention (C_GetSlotList, C_GetMechanismList): NULL
    /// `out` asks for the count; a short `*count` gives CKR_BUFFER_TOO_SMALL and the count.
    static func deliverList<T>(_ values: [T], to out: UnsafeMutablePointer<T>?, count: UnsafeMutablePointer<CK_ULONG>)
        -> CK_RV
    {
        let needed = CK_ULONG(values.count)
        defer { count.pointee = needed }
        guard let out else { return CK_RV(CKR_OK) }
        guard count.pointee >= needed else { return CK_RV(CKR_BUFFER_TOO_SMALL) }
        for (index, value) in values.enumerated() { out[index] = value }
        return CK_RV(CKR_OK)
    }

    /// Write `text` into a fixed-size, blank-padded field of a CK_*_INFO structure (PKCS#11
    /// strings are not NUL-terminated); cut at a character boundary when too long.
    static func fill<T>(_ field: inout T, with text: String) {
        withUnsafeMutableBytes(of: &field) { buffer in
            var utf8: [UInt8] = []
            for character in text {
                let encoded = Array(String(character).utf8)
                guard utf8.count + encoded.count <= buffer.count else { break }
                utf8 += encoded
            }
            for i in 0..<buffer.count { buffer[i] = i < utf8.count ? utf8[i] : 0x20 }
        }
    }
}
