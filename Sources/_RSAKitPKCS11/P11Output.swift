// The calls that produce output with the private key (C_Sign, C_SignFinal, C_Decrypt): §5.2's
// output convention, with the RSA operation itself outside the module lock, so that sessions
// of a multi-threaded host (NSS, a TLS server) sign at the same time. The lock is held to
// check the session and take the operation out of it, and again only to put the operation
// back after a short decryption buffer. While the operation runs, its session has none: a
// second thread using the same session at the same moment (which PKCS#11 leaves to the
// application to avoid) gets CKR_OPERATION_NOT_INITIALIZED.
internal import CP11Kit
import RSAKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the locked first step decided.
private enum P11OutputStep<Operation> {
    /// Answered under the lock: an error, a length query, a short signature buffer.
    case answered(CK_RV)
    /// Taken out of the session, to run unlocked.
    case run(Operation, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<CK_ULONG>)
}

/// §5.2's output convention for one operation kind of session `handle`.
/// - Parameters:
///   - isUpperBound: `length` is an upper bound (plaintexts), checked after the operation,
///     else the exact length (signatures), checked before it.
///   - peek: the session's operation of this kind (nil: CKR_OPERATION_NOT_INITIALIZED); may
///     throw a CKR_ code.
///   - length: the output's length or upper bound, k.
///   - remove, putBack: take the operation out of the session, put it back.
///   - produce: the RSA operation, run without the lock; its output is zeroed after the copy.
/// - Returns: the CKR_ code; the operation ends for every result but a length query or
///   CKR_BUFFER_TOO_SMALL.
func p11OutputOutsideLock<Operation>(
    _ handle: CK_SESSION_HANDLE, out: UnsafeMutablePointer<UInt8>?, outLength: UnsafeMutablePointer<CK_ULONG>?,
    isUpperBound: Bool = false, peek: (P11Session) throws -> Operation?, length: (Operation) -> Int,
    remove: (inout P11Session) -> Void, putBack: @escaping (inout P11Session, Operation) -> Void,
    produce: (Operation) throws -> [UInt8]
) -> CK_RV {
    let step: P11OutputStep<Operation> = p11Module.withLock { state in
        guard state.isInitialized, state.initializedProcess == getpid() else {
            return .answered(CK_RV(CKR_CRYPTOKI_NOT_INITIALIZED))
        }
        do {
            return try state.withSession(handle) { session in
                guard let operation = try peek(session) else { return .answered(CK_RV(CKR_OPERATION_NOT_INITIALIZED)) }
                guard let outLength else {
                    remove(&session)
                    return .answered(CK_RV(CKR_ARGUMENTS_BAD))
                }
                let k = CK_ULONG(length(operation))
                guard let out else {
                    outLength.pointee = k
                    return .answered(CK_RV(CKR_OK))
                }
                if !isUpperBound, outLength.pointee < k {
                    outLength.pointee = k
                    return .answered(CK_RV(CKR_BUFFER_TOO_SMALL))
                }
                remove(&session)
                return .run(operation, out, outLength)
            }
        } catch {
            return .answered(P11Error.returnValue(for: error))
        }
    }
    guard case let .run(operation, out, outLength) = step else {
        if case let .answered(rv) = step { return rv }
        return CK_RV(CKR_GENERAL_ERROR)
    }
    var output: [UInt8]
    do {
        output = try produce(operation)
    } catch {
        return P11Error.returnValue(for: error)
    }
    defer { output.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
    let rv = P11Buffers.deliver(output, to: out, length: outLength)
    if rv == CK_RV(CKR_BUFFER_TOO_SMALL) {
        // The host asks again with a larger buffer: the operation is still its.
        p11Module.withLock { state in
            guard state.isInitialized, state.initializedProcess == getpid() else { return }
            try? state.withSession(handle) { session in putBack(&session, operation) }
        }
    }
    return rv
}
