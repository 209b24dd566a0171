// The token over the system keychain (RSAKIT_PKCS11_SYSTEM=1 in the host's environment): the
// slot shows what the system agent allows the calling Unix user, asked at each
// C_FindObjectsInit (RSASystemKeychainClient.objects(): public keys, the public halves of
// private keys, certificates), and C_Sign / C_Decrypt send the digest or the ciphertext to
// the agent, which signs or decrypts with a key that never enters this process. The agent's
// rules decide every request by the kernel's record of this process's uid and groups
// (SO_PEERCRED), so the module neither checks nor caches any right: a user allowed no group
// sees no token, and a rule removed while a host runs refuses its next signature.
//
// Login: the token reports CKF_PROTECTED_AUTHENTICATION_PATH and not CKF_LOGIN_REQUIRED, and
// its private keys are not CKA_PRIVATE. There is no PIN to ask for: the authentication is the
// uid the kernel gives the agent, which a PIN typed into the host could only weaken (it would
// be one more secret in the service's configuration). Hosts that log in anyway (pkcs11-tool
// --login, libp11 with a PIN in the URI) see a protected authentication path, pass a NULL
// PIN, and C_Login succeeds without any check; hosts that never log in (curl with a bare
// pkcs11: URI, GnuTLS) find and use the keys directly.
internal import CP11Kit
import RSAKit

extension P11ModuleState {
    /// Whether C_Initialize found RSAKIT_PKCS11_SYSTEM=1: the slot is the system keychain.
    var isSystemToken: Bool { systemSocketPath != nil }

    /// The token is present: the store opens, or the system agent lists what this user may
    /// use (asked once; C_FindObjectsInit asks again).
    /// - Throws: CKR_TOKEN_NOT_PRESENT when the store does not open, when no system agent
    ///   answers or when it allows this user no access group.
    mutating func openToken() throws {
        guard let systemSocketPath else {
            _ = try openStore()
            return
        }
        if systemObjects != nil { return }
        do {
            systemObjects = try RSASystemKeychainClient(socketPath: systemSocketPath).objects()
        } catch {
            throw P11Error(CK_RV(CKR_TOKEN_NOT_PRESENT))
        }
    }

    /// Re-read the objects from the store or the system agent (C_FindObjectsInit).
    /// - Throws: CKR_TOKEN_NOT_PRESENT; RSAKit's store errors.
    mutating func reloadObjects() throws {
        if isSystemToken {
            systemObjects = nil
            try openToken()
            objects.reload(fromSystem: systemObjects ?? [])
        } else {
            let store = try openStore()
            try objects.reload(from: store, privateKeysArePrivate: isProtected)
        }
    }
}

extension P11ObjectTable {
    /// The objects of the system keychain's listing: each public key item, each private key
    /// item (and its public half when no public item holds the same key) and each certificate,
    /// labelled as for a store. Handles are by group and tag (keys) or group, label and
    /// fingerprint (certificates), stable across re-reads.
    mutating func reload(fromSystem listing: [RSASystemKeychainObject]) {
        var fresh: [CK_OBJECT_HANDLE: P11Object] = [:]
        var publicFingerprints = Set<RSAKeyFingerprint>()
        for object in listing {
            if case let .publicKey(key) = object.kind { publicFingerprints.insert(key.fingerprint) }
        }
        for object in listing {
            let label = object.label.isEmpty ? object.tag : object.label
            let name = object.accessGroup + "\t" + object.tag
            switch object.kind {
            case let .publicKey(key):
                fresh[handle(for: "system-public:" + name)] = .publicKey(key, label: label)
            case let .privateKey(key):
                fresh[handle(for: "system-private:" + name)] = .privateKey(
                    kind: .systemPrivateKey(accessGroup: object.accessGroup, tag: object.tag, publicKey: key),
                    publicKey: key, label: label, isPrivate: false)
                if !publicFingerprints.contains(key.fingerprint) {
                    fresh[handle(for: "system-public-of-private:" + name)] = .publicKey(key, label: label)
                }
            case let .certificate(certificate):
                let fingerprint = RSAHashAlgorithm.sha256.hash(certificate.derRepresentation)
                let key =
                    "system-certificate:" + object.accessGroup + "\t" + object.label + "\t"
                    + fingerprint.map { String($0, radix: 16) }.joined()
                fresh[handle(for: key)] = .certificate(certificate, label: object.label)
            }
        }
        replaceObjects(fresh)
    }
}

/// The private key an operation uses: loaded from the store into this process, a key in the
/// TPM made without a PIN (its operations run there, through tpm2-tss), or held by the
/// system agent (every operation one request to it).
enum P11PrivateKey {
    /// A key of the store, in this process (RSAKit's blinded, constant-time private operation).
    case memory(RSAPrivateKey)
    /// A key in the TPM made without a PIN.
    case tpm(RSATokenKey)
    /// A key the system agent holds: `tag` in `accessGroup`, whose public half is `publicKey`.
    case system(RSASystemKeychainClient, accessGroup: String, tag: String, publicKey: RSAPublicKey)

    /// Each TPM operation opens its own TPM context (parent key and session); a host may call
    /// from several threads, so the module's TPM operations run one at a time.
    private static let tpmLock = RSAPThreadMutex(())

    /// k, the modulus length in bytes: the length of every signature.
    var modulusByteCount: Int {
        switch self {
        case let .memory(key): return key.modulusByteCount
        case let .tpm(key): return key.publicKey.modulusByteCount
        case let .system(_, _, _, publicKey): return publicKey.modulusByteCount
        }
    }

    /// The agent's scheme name for `padding`: it signs PKCS#1 v1.5, and PSS with MGF1 over the
    /// message hash and a salt of the digest's length (what TLS 1.3 and the usual hosts ask).
    /// - Throws: CKR_MECHANISM_PARAM_INVALID for another PSS salt or MGF1 hash.
    private static func agentSchemeIsPSS(_ padding: RSASignaturePadding, hash: RSAHashAlgorithm) throws -> Bool {
        switch padding {
        case .pkcs1v15: return false
        case .pss(.digestLength): return true
        case let .pss(.byteCount(n)) where n == hash.digestByteCount: return true
        case let .pssMGF1(mgf1, .digestLength) where mgf1 == hash: return true
        case let .pssMGF1(mgf1, .byteCount(n)) where mgf1 == hash && n == hash.digestByteCount: return true
        default: throw P11Error(CK_RV(CKR_MECHANISM_PARAM_INVALID))
        }
    }

    /// CKM_RSA_PKCS: sign a DigestInfo. For the agent, the DigestInfo must be one of a hash
    /// it knows (its prefix and length), which it re-encodes identically.
    /// - Throws: CKR_DATA_INVALID for another DigestInfo (system keys);
    ///   CKR_KEY_FUNCTION_NOT_PERMITTED for a TPM key and anything but the DigestInfo of a
    ///   SHA-1 or SHA-2 digest (which would be raw RSA); RSAKit's errors.
    func signature(forDigestInfo digestInfo: [UInt8]) throws -> [UInt8] {
        switch self {
        case let .memory(key):
            return try key.signature(forDigestInfo: digestInfo)
        case let .tpm(key):
            // TPM2_Sign with RSASSA over the DigestInfo's digest (TokenSigner parses it).
            return try Self.tpmLock.withLock { _ in
                let signer = try TokenSigner(key: key, pin: RSASecretBytes(zeroedCount: 0))
                defer { signer.close() }
                return try signer.signature(forDigestInfo: digestInfo)
            }
        case let .system(client, accessGroup, tag, _):
            do {
                return try client.signature(forDigestInfo: digestInfo, tag: tag, accessGroup: accessGroup)
            } catch RSAError.invalidAttribute {
                throw P11Error(CK_RV(CKR_DATA_INVALID))
            }
        }
    }

    /// Sign a digest made with `hash` (CKM_RSA_PKCS_PSS, and the end of hash-and-sign).
    func signature(forDigest digest: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding) throws -> [UInt8] {
        switch self {
        case let .memory(key):
            return try key.signature(forDigest: digest, hash: hash, padding: padding)
        case let .tpm(key):
            return try Self.tpmLock.withLock { _ in
                try key.signature(forDigest: digest, hash: hash, padding: padding, pin: RSASecretBytes(zeroedCount: 0))
            }
        case let .system(client, accessGroup, tag, _):
            return try client.signature(
                forDigest: digest, hash: hash, pss: Self.agentSchemeIsPSS(padding, hash: hash),
                tag: tag, accessGroup: accessGroup)
        }
    }

    /// Hash `message` here and sign the digest (CKM_SHAx_RSA_PKCS, CKM_SHAx_RSA_PKCS_PSS).
    func signature(for message: [UInt8], hash: RSAHashAlgorithm, padding: RSASignaturePadding) throws -> [UInt8] {
        switch self {
        case let .memory(key): return try key.signature(for: message, hash: hash, padding: padding)
        case let .tpm(key):
            return try Self.tpmLock.withLock { _ in
                try key.signature(for: message, hash: hash, padding: padding, pin: RSASecretBytes(zeroedCount: 0))
            }
        case .system: return try signature(forDigest: hash.hash(message), hash: hash, padding: padding)
        }
    }

    /// Decrypt (CKM_RSA_PKCS, CKM_RSA_PKCS_OAEP). The agent decrypts PKCS#1 v1.5, and OAEP
    /// with one hash for OAEP and MGF1 and an empty label.
    /// - Throws: CKR_MECHANISM_PARAM_INVALID for other OAEP parameters (system keys);
    ///   RSAKit's opaque decryption failure.
    func decrypt(_ ciphertext: [UInt8], padding: RSAEncryptionPadding) throws -> [UInt8] {
        switch self {
        case let .memory(key):
            return try key.decrypt(ciphertext, padding: padding)
        case let .tpm(key):
            return try Self.tpmLock.withLock { _ in
                try key.decrypt(ciphertext, padding: padding, pin: RSASecretBytes(zeroedCount: 0))
            }
        case let .system(client, accessGroup, tag, _):
            var oaepHash: RSAHashAlgorithm?
            switch padding {
            case .pkcs1v15: oaepHash = nil
            case let .oaep(parameters):
                guard parameters.mgf1Hash == parameters.hash, parameters.label.isEmpty else {
                    throw P11Error(CK_RV(CKR_MECHANISM_PARAM_INVALID))
                }
                oaepHash = parameters.hash
            }
            return try client.decrypt(ciphertext, tag: tag, oaepHash: oaepHash, accessGroup: accessGroup).bytes
        }
    }
}
