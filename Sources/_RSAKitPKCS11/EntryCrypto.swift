// Signing, verification and decryption entry points (PKCS#11 v2.40 §5.10-5.12). Output
// follows §5.2: a NULL output pointer asks for the length (k for signatures, k as the upper
// bound for plaintexts) and keeps the operation; a short buffer gives CKR_BUFFER_TOO_SMALL
// and keeps it; any other result ends it.
internal import CP11Kit
import RSAKit

@_cdecl("rsakit_p11_SignInit")
func rsakit_p11_SignInit(
    _ session: CK_SESSION_HANDLE, _ mechanism: UnsafeMutablePointer<CK_MECHANISM>?, _ key: CK_OBJECT_HANDLE
) -> CK_RV {
    p11SignatureInit(session, mechanism, \.sign) { state, scheme in
        let privateKey = try state.privateKey(key)
        if case let .tpm(key) = privateKey, key.reference.tpmKey?.usage.canSign != true {
            throw P11Error(CK_RV(CKR_KEY_FUNCTION_NOT_PERMITTED))
        }
        let input = P11SignatureInput(scheme: scheme, modulusByteCount: privateKey.modulusByteCount)
        return P11SignOperation(key: privateKey, input: input)
    }
}

@_cdecl("rsakit_p11_Sign")
func rsakit_p11_Sign(
    _ session: CK_SESSION_HANDLE, _ data: UnsafeMutablePointer<UInt8>?, _ dataLength: CK_ULONG,
    _ signature: UnsafeMutablePointer<UInt8>?, _ signatureLength: UnsafeMutablePointer<CK_ULONG>?
) -> CK_RV {
    p11OutputOutsideLock(
        session, out: signature, outLength: signatureLength,
        peek: { (current: P11Session) throws -> P11SignOperation? in
            guard let operation = current.sign else { return nil }
            guard !operation.input.isMultiPart else { throw P11Error(CK_RV(CKR_OPERATION_ACTIVE)) }
            return operation
        },
        length: { $0.key.modulusByteCount }, remove: { $0.sign = nil },
        putBack: { session, operation in if session.sign == nil { session.sign = operation } },
        produce: { operation in try operation.sign(P11Buffers.bytes(data, dataLength)) })
}

@_cdecl("rsakit_p11_SignUpdate")
func rsakit_p11_SignUpdate(_ session: CK_SESSION_HANDLE, _ part: UnsafeMutablePointer<UInt8>?, _ partLength: CK_ULONG)
    -> CK_RV
{
    p11SignatureUpdate(session, part, partLength, \.sign)
}

@_cdecl("rsakit_p11_SignFinal")
func rsakit_p11_SignFinal(
    _ session: CK_SESSION_HANDLE, _ signature: UnsafeMutablePointer<UInt8>?,
    _ signatureLength: UnsafeMutablePointer<CK_ULONG>?
) -> CK_RV {
    p11OutputOutsideLock(
        session, out: signature, outLength: signatureLength, peek: { $0.sign },
        length: { $0.key.modulusByteCount }, remove: { $0.sign = nil },
        putBack: { session, operation in if session.sign == nil { session.sign = operation } },
        produce: { operation in try operation.final() })
}

@_cdecl("rsakit_p11_VerifyInit")
func rsakit_p11_VerifyInit(
    _ session: CK_SESSION_HANDLE, _ mechanism: UnsafeMutablePointer<CK_MECHANISM>?, _ key: CK_OBJECT_HANDLE
) -> CK_RV {
    p11SignatureInit(session, mechanism, \.verify) { state, scheme in
        let publicKey = try state.publicKey(key)
        return P11VerifyOperation(
            key: publicKey, input: P11SignatureInput(scheme: scheme, modulusByteCount: publicKey.modulusByteCount))
    }
}

@_cdecl("rsakit_p11_Verify")
func rsakit_p11_Verify(
    _ session: CK_SESSION_HANDLE, _ data: UnsafeMutablePointer<UInt8>?, _ dataLength: CK_ULONG,
    _ signature: UnsafeMutablePointer<UInt8>?, _ signatureLength: CK_ULONG
) -> CK_RV {
    p11Entry { state in
        try state.withSession(session) { current in
            guard let operation = current.verify else { return CK_RV(CKR_OPERATION_NOT_INITIALIZED) }
            guard !operation.input.isMultiPart else { return CK_RV(CKR_OPERATION_ACTIVE) }
            current.verify = nil
            let signatureBytes = try P11Buffers.bytes(signature, signatureLength)
            guard signatureBytes.count == operation.key.modulusByteCount else { return CK_RV(CKR_SIGNATURE_LEN_RANGE) }
            let valid = operation.verify(try P11Buffers.bytes(data, dataLength), signature: signatureBytes)
            return valid ? CK_RV(CKR_OK) : CK_RV(CKR_SIGNATURE_INVALID)
        }
    }
}

@_cdecl("rsakit_p11_VerifyUpdate")
func rsakit_p11_VerifyUpdate(_ session: CK_SESSION_HANDLE, _ part: UnsafeMutablePointer<UInt8>?, _ partLength: CK_ULONG)
    -> CK_RV
{
    p11SignatureUpdate(session, part, partLength, \.verify)
}

@_cdecl("rsakit_p11_VerifyFinal")
func rsakit_p11_VerifyFinal(
    _ session: CK_SESSION_HANDLE, _ signature: UnsafeMutablePointer<UInt8>?, _ signatureLength: CK_ULONG
) -> CK_RV {
    p11Entry { state in
        try state.withSession(session) { current in
            guard let operation = current.verify else { return CK_RV(CKR_OPERATION_NOT_INITIALIZED) }
            current.verify = nil
            let signatureBytes = try P11Buffers.bytes(signature, signatureLength)
            guard signatureBytes.count == operation.key.modulusByteCount else { return CK_RV(CKR_SIGNATURE_LEN_RANGE) }
            return operation.final(signature: signatureBytes) ? CK_RV(CKR_OK) : CK_RV(CKR_SIGNATURE_INVALID)
        }
    }
}

@_cdecl("rsakit_p11_DecryptInit")
func rsakit_p11_DecryptInit(
    _ session: CK_SESSION_HANDLE, _ mechanism: UnsafeMutablePointer<CK_MECHANISM>?, _ key: CK_OBJECT_HANDLE
) -> CK_RV {
    p11Entry { state in
        guard try state.session(session).decrypt == nil else { return CK_RV(CKR_OPERATION_ACTIVE) }
        guard let mechanism else { return CK_RV(CKR_ARGUMENTS_BAD) }
        let padding = try P11Mechanisms.decryptionScheme(mechanism.pointee)
        let privateKey = try state.privateKey(key)
        // A key in the TPM decrypts its one scheme only (the TPM would refuse the rest).
        if case let .tpm(key) = privateKey, (try? key.checkTPMDecryption(padding: padding)) == nil {
            throw P11Error(CK_RV(CKR_KEY_FUNCTION_NOT_PERMITTED))
        }
        try state.withSession(session) { $0.decrypt = P11DecryptOperation(key: privateKey, padding: padding) }
        return CK_RV(CKR_OK)
    }
}

@_cdecl("rsakit_p11_Decrypt")
func rsakit_p11_Decrypt(
    _ session: CK_SESSION_HANDLE, _ encrypted: UnsafeMutablePointer<UInt8>?, _ encryptedLength: CK_ULONG,
    _ data: UnsafeMutablePointer<UInt8>?, _ dataLength: UnsafeMutablePointer<CK_ULONG>?
) -> CK_RV {
    p11OutputOutsideLock(
        session, out: data, outLength: dataLength, isUpperBound: true, peek: { $0.decrypt },
        length: { $0.key.modulusByteCount }, remove: { $0.decrypt = nil },
        putBack: { session, operation in if session.decrypt == nil { session.decrypt = operation } },
        produce: { operation in
            try operation.key.decrypt(P11Buffers.bytes(encrypted, encryptedLength), padding: operation.padding)
        })
}

/// C_SignInit and C_VerifyInit (§5.12, §5.13): CKR_OPERATION_ACTIVE when the session has one
/// at `operation` already; else the mechanism is checked, `make` builds the operation (and
/// looks up the key) and it is stored in the session.
private func p11SignatureInit<Operation: P11SignatureOperation>(
    _ session: CK_SESSION_HANDLE, _ mechanism: UnsafeMutablePointer<CK_MECHANISM>?,
    _ operation: WritableKeyPath<P11Session, Operation?>,
    _ make: (inout P11ModuleState, P11SignatureScheme) throws -> Operation
) -> CK_RV {
    p11Entry { state in
        guard try state.session(session)[keyPath: operation] == nil else { return CK_RV(CKR_OPERATION_ACTIVE) }
        guard let mechanism else { return CK_RV(CKR_ARGUMENTS_BAD) }
        let scheme = try P11Mechanisms.signatureScheme(mechanism.pointee)
        let made = try make(&state, scheme)
        try state.withSession(session) { $0[keyPath: operation] = made }
        return CK_RV(CKR_OK)
    }
}

/// C_SignUpdate and C_VerifyUpdate: one more part of the message into the operation at
/// `operation`; CKR_OPERATION_NOT_INITIALIZED without one, and any failure ends it (§5.2).
private func p11SignatureUpdate<Operation: P11SignatureOperation>(
    _ session: CK_SESSION_HANDLE, _ part: UnsafeMutablePointer<UInt8>?, _ partLength: CK_ULONG,
    _ operation: WritableKeyPath<P11Session, Operation?>
) -> CK_RV {
    p11Entry { state in
        try state.withSession(session) { current in
            guard current[keyPath: operation] != nil else { return CK_RV(CKR_OPERATION_NOT_INITIALIZED) }
            do {
                try current[keyPath: operation]?.input.update(P11Buffers.bytes(part, partLength))
            } catch {
                current[keyPath: operation] = nil
                throw error
            }
            return CK_RV(CKR_OK)
        }
    }
}
