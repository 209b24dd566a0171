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
    ///   A key in the TPM made without a PIN runs its operations in the TPM; a key on another
    ///   token, or in the TPM behind a PIN (which the store's PIN is not), gives
    ///   CKR_KEY_FUNCTION_NOT_PERMITTED. A system keychain key is not loaded: the agent is
    ///   asked at each operation.
    mutating func privateKey(_ handle: CK_OBJECT_HANDLE) throws -> P11PrivateKey {
        guard let object = objects.objects[handle] else { throw P11Error(CK_RV(CKR_KEY_HANDLE_INVALID)) }
        switch object.kind {
        case let .privateKey(itemID, _):
            guard canUsePrivateObjects else { throw P11Error(CK_RV(CKR_USER_NOT_LOGGED_IN)) }
            let store = try openStore()
            if let tokenKey = try store.tokenKey(itemID: itemID) {
                guard tokenKey.reference.isTPM, !tokenKey.reference.requiresPIN else {
                    throw P11Error(CK_RV(CKR_KEY_FUNCTION_NOT_PERMITTED))
                }
                return .tpm(tokenKey)
            }
            return .memory(try store.privateKey(itemID: itemID))
        case let .systemPrivateKey(accessGroup, tag, publicKey):
            guard let systemSocketPath else { throw P11Error(CK_RV(CKR_KEY_HANDLE_INVALID)) }
            return .system(
                RSASystemKeychainClient(socketPath: systemSocketPath), accessGroup: accessGroup, tag: tag,
                publicKey: publicKey)
        case .publicKey, .certificate:
            throw P11Error(CK_RV(CKR_KEY_TYPE_INCONSISTENT))
        }
    }

    /// The public key of object `handle` (a public or a private key object) for verification.
    func publicKey(_ handle: CK_OBJECT_HANDLE) throws -> RSAPublicKey {
        guard let object = objects.objects[handle], canUsePrivateObjects || !object.isPrivate else {
            throw P11Error(CK_RV(CKR_KEY_HANDLE_INVALID))
        }
        switch object.kind {
        case let .publicKey(key), let .privateKey(_, key), let .systemPrivateKey(_, _, key): return key
        case .certificate: throw P11Error(CK_RV(CKR_KEY_TYPE_INCONSISTENT))
        }
    }
}

/// What C_SignUpdate / C_VerifyUpdate gathered: the running hash of a hash-and-sign mechanism,
/// else the bytes (a DigestInfo or a digest, at most k of them).
struct P11SignatureInput {
    let scheme: P11SignatureScheme
    /// k: the most bytes a CKM_RSA_PKCS or CKM_RSA_PKCS_PSS input can have.
    let modulusByteCount: Int
    private var hasher: RSAHasher?
    private(set) var buffer: [UInt8] = []
    /// Whether C_*Update ran (then only C_*Final may end the operation).
    private(set) var isMultiPart = false

    init(scheme: P11SignatureScheme, modulusByteCount: Int) {
        self.scheme = scheme
        self.modulusByteCount = modulusByteCount
    }

    /// Hash, or keep, the next part.
    /// - Throws: CKR_DATA_LEN_RANGE when kept bytes would pass k.
    mutating func update(_ part: [UInt8]) throws {
        isMultiPart = true
        if case let .hashAndSign(hash, _) = scheme {
            if hasher == nil { hasher = RSAHasher(algorithm: hash) }
            hasher?.update(part)
        } else {
            guard buffer.count + part.count <= modulusByteCount else { throw P11Error(CK_RV(CKR_DATA_LEN_RANGE)) }
            buffer += part
        }
    }

    /// The message digest of a hash-and-sign mechanism after the parts (of no parts: H("")).
    var finalDigest: (RSAHashAlgorithm, [UInt8], RSASignaturePadding)? {
        guard case let .hashAndSign(hash, padding) = scheme else { return nil }
        return (hash, hasher?.finalize() ?? hash.hash([]), padding)
    }
}

extension P11SignOperation {
    /// The signature of `data` in one step (C_Sign), exactly k bytes.
    func sign(_ data: [UInt8]) throws -> [UInt8] {
        switch input.scheme {
        case .pkcs1DigestInfo:
            return try key.signature(forDigestInfo: data)
        case let .pssDigest(hash, padding):
            return try key.signature(forDigest: data, hash: hash, padding: padding)
        case let .hashAndSign(hash, padding):
            return try key.signature(for: data, hash: hash, padding: padding)
        }
    }

    /// C_SignFinal: the signature over the parts so far.
    func final() throws -> [UInt8] {
        if let (hash, digest, padding) = input.finalDigest {
            return try key.signature(forDigest: digest, hash: hash, padding: padding)
        }
        return try sign(input.buffer)
    }
}

extension P11VerifyOperation {
    /// Whether `signature` is valid for `data` (C_Verify).
    func verify(_ data: [UInt8], signature: [UInt8]) -> Bool {
        switch input.scheme {
        case .pkcs1DigestInfo:
            return key.isValidSignature(signature, forDigestInfo: data)
        case let .pssDigest(hash, padding):
            return key.isValidSignature(signature, forDigest: data, hash: hash, padding: padding)
        case let .hashAndSign(hash, padding):
            return key.isValidSignature(signature, for: data, hash: hash, padding: padding)
        }
    }

    /// C_VerifyFinal.
    func final(signature: [UInt8]) -> Bool {
        if let (hash, digest, padding) = input.finalDigest {
            return key.isValidSignature(signature, forDigest: digest, hash: hash, padding: padding)
        }
        return verify(input.buffer, signature: signature)
    }
}
