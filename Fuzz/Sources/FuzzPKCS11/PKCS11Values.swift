// FuzzPKCS11's building blocks: the values templates and mechanisms are made of, the RSAKit
// names of PKCS#11 hashes, and buffers of exactly the stated length.
#if canImport(Glibc)
import Glibc
#endif
internal import CP11Kit
import RSAKit
import FuzzSupport

// MARK: - Constants

/// Every CKR_ code of PKCS#11 v2.40 (p11-kit's header, CKR_VENDOR_DEFINED and above excluded).
let pkcs11ReturnValues: Set<CK_RV> = Set(
    [
        CKR_OK, CKR_CANCEL, CKR_HOST_MEMORY, CKR_SLOT_ID_INVALID, CKR_GENERAL_ERROR, CKR_FUNCTION_FAILED,
        CKR_ARGUMENTS_BAD, CKR_NO_EVENT, CKR_NEED_TO_CREATE_THREADS, CKR_CANT_LOCK, CKR_ATTRIBUTE_READ_ONLY,
        CKR_ATTRIBUTE_SENSITIVE, CKR_ATTRIBUTE_TYPE_INVALID, CKR_ATTRIBUTE_VALUE_INVALID, CKR_ACTION_PROHIBITED,
        CKR_DATA_INVALID, CKR_DATA_LEN_RANGE, CKR_DEVICE_ERROR, CKR_DEVICE_MEMORY, CKR_DEVICE_REMOVED,
        CKR_ENCRYPTED_DATA_INVALID, CKR_ENCRYPTED_DATA_LEN_RANGE, CKR_FUNCTION_CANCELED, CKR_FUNCTION_NOT_PARALLEL,
        CKR_FUNCTION_NOT_SUPPORTED, CKR_KEY_HANDLE_INVALID, CKR_KEY_SIZE_RANGE, CKR_KEY_TYPE_INCONSISTENT,
        CKR_KEY_NOT_NEEDED, CKR_KEY_CHANGED, CKR_KEY_NEEDED, CKR_KEY_INDIGESTIBLE, CKR_KEY_FUNCTION_NOT_PERMITTED,
        CKR_KEY_NOT_WRAPPABLE, CKR_KEY_UNEXTRACTABLE, CKR_MECHANISM_INVALID, CKR_MECHANISM_PARAM_INVALID,
        CKR_OBJECT_HANDLE_INVALID, CKR_OPERATION_ACTIVE, CKR_OPERATION_NOT_INITIALIZED, CKR_PIN_INCORRECT,
        CKR_PIN_INVALID, CKR_PIN_LEN_RANGE, CKR_PIN_EXPIRED, CKR_PIN_LOCKED, CKR_SESSION_CLOSED, CKR_SESSION_COUNT,
        CKR_SESSION_HANDLE_INVALID, CKR_SESSION_PARALLEL_NOT_SUPPORTED, CKR_SESSION_READ_ONLY, CKR_SESSION_EXISTS,
        CKR_SESSION_READ_ONLY_EXISTS, CKR_SESSION_READ_WRITE_SO_EXISTS, CKR_SIGNATURE_INVALID, CKR_SIGNATURE_LEN_RANGE,
        CKR_TEMPLATE_INCOMPLETE, CKR_TEMPLATE_INCONSISTENT, CKR_TOKEN_NOT_PRESENT, CKR_TOKEN_NOT_RECOGNIZED,
        CKR_TOKEN_WRITE_PROTECTED, CKR_UNWRAPPING_KEY_SIZE_RANGE, CKR_UNWRAPPING_KEY_TYPE_INCONSISTENT,
        CKR_USER_ALREADY_LOGGED_IN, CKR_USER_NOT_LOGGED_IN, CKR_USER_PIN_NOT_INITIALIZED, CKR_USER_TYPE_INVALID,
        CKR_USER_ANOTHER_ALREADY_LOGGED_IN, CKR_USER_TOO_MANY_TYPES, CKR_WRAPPED_KEY_INVALID, CKR_WRAPPED_KEY_LEN_RANGE,
        CKR_WRAPPING_KEY_HANDLE_INVALID, CKR_WRAPPING_KEY_SIZE_RANGE, CKR_WRAPPING_KEY_TYPE_INCONSISTENT,
        CKR_RANDOM_SEED_NOT_SUPPORTED, CKR_RANDOM_NO_RNG, CKR_DOMAIN_PARAMS_INVALID, CKR_CURVE_NOT_SUPPORTED,
        CKR_BUFFER_TOO_SMALL, CKR_SAVED_STATE_INVALID, CKR_INFORMATION_SENSITIVE, CKR_STATE_UNSAVEABLE,
        CKR_CRYPTOKI_NOT_INITIALIZED, CKR_CRYPTOKI_ALREADY_INITIALIZED, CKR_MUTEX_BAD, CKR_MUTEX_NOT_LOCKED,
        CKR_NEW_PIN_MODE, CKR_NEXT_OTP, CKR_EXCEEDED_MAX_ITERATIONS, CKR_FIPS_SELF_TEST_FAILED, CKR_LIBRARY_LOAD_FAILED,
        CKR_PIN_TOO_WEAK, CKR_PUBLIC_KEY_INVALID, CKR_FUNCTION_REJECTED
    ].map { CK_RV($0) })

/// CK_UNAVAILABLE_INFORMATION.
let unavailable = CK_ULONG.max

/// Attribute types templates are built from: every attribute the module's objects have, the
/// private parts it must never return, and some it does not know (array attributes, vendor).
let pkcs11AttributeTypes: [CK_ATTRIBUTE_TYPE] =
    [
        CKA_CLASS, CKA_TOKEN, CKA_PRIVATE, CKA_LABEL, CKA_APPLICATION, CKA_VALUE, CKA_OBJECT_ID, CKA_CERTIFICATE_TYPE,
        CKA_ISSUER, CKA_SERIAL_NUMBER, CKA_TRUSTED, CKA_CERTIFICATE_CATEGORY, CKA_JAVA_MIDP_SECURITY_DOMAIN, CKA_URL,
        CKA_HASH_OF_SUBJECT_PUBLIC_KEY, CKA_HASH_OF_ISSUER_PUBLIC_KEY, CKA_CHECK_VALUE, CKA_KEY_TYPE, CKA_SUBJECT,
        CKA_ID, CKA_SENSITIVE, CKA_ENCRYPT, CKA_DECRYPT, CKA_WRAP, CKA_UNWRAP, CKA_SIGN, CKA_SIGN_RECOVER, CKA_VERIFY,
        CKA_VERIFY_RECOVER, CKA_DERIVE, CKA_START_DATE, CKA_END_DATE, CKA_MODULUS, CKA_MODULUS_BITS,
        CKA_PUBLIC_EXPONENT, CKA_PRIVATE_EXPONENT, CKA_PRIME_1, CKA_PRIME_2, CKA_EXPONENT_1, CKA_EXPONENT_2,
        CKA_COEFFICIENT, CKA_PUBLIC_KEY_INFO, CKA_EXTRACTABLE, CKA_LOCAL, CKA_NEVER_EXTRACTABLE, CKA_ALWAYS_SENSITIVE,
        CKA_KEY_GEN_MECHANISM, CKA_MODIFIABLE, CKA_COPYABLE, CKA_DESTROYABLE, CKA_ALWAYS_AUTHENTICATE,
        CKA_WRAP_WITH_TRUSTED
    ].map { CK_ATTRIBUTE_TYPE($0) } + [
        0x4000_0211, 0x4000_0212, 0x4000_0600,  // CKA_WRAP_TEMPLATE, CKA_UNWRAP_TEMPLATE, CKA_ALLOWED_MECHANISMS
        0x8000_0000, 0x8000_0001, 0xFFFF_FFFF, CK_ULONG.max
    ]

/// The private key's parts: never returned by any object.
let pkcs11PrivateParts: Set<CK_ATTRIBUTE_TYPE> = Set(
    [
        CKA_PRIVATE_EXPONENT, CKA_PRIME_1, CKA_PRIME_2, CKA_EXPONENT_1, CKA_EXPONENT_2, CKA_COEFFICIENT
    ].map { CK_ATTRIBUTE_TYPE($0) })

/// Message hashes of PSS and OAEP parameters (and some that are not).
let pkcs11Hashes: [CK_MECHANISM_TYPE] = [
    CKM_SHA_1, CKM_SHA224, CKM_SHA256, CKM_SHA384, CKM_SHA512, CKM_MD5, CKM_SHA512_256
]
.map { CK_MECHANISM_TYPE($0) }
/// MGF1 hashes (and values that are none).
let pkcs11MGFs: [CK_RSA_PKCS_MGF_TYPE] =
    [CKG_MGF1_SHA1, CKG_MGF1_SHA224, CKG_MGF1_SHA256, CKG_MGF1_SHA384, CKG_MGF1_SHA512]
    .map { CK_RSA_PKCS_MGF_TYPE($0) } + [0, 6, CK_ULONG.max]
/// The PKCS#1 v1.5 hash-and-sign mechanisms with their hashes (property 4).
let pkcs11HashAndSign: [CK_MECHANISM_TYPE: RSAHashAlgorithm] = [
    CK_MECHANISM_TYPE(CKM_SHA1_RSA_PKCS): .sha1, CK_MECHANISM_TYPE(CKM_SHA224_RSA_PKCS): .sha224,
    CK_MECHANISM_TYPE(CKM_SHA256_RSA_PKCS): .sha256, CK_MECHANISM_TYPE(CKM_SHA384_RSA_PKCS): .sha384,
    CK_MECHANISM_TYPE(CKM_SHA512_RSA_PKCS): .sha512
]
/// The PSS hash-and-sign mechanisms.
let pkcs11HashAndSignPSS: [CK_MECHANISM_TYPE] = [
    CKM_SHA1_RSA_PKCS_PSS, CKM_SHA224_RSA_PKCS_PSS, CKM_SHA256_RSA_PKCS_PSS, CKM_SHA384_RSA_PKCS_PSS,
    CKM_SHA512_RSA_PKCS_PSS
].map { CK_MECHANISM_TYPE($0) }

// MARK: - Exactly sized buffers

/// A buffer of exactly `count` bytes from malloc (AddressSanitizer reports any access past
/// it), freed by `free()`.
final class ExactBuffer {
    /// The memory (non-NULL, also for zero bytes).
    let pointer: UnsafeMutablePointer<UInt8>
    /// Its length in bytes.
    let count: Int

    /// `bytes` copied into a buffer of exactly their length.
    init(_ bytes: [UInt8]) {
        count = bytes.count
        guard let memory = malloc(bytes.count) else { unreachable("malloc failed") }
        pointer = memory.assumingMemoryBound(to: UInt8.self)
        bytes.withUnsafeBufferPointer {
            if let base = $0.baseAddress { pointer.update(from: base, count: bytes.count) }
        }
    }

    /// A buffer of `count` bytes filled with 0xA5.
    convenience init(count: Int) { self.init([UInt8](repeating: 0xA5, count: count)) }

    /// The first `n` bytes.
    func bytes(_ n: Int) -> [UInt8] { Array(UnsafeBufferPointer(start: pointer, count: min(n, count))) }

    deinit { free(pointer) }
}

/// A hostile CK_MECHANISM and the memory it points at (kept alive with it).
struct FuzzMechanism {
    /// The mechanism as passed.
    var mechanism: CK_MECHANISM
    /// pParameter's memory and an OAEP label's.
    var keepAlive: [ExactBuffer] = []
    /// The PSS parameters when they were passed as the standard says (hashAlg, mgf, sLen).
    var pss: (hash: CK_MECHANISM_TYPE, mgf: CK_RSA_PKCS_MGF_TYPE, saltLength: CK_ULONG)?
    /// The OAEP parameters when they were passed as the standard says (hashAlg, mgf, label).
    var oaep: (hash: CK_MECHANISM_TYPE, mgf: CK_RSA_PKCS_MGF_TYPE, label: [UInt8])?
}

/// The RSAKit hash of a CKM_SHA_1 ... CKM_SHA512 hashAlg (nil for others).
func pkcs11Hash(_ type: CK_MECHANISM_TYPE) -> RSAHashAlgorithm? {
    let table: [CK_MECHANISM_TYPE: RSAHashAlgorithm] = [
        CK_MECHANISM_TYPE(CKM_SHA_1): .sha1, CK_MECHANISM_TYPE(CKM_SHA224): .sha224,
        CK_MECHANISM_TYPE(CKM_SHA256): .sha256,
        CK_MECHANISM_TYPE(CKM_SHA384): .sha384, CK_MECHANISM_TYPE(CKM_SHA512): .sha512
    ]
    return table[type]
}

/// The RSAKit hash of a CKG_MGF1_SHA1 ... CKG_MGF1_SHA512 mgf (nil for others).
func pkcs11MGF1Hash(_ mgf: CK_RSA_PKCS_MGF_TYPE) -> RSAHashAlgorithm? {
    let table: [CK_RSA_PKCS_MGF_TYPE: RSAHashAlgorithm] = [
        CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA1): .sha1, CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA224): .sha224,
        CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA256): .sha256, CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA384): .sha384,
        CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA512): .sha512
    ]
    return table[mgf]
}

/// A template and the memory its pValues point at.
struct FuzzTemplate {
    /// The attributes (ulValueLen as passed).
    var attributes: [CK_ATTRIBUTE]
    /// What the pValues point at.
    var keepAlive: [ExactBuffer?]
    /// The lengths as passed, before the module changes them.
    var lengths: [CK_ULONG]
}
