// FuzzPKCS11's run: one input's session, the operands read from the input, and the calls whose
// results are checked in detail (attributes, output buffers, signatures).
#if canImport(Glibc)
import Glibc
#endif
internal import CP11Kit
import RSAKit
import FuzzSupport

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
        let n: Int =
            switch length {
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
            type =
                kind == 1
                ? CK_MECHANISM_TYPE(CKM_RSA_PKCS_PSS)
                : pkcs11HashAndSignPSS[Int(reader.byte()) % pkcs11HashAndSignPSS.count]
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
            value.source =
                source < 0x80 ? CK_RSA_PKCS_OAEP_SOURCE_TYPE(CKZ_DATA_SPECIFIED) : (source < 0xF0 ? 0 : ulong())
            switch reader.byte() % 3 {
            case 0: break
            case 1: value.ulSourceDataLen = ulong()  // NULL pSourceData with a length
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
            let buffer = ExactBuffer(
                Array(parameter.prefix(n)) + [UInt8](repeating: 0, count: max(0, n - parameter.count)))
            mechanism.pParameter = UnsafeMutableRawPointer(buffer.pointer)
            mechanism.ulParameterLen = CK_ULONG(n)
            keepAlive.append(buffer)
        case 2:
            mechanism.ulParameterLen = parameter.isEmpty ? ulong() : CK_ULONG(parameter.count)
        default:
            break
        }
        // Only parameters passed as the standard says are the ones the module used.
        return FuzzMechanism(
            mechanism: mechanism, keepAlive: keepAlive, pss: mode == 0 ? pss : nil, oaep: mode == 0 ? oaep : nil)
    }

    // MARK: Calls with checks

    /// C_GetAttributeValue of `template` on `object`, with property 3.
    mutating func getAttributes(_ object: CK_OBJECT_HANDLE, _ input: FuzzTemplate, session: CK_SESSION_HANDLE) -> CK_RV
    {
        var template = input
        let objectClass = self.objectClass(object)
        let rv = template.attributes.withUnsafeMutableBufferPointer { attributes in
            check(
                f.C_GetAttributeValue!(session, object, attributes.baseAddress, CK_ULONG(attributes.count)),
                "C_GetAttributeValue")
        }
        let perAttribute: Set<CK_RV> = Set(
            [CKR_OK, CKR_ATTRIBUTE_SENSITIVE, CKR_ATTRIBUTE_TYPE_INVALID, CKR_BUFFER_TOO_SMALL].map { CK_RV($0) })
        guard perAttribute.contains(rv), !template.attributes.isEmpty else { return rv }
        for (index, attribute) in template.attributes.enumerated() {
            let given = template.lengths[index]
            if rv == CK_RV(CKR_OK) {
                require(
                    attribute.ulValueLen != unavailable,
                    "C_GetAttributeValue gave CKR_OK with an unavailable attribute "
                        + "0x\(String(attribute.type, radix: 16))"
                )
            }
            if attribute.pValue != nil, attribute.ulValueLen != unavailable {
                require(
                    attribute.ulValueLen <= given,
                    "C_GetAttributeValue copied \(attribute.ulValueLen) bytes into \(given)")
            }
            let secret =
                pkcs11PrivateParts.contains(attribute.type)
                || (objectClass == CK_OBJECT_CLASS(CKO_PRIVATE_KEY) && attribute.type == CK_ATTRIBUTE_TYPE(CKA_VALUE))
            if secret {
                require(
                    attribute.ulValueLen == unavailable,
                    "C_GetAttributeValue revealed sensitive attribute 0x\(String(attribute.type, radix: 16)) (length "
                        + "\(attribute.ulValueLen))"
                )
            }
            guard attribute.ulValueLen != unavailable, let objectClass,
                let expected = pkcs11ExpectedValue(attribute.type, objectClass: objectClass)
            else { continue }
            require(
                attribute.ulValueLen == CK_ULONG(expected.count),
                "attribute 0x\(String(attribute.type, radix: 16)) has length \(attribute.ulValueLen), not "
                    + "\(expected.count)"
            )
            if let buffer = template.keepAlive[index] {
                require(
                    buffer.bytes(expected.count) == expected,
                    "attribute 0x\(String(attribute.type, radix: 16)) has another value")
            }
        }
        // §5.2's two calls: a length the module stated fits a buffer of exactly that length.
        for (index, attribute) in template.attributes.enumerated()
        where attribute.pValue == nil && attribute.ulValueLen != unavailable && attribute.ulValueLen <= 1 << 16 {
            let buffer = ExactBuffer(count: Int(attribute.ulValueLen))
            var again = CK_ATTRIBUTE(
                type: attribute.type, pValue: UnsafeMutableRawPointer(buffer.pointer), ulValueLen: attribute.ulValueLen)
            let secondRV = check(
                f.C_GetAttributeValue!(session, object, &again, 1), "C_GetAttributeValue(stated length)")
            require(
                secondRV == CK_RV(CKR_OK) && again.ulValueLen == attribute.ulValueLen,
                "attribute \(index) (0x\(String(attribute.type, radix: 16))) of stated length "
                    + "\(attribute.ulValueLen) gave 0x\(String(secondRV, radix: 16)), length \(again.ulValueLen)"
            )
        }
        return rv
    }

    /// The CKA_CLASS of `object` as the module states it (nil when it does not).
    func objectClass(_ object: CK_OBJECT_HANDLE) -> CK_OBJECT_CLASS? {
        let buffer = ExactBuffer(count: MemoryLayout<CK_OBJECT_CLASS>.size)
        var attribute = CK_ATTRIBUTE(
            type: CK_ATTRIBUTE_TYPE(CKA_CLASS), pValue: UnsafeMutableRawPointer(buffer.pointer),
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
            require(
                shape >= 3 && length > CK_ULONG(capacity),
                "\(name) said CKR_BUFFER_TOO_SMALL with \(length) for a buffer of \(capacity)")
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
                require(
                    key.isValidSignature(signature, forDigest: message, hash: hash, padding: padding),
                    "\(name) CKM_RSA_PKCS_PSS signature does not verify (\(hash), MGF1 \(mgf1), salt \(pss.saltLength))"
                )
            } else if pkcs11HashAndSignPSS.contains(mechanism) {
                require(
                    key.isValidSignature(signature, for: message, hash: hash, padding: padding),
                    "\(name) PSS signature of mechanism 0x\(String(mechanism, radix: 16)) does not verify")
            }
        }
        if mechanism == CK_MECHANISM_TYPE(CKM_RSA_PKCS) {
            require(
                key.isValidSignature(signature, forDigestInfo: message),
                "\(name) CKM_RSA_PKCS signature does not verify")
        } else if let mechanism, let hash = pkcs11HashAndSign[mechanism] {
            require(
                key.isValidSignature(signature, for: message, hash: hash, padding: .pkcs1v15),
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
}
