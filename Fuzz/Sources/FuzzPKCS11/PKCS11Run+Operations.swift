// FuzzPKCS11's operations: one opcode byte and its operands each (see the top of FuzzPKCS11.swift).
#if canImport(Glibc)
import Glibc
#endif
internal import CP11Kit
import RSAKit
import FuzzSupport

extension PKCS11Run {
    /// One operation from the input.
    mutating func step() {
        // Locals, so that the closures of `output` do not capture `self` while it changes.
        let f = self.f
        let session = self.session
        let op = reader.byte() % 20
        switch op {
        case 0:  // C_FindObjectsInit
            var template = template()
            var count = CK_ULONG(template.attributes.count)
            let nullTemplate = reader.byte() & 1 == 1
            if nullTemplate { count = count == 0 ? ulong() : count }
            _ = template.attributes.withUnsafeMutableBufferPointer { attributes in
                check(
                    f.C_FindObjectsInit!(session, nullTemplate ? nil : attributes.baseAddress, count),
                    "C_FindObjectsInit")
            }
            withExtendedLifetime(template.keepAlive) {}
        case 1:  // C_FindObjects
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
        case 2:  // C_FindObjectsFinal
            check(f.C_FindObjectsFinal!(session), "C_FindObjectsFinal")
        case 3:  // C_GetAttributeValue
            let object = handle()
            let template = template()
            _ = getAttributes(object, template, session: session)
        case 4:  // C_SignInit
            var mechanism = mechanism()
            let key = handle()
            let rv = check(f.C_SignInit!(session, &mechanism.mechanism, key), "C_SignInit")
            withExtendedLifetime(mechanism.keepAlive) {}
            if rv == CK_RV(CKR_OK) {
                signMechanism = mechanism.mechanism.mechanism
                signPSS = mechanism.pss
                signParts = []
            }
        case 5:  // C_Sign
            let message = ExactBuffer(data())
            let (rv, signature) = output("C_Sign", exactLength: true) { out, length in
                f.C_Sign!(session, message.pointer, CK_ULONG(message.count), out, length)
            }
            if rv == CK_RV(CKR_OK), let signature {
                checkSignature(signature, mechanism: signMechanism, message: message.bytes(message.count), "C_Sign")
            }
        case 6:  // C_SignUpdate
            let part = ExactBuffer(data())
            let rv = check(f.C_SignUpdate!(session, part.pointer, CK_ULONG(part.count)), "C_SignUpdate")
            if rv == CK_RV(CKR_OK) { signParts += part.bytes(part.count) }
        case 7:  // C_SignFinal
            let (rv, signature) = output("C_SignFinal", exactLength: true) { out, length in
                f.C_SignFinal!(session, out, length)
            }
            if rv == CK_RV(CKR_OK), let signature {
                checkSignature(signature, mechanism: signMechanism, message: signParts, "C_SignFinal")
            }
        case 8:  // C_VerifyInit
            var mechanism = mechanism()
            let key = handle()
            let rv = check(f.C_VerifyInit!(session, &mechanism.mechanism, key), "C_VerifyInit")
            withExtendedLifetime(mechanism.keepAlive) {}
            if rv == CK_RV(CKR_OK) { verifyMechanism = mechanism.mechanism.mechanism }
        case 9:  // C_Verify: a signature from the input, or a valid CKM_RSA_PKCS one made by RSAKit
            let message = data()
            let makeValid = reader.byte() & 1 == 1 && message.count <= pkcs11ModulusByteCount - 11
            let signatureBytes: [UInt8]
            if makeValid {
                guard
                    let made = try? fuzzPrivateKey1024.signature(
                        forDigestInfo: message, random: FuzzRandomSource(seed: 1))
                else {
                    unreachable("RSAKit cannot sign \(message.count) bytes")
                }
                signatureBytes = made
            } else {
                signatureBytes = data()
            }
            let messageBuffer = ExactBuffer(message)
            let signature = ExactBuffer(signatureBytes)
            let rv = check(
                f.C_Verify!(
                    session, messageBuffer.pointer, CK_ULONG(message.count), signature.pointer,
                    CK_ULONG(signature.count)), "C_Verify")
            if makeValid, verifyMechanism == CK_MECHANISM_TYPE(CKM_RSA_PKCS) {
                require(
                    rv != CK_RV(CKR_SIGNATURE_INVALID) && rv != CK_RV(CKR_SIGNATURE_LEN_RANGE),
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
                let hash = pkcs11Hash(oaep.hash), let mgf1 = pkcs11MGF1Hash(oaep.mgf)
            {
                padding = .oaep(RSAOAEPParameters(hash: hash, mgf1Hash: mgf1, label: oaep.label))
            }
            // Too long a message for the padding: the input's bytes go as they are.
            let valid: [UInt8]? =
                wantValid
                ? padding.flatMap {
                    try? fuzzPrivateKey1024.publicKey.encrypt(message, padding: $0, random: FuzzRandomSource(seed: 2))
                } : nil
            let encrypted = ExactBuffer(valid ?? message)
            let (rv, plaintext) = output("C_Decrypt", exactLength: false) { out, length in
                f.C_Decrypt!(session, encrypted.pointer, CK_ULONG(encrypted.count), out, length)
            }
            if valid != nil {
                // The operation, when there is one, is of the last successful C_DecryptInit.
                require(
                    rv != CK_RV(CKR_ENCRYPTED_DATA_INVALID) && rv != CK_RV(CKR_ENCRYPTED_DATA_LEN_RANGE),
                    "C_Decrypt refused a valid ciphertext (mechanism 0x\(String(decryptMechanism ?? 0, radix: 16))): "
                        + "0x\(String(rv, radix: 16))"
                )
                if rv == CK_RV(CKR_OK), let plaintext {
                    require(plaintext == message, "C_Decrypt of a valid ciphertext gave other bytes")
                }
            }
        case 14:  // C_Login
            let userType: CK_USER_TYPE =
                switch reader.byte() % 5 {
                case 0: CK_USER_TYPE(CKU_SO)
                case 1, 2: CK_USER_TYPE(CKU_USER)
                case 3: CK_USER_TYPE(CKU_CONTEXT_SPECIFIC)
                default: ulong()
                }
            let shape = reader.byte() % 4
            let pin = ExactBuffer(shape == 0 ? Array(pkcs11PIN.utf8) : shape == 1 ? [] : data())
            let rv =
                shape == 3
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
            let rv = check(
                f.C_GetMechanismList!(
                    0, UnsafeMutableRawPointer(list.pointer).assumingMemoryBound(to: CK_MECHANISM_TYPE.self), &count),
                "C_GetMechanismList")
            if rv == CK_RV(CKR_OK) {
                require(count <= CK_ULONG(capacity), "C_GetMechanismList wrote \(count) into \(capacity)")
            }
            let wrong = session &+ 1 &+ CK_SESSION_HANDLE(reader.byte())
            let wrongRV = check(f.C_FindObjectsFinal!(wrong), "C_FindObjectsFinal(wrong session)")
            require(
                wrongRV == CK_RV(CKR_SESSION_HANDLE_INVALID),
                "a call on session \(wrong) gave 0x\(String(wrongRV, radix: 16))")
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
            let flags = CK_FLAGS(reader.byte() & 0x06)  // CKF_RW_SESSION, CKF_SERIAL_SESSION or neither
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
