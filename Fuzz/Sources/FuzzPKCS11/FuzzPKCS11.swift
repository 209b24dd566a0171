// The PKCS#11 module's C_* entry points, called through its own CK_FUNCTION_LIST (the C table
// of Sources/CRSAKitPKCS11) as a hostile host would call them. The module (the root package's
// `_RSAKitPKCS11` product) is compiled into this harness, so it carries coverage and
// AddressSanitizer.
//
// Each input is one session against one of two fixed stores made once per process in a
// private mkdtemp folder (0700): "plain" (unprotected) and "protected" (passphrase "fuzz",
// Argon2id at libsodium's minimum cost, so that wrong PINs stay cheap). Each holds the
// 1024-bit fuzz key pair (FuzzSupport) and a self-signed certificate for it.
//
// Input: byte 0 picks the store (bit 7) and the session flags (bit 6: CKF_RW_SESSION); byte 1
// picks a C_Initialize variant (no arguments, CK_C_INITIALIZE_ARGS with and without
// CKF_OS_LOCKING_OK, with all, some or no mutex functions, a non-NULL pReserved). Then
// C_GetSlotList (both calls), C_OpenSession, and up to 64 operations until the input ends,
// each one opcode byte and its operands (`PKCS11Run.step`, PKCS11Run+Operations.swift):
// C_FindObjectsInit / C_FindObjects / C_FindObjectsFinal with templates built from the
// input, C_GetAttributeValue with hostile templates, C_SignInit / C_Sign / C_SignUpdate /
// C_SignFinal, C_VerifyInit / C_Verify / C_VerifyUpdate / C_VerifyFinal, C_DecryptInit /
// C_Decrypt with mechanisms and parameters from the input (wrong ulParameterLen, NULL
// pParameter, unknown types), the two-call output convention (NULL buffer, short buffer, NULL
// length), C_Login / C_Logout with any PIN, the info calls, C_GenerateRandom, closing and
// reopening the session. Then C_Finalize.
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
//    the private parts (CKA_PRIVATE_EXPONENT ... CKA_COEFFICIENT) are never returned; a
//    length a size query states is delivered into a buffer of exactly that length; the
//    modulus, public exponent, CKA_ID and the certificate's CKA_VALUE are the right bytes.
// 4. A signature from C_Sign or C_SignFinal is k bytes and, for CKM_RSA_PKCS,
//    CKM_SHAx_RSA_PKCS and the PSS mechanisms (with their parameters), verifies with the
//    public key through RSAKit; C_Verify with CKM_RSA_PKCS never calls an RSAKit-made valid
//    signature invalid; C_Decrypt never refuses RSAKit's ciphertext for the operation's
//    mechanism (PKCS#1 v1.5, OAEP with its parameters) and gives the message back.
// 5. C_Initialize follows §5.4 for each argument variant, a second C_Initialize gives
//    CKR_CRYPTOKI_ALREADY_INITIALIZED, and after C_Finalize every implemented entry point
//    gives CKR_CRYPTOKI_NOT_INITIALIZED. (The functions the module does not offer answer
//    CKR_FUNCTION_NOT_SUPPORTED whether or not it is initialised: they are C stubs that do
//    not look at the module's state, which §5.1 allows.)
#if canImport(Glibc)
import Glibc
#endif
internal import CP11Kit
import CRSAKitPKCS11
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
    guard let made = mkdtemp(&template) else { unreachable("mkdtemp failed") }  // mode 0700
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
    case (CK_OBJECT_CLASS(CKO_PUBLIC_KEY), CK_ATTRIBUTE_TYPE(CKA_MODULUS)),
        (CK_OBJECT_CLASS(CKO_PRIVATE_KEY), CK_ATTRIBUTE_TYPE(CKA_MODULUS)):
        return key.modulus
    case (CK_OBJECT_CLASS(CKO_PUBLIC_KEY), CK_ATTRIBUTE_TYPE(CKA_PUBLIC_EXPONENT)),
        (CK_OBJECT_CLASS(CKO_PRIVATE_KEY), CK_ATTRIBUTE_TYPE(CKA_PUBLIC_EXPONENT)):
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
    case 3:  // the host's mutex functions only: the module cannot use them
        args.CreateMutex = { _ in CK_RV(CKR_OK) }
        args.DestroyMutex = { _ in CK_RV(CKR_OK) }
        args.LockMutex = { _ in CK_RV(CKR_OK) }
        args.UnlockMutex = { _ in CK_RV(CKR_OK) }
        expected = CK_RV(CKR_CANT_LOCK)
    case 4:  // the host's functions or the OS's: the module takes the OS's
        args.CreateMutex = { _ in CK_RV(CKR_OK) }
        args.DestroyMutex = { _ in CK_RV(CKR_OK) }
        args.LockMutex = { _ in CK_RV(CKR_OK) }
        args.UnlockMutex = { _ in CK_RV(CKR_OK) }
        args.flags = CK_FLAGS(CKF_OS_LOCKING_OK)
        expected = CK_RV(CKR_OK)
    case 5:  // some of the four
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
    require(
        rv == expected,
        "C_Initialize variant \(variant) gave 0x\(String(rv, radix: 16)), not 0x\(String(expected, radix: 16))")
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
        ("C_GenerateRandom", f.C_GenerateRandom!(session, bytes.pointer, 16))
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
    require(
        again == CK_RV(CKR_CRYPTOKI_ALREADY_INITIALIZED), "a second C_Initialize gave 0x\(String(again, radix: 16))")

    // C_GetSlotList: the count, then the list into exactly that many slots.
    var slotCount: CK_ULONG = 0
    var rv = run.check(f.C_GetSlotList!(CK_BBOOL(CK_TRUE), nil, &slotCount), "C_GetSlotList(NULL)")
    require(rv == CK_RV(CKR_OK) && slotCount == 1, "C_GetSlotList gave 0x\(String(rv, radix: 16)), \(slotCount) slots")
    let slots = ExactBuffer(count: Int(slotCount) * MemoryLayout<CK_SLOT_ID>.size)
    rv = run.check(
        f.C_GetSlotList!(
            CK_BBOOL(CK_TRUE), UnsafeMutableRawPointer(slots.pointer).assumingMemoryBound(to: CK_SLOT_ID.self),
            &slotCount),
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
