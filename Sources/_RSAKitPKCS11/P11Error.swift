// Every failure of the module as a CK_RV (PKCS#11 v2.40 §5.1): module errors carry their
// code, and RSAKit's errors are mapped here, in one place, so that no Swift error (and no
// trap) reaches the host program.
internal import CP11Kit
import RSAKit

/// A PKCS#11 return value thrown inside the module and returned by its entry point.
struct P11Error: Error {
    /// The CKR_ code the entry point returns.
    let rv: CK_RV

    init(_ rv: CK_RV) { self.rv = rv }

    /// The CKR_ code for any error thrown inside an entry point.
    static func returnValue(for error: any Error) -> CK_RV {
        if let error = error as? P11Error { return error.rv }
        if let error = error as? RSAError { return returnValue(for: error) }
        return CK_RV(CKR_FUNCTION_FAILED)
    }

    /// RSAKit's error cases as CKR_ codes. Decryption failures stay opaque (one code for
    /// every padding or range failure, as RSAKit throws one case for them).
    static func returnValue(for error: RSAError) -> CK_RV {
        switch error {
        case .decryptionFailed:
            return CK_RV(CKR_ENCRYPTED_DATA_INVALID)
        case .ciphertextLengthInvalid:
            return CK_RV(CKR_ENCRYPTED_DATA_LEN_RANGE)
        case .messageTooLong, .keyTooSmallForPadding, .digestLengthMismatch, .integerTooLarge,
            .messageRepresentativeOutOfRange:
            return CK_RV(CKR_DATA_LEN_RANGE)
        case .saltLengthInvalid:
            return CK_RV(CKR_MECHANISM_PARAM_INVALID)
        case .keyRestricted:
            return CK_RV(CKR_KEY_FUNCTION_NOT_PERMITTED)
        case .keychainLocked, .passphraseNeeded:
            return CK_RV(CKR_USER_NOT_LOGGED_IN)
        case .wrongPassphrase:
            return CK_RV(CKR_PIN_INCORRECT)
        case .itemNotFound:
            // The item went away since the object table was read (another process deleted it).
            return CK_RV(CKR_OBJECT_HANDLE_INVALID)
        case .storeNotFound:
            return CK_RV(CKR_TOKEN_NOT_PRESENT)
        case .storeIOError, .damagedItem, .insecureStorePermissions, .insecureSharedStore, .storeAccessDenied:
            return CK_RV(CKR_DEVICE_ERROR)
        default:
            return CK_RV(CKR_FUNCTION_FAILED)
        }
    }
}
