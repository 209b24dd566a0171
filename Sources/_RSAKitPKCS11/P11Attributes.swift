// C_GetAttributeValue and template matching (PKCS#11 v2.40 §5.7, C_GetAttributeValue's five
// cases, and C_FindObjectsInit).
internal import CP11Kit

enum P11Attributes {
    /// Fill `template` from `object` as §5.7 says, for every attribute in turn:
    /// 1. sensitive: ulValueLen = p11UnavailableInformation, CKR_ATTRIBUTE_SENSITIVE;
    /// 2. not an attribute of the object: p11UnavailableInformation, CKR_ATTRIBUTE_TYPE_INVALID;
    /// 3. pValue NULL: ulValueLen = the value's length;
    /// 4. pValue large enough: the value copied, ulValueLen = its length;
    /// 5. otherwise: p11UnavailableInformation, CKR_BUFFER_TOO_SMALL.
    /// - Returns: CKR_OK, or the error of a failed attribute (the last one; the standard lets
    ///   any be returned when several fail).
    static func get(_ object: P11Object, template: UnsafeMutableBufferPointer<CK_ATTRIBUTE>) -> CK_RV {
        var result = CK_RV(CKR_OK)
        for index in template.indices {
            switch object.attributes[template[index].type] {
            case .sensitive?:
                template[index].ulValueLen = p11UnavailableInformation
                result = CK_RV(CKR_ATTRIBUTE_SENSITIVE)
            case nil:
                template[index].ulValueLen = p11UnavailableInformation
                result = CK_RV(CKR_ATTRIBUTE_TYPE_INVALID)
            case let .bytes(value)?:
                guard let destination = template[index].pValue else {
                    template[index].ulValueLen = CK_ULONG(value.count)
                    continue
                }
                guard template[index].ulValueLen >= CK_ULONG(value.count) else {
                    template[index].ulValueLen = p11UnavailableInformation
                    result = CK_RV(CKR_BUFFER_TOO_SMALL)
                    continue
                }
                value.withUnsafeBytes { source in
                    if let base = source.baseAddress { destination.copyMemory(from: base, byteCount: source.count) }
                }
                template[index].ulValueLen = CK_ULONG(value.count)
            }
        }
        return result
    }

    /// A search template as (type, value) pairs, copied from the host.
    /// - Throws: CKR_ARGUMENTS_BAD for a NULL template with a non-zero count, or an attribute
    ///   with a NULL value and a non-zero length.
    static func template(_ pointer: UnsafeMutablePointer<CK_ATTRIBUTE>?, count: CK_ULONG) throws -> [(
        CK_ATTRIBUTE_TYPE, [UInt8]
    )] {
        let n = try P11Buffers.count(count, limit: 4096)
        guard n > 0 else { return [] }
        guard let pointer else { throw P11Error(CK_RV(CKR_ARGUMENTS_BAD)) }
        return try UnsafeBufferPointer(start: pointer, count: n).map { attribute in
            let value = try P11Buffers.bytes(
                attribute.pValue?.assumingMemoryBound(to: UInt8.self), attribute.ulValueLen)
            return (attribute.type, value)
        }
    }

    /// Whether `object` has every attribute of `template` with exactly that value (a sensitive
    /// attribute never matches).
    static func matches(_ object: P11Object, _ template: [(CK_ATTRIBUTE_TYPE, [UInt8])]) -> Bool {
        template.allSatisfy { type, value in
            if case let .bytes(held)? = object.attributes[type] { return held == value }
            return false
        }
    }
}
