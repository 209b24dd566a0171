// The PKCS#11 client: the only Swift folder that imports p11-kit's header (CP11Kit). A module
// is loaded with dlopen by path, initialised, and finalised when the session ends; every
// operation is one session: find the token, log in, find or make the objects, run, log out.

import RSAKitCore
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
internal import CP11Kit

/// One logged-in read-write session on one token (internal: the public face is
/// ``RSATokenKey``). Closed, logged out and finalised by ``close()``.
internal final class TokenSession {
    let functions: UnsafeMutablePointer<CK_FUNCTION_LIST>
    let session: CK_SESSION_HANDLE
    /// The token's label and serial, without their space padding.
    let tokenLabel: String
    let tokenSerial: String
    private var loggedIn = false
    private var closed = false

    /// Load `uri`'s module, find its token (by label and serial when given; else the only
    /// token present), open a read-write session and log in as the user with `pin`.
    ///
    /// - Throws: `RSAError.tokenUnavailable` (module missing or refusing to initialise, no
    ///   matching token, several tokens and none named); `RSAError.tokenPINIncorrect`;
    ///   `RSAError.tokenOperationFailed` for any other return code.
    init(uri: RSATokenURI, pin: RSASecretBytes) throws {
        let list = try TokenSession.load(modulePath: uri.modulePath)
        functions = list
        do {
            var count: CK_ULONG = 0
            try TokenSession.check(list.pointee.C_GetSlotList(CK_BBOOL(CK_TRUE), nil, &count), "C_GetSlotList")
            var slots = [CK_SLOT_ID](repeating: 0, count: Int(count))
            try TokenSession.check(list.pointee.C_GetSlotList(CK_BBOOL(CK_TRUE), &slots, &count), "C_GetSlotList")
            var matches: [(CK_SLOT_ID, String, String)] = []
            for slot in slots.prefix(Int(count)) {
                var info = CK_TOKEN_INFO()
                guard list.pointee.C_GetTokenInfo(slot, &info) == CK_RV(CKR_OK) else { continue }
                // An uninitialised token (SoftHSM's spare slot) cannot hold keys.
                guard info.flags & CK_FLAGS(CKF_TOKEN_INITIALIZED) != 0 else { continue }
                let label = TokenSession.padded(info.label)
                let serial = TokenSession.padded(info.serialNumber)
                if let wanted = uri.tokenLabel, wanted != label { continue }
                if let wanted = uri.tokenSerial, wanted != serial { continue }
                matches.append((slot, label, serial))
            }
            guard let first = matches.first else {
                throw RSAError.tokenUnavailable(
                    reason: "no token" + (uri.tokenLabel.map { " labelled '\($0)'" } ?? "")
                        + (uri.tokenSerial.map { " with serial '\($0)'" } ?? "") + " in '\(uri.modulePath)'")
            }
            guard matches.count == 1 else {
                throw RSAError.tokenUnavailable(
                    reason: "\(matches.count) tokens match; name one with token= or serial= in the URI")
            }
            tokenLabel = first.1
            tokenSerial = first.2
            var opened: CK_SESSION_HANDLE = 0
            try TokenSession.check(
                list.pointee.C_OpenSession(first.0, CK_FLAGS(CKF_SERIAL_SESSION | CKF_RW_SESSION), nil, nil, &opened),
                "C_OpenSession")
            session = opened
        } catch {
            _ = list.pointee.C_Finalize(nil)
            throw error
        }
        do {
            let rv = pin.withUnsafeBytes { bytes in
                list.pointee.C_Login(
                    session, CK_USER_TYPE(CKU_USER),
                    UnsafeMutablePointer(mutating: bytes.baseAddress!.assumingMemoryBound(to: CK_UTF8CHAR.self)),
                    CK_ULONG(bytes.count))
            }
            switch rv {
            case CK_RV(CKR_OK), CK_RV(CKR_USER_ALREADY_LOGGED_IN): loggedIn = true
            case CK_RV(CKR_PIN_INCORRECT), CK_RV(CKR_PIN_INVALID), CK_RV(CKR_PIN_LEN_RANGE):
                throw RSAError.tokenPINIncorrect
            case CK_RV(CKR_PIN_LOCKED): throw RSAError.tokenUnavailable(reason: "the token's user PIN is locked")
            default: try TokenSession.check(rv, "C_Login")
            }
        } catch {
            close()
            throw error
        }
    }

    /// dlopen the module at `modulePath`, get its function list and C_Initialize it.
    /// - Throws: `RSAError.tokenUnavailable`.
    static func load(modulePath: String) throws -> UnsafeMutablePointer<CK_FUNCTION_LIST> {
        guard let handle = dlopen(modulePath, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "dlopen failed"
            throw RSAError.tokenUnavailable(reason: "cannot load PKCS#11 module '\(modulePath)': \(reason)")
        }
        // NOTE: the module stays loaded (no dlclose): some modules (SoftHSM among them) keep
        // atexit handlers or threads that outlive C_Finalize.
        guard let symbol = dlsym(handle, "C_GetFunctionList") else {
            throw RSAError.tokenUnavailable(reason: "'\(modulePath)' is not a PKCS#11 module (no C_GetFunctionList)")
        }
        typealias GetFunctionList =
            @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<CK_FUNCTION_LIST>?>?) -> CK_RV
        var list: UnsafeMutablePointer<CK_FUNCTION_LIST>?
        let getList = unsafeBitCast(symbol, to: GetFunctionList.self)
        guard getList(&list) == CK_RV(CKR_OK), let list else {
            throw RSAError.tokenUnavailable(reason: "the PKCS#11 module '\(modulePath)' gave no function list")
        }
        let initialised = list.pointee.C_Initialize(nil)
        guard initialised == CK_RV(CKR_OK) || initialised == CK_RV(CKR_CRYPTOKI_ALREADY_INITIALIZED) else {
            throw RSAError.tokenUnavailable(
                reason: "the PKCS#11 module '\(modulePath)' did not initialise (\(TokenSession.name(initialised)))")
        }
        return list
    }

    /// Log out, close the session, finalise the module. Errors are ignored (nothing to undo).
    func close() {
        // Once only: a second C_Finalize could end another session's module initialisation.
        guard !closed else { return }
        closed = true
        if loggedIn { _ = functions.pointee.C_Logout(session) }
        _ = functions.pointee.C_CloseSession(session)
        _ = functions.pointee.C_Finalize(nil)
        loggedIn = false
    }

    // MARK: Objects

    /// The handle of the one object of `objectClass` with CKA_ID `id`.
    /// - Throws: `RSAError.tokenUnavailable` when there is none.
    func findObject(class objectClass: CK_OBJECT_CLASS, id: [UInt8]) throws -> CK_OBJECT_HANDLE {
        var classValue = objectClass
        var idBytes = id
        let found: [CK_OBJECT_HANDLE] = try withUnsafeMutableBytes(of: &classValue) { classBytes in
            try idBytes.withUnsafeMutableBytes { idRaw in
                var template = [
                    CK_ATTRIBUTE(
                        type: CK_ATTRIBUTE_TYPE(CKA_CLASS), pValue: classBytes.baseAddress,
                        ulValueLen: CK_ULONG(classBytes.count)),
                    CK_ATTRIBUTE(
                        type: CK_ATTRIBUTE_TYPE(CKA_ID), pValue: idRaw.baseAddress, ulValueLen: CK_ULONG(idRaw.count))
                ]
                try TokenSession.check(
                    functions.pointee.C_FindObjectsInit(session, &template, CK_ULONG(template.count)),
                    "C_FindObjectsInit")
                defer { _ = functions.pointee.C_FindObjectsFinal(session) }
                var handles = [CK_OBJECT_HANDLE](repeating: 0, count: 2)
                var count: CK_ULONG = 0
                try TokenSession.check(functions.pointee.C_FindObjects(session, &handles, 2, &count), "C_FindObjects")
                return Array(handles.prefix(Int(count)))
            }
        }
        guard let handle = found.first else {
            throw RSAError.tokenUnavailable(
                reason:
                    "token '\(tokenLabel)' holds no "
                    + "\(objectClass == CK_OBJECT_CLASS(CKO_PRIVATE_KEY) ? "private" : "public") key with id "
                    + "\(id.map { String($0, radix: 16) }.joined())"
            )
        }
        return handle
    }

    /// The value of one attribute of `object` (two calls: length, then value).
    func attribute(_ type: CK_ATTRIBUTE_TYPE, of object: CK_OBJECT_HANDLE) throws -> [UInt8] {
        var template = CK_ATTRIBUTE(type: type, pValue: nil, ulValueLen: 0)
        try TokenSession.check(
            functions.pointee.C_GetAttributeValue(session, object, &template, 1), "C_GetAttributeValue")
        var value = [UInt8](repeating: 0, count: Int(template.ulValueLen))
        try value.withUnsafeMutableBytes { raw in
            template.pValue = raw.baseAddress
            try TokenSession.check(
                functions.pointee.C_GetAttributeValue(session, object, &template, 1), "C_GetAttributeValue")
        }
        return Array(value.prefix(Int(template.ulValueLen)))
    }

    /// The public key of `object` (a public or private key object): CKA_MODULUS and
    /// CKA_PUBLIC_EXPONENT, both public attributes.
    func publicKey(of object: CK_OBJECT_HANDLE) throws -> RSAPublicKey {
        try RSAPublicKey(
            modulus: attribute(CK_ATTRIBUTE_TYPE(CKA_MODULUS), of: object),
            publicExponent: attribute(CK_ATTRIBUTE_TYPE(CKA_PUBLIC_EXPONENT), of: object))
    }

    /// Attributes to pass in a template: owned byte buffers, pointed to while `body` runs.
    struct Template {
        var entries: [(CK_ATTRIBUTE_TYPE, [UInt8])] = []
        mutating func add(_ type: UInt, _ bytes: [UInt8]) { entries.append((CK_ATTRIBUTE_TYPE(type), bytes)) }
        mutating func add(_ type: UInt, bool: Bool) { add(type, [bool ? 1 : 0]) }
        mutating func add(_ type: UInt, ulong: UInt) {
            withUnsafeBytes(of: CK_ULONG(ulong)) { add(type, Array($0)) }
        }
        /// What every private key rsakit puts on a token has: a token object, private,
        /// sensitive, not extractable, for decryption and signing, with CKA_ID and CKA_LABEL.
        static func privateKey(id: [UInt8], label: String) -> Template {
            var t = Template()
            t.add(CKA_TOKEN, bool: true)
            t.add(CKA_PRIVATE, bool: true)
            t.add(CKA_SENSITIVE, bool: true)
            t.add(CKA_EXTRACTABLE, bool: false)
            t.add(CKA_DECRYPT, bool: true)
            t.add(CKA_SIGN, bool: true)
            t.add(CKA_ID, id)
            t.add(CKA_LABEL, Array(label.utf8))
            return t
        }

        /// The public half's common attributes: a token object for encryption and
        /// verification, with the private half's CKA_ID and CKA_LABEL.
        static func publicKey(id: [UInt8], label: String) -> Template {
            var t = Template()
            t.add(CKA_TOKEN, bool: true)
            t.add(CKA_ENCRYPT, bool: true)
            t.add(CKA_VERIFY, bool: true)
            t.add(CKA_ID, id)
            t.add(CKA_LABEL, Array(label.utf8))
            return t
        }

        /// Zero every value (a template that carried key components).
        mutating func wipeValues() { for i in entries.indices { wipe(&entries[i].1) } }

        func withAttributes<R>(_ body: (UnsafeMutablePointer<CK_ATTRIBUTE>, CK_ULONG) throws -> R) rethrows -> R {
            let buffers = entries.map {
                UnsafeMutableRawBufferPointer.allocate(byteCount: max($0.1.count, 1), alignment: 8)
            }
            defer {
                for buffer in buffers {
                    // Zeroed before it is freed: the import template holds private components.
                    explicit_bzero(buffer.baseAddress!, buffer.count)
                    buffer.deallocate()
                }
            }
            var attributes: [CK_ATTRIBUTE] = []
            for (i, entry) in entries.enumerated() {
                entry.1.withUnsafeBytes { buffers[i].copyMemory(from: $0) }
                attributes.append(
                    CK_ATTRIBUTE(type: entry.0, pValue: buffers[i].baseAddress, ulValueLen: CK_ULONG(entry.1.count)))
            }
            return try attributes.withUnsafeMutableBufferPointer { try body($0.baseAddress!, CK_ULONG($0.count)) }
        }
    }

    // MARK: Operations

    /// C_GenerateKeyPair with CKM_RSA_PKCS_KEY_PAIR_GEN: a token key pair, the private half
    /// sensitive and not extractable. - Returns: the public key read back from the token.
    func generateKeyPair(bits: Int, id: [UInt8], label: String) throws -> RSAPublicKey {
        var publicTemplate = Template.publicKey(id: id, label: label)
        publicTemplate.add(CKA_MODULUS_BITS, ulong: UInt(bits))
        publicTemplate.add(CKA_PUBLIC_EXPONENT, [0x01, 0x00, 0x01])
        let privateTemplate = Template.privateKey(id: id, label: label)
        var mechanism = CK_MECHANISM(
            mechanism: CK_MECHANISM_TYPE(CKM_RSA_PKCS_KEY_PAIR_GEN), pParameter: nil, ulParameterLen: 0)
        var publicHandle: CK_OBJECT_HANDLE = 0
        var privateHandle: CK_OBJECT_HANDLE = 0
        try publicTemplate.withAttributes { pub, pubCount in
            try privateTemplate.withAttributes { priv, privCount in
                try TokenSession.check(
                    functions.pointee.C_GenerateKeyPair(
                        session, &mechanism, pub, pubCount, priv, privCount, &publicHandle, &privateHandle),
                    "C_GenerateKeyPair")
            }
        }
        return try publicKey(of: publicHandle)
    }

    /// C_CreateObject for `key`'s private and public halves (CKA_SENSITIVE true,
    /// CKA_EXTRACTABLE false on the private one). The template copies are zeroed.
    func importKeyPair(_ key: RSAPrivateKey, id: [UInt8], label: String) throws {
        var privateTemplate = Template.privateKey(id: id, label: label)
        privateTemplate.add(CKA_CLASS, ulong: UInt(CKO_PRIVATE_KEY))
        privateTemplate.add(CKA_KEY_TYPE, ulong: UInt(CKK_RSA))
        privateTemplate.add(CKA_MODULUS, key.modulus)
        privateTemplate.add(CKA_PUBLIC_EXPONENT, key.publicExponent)
        privateTemplate.add(CKA_PRIVATE_EXPONENT, key.privateExponent)
        privateTemplate.add(CKA_PRIME_1, key.prime1)
        privateTemplate.add(CKA_PRIME_2, key.prime2)
        privateTemplate.add(CKA_EXPONENT_1, key.exponent1)
        privateTemplate.add(CKA_EXPONENT_2, key.exponent2)
        privateTemplate.add(CKA_COEFFICIENT, key.coefficient)
        defer { privateTemplate.wipeValues() }
        var publicTemplate = Template.publicKey(id: id, label: label)
        publicTemplate.add(CKA_CLASS, ulong: UInt(CKO_PUBLIC_KEY))
        publicTemplate.add(CKA_KEY_TYPE, ulong: UInt(CKK_RSA))
        publicTemplate.add(CKA_MODULUS, key.modulus)
        publicTemplate.add(CKA_PUBLIC_EXPONENT, key.publicExponent)
        var privateHandle: CK_OBJECT_HANDLE = 0
        var publicHandle: CK_OBJECT_HANDLE = 0
        try privateTemplate.withAttributes { attributes, count in
            try TokenSession.check(
                functions.pointee.C_CreateObject(session, attributes, count, &privateHandle), "C_CreateObject")
        }
        do {
            try publicTemplate.withAttributes { attributes, count in
                try TokenSession.check(
                    functions.pointee.C_CreateObject(session, attributes, count, &publicHandle), "C_CreateObject")
            }
        } catch {
            _ = functions.pointee.C_DestroyObject(session, privateHandle)
            throw error
        }
    }

    /// One single-part operation (C_SignInit + C_Sign or C_DecryptInit + C_Decrypt) with the
    /// private key `object`. - Returns: the output, at most `outputCapacity` bytes.
    func run(
        _ operation: Operation, mechanism: CK_MECHANISM_TYPE, parameter: [UInt8]?, object: CK_OBJECT_HANDLE,
        input: [UInt8], outputCapacity: Int
    ) throws -> [UInt8] {
        var parameterBytes = parameter ?? []
        return try parameterBytes.withUnsafeMutableBytes { raw in
            var mech = CK_MECHANISM(
                mechanism: mechanism, pParameter: parameter == nil ? nil : raw.baseAddress,
                ulParameterLen: CK_ULONG(parameter?.count ?? 0))
            var input = input
            var output = [UInt8](repeating: 0, count: outputCapacity)
            var length = CK_ULONG(outputCapacity)
            switch operation {
            case .sign:
                try TokenSession.check(functions.pointee.C_SignInit(session, &mech, object), "C_SignInit")
                try TokenSession.check(
                    functions.pointee.C_Sign(session, &input, CK_ULONG(input.count), &output, &length), "C_Sign")
            case .decrypt:
                try TokenSession.check(functions.pointee.C_DecryptInit(session, &mech, object), "C_DecryptInit")
                let rv = functions.pointee.C_Decrypt(session, &input, CK_ULONG(input.count), &output, &length)
                // One opaque error for every padding failure the token reports.
                if rv == CK_RV(CKR_ENCRYPTED_DATA_INVALID) || rv == CK_RV(CKR_ENCRYPTED_DATA_LEN_RANGE) {
                    wipe(&output)
                    throw RSAError.decryptionFailed
                }
                try TokenSession.check(rv, "C_Decrypt")
            }
            let result = Array(output.prefix(Int(length)))
            wipe(&output)
            return result
        }
    }

    package enum Operation { case sign, decrypt }

    // MARK: Return codes

    /// Throw `RSAError.tokenOperationFailed` (or the specific case) for a code other than CKR_OK.
    static func check(_ rv: CK_RV, _ function: String) throws {
        switch rv {
        case CK_RV(CKR_OK): return
        case CK_RV(CKR_TOKEN_NOT_PRESENT), CK_RV(CKR_DEVICE_REMOVED), CK_RV(CKR_SLOT_ID_INVALID),
            CK_RV(CKR_TOKEN_NOT_RECOGNIZED):
            throw RSAError.tokenUnavailable(reason: "the token is not present (\(function): \(name(rv)))")
        case CK_RV(CKR_USER_NOT_LOGGED_IN), CK_RV(CKR_PIN_INCORRECT): throw RSAError.tokenPINIncorrect
        default: throw RSAError.tokenOperationFailed(function: function, code: UInt(rv))
        }
    }

    /// The CKR_ name of a few common codes, else its hex value.
    static func name(_ rv: CK_RV) -> String {
        switch rv {
        case CK_RV(CKR_GENERAL_ERROR): return "CKR_GENERAL_ERROR"
        case CK_RV(CKR_FUNCTION_FAILED): return "CKR_FUNCTION_FAILED"
        case CK_RV(CKR_TOKEN_NOT_PRESENT): return "CKR_TOKEN_NOT_PRESENT"
        case CK_RV(CKR_MECHANISM_INVALID): return "CKR_MECHANISM_INVALID"
        default: return "0x" + String(UInt(rv), radix: 16)
        }
    }

    /// A space-padded fixed-size CK_UTF8CHAR field as a string.
    static func padded<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { raw in
            var bytes = Array(raw)
            while let last = bytes.last, last == 0x20 || last == 0 { bytes.removeLast() }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
