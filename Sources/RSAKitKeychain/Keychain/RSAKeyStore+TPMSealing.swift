// The store key sealed to this machine's TPM (`rsakit store protect --tpm`), the counterpart of
// iOS's data-protection keychain: a protected store opens on this machine without its
// passphrase, and never on another. The passphrase stays as the recovery path: a cleared or
// replaced TPM loses its seal, never the store.
//
//   TPM key       an RSA-2048 key made in the TPM for this store, usage decrypt with RSAES-OAEP
//                 SHA-256 fixed in the TPM (genpair --tpm's path); its blobs are in the record
//   W             = 32 random bytes (getrandom)
//   wrapped       = RSAES-OAEP-SHA-256(TPM key's public key, W)               RFC 8017 §7.1
//   sealed        = nonce || XChaCha20-Poly1305(W, K, AAD = "rsakit keychain store key tpm 1"
//                   || 0 || key id || 0 || TPM key's fingerprint (hex))
// where K is the store key. Unsealing is one OAEP decryption in the TPM, then the AEAD check.

import RSAKitCore
import RSAKitPKI

/// The TPM's seal of the store key, kept in the protection record beside the passphrase's.
internal struct StoreTPMSeal: Codable, Equatable {
    /// The TPM key (its usage and blobs, ``RSATokenReference/tpmKey``).
    var key: RSATokenReference
    /// Base64 of the TPM key's public key, SubjectPublicKeyInfo DER.
    var publicKey: String
    /// Base64 of RSAES-OAEP-SHA-256 of W.
    var wrappedKey: String
    /// Base64 of nonce || ciphertext || tag of K under W.
    var sealedStoreKey: String

    static func associatedData(keyID: String, fingerprint: RSAKeyFingerprint) -> [UInt8] {
        Array("rsakit keychain store key tpm 1\u{0}\(keyID)\u{0}\(fingerprint.hexString)".utf8)
    }

    static let padding = RSAEncryptionPadding.oaep(RSAOAEPParameters(hash: .sha256, mgf1Hash: .sha256, label: []))
}

extension RSAKeyStore {
    /// Seal this protected store's key to the machine's TPM as well, so that
    /// ``unlockWithTPM(pin:)`` opens it without the passphrase (on this machine only). The
    /// passphrase keeps opening it: it is the recovery path when the TPM is cleared or the
    /// store is moved. Makes an RSA-2048 decryption key (RSAES-OAEP SHA-256) in the TPM
    /// (``RSATokenKey/generateInTPM(_:bits:usage:pin:)``) and wraps a random 32-byte key with
    /// it (RSAES-OAEP-SHA-256), which seals the store key (XChaCha20-Poly1305). A second call
    /// replaces the seal.
    ///
    /// - Parameters: `passphrase` the store's passphrase (checked first; the TPM is not
    ///   touched when it is wrong); `pin` a PIN for the TPM key, or nil for none.
    /// - Throws: `RSAError.keychainProtection` when the store is not protected;
    ///   `RSAError.wrongPassphrase`; the TPM's errors (``RSATokenKey/generateInTPM(_:bits:usage:pin:)``),
    ///   after which the store is unchanged; `RSAError.storeIOError`.
    public func sealStoreKeyToTPM(passphrase: RSASecretBytes, pin: RSASecretBytes?) throws {
        guard let record = try withReadLock({ try readProtection() }) else {
            throw RSAError.keychainProtection(reason: "the store is not protected")
        }
        let storeKey = try record.open(passphrase: passphrase)
        let tpmKey = try RSATokenKey.generateInTPM(tpmConfiguration, bits: 2048, usage: .decryptOAEP, pin: pin)
        let wrapping = RSASecretBytes(zeroedCount: Sodium.keyByteCount)
        wrapping.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
        var wrappingBytes = wrapping.bytes
        defer { wipe(&wrappingBytes) }
        let wrapped = try tpmKey.publicKey.encrypt(wrappingBytes, padding: StoreTPMSeal.padding)
        let sealed = try storeKey.localKey().withUnsafeBytes {
            Sodium.seal(
                $0, key: wrapping,
                associatedData: StoreTPMSeal.associatedData(
                    keyID: record.keyID, fingerprint: tpmKey.publicKey.fingerprint))
        }
        let seal = StoreTPMSeal(
            key: tpmKey.reference, publicKey: Base64.encode(tpmKey.publicKey.derRepresentation),
            wrappedKey: Base64.encode(wrapped), sealedStoreKey: Base64.encode(sealed))
        try withWriteTransaction { tx in
            guard var current = try readProtection(), current.keyID == record.keyID else {
                throw RSAError.keychainProtection(reason: "the store's protection changed meanwhile")
            }
            current.tpm = seal
            try tx.stageFile(StoreLayout.protectionName, contents: try current.encode())
        }
        unlocked.withLock { $0 = storeKey }
    }

    /// Open the store key with the TPM (one RSAES-OAEP decryption there), as
    /// ``unlock(passphrase:)`` does with the passphrase. Does nothing on an unprotected store.
    ///
    /// - Parameter pin: the TPM key's PIN (ignored, and may be nil, for a key made without one).
    /// - Throws: `RSAError.keychainProtection` when the store key is not sealed to a TPM;
    ///   `RSAError.tpmKeyLost` when the TPM no longer opens it (cleared, replaced, or another
    ///   machine: unlock with the passphrase); the TPM's other errors; `RSAError.storeIOError`.
    public func unlockWithTPM(pin: RSASecretBytes?) throws {
        guard let record = try withReadLock({ try readProtection() }) else { return }
        guard let seal = record.tpm else {
            throw RSAError.keychainProtection(reason: "the store key is not sealed to a TPM")
        }
        guard let spki = try? Base64.decode(Array(seal.publicKey.utf8), strict: true),
            let publicKey = try? RSAPublicKey(derRepresentation: spki),
            let wrapped = try? Base64.decode(Array(seal.wrappedKey.utf8), strict: true),
            let sealed = try? Base64.decode(Array(seal.sealedStoreKey.utf8), strict: true)
        else {
            throw RSAError.keychainProtection(reason: "the protection record's TPM seal is damaged")
        }
        let key = RSATokenKey(reference: seal.key, publicKey: publicKey, tpm: tpmConfiguration)
        var wrapping: [UInt8]
        do {
            wrapping = try key.decrypt(
                wrapped, padding: StoreTPMSeal.padding, pin: pin ?? RSASecretBytes(zeroedCount: 0))
        } catch RSAError.decryptionFailed {
            throw RSAError.tpmKeyLost(reason: "the TPM does not open the store key's seal")
        }
        let kek = RSASecretBytes(consuming: &wrapping)
        guard kek.count == Sodium.keyByteCount,
            let storeKey = Sodium.open(
                sealed, key: kek,
                associatedData: StoreTPMSeal.associatedData(keyID: record.keyID, fingerprint: publicKey.fingerprint)),
            storeKey.count == Sodium.keyByteCount
        else {
            throw RSAError.tpmKeyLost(reason: "the store key's TPM seal does not open")
        }
        unlocked.withLock { $0 = UnlockedStoreKey(keyID: record.keyID, key: storeKey) }
    }

    /// Whether the TPM key that seals the store key needs a PIN (nil: not sealed to a TPM).
    /// Reads one small file.
    /// - Throws: `RSAError.storeIOError`.
    public func storeKeyTPMSealRequiresPIN() throws -> Bool? {
        try withReadLock { try readProtection() }?.tpm.map { $0.key.requiresPIN }
    }
}
