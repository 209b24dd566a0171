// Signing, verification and decryption through RSAKit (PKCS#11 v2.40 §5.10-5.12): which RSAKit
// call each mechanism makes. RSAKit's private operation is blinded, constant-time and checked
// by re-encryption; the module adds nothing to it.
internal import CP11Kit
import RSAKit

extension P11ModuleState {
    /// The private key of object `handle` for an operation that needs `attribute` (CKA_SIGN or
    /// CKA_DECRYPT), loaded from the store now.
    /// - Throws: CKR_KEY_HANDLE_INVALID; CKR_KEY_TYPE_INCONSISTENT (not a private key);
    ///   CKR_USER_NOT_LOGGED_IN (a protected store before C_Login).
    mutating func privateKey(_ handle: CK_OBJECT_HANDLE) throws -> RSAPrivateKey {
        guard let object = objects.objects[handle] else { throw P11Error(CK_RV(CKR_KEY_HANDLE_INVALID)) }
        guard case let .privateKey(tag, _) = object.kind else { throw P11Error(CK_RV(CKR_KEY_TYPE_INCONSISTENT)) }
        guard canUsePrivateObjects else { throw P11Error(CK_RV(CKR_USER_NOT_LOGGED_IN)) }
        return try openStore().privateKey(tag: tag)
    }

    /// The public key of object `handle` (a public or a private key object) for verification.
    func publicKey(_ handle: CK_OBJECT_HANDLE) throws -> RSAPublicKey {
        guard let object = objects.objects[handle], canUsePrivateObjects || !object.isPrivate else {
            throw P11Error(CK_RV(CKR_KEY_HANDLE_INVALID))
        }
        switch object.kind {
        case let .publicKey(key), let .privateKey(_, key): return key
        case .certificate: throw P11Error(CK_RV(CKR_KEY_TYPE_INCONSISTENT))
        }
    }
}

extension P11SignOperation {
    /// The signature of `data` in one step (C_Sign), exactly k bytes.
    func sign(_ data: [UInt8]) throws -> [UInt8] {
        switch scheme {
        case .pkcs1DigestInfo:
            return try key.signature(forDigestInfo: data)
        case let .pssDigest(hash, padding):
            return try key.signature(forDigest: data, hash: hash, padding: padding)
        case let .hashAndSign(hash, padding):
            return try key.signature(for: data, hash: hash, padding: padding)
        }
    }

    /// C_SignUpdate: hash, or keep, the next part.
    mutating func update(_ part: [UInt8]) throws {
        isMultiPart = true
        if hasher == nil, let hash = scheme.messageHash { hasher = RSAHasher(algorithm: hash) }
        if hasher != nil {
            hasher?.update(part)
        } else {
            // CKM_RSA_PKCS / CKM_RSA_PKCS_PSS take a DigestInfo or a digest: at most k bytes.
            guard buffer.count + part.count <= key.modulusByteCount else { throw P11Error(CK_RV(CKR_DATA_LEN_RANGE)) }
            buffer += part
        }
    }

    /// C_SignFinal: the signature over the parts so far.
    func final() throws -> [UInt8] {
        if let hasher, case let .hashAndSign(hash, padding) = scheme {
            return try key.signature(forDigest: hasher.finalize(), hash: hash, padding: padding)
        }
        if case let .hashAndSign(hash, padding) = scheme {
            return try key.signature(for: [], hash: hash, padding: padding)
        }
        return try sign(buffer)
    }
}

extension P11VerifyOperation {
    /// Whether `signature` is valid for `data` (C_Verify).
    func verify(_ data: [UInt8], signature: [UInt8]) -> Bool {
        switch scheme {
        case .pkcs1DigestInfo:
            return key.isValidSignature(signature, forDigestInfo: data)
        case let .pssDigest(hash, padding):
            return key.isValidSignature(signature, forDigest: data, hash: hash, padding: padding)
        case let .hashAndSign(hash, padding):
            return key.isValidSignature(signature, for: data, hash: hash, padding: padding)
        }
    }

    /// C_VerifyUpdate: hash, or keep, the next part.
    mutating func update(_ part: [UInt8]) throws {
        isMultiPart = true
        if hasher == nil, let hash = scheme.messageHash { hasher = RSAHasher(algorithm: hash) }
        if hasher != nil {
            hasher?.update(part)
        } else {
            guard buffer.count + part.count <= key.modulusByteCount else { throw P11Error(CK_RV(CKR_DATA_LEN_RANGE)) }
            buffer += part
        }
    }

    /// C_VerifyFinal.
    func final(signature: [UInt8]) -> Bool {
        if case let .hashAndSign(hash, padding) = scheme {
            let digest = hasher?.finalize() ?? hash.hash([])
            return key.isValidSignature(signature, forDigest: digest, hash: hash, padding: padding)
        }
        return verify(buffer, signature: signature)
    }
}
