// The PKCS#11 module's C_* entry points (issue 26), called through its own CK_FUNCTION_LIST
// (the C table of Sources/CRSAKitPKCS11, through CFuzzPKCS11Table's links) as a hostile host
// would call them. The module's Swift sources are compiled into this harness (the
// `RSAKitPKCS11` link), so they carry coverage and AddressSanitizer.
//
// Each input is one session against one of two fixed stores made once per process in a
// private mkdtemp folder (0700): "plain" (unprotected) and "protected" (passphrase "fuzz",
// Argon2id at libsodium's minimum cost, so that wrong PINs stay cheap). Each holds the
// 1024-bit fuzz key pair (FuzzSupport) and a self-signed certificate for it.
//
// Input: byte 0 picks the store (bit 7) and the session flags (bit 6: CKF_RW_SESSION); byte 1
// picks a C_Initialize variant (no arguments, CK_C_INITIALIZE_ARGS with and without
// CKF_OS_LOCKING_OK, with all, some or no mutex functions, a non-NULL pReserved). Then
// C_GetSlotList (both calls), C_OpenSession, and operations until the input ends, each one
// opcode byte and its operands (see `PKCS11Run.step`): C_FindObjectsInit / C_FindObjects /
// C_FindObjectsFinal with templates built from the input, C_GetAttributeValue with hostile
// templates, C_SignInit / C_Sign / C_SignUpdate / C_SignFinal, C_VerifyInit / C_Verify /
// C_VerifyUpdate / C_VerifyFinal, C_DecryptInit / C_Decrypt with mechanisms and parameters
// from the input (wrong ulParameterLen, NULL pParameter, unknown types), the two-call output
// convention (NULL buffer, short buffer, NULL length), C_Login / C_Logout with any PIN, the
// info calls, C_GenerateRandom, closing and reopening the session. Then C_Finalize.
//
// Every buffer handed to the module is allocated with exactly the length the call states
// (malloc, so AddressSanitizer reports a read or write past it). Lengths may lie only in the
// direction PKCS#11 allows: a NULL pointer with a non-zero length.
//
// Properties (a violation aborts, so libFuzzer saves the input):
// 1. Every call returns a CKR_ code of PKCS#11 v2.40 (no vendor-defined or unknown code).
// 2. The module writes within the lengths given (AddressSanitizer), and reports output
//    lengths consistently (§5.2): a length query gives k, a short buffer CKR_BUFFER_TOO_SMALL
//    with a length above the buffer's, a delivered output fits its buffer.
// 3. C_GetAttributeValue follows §5.7: every attribute it fails is CK_UNAVAILABLE_INFORMATION,
//    CKR_OK leaves none so, a copied value fits its buffer; a private key's CKA_VALUE and
//    the private parts (CKA_PRIVATE_EXPONENT ... CKA_COEFFICIENT) are never returned.
// 4. A signature from C_Sign or C_SignFinal with CKM_RSA_PKCS or CKM_SHAx_RSA_PKCS is k
//    bytes and verifies with the public key through RSAKit; C_Verify with CKM_RSA_PKCS never
//    calls an RSAKit-made valid signature invalid; C_Decrypt of an RSAKit-made PKCS#1 v1.5
//    ciphertext under CKM_RSA_PKCS gives the message back when it succeeds.
// 5. C_Initialize follows §5.4 for each argument variant, a second C_Initialize gives
//    CKR_CRYPTOKI_ALREADY_INITIALIZED, and after C_Finalize every implemented entry point
//    gives CKR_CRYPTOKI_NOT_INITIALIZED. (The functions the module does not offer answer
//    CKR_FUNCTION_NOT_SUPPORTED whether or not it is initialised: they are C stubs that do
//    not look at the module's state, which §5.1 allows.)
#if canImport(Glibc)
import Glibc
#endif
internal import CP11Kit
import CFuzzPKCS11Table
import RSAKit
import FuzzSupport

// MARK: - The fixed stores

/// The self-signed certificate of the fixed 1024-bit fuzz key (`fuzzPrivateKey1024`), made with
/// `openssl req -x509 -key key1024.pem -subj "/CN=rsakit fuzz PKCS11" -days 36500 -sha256 -set_serial 1`.
let pkcs11CertificatePEM = """
-----BEGIN CERTIFICATE-----
MIICBTCCAW6gAwIBAgIBATANBgkqhkiG9w0BAQsFADAdMRswGQYDVQQDDBJyc2Fr
aXQgZnV6eiBQS0NTMTEwIBcNMjYxMjA0MDIxMjU5WhgPMjEyNjExMTAwMjEyNTla
MB0xGzAZBgNVBAMMEnJzYWtpdCBmdXp6IFBLQ1MxMTCBnzANBgkqhkiG9w0BAQEF
AAOBjQAwgYkCgYEA2/zcTzcOUjPsoIKJeX/5oMQvyGwAgS20e0n23wbZoxy0y8iJ
rRwm59rxPLdY3WWw++RFpcZ6OBbzVrWbvnjbpTLhB07s3CHC7nwcCIAzzaH1sKV8
4iauqB1nHL7+Uw3oEdWZWiNOrCpxEEbvIO3q117A0I+DCz/+vclWBCg24fkCAwEA
AaNTMFEwHQYDVR0OBBYEFABr5DGD2t6Y74Xd33MQMhxhVWJ7MB8GA1UdIwQYMBaA
FABr5DGD2t6Y74Xd33MQMhxhVWJ7MA8GA1UdEwEB/wQFMAMBAf8wDQYJKoZIhvcN
AQELBQADgYEAJzgPSvYvWzrcodsTN8D3A+/Q5rL8n0LYRRDhhFeTYHglBDdzh2zx
tsAYzjONgleUaXNxn29nZLlb3iIsk4PAspnVHa6klRK8m0ycH5rGespF/kb9oULG
mEIvH6ukPyrONI+rddAhN4IFv8d4GHAPt4lGbMrmPZWpgMabwb1WGTw=
-----END CERTIFICATE-----

"""

/// The PIN (store passphrase) of the protected store.
let pkcs11PIN = "fuzz"

/// The private folder of this process's stores (removed at exit).
nonisolated(unsafe) var pkcs11Folder = ""

/// The two stores' paths, made on first use: `plain` (unprotected) and `protected`.
let pkcs11Stores: (plain: String, protected: String) = {
    var template = Array("/tmp/rsakit-fuzz-pkcs11.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { unreachable("mkdtemp failed") }   // mode 0700
    pkcs11Folder = String(cString: made)
    atexit { removePKCS11Tree(pkcs11Folder) }
    // No keychain agent: an empty PIN (login through the agent) must not reach one running on
    // the machine.
    setenv("RSAKIT_AGENT_SOCK", pkcs11Folder + "/no-agent.sock", 1)
    let certificate = pkcs11Certificate
    func make(_ name: String, protected: Bool) -> String {
        let path = pkcs11Folder + "/" + name
        do {
            let store = try RSAKeyStore(path: path, createIfMissing: true)
            try store.addKeyPair(fuzzPrivateKey1024, tag: "fuzz", label: "fuzz key")
            try store.addCertificate(certificate, label: "fuzz certificate")
            if protected {
                let cheapest = try RSAArgon2idParameters(opsLimit: 1, memoryLimitByteCount: 8192)
                try store.protect(passphrase: RSASecretBytes(utf8: pkcs11PIN), parameters: cheapest)
                store.lock()
            }
        } catch {
            unreachable("cannot make the \(name) store: \(error)")
        }
        return path
    }
    return (make("plain", protected: false), make("protected", protected: true))
}()

/// Remove a folder tree (this process's stores, at exit).
func removePKCS11Tree(_ path: String) {
    guard !path.isEmpty else { return }
    guard let dir = opendir(path) else { _ = unlink(path); return }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name == "." || name == ".." { continue }
        removePKCS11Tree(path + "/" + name)
    }
    closedir(dir)
    _ = rmdir(path)
}

/// The fixed certificate.
let pkcs11Certificate: X509Certificate = {
    guard let certificate = try? X509Certificate.certificates(from: Array(pkcs11CertificatePEM.utf8)).first else {
        unreachable("the fixed certificate does not parse")
    }
    return certificate
}()

/// The values the module must give for attributes the harness can predict, by object class:
/// the key's modulus, public exponent and ID (SHA-256 of its SubjectPublicKeyInfo) on key
/// objects and the ID and DER on the certificate.
func pkcs11ExpectedValue(_ type: CK_ATTRIBUTE_TYPE, objectClass: CK_OBJECT_CLASS) -> [UInt8]? {
    let key = fuzzPrivateKey1024.publicKey
    switch (objectClass, type) {
    case (CK_OBJECT_CLASS(CKO_PUBLIC_KEY), CK_ATTRIBUTE_TYPE(CKA_MODULUS)), (CK_OBJECT_CLASS(CKO_PRIVATE_KEY), CK_ATTRIBUTE_TYPE(CKA_MODULUS)):
        return key.modulus
    case (CK_OBJECT_CLASS(CKO_PUBLIC_KEY), CK_ATTRIBUTE_TYPE(CKA_PUBLIC_EXPONENT)), (CK_OBJECT_CLASS(CKO_PRIVATE_KEY), CK_ATTRIBUTE_TYPE(CKA_PUBLIC_EXPONENT)):
        return key.publicExponent
    case (_, CK_ATTRIBUTE_TYPE(CKA_ID)):
        return key.fingerprint.bytes
    case (CK_OBJECT_CLASS(CKO_CERTIFICATE), CK_ATTRIBUTE_TYPE(CKA_VALUE)):
        return pkcs11Certificate.derRepresentation
    default:
        return nil
    }
}

/// The module's function list (the C table).
let pkcs11Functions: CK_FUNCTION_LIST = {
    guard let list = rsakit_pkcs11_function_list() else { unreachable("the module has no function list") }
    return list.pointee
}()

/// Whether FUZZ_PKCS11_TRACE=1 asks for a line per call on stderr.
let pkcs11Trace = getenv("FUZZ_PKCS11_TRACE").map { String(cString: $0) == "1" } ?? false

/// k, the fixed key's modulus length in bytes.
let pkcs11ModulusByteCount = 128

// MARK: - Constants

/// Every CKR_ code of PKCS#11 v2.40 (p11-kit's header, CKR_VENDOR_DEFINED and above excluded).
let pkcs11ReturnValues: Set<CK_RV> = Set([
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
    CKR_PIN_TOO_WEAK, CKR_PUBLIC_KEY_INVALID, CKR_FUNCTION_REJECTED,
].map { CK_RV($0) })

/// CK_UNAVAILABLE_INFORMATION.
let unavailable = CK_ULONG.max

/// Attribute types templates are built from: every attribute the module's objects have, the
/// private parts it must never return, and some it does not know (array attributes, vendor).
let pkcs11AttributeTypes: [CK_ATTRIBUTE_TYPE] = [
    CKA_CLASS, CKA_TOKEN, CKA_PRIVATE, CKA_LABEL, CKA_APPLICATION, CKA_VALUE, CKA_OBJECT_ID, CKA_CERTIFICATE_TYPE,
    CKA_ISSUER, CKA_SERIAL_NUMBER, CKA_TRUSTED, CKA_CERTIFICATE_CATEGORY, CKA_JAVA_MIDP_SECURITY_DOMAIN, CKA_URL,
    CKA_HASH_OF_SUBJECT_PUBLIC_KEY, CKA_HASH_OF_ISSUER_PUBLIC_KEY, CKA_CHECK_VALUE, CKA_KEY_TYPE, CKA_SUBJECT,
    CKA_ID, CKA_SENSITIVE, CKA_ENCRYPT, CKA_DECRYPT, CKA_WRAP, CKA_UNWRAP, CKA_SIGN, CKA_SIGN_RECOVER, CKA_VERIFY,
    CKA_VERIFY_RECOVER, CKA_DERIVE, CKA_START_DATE, CKA_END_DATE, CKA_MODULUS, CKA_MODULUS_BITS,
    CKA_PUBLIC_EXPONENT, CKA_PRIVATE_EXPONENT, CKA_PRIME_1, CKA_PRIME_2, CKA_EXPONENT_1, CKA_EXPONENT_2,
    CKA_COEFFICIENT, CKA_PUBLIC_KEY_INFO, CKA_EXTRACTABLE, CKA_LOCAL, CKA_NEVER_EXTRACTABLE, CKA_ALWAYS_SENSITIVE,
    CKA_KEY_GEN_MECHANISM, CKA_MODIFIABLE, CKA_COPYABLE, CKA_DESTROYABLE, CKA_ALWAYS_AUTHENTICATE,
    CKA_WRAP_WITH_TRUSTED,
].map { CK_ATTRIBUTE_TYPE($0) } + [
    0x4000_0211, 0x4000_0212, 0x4000_0600,   // CKA_WRAP_TEMPLATE, CKA_UNWRAP_TEMPLATE, CKA_ALLOWED_MECHANISMS
    0x8000_0000, 0x8000_0001, 0xFFFF_FFFF, CK_ULONG.max,
]

/// The private key's parts: never returned by any object.
let pkcs11PrivateParts: Set<CK_ATTRIBUTE_TYPE> = Set([
    CKA_PRIVATE_EXPONENT, CKA_PRIME_1, CKA_PRIME_2, CKA_EXPONENT_1, CKA_EXPONENT_2, CKA_COEFFICIENT,
].map { CK_ATTRIBUTE_TYPE($0) })

/// Message hashes of PSS and OAEP parameters (and some that are not).
let pkcs11Hashes: [CK_MECHANISM_TYPE] = [CKM_SHA_1, CKM_SHA224, CKM_SHA256, CKM_SHA384, CKM_SHA512, CKM_MD5, CKM_SHA512_256]
    .map { CK_MECHANISM_TYPE($0) }
/// MGF1 hashes (and values that are none).
let pkcs11MGFs: [CK_RSA_PKCS_MGF_TYPE] = [CKG_MGF1_SHA1, CKG_MGF1_SHA224, CKG_MGF1_SHA256, CKG_MGF1_SHA384, CKG_MGF1_SHA512]
    .map { CK_RSA_PKCS_MGF_TYPE($0) } + [0, 6, CK_ULONG.max]
/// The PKCS#1 v1.5 hash-and-sign mechanisms with their hashes (property 4).
let pkcs11HashAndSign: [CK_MECHANISM_TYPE: RSAHashAlgorithm] = [
    CK_MECHANISM_TYPE(CKM_SHA1_RSA_PKCS): .sha1, CK_MECHANISM_TYPE(CKM_SHA224_RSA_PKCS): .sha224,
    CK_MECHANISM_TYPE(CKM_SHA256_RSA_PKCS): .sha256, CK_MECHANISM_TYPE(CKM_SHA384_RSA_PKCS): .sha384,
    CK_MECHANISM_TYPE(CKM_SHA512_RSA_PKCS): .sha512,
]
/// The PSS hash-and-sign mechanisms.
let pkcs11HashAndSignPSS: [CK_MECHANISM_TYPE] = [
    CKM_SHA1_RSA_PKCS_PSS, CKM_SHA224_RSA_PKCS_PSS, CKM_SHA256_RSA_PKCS_PSS, CKM_SHA384_RSA_PKCS_PSS, CKM_SHA512_RSA_PKCS_PSS,
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
        bytes.withUnsafeBufferPointer { if let base = $0.baseAddress { pointer.update(from: base, count: bytes.count) } }
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
        CK_MECHANISM_TYPE(CKM_SHA_1): .sha1, CK_MECHANISM_TYPE(CKM_SHA224): .sha224, CK_MECHANISM_TYPE(CKM_SHA256): .sha256,
        CK_MECHANISM_TYPE(CKM_SHA384): .sha384, CK_MECHANISM_TYPE(CKM_SHA512): .sha512,
    ]
    return table[type]
}

/// The RSAKit hash of a CKG_MGF1_SHA1 ... CKG_MGF1_SHA512 mgf (nil for others).
func pkcs11MGF1Hash(_ mgf: CK_RSA_PKCS_MGF_TYPE) -> RSAHashAlgorithm? {
    let table: [CK_RSA_PKCS_MGF_TYPE: RSAHashAlgorithm] = [
        CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA1): .sha1, CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA224): .sha224,
        CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA256): .sha256, CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA384): .sha384,
        CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA512): .sha512,
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

// MARK: - One run

/// One input's session with the module, and what the harness knows of its state.
struct PKCS11Run {
    /// The module's function list.
    let f = pkcs11Functions
    /// The rest of the input.
    var reader: FuzzReader
    /// The session the operations use (the last one opened).
    var session: CK_SESSION_HANDLE = 0
    /// Handles C_FindObjects returned (at most 16).
    var found: [CK_OBJECT_HANDLE] = []
    /// The mechanism of the last successful C_SignInit and the parts C_SignUpdate took since:
    /// a successful C_Sign or C_SignFinal is always of that operation (a second C_SignInit
    /// while one is active fails with CKR_OPERATION_ACTIVE).
    var signMechanism: CK_MECHANISM_TYPE?
    var signParts: [UInt8] = []
    /// The PSS parameters of that C_SignInit, when given as the standard says.
    var signPSS: (hash: CK_MECHANISM_TYPE, mgf: CK_RSA_PKCS_MGF_TYPE, saltLength: CK_ULONG)?
    /// The mechanism of the last successful C_VerifyInit.
    var verifyMechanism: CK_MECHANISM_TYPE?
    /// The mechanism of the last successful C_DecryptInit.
    var decryptMechanism: CK_MECHANISM_TYPE?
    /// The OAEP parameters of that C_DecryptInit, when given as the standard says.
    var decryptOAEP: (hash: CK_MECHANISM_TYPE, mgf: CK_RSA_PKCS_MGF_TYPE, label: [UInt8])?

    /// A run over `input` (byte 0 first).
    init(_ input: [UInt8]) { reader = FuzzReader(input) }

    /// Property 1 for `rv` of `call`; returns `rv`. With FUZZ_PKCS11_TRACE=1 in the
    /// environment each call and its result go to stderr (for reading what a seed does).
    @discardableResult
    func check(_ rv: CK_RV, _ call: String) -> CK_RV {
        if pkcs11Trace {
            var line = Array("FuzzPKCS11: \(call) -> 0x\(String(rv, radix: 16))\n".utf8)
            _ = write(2, &line, line.count)
        }
        require(pkcs11ReturnValues.contains(rv), "\(call) returned 0x\(String(rv, radix: 16)), not a PKCS#11 code")
        return rv
    }

    /// An unsigned long from the input: small values mostly, any value sometimes.
    mutating func ulong() -> CK_ULONG {
        let first = reader.byte()
        guard first >= 0xF0 else { return CK_ULONG(first) }
        var value: CK_ULONG = 0
        for byte in reader.take(8) { value = value << 8 | CK_ULONG(byte) }
        return value
    }

    /// Input bytes: a length byte (0xFB-0xFF: 200, 117, 128, 129, 1000) then that many
    /// bytes, zero-padded when the input ends.
    mutating func data() -> [UInt8] {
        let length = reader.byte()
        let n: Int = switch length {
        case 0xFB: 200
        case 0xFC: pkcs11ModulusByteCount - 11
        case 0xFD: pkcs11ModulusByteCount
        case 0xFE: pkcs11ModulusByteCount + 1
        case 0xFF: 1000
        default: Int(length)
        }
        let bytes = reader.take(n)
        return bytes + [UInt8](repeating: 0, count: n - bytes.count)
    }

    /// An object handle: mostly one C_FindObjects returned, else a small or any number.
    mutating func handle() -> CK_OBJECT_HANDLE {
        let b = reader.byte()
        if b < 0xC0, !found.isEmpty { return found[Int(b) % found.count] }
        if b < 0xF0 { return CK_OBJECT_HANDLE(b & 0x0F) }
        return ulong()
    }

    /// A template of up to 8 attributes. Each: a type (from the list, or any), then a value
    /// mode: 0 NULL and length 0, 1 NULL and a length (a size query; a lie for a search),
    /// 2 a buffer of exactly `length` bytes from the input.
    mutating func template() -> FuzzTemplate {
        let count = Int(reader.byte() % 9)
        var result = FuzzTemplate(attributes: [], keepAlive: [], lengths: [])
        for _ in 0..<count {
            let t = reader.byte()
            let type: CK_ATTRIBUTE_TYPE = t < 0xF0 ? pkcs11AttributeTypes[Int(t) % pkcs11AttributeTypes.count] : ulong()
            var attribute = CK_ATTRIBUTE(type: type, pValue: nil, ulValueLen: 0)
            var buffer: ExactBuffer?
            switch reader.byte() % 3 {
            case 0: break
            case 1: attribute.ulValueLen = ulong()
            default:
                buffer = ExactBuffer(data())
                attribute.pValue = UnsafeMutableRawPointer(buffer!.pointer)
                attribute.ulValueLen = CK_ULONG(buffer!.count)
            }
            result.attributes.append(attribute)
            result.keepAlive.append(buffer)
            result.lengths.append(attribute.ulValueLen)
        }
        return result
    }

    /// A mechanism: a type (RSA PKCS, PSS with parameters, OAEP with parameters, hash-and-sign
    /// PKCS#1 v1.5 or PSS, X.509, any), then a parameter mode: 0 as the standard says, 1 the
    /// parameter with a wrong ulParameterLen (and exactly that much memory), 2 NULL
    /// pParameter with the right length, 3 no parameter at all.
    mutating func mechanism() -> FuzzMechanism {
        let kind = reader.byte() % 8
        var type: CK_MECHANISM_TYPE
        var parameter: [UInt8] = []
        var label: ExactBuffer?
        var pss: (hash: CK_MECHANISM_TYPE, mgf: CK_RSA_PKCS_MGF_TYPE, saltLength: CK_ULONG)?
        var oaep: (hash: CK_MECHANISM_TYPE, mgf: CK_RSA_PKCS_MGF_TYPE, label: [UInt8])?
        switch kind {
        case 0: type = CK_MECHANISM_TYPE(CKM_RSA_PKCS)
        case 1, 5:
            type = kind == 1 ? CK_MECHANISM_TYPE(CKM_RSA_PKCS_PSS) : pkcs11HashAndSignPSS[Int(reader.byte()) % pkcs11HashAndSignPSS.count]
            let hash = reader.byte()
            let mgf = reader.byte()
            var value = CK_RSA_PKCS_PSS_PARAMS()
            value.hashAlg = hash < 0xF0 ? pkcs11Hashes[Int(hash) % pkcs11Hashes.count] : ulong()
            value.mgf = mgf < 0xF0 ? pkcs11MGFs[Int(mgf) % pkcs11MGFs.count] : ulong()
            value.sLen = ulong()
            pss = (value.hashAlg, value.mgf, value.sLen)
            parameter = withUnsafeBytes(of: value) { Array($0) }
        case 2:
            type = CK_MECHANISM_TYPE(CKM_RSA_PKCS_OAEP)
            let hash = reader.byte()
            let mgf = reader.byte()
            var value = CK_RSA_PKCS_OAEP_PARAMS()
            value.hashAlg = hash < 0xF0 ? pkcs11Hashes[Int(hash) % pkcs11Hashes.count] : ulong()
            value.mgf = mgf < 0xF0 ? pkcs11MGFs[Int(mgf) % pkcs11MGFs.count] : ulong()
            let source = reader.byte()
            value.source = source < 0x80 ? CK_RSA_PKCS_OAEP_SOURCE_TYPE(CKZ_DATA_SPECIFIED) : (source < 0xF0 ? 0 : ulong())
            switch reader.byte() % 3 {
            case 0: break
            case 1: value.ulSourceDataLen = ulong()   // NULL pSourceData with a length
            default:
                label = ExactBuffer(data())
                value.pSourceData = UnsafeMutableRawPointer(label!.pointer)
                value.ulSourceDataLen = CK_ULONG(label!.count)
            }
            oaep = (value.hashAlg, value.mgf, label.map { $0.bytes($0.count) } ?? [])
            parameter = withUnsafeBytes(of: value) { Array($0) }
        case 3: type = CK_MECHANISM_TYPE(CKM_SHA256_RSA_PKCS)
        case 4: type = Array(pkcs11HashAndSign.keys).sorted()[Int(reader.byte()) % pkcs11HashAndSign.count]
        case 6: type = CK_MECHANISM_TYPE(CKM_RSA_X_509)
        default: type = ulong()
        }
        var mechanism = CK_MECHANISM(mechanism: type, pParameter: nil, ulParameterLen: 0)
        var keepAlive: [ExactBuffer] = label.map { [$0] } ?? []
        let mode = reader.byte() % 4
        switch mode {
        case 0:
            if !parameter.isEmpty {
                let buffer = ExactBuffer(parameter)
                mechanism.pParameter = UnsafeMutableRawPointer(buffer.pointer)
                mechanism.ulParameterLen = CK_ULONG(buffer.count)
                keepAlive.append(buffer)
            }
        case 1:
            // A wrong length, with exactly that much memory: the parameter cut or extended.
            let n = Int(reader.byte() % 64)
            let buffer = ExactBuffer(Array(parameter.prefix(n)) + [UInt8](repeating: 0, count: max(0, n - parameter.count)))
            mechanism.pParameter = UnsafeMutableRawPointer(buffer.pointer)
            mechanism.ulParameterLen = CK_ULONG(n)
            keepAlive.append(buffer)
        case 2:
            mechanism.ulParameterLen = parameter.isEmpty ? ulong() : CK_ULONG(parameter.count)
        default:
            break
        }
        // Only parameters passed as the standard says are the ones the module used.
        return FuzzMechanism(mechanism: mechanism, keepAlive: keepAlive, pss: mode == 0 ? pss : nil, oaep: mode == 0 ? oaep : nil)
    }

    // MARK: Calls with checks

    /// C_GetAttributeValue of `template` on `object`, with property 3.
    mutating func getAttributes(_ object: CK_OBJECT_HANDLE, _ input: FuzzTemplate, session: CK_SESSION_HANDLE) -> CK_RV {
        var template = input
        let objectClass = self.objectClass(object)
        let rv = template.attributes.withUnsafeMutableBufferPointer { attributes in
            check(f.C_GetAttributeValue!(session, object, attributes.baseAddress, CK_ULONG(attributes.count)), "C_GetAttributeValue")
        }
        let perAttribute: Set<CK_RV> = Set([CKR_OK, CKR_ATTRIBUTE_SENSITIVE, CKR_ATTRIBUTE_TYPE_INVALID, CKR_BUFFER_TOO_SMALL].map { CK_RV($0) })
        guard perAttribute.contains(rv), !template.attributes.isEmpty else { return rv }
        for (index, attribute) in template.attributes.enumerated() {
            let given = template.lengths[index]
            if rv == CK_RV(CKR_OK) {
                require(attribute.ulValueLen != unavailable, "C_GetAttributeValue gave CKR_OK with an unavailable attribute 0x\(String(attribute.type, radix: 16))")
            }
            if attribute.pValue != nil, attribute.ulValueLen != unavailable {
                require(attribute.ulValueLen <= given, "C_GetAttributeValue copied \(attribute.ulValueLen) bytes into \(given)")
            }
            let secret = pkcs11PrivateParts.contains(attribute.type)
                || (objectClass == CK_OBJECT_CLASS(CKO_PRIVATE_KEY) && attribute.type == CK_ATTRIBUTE_TYPE(CKA_VALUE))
            if secret {
                require(attribute.ulValueLen == unavailable, "C_GetAttributeValue revealed sensitive attribute 0x\(String(attribute.type, radix: 16)) (length \(attribute.ulValueLen))")
            }
            guard attribute.ulValueLen != unavailable, let objectClass,
                  let expected = pkcs11ExpectedValue(attribute.type, objectClass: objectClass) else { continue }
            require(attribute.ulValueLen == CK_ULONG(expected.count),
                    "attribute 0x\(String(attribute.type, radix: 16)) has length \(attribute.ulValueLen), not \(expected.count)")
            if let buffer = template.keepAlive[index] {
                require(buffer.bytes(expected.count) == expected, "attribute 0x\(String(attribute.type, radix: 16)) has another value")
            }
        }
        // §5.2's two calls: a length the module stated fits a buffer of exactly that length.
        for (index, attribute) in template.attributes.enumerated()
        where attribute.pValue == nil && attribute.ulValueLen != unavailable && attribute.ulValueLen <= 1 << 16 {
            let buffer = ExactBuffer(count: Int(attribute.ulValueLen))
            var again = CK_ATTRIBUTE(type: attribute.type, pValue: UnsafeMutableRawPointer(buffer.pointer), ulValueLen: attribute.ulValueLen)
            let secondRV = check(f.C_GetAttributeValue!(session, object, &again, 1), "C_GetAttributeValue(stated length)")
            require(secondRV == CK_RV(CKR_OK) && again.ulValueLen == attribute.ulValueLen,
                    "attribute \(index) (0x\(String(attribute.type, radix: 16))) of stated length \(attribute.ulValueLen) gave 0x\(String(secondRV, radix: 16)), length \(again.ulValueLen)")
        }
        return rv
    }

    /// The CKA_CLASS of `object` as the module states it (nil when it does not).
    func objectClass(_ object: CK_OBJECT_HANDLE) -> CK_OBJECT_CLASS? {
        let buffer = ExactBuffer(count: MemoryLayout<CK_OBJECT_CLASS>.size)
        var attribute = CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(CKA_CLASS), pValue: UnsafeMutableRawPointer(buffer.pointer),
                                     ulValueLen: CK_ULONG(buffer.count))
        let rv = check(f.C_GetAttributeValue!(session, object, &attribute, 1), "C_GetAttributeValue(CKA_CLASS)")
        guard rv == CK_RV(CKR_OK) else { return nil }
        require(attribute.ulValueLen == CK_ULONG(buffer.count), "CKA_CLASS of \(attribute.ulValueLen) bytes")
        return UnsafeRawPointer(buffer.pointer).loadUnaligned(as: CK_OBJECT_CLASS.self)
    }

    /// An output call (C_Sign, C_SignFinal, C_Decrypt) in one of five shapes: 0 NULL buffer
    /// (length query), 1 NULL length, 2 NULL length and a buffer, 3 a buffer of any length
    /// 0-255, 4 a buffer of k. Checks property 2; returns the result and what was delivered.
    mutating func output(
        _ name: String, exactLength: Bool,
        _ call: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<CK_ULONG>?) -> CK_RV
    ) -> (CK_RV, [UInt8]?) {
        let shape = reader.byte() % 5
        let capacity = shape == 3 ? Int(reader.byte()) : pkcs11ModulusByteCount
        let buffer = shape >= 2 ? ExactBuffer(count: capacity) : nil
        var length = CK_ULONG(capacity)
        let rv: CK_RV
        if shape == 1 || shape == 2 {
            rv = check(call(buffer?.pointer, nil), name)
        } else {
            rv = check(call(buffer?.pointer, &length), name)
        }
        let k = CK_ULONG(pkcs11ModulusByteCount)
        if shape == 0, rv == CK_RV(CKR_OK) {
            require(length == k, "\(name) length query gave \(length), not k = \(k)")
        }
        if rv == CK_RV(CKR_BUFFER_TOO_SMALL) {
            require(shape >= 3 && length > CK_ULONG(capacity), "\(name) said CKR_BUFFER_TOO_SMALL with \(length) for a buffer of \(capacity)")
            if exactLength { require(length == k, "\(name) asked for \(length) bytes, not k") }
        }
        guard shape >= 3, rv == CK_RV(CKR_OK), let buffer else { return (rv, nil) }
        require(length <= CK_ULONG(capacity), "\(name) delivered \(length) bytes into \(capacity)")
        if exactLength { require(length == k, "\(name) delivered \(length) bytes, not k") }
        return (rv, buffer.bytes(Int(length)))
    }

    /// Property 4 for a signature the module made with `mechanism` over `message` (PSS: with
    /// the parameters of `signPSS`, when they were given as the standard says).
    func checkSignature(_ signature: [UInt8], mechanism: CK_MECHANISM_TYPE?, message: [UInt8], _ name: String) {
        let key = fuzzPrivateKey1024.publicKey
        if let pss = signPSS, let mechanism, let hash = pkcs11Hash(pss.hash), let mgf1 = pkcs11MGF1Hash(pss.mgf) {
            // The module accepted these parameters, so they name RSAKit's hashes and a salt length.
            let salt = RSAPSSSaltLength.byteCount(Int(pss.saltLength))
            let padding: RSASignaturePadding = mgf1 == hash ? .pss(saltLength: salt) : .pssMGF1(mgf1, saltLength: salt)
            if mechanism == CK_MECHANISM_TYPE(CKM_RSA_PKCS_PSS) {
                require(key.isValidSignature(signature, forDigest: message, hash: hash, padding: padding),
                        "\(name) CKM_RSA_PKCS_PSS signature does not verify (\(hash), MGF1 \(mgf1), salt \(pss.saltLength))")
            } else if pkcs11HashAndSignPSS.contains(mechanism) {
                require(key.isValidSignature(signature, for: message, hash: hash, padding: padding),
                        "\(name) PSS signature of mechanism 0x\(String(mechanism, radix: 16)) does not verify")
            }
        }
        if mechanism == CK_MECHANISM_TYPE(CKM_RSA_PKCS) {
            require(key.isValidSignature(signature, forDigestInfo: message), "\(name) CKM_RSA_PKCS signature does not verify")
        } else if let mechanism, let hash = pkcs11HashAndSign[mechanism] {
            require(key.isValidSignature(signature, for: message, hash: hash, padding: .pkcs1v15),
                    "\(name) signature of mechanism 0x\(String(mechanism, radix: 16)) does not verify")
        }
    }

    /// Forget the operations of a session that went away.
    mutating func forgetOperations() {
        signMechanism = nil
        signPSS = nil
        signParts = []
        verifyMechanism = nil
        decryptMechanism = nil
        decryptOAEP = nil
    }

    /// C_OpenSession for slot 0 with `flags`; the handle becomes the run's session.
    mutating func openSession(flags: CK_FLAGS) -> CK_RV {
        var handle: CK_SESSION_HANDLE = 0
        let rv = check(f.C_OpenSession!(0, flags, nil, nil, &handle), "C_OpenSession")
        if rv == CK_RV(CKR_OK) {
            session = handle
            forgetOperations()
        }
        return rv
    }

    // MARK: The operations

    /// One operation from the input.
    mutating func step() {
        // Locals, so that the closures of `output` do not capture `self` while it changes.
        let f = self.f
        let session = self.session
        let op = reader.byte() % 20
        switch op {
        case 0:   // C_FindObjectsInit
            var template = template()
            var count = CK_ULONG(template.attributes.count)
            let nullTemplate = reader.byte() & 1 == 1
            if nullTemplate { count = count == 0 ? ulong() : count }
            _ = template.attributes.withUnsafeMutableBufferPointer { attributes in
                check(f.C_FindObjectsInit!(session, nullTemplate ? nil : attributes.baseAddress, count), "C_FindObjectsInit")
            }
            withExtendedLifetime(template.keepAlive) {}
        case 1:   // C_FindObjects
            let maximum = Int(reader.byte() % 6)
            let buffer = ExactBuffer(count: maximum * MemoryLayout<CK_OBJECT_HANDLE>.size)
            var count: CK_ULONG = .max
            let objects = UnsafeMutableRawPointer(buffer.pointer).assumingMemoryBound(to: CK_OBJECT_HANDLE.self)
            let rv = check(f.C_FindObjects!(session, objects, CK_ULONG(maximum), &count), "C_FindObjects")
            if rv == CK_RV(CKR_OK) {
                require(count <= CK_ULONG(maximum), "C_FindObjects returned \(count) handles for at most \(maximum)")
                for index in 0..<Int(count) where found.count < 16 && !found.contains(objects[index]) {
                    found.append(objects[index])
                }
            }
        case 2:   // C_FindObjectsFinal
            check(f.C_FindObjectsFinal!(session), "C_FindObjectsFinal")
        case 3:   // C_GetAttributeValue
            let object = handle()
            let template = template()
            _ = getAttributes(object, template, session: session)
        case 4:   // C_SignInit
            var mechanism = mechanism()
            let key = handle()
            let rv = check(f.C_SignInit!(session, &mechanism.mechanism, key), "C_SignInit")
            withExtendedLifetime(mechanism.keepAlive) {}
            if rv == CK_RV(CKR_OK) {
                signMechanism = mechanism.mechanism.mechanism
                signPSS = mechanism.pss
                signParts = []
            }
        case 5:   // C_Sign
            let message = ExactBuffer(data())
            let (rv, signature) = output("C_Sign", exactLength: true) { out, length in
                f.C_Sign!(session, message.pointer, CK_ULONG(message.count), out, length)
            }
            if rv == CK_RV(CKR_OK), let signature {
                checkSignature(signature, mechanism: signMechanism, message: message.bytes(message.count), "C_Sign")
            }
        case 6:   // C_SignUpdate
            let part = ExactBuffer(data())
            let rv = check(f.C_SignUpdate!(session, part.pointer, CK_ULONG(part.count)), "C_SignUpdate")
            if rv == CK_RV(CKR_OK) { signParts += part.bytes(part.count) }
        case 7:   // C_SignFinal
            let (rv, signature) = output("C_SignFinal", exactLength: true) { out, length in f.C_SignFinal!(session, out, length) }
            if rv == CK_RV(CKR_OK), let signature {
                checkSignature(signature, mechanism: signMechanism, message: signParts, "C_SignFinal")
            }
        case 8:   // C_VerifyInit
            var mechanism = mechanism()
            let key = handle()
            let rv = check(f.C_VerifyInit!(session, &mechanism.mechanism, key), "C_VerifyInit")
            withExtendedLifetime(mechanism.keepAlive) {}
            if rv == CK_RV(CKR_OK) { verifyMechanism = mechanism.mechanism.mechanism }
        case 9:   // C_Verify: a signature from the input, or a valid CKM_RSA_PKCS one made by RSAKit
            let message = data()
            let makeValid = reader.byte() & 1 == 1 && message.count <= pkcs11ModulusByteCount - 11
            let signatureBytes: [UInt8]
            if makeValid {
                guard let made = try? fuzzPrivateKey1024.signature(forDigestInfo: message, random: FuzzRandomSource(seed: 1)) else {
                    unreachable("RSAKit cannot sign \(message.count) bytes")
                }
                signatureBytes = made
            } else {
                signatureBytes = data()
            }
            let messageBuffer = ExactBuffer(message)
            let signature = ExactBuffer(signatureBytes)
            let rv = check(f.C_Verify!(session, messageBuffer.pointer, CK_ULONG(message.count), signature.pointer, CK_ULONG(signature.count)), "C_Verify")
            if makeValid, verifyMechanism == CK_MECHANISM_TYPE(CKM_RSA_PKCS) {
                require(rv != CK_RV(CKR_SIGNATURE_INVALID) && rv != CK_RV(CKR_SIGNATURE_LEN_RANGE),
                        "C_Verify (CKM_RSA_PKCS) rejected a valid signature: 0x\(String(rv, radix: 16))")
            }
        case 10:  // C_VerifyUpdate
            let part = ExactBuffer(data())
            check(f.C_VerifyUpdate!(session, part.pointer, CK_ULONG(part.count)), "C_VerifyUpdate")
        case 11:  // C_VerifyFinal
            let signature = ExactBuffer(data())
            check(f.C_VerifyFinal!(session, signature.pointer, CK_ULONG(signature.count)), "C_VerifyFinal")
        case 12:  // C_DecryptInit
            var mechanism = mechanism()
            let key = handle()
            let rv = check(f.C_DecryptInit!(session, &mechanism.mechanism, key), "C_DecryptInit")
            withExtendedLifetime(mechanism.keepAlive) {}
            if rv == CK_RV(CKR_OK) {
                decryptMechanism = mechanism.mechanism.mechanism
                decryptOAEP = mechanism.oaep
            }
        case 13:  // C_Decrypt: a ciphertext from the input, or RSAKit's encryption of a message for
                  // the decryption's mechanism (PKCS#1 v1.5, or OAEP with its parameters)
            let message = data()
            let wantValid = reader.byte() & 1 == 1
            var padding: RSAEncryptionPadding?
            if decryptMechanism == CK_MECHANISM_TYPE(CKM_RSA_PKCS) {
                padding = .pkcs1v15
            } else if decryptMechanism == CK_MECHANISM_TYPE(CKM_RSA_PKCS_OAEP), let oaep = decryptOAEP,
                      let hash = pkcs11Hash(oaep.hash), let mgf1 = pkcs11MGF1Hash(oaep.mgf) {
                padding = .oaep(RSAOAEPParameters(hash: hash, mgf1Hash: mgf1, label: oaep.label))
            }
            // Too long a message for the padding: the input's bytes go as they are.
            let valid: [UInt8]? = wantValid ? padding.flatMap {
                try? fuzzPrivateKey1024.publicKey.encrypt(message, padding: $0, random: FuzzRandomSource(seed: 2))
            } : nil
            let encrypted = ExactBuffer(valid ?? message)
            let (rv, plaintext) = output("C_Decrypt", exactLength: false) { out, length in
                f.C_Decrypt!(session, encrypted.pointer, CK_ULONG(encrypted.count), out, length)
            }
            if valid != nil {
                // The operation, when there is one, is of the last successful C_DecryptInit.
                require(rv != CK_RV(CKR_ENCRYPTED_DATA_INVALID) && rv != CK_RV(CKR_ENCRYPTED_DATA_LEN_RANGE),
                        "C_Decrypt refused a valid ciphertext (mechanism 0x\(String(decryptMechanism ?? 0, radix: 16))): 0x\(String(rv, radix: 16))")
                if rv == CK_RV(CKR_OK), let plaintext {
                    require(plaintext == message, "C_Decrypt of a valid ciphertext gave other bytes")
                }
            }
        case 14:  // C_Login
            let userType: CK_USER_TYPE = switch reader.byte() % 5 {
            case 0: CK_USER_TYPE(CKU_SO)
            case 1, 2: CK_USER_TYPE(CKU_USER)
            case 3: CK_USER_TYPE(CKU_CONTEXT_SPECIFIC)
            default: ulong()
            }
            let shape = reader.byte() % 4
            let pin = ExactBuffer(shape == 0 ? Array(pkcs11PIN.utf8) : shape == 1 ? [] : data())
            let rv = shape == 3
                ? check(f.C_Login!(session, userType, nil, ulong()), "C_Login")
                : check(f.C_Login!(session, userType, pin.pointer, CK_ULONG(pin.count)), "C_Login")
            _ = rv
        case 15:  // C_Logout (ends the private-key operations)
            let rv = check(f.C_Logout!(session), "C_Logout")
            if rv == CK_RV(CKR_OK) {
                signMechanism = nil
                signPSS = nil
                decryptMechanism = nil
                decryptOAEP = nil
            }
        case 16:  // the information calls, and one with a wrong session handle
            var sessionInfo = CK_SESSION_INFO()
            check(f.C_GetSessionInfo!(session, &sessionInfo), "C_GetSessionInfo")
            check(f.C_GetSessionInfo!(session, nil), "C_GetSessionInfo(NULL)")
            var tokenInfo = CK_TOKEN_INFO()
            check(f.C_GetTokenInfo!(CK_SLOT_ID(reader.byte() % 2), &tokenInfo), "C_GetTokenInfo")
            var slotInfo = CK_SLOT_INFO()
            check(f.C_GetSlotInfo!(CK_SLOT_ID(reader.byte() % 2), &slotInfo), "C_GetSlotInfo")
            var mechanismInfo = CK_MECHANISM_INFO()
            check(f.C_GetMechanismInfo!(0, ulong(), &mechanismInfo), "C_GetMechanismInfo")
            // The two-call list convention with a short (exactly sized) list.
            let capacity = Int(reader.byte() % 16)
            let list = ExactBuffer(count: capacity * MemoryLayout<CK_MECHANISM_TYPE>.size)
            var count = CK_ULONG(capacity)
            let rv = check(f.C_GetMechanismList!(0, UnsafeMutableRawPointer(list.pointer).assumingMemoryBound(to: CK_MECHANISM_TYPE.self), &count),
                           "C_GetMechanismList")
            if rv == CK_RV(CKR_OK) { require(count <= CK_ULONG(capacity), "C_GetMechanismList wrote \(count) into \(capacity)") }
            let wrong = session &+ 1 &+ CK_SESSION_HANDLE(reader.byte())
            let wrongRV = check(f.C_FindObjectsFinal!(wrong), "C_FindObjectsFinal(wrong session)")
            require(wrongRV == CK_RV(CKR_SESSION_HANDLE_INVALID), "a call on session \(wrong) gave 0x\(String(wrongRV, radix: 16))")
        case 17:  // C_GenerateRandom into exactly the length asked for, or NULL with a length
            let n = Int(reader.byte())
            if n & 0x80 != 0 {
                check(f.C_GenerateRandom!(session, nil, CK_ULONG(n)), "C_GenerateRandom(NULL)")
            } else {
                let buffer = ExactBuffer(count: n)
                check(f.C_GenerateRandom!(session, buffer.pointer, CK_ULONG(n)), "C_GenerateRandom")
            }
        case 18:  // close the session and open another (flags from the input)
            check(f.C_CloseSession!(session), "C_CloseSession")
            forgetOperations()
            let flags = CK_FLAGS(reader.byte() & 0x06)   // CKF_RW_SESSION, CKF_SERIAL_SESSION or neither
            if openSession(flags: flags) != CK_RV(CKR_OK) {
                _ = openSession(flags: CK_FLAGS(CKF_SERIAL_SESSION))
            }
        default:  // C_CloseAllSessions on a slot, then a new session
            check(f.C_CloseAllSessions!(CK_SLOT_ID(reader.byte() % 2)), "C_CloseAllSessions")
            forgetOperations()
            _ = openSession(flags: CK_FLAGS(CKF_SERIAL_SESSION))
        }
    }
}

// MARK: - C_Initialize variants

/// C_Initialize in the variant `variant` (0-6) of §5.4, checking the result it must give; a
/// variant that must fail is followed by C_Initialize(NULL). Ends initialised.
func initialize(_ f: CK_FUNCTION_LIST, variant: UInt8) {
    var args = CK_C_INITIALIZE_ARGS()
    let expected: CK_RV
    switch variant {
    case 0:
        let rv = f.C_Initialize!(nil)
        require(rv == CK_RV(CKR_OK), "C_Initialize(NULL) gave 0x\(String(rv, radix: 16))")
        return
    case 1: args.flags = CK_FLAGS(CKF_OS_LOCKING_OK); expected = CK_RV(CKR_OK)
    case 2: expected = CK_RV(CKR_OK)
    case 3:   // the host's mutex functions only: the module cannot use them
        args.CreateMutex = { _ in CK_RV(CKR_OK) }
        args.DestroyMutex = { _ in CK_RV(CKR_OK) }
        args.LockMutex = { _ in CK_RV(CKR_OK) }
        args.UnlockMutex = { _ in CK_RV(CKR_OK) }
        expected = CK_RV(CKR_CANT_LOCK)
    case 4:   // the host's functions or the OS's: the module takes the OS's
        args.CreateMutex = { _ in CK_RV(CKR_OK) }
        args.DestroyMutex = { _ in CK_RV(CKR_OK) }
        args.LockMutex = { _ in CK_RV(CKR_OK) }
        args.UnlockMutex = { _ in CK_RV(CKR_OK) }
        args.flags = CK_FLAGS(CKF_OS_LOCKING_OK)
        expected = CK_RV(CKR_OK)
    case 5:   // some of the four
        args.CreateMutex = { _ in CK_RV(CKR_OK) }
        args.UnlockMutex = { _ in CK_RV(CKR_OK) }
        args.flags = CK_FLAGS(CKF_OS_LOCKING_OK)
        expected = CK_RV(CKR_ARGUMENTS_BAD)
    default:
        args.flags = CK_FLAGS(CKF_OS_LOCKING_OK)
        args.pReserved = UnsafeMutableRawPointer(bitPattern: 0x1000)
        expected = CK_RV(CKR_ARGUMENTS_BAD)
    }
    // Exactly the structure's size (the module must not read past it).
    let buffer = ExactBuffer(withUnsafeBytes(of: args) { Array($0) })
    let rv = f.C_Initialize!(UnsafeMutableRawPointer(buffer.pointer))
    require(rv == expected, "C_Initialize variant \(variant) gave 0x\(String(rv, radix: 16)), not 0x\(String(expected, radix: 16))")
    if rv != CK_RV(CKR_OK) {
        let again = f.C_Initialize!(nil)
        require(again == CK_RV(CKR_OK), "C_Initialize(NULL) after a refused one gave 0x\(String(again, radix: 16))")
    }
}

/// Property 5 after C_Finalize: every implemented entry point says CKR_CRYPTOKI_NOT_INITIALIZED.
func checkFinalized(_ f: CK_FUNCTION_LIST, session: CK_SESSION_HANDLE) {
    var count: CK_ULONG = 1
    var slot: CK_SLOT_ID = 0
    var info = CK_INFO()
    var slotInfo = CK_SLOT_INFO()
    var tokenInfo = CK_TOKEN_INFO()
    var mechanismInfo = CK_MECHANISM_INFO()
    var mechanismType = CK_MECHANISM_TYPE(0)
    var handle: CK_SESSION_HANDLE = 0
    var sessionInfo = CK_SESSION_INFO()
    var mechanism = CK_MECHANISM(mechanism: CK_MECHANISM_TYPE(CKM_RSA_PKCS), pParameter: nil, ulParameterLen: 0)
    var attribute = CK_ATTRIBUTE(type: CK_ATTRIBUTE_TYPE(CKA_CLASS), pValue: nil, ulValueLen: 0)
    var object: CK_OBJECT_HANDLE = 0
    let bytes = ExactBuffer(count: pkcs11ModulusByteCount)
    var length = CK_ULONG(pkcs11ModulusByteCount)
    let results: [(String, CK_RV)] = [
        ("C_Finalize", f.C_Finalize!(nil)),
        ("C_GetInfo", f.C_GetInfo!(&info)),
        ("C_GetSlotList", f.C_GetSlotList!(CK_BBOOL(CK_TRUE), &slot, &count)),
        ("C_GetSlotInfo", f.C_GetSlotInfo!(0, &slotInfo)),
        ("C_GetTokenInfo", f.C_GetTokenInfo!(0, &tokenInfo)),
        ("C_GetMechanismList", f.C_GetMechanismList!(0, &mechanismType, &count)),
        ("C_GetMechanismInfo", f.C_GetMechanismInfo!(0, CK_MECHANISM_TYPE(CKM_RSA_PKCS), &mechanismInfo)),
        ("C_OpenSession", f.C_OpenSession!(0, CK_FLAGS(CKF_SERIAL_SESSION), nil, nil, &handle)),
        ("C_CloseSession", f.C_CloseSession!(session)),
        ("C_CloseAllSessions", f.C_CloseAllSessions!(0)),
        ("C_GetSessionInfo", f.C_GetSessionInfo!(session, &sessionInfo)),
        ("C_Login", f.C_Login!(session, CK_USER_TYPE(CKU_USER), bytes.pointer, 4)),
        ("C_Logout", f.C_Logout!(session)),
        ("C_GetAttributeValue", f.C_GetAttributeValue!(session, 1, &attribute, 1)),
        ("C_FindObjectsInit", f.C_FindObjectsInit!(session, &attribute, 1)),
        ("C_FindObjects", f.C_FindObjects!(session, &object, 1, &count)),
        ("C_FindObjectsFinal", f.C_FindObjectsFinal!(session)),
        ("C_DecryptInit", f.C_DecryptInit!(session, &mechanism, 2)),
        ("C_Decrypt", f.C_Decrypt!(session, bytes.pointer, CK_ULONG(bytes.count), bytes.pointer, &length)),
        ("C_SignInit", f.C_SignInit!(session, &mechanism, 2)),
        ("C_Sign", f.C_Sign!(session, bytes.pointer, 16, bytes.pointer, &length)),
        ("C_SignUpdate", f.C_SignUpdate!(session, bytes.pointer, 16)),
        ("C_SignFinal", f.C_SignFinal!(session, bytes.pointer, &length)),
        ("C_VerifyInit", f.C_VerifyInit!(session, &mechanism, 1)),
        ("C_Verify", f.C_Verify!(session, bytes.pointer, 16, bytes.pointer, CK_ULONG(bytes.count))),
        ("C_VerifyUpdate", f.C_VerifyUpdate!(session, bytes.pointer, 16)),
        ("C_VerifyFinal", f.C_VerifyFinal!(session, bytes.pointer, CK_ULONG(bytes.count))),
        ("C_GenerateRandom", f.C_GenerateRandom!(session, bytes.pointer, 16)),
    ]
    for (name, rv) in results {
        require(rv == CK_RV(CKR_CRYPTOKI_NOT_INITIALIZED), "\(name) after C_Finalize gave 0x\(String(rv, radix: 16))")
    }
}

/// libFuzzer's entry: one input, one C_Initialize ... C_Finalize cycle (see the top of the file).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPKCS11(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    guard input.count <= 4096 else { return 0 }
    let stores = pkcs11Stores
    var run = PKCS11Run(input)
    let f = run.f
    let setup = run.reader.byte()
    // The module reads RSAKIT_STORE at C_Initialize.
    setenv("RSAKIT_STORE", setup & 0x80 != 0 ? stores.protected : stores.plain, 1)
    initialize(f, variant: run.reader.byte() % 7)
    let again = f.C_Initialize!(nil)
    require(again == CK_RV(CKR_CRYPTOKI_ALREADY_INITIALIZED), "a second C_Initialize gave 0x\(String(again, radix: 16))")

    // C_GetSlotList: the count, then the list into exactly that many slots.
    var slotCount: CK_ULONG = 0
    var rv = run.check(f.C_GetSlotList!(CK_BBOOL(CK_TRUE), nil, &slotCount), "C_GetSlotList(NULL)")
    require(rv == CK_RV(CKR_OK) && slotCount == 1, "C_GetSlotList gave 0x\(String(rv, radix: 16)), \(slotCount) slots")
    let slots = ExactBuffer(count: Int(slotCount) * MemoryLayout<CK_SLOT_ID>.size)
    rv = run.check(f.C_GetSlotList!(CK_BBOOL(CK_TRUE), UnsafeMutableRawPointer(slots.pointer).assumingMemoryBound(to: CK_SLOT_ID.self), &slotCount),
                   "C_GetSlotList")
    require(rv == CK_RV(CKR_OK), "C_GetSlotList with room for the slot gave 0x\(String(rv, radix: 16))")

    let flags = CK_FLAGS(CKF_SERIAL_SESSION) | (setup & 0x40 != 0 ? CK_FLAGS(CKF_RW_SESSION) : 0)
    rv = run.openSession(flags: flags)
    require(rv == CK_RV(CKR_OK), "C_OpenSession gave 0x\(String(rv, radix: 16))")
    var steps = 0
    while !run.reader.isEmpty, steps < 64 {
        run.step()
        steps += 1
    }
    rv = f.C_Finalize!(nil)
    require(rv == CK_RV(CKR_OK), "C_Finalize gave 0x\(String(rv, radix: 16))")
    checkFinalized(f, session: run.session)
    return 0
}
