// Sealing of secrets at rest in a protected store.
//
//   store key  K  = 32 random bytes (getrandom), made by `store protect`
//   KEK           = Argon2id(passphrase, salt (16 random bytes), opslimit, memlimit)   RFC 9106
//   protection    = nonce || XChaCha20-Poly1305(KEK, K, AAD = "rsakit keychain store key 1" ||
//                   opslimit || memlimit || salt || key id)
//   secret S of an item = nonce || XChaCha20-Poly1305(K, S, AAD = item identity)
//
// The item identity is the class, the unique attributes (application tag; service and
// account; issuer and serial), the item id and, for keys, the fingerprint, each
// length-prefixed (4 bytes, big-endian): a sealed value copied onto another item's file does
// not open there. Changing the passphrase reseals K alone; the items do not change.

import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The key that opens the secrets of a protected store, while it is unlocked: held here, or
/// held by an agent that seals and opens on request (AgentWire), so it never enters this process.
package struct UnlockedStoreKey: Sendable {
    /// The random id recorded beside the sealed key (hex), to notice a store re-protected
    /// by another process with a new key.
    let keyID: String
    package let backing: Backing

    package enum Backing: Sendable {
        /// The 32 key bytes, in this process.
        case local(RSASecretBytes)
        /// An agent's socket, and the store path it serves.
        case agent(socketPath: String, storePath: String)
    }

    init(keyID: String, key: RSASecretBytes) {
        self.keyID = keyID
        backing = .local(key)
    }

    init(keyID: String, agentSocketPath: String, storePath: String) {
        self.keyID = keyID
        backing = .agent(socketPath: agentSocketPath, storePath: storePath)
    }

    /// The key bytes, only for a key held here (re-sealing the store key needs them).
    /// - Throws: `RSAError.keychainLocked` for an agent's key.
    func localKey() throws -> RSASecretBytes {
        guard case let .local(key) = backing else { throw RSAError.keychainLocked }
        return key
    }

    /// nonce || XChaCha20-Poly1305(K, secret, associatedData) || tag.
    /// - Throws: `RSAError.keychainLocked` when the agent is gone or locked (the caller then
    ///   falls back to a passphrase).
    func seal(_ secret: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        switch backing {
        case let .local(key):
            return secret.withUnsafeBytes { Sodium.seal($0, key: key, associatedData: associatedData) }
        case let .agent(socketPath, storePath):
            var reply = try Self.agentRequest(socketPath, .seal, [Array(storePath.utf8), secret, associatedData])
            defer { wipe(&reply) }
            return reply
        }
    }

    /// The secret, nil when it does not open under this key and identity.
    /// - Throws: `RSAError.keychainLocked` when the agent is gone or locked.
    func open(_ sealed: [UInt8], associatedData: [UInt8]) throws -> RSASecretBytes? {
        switch backing {
        case let .local(key):
            return Sodium.open(sealed, key: key, associatedData: associatedData)
        case let .agent(socketPath, storePath):
            do {
                var reply = try Self.agentRequest(socketPath, .open, [Array(storePath.utf8), sealed, associatedData])
                defer { wipe(&reply) }
                return RSASecretBytes(copying: reply)
            } catch AgentRefusal.doesNotOpen {
                return nil
            }
        }
    }

    private enum AgentRefusal: Error { case doesNotOpen }

    /// The first field of the agent's ok response.
    private static func agentRequest(_ socketPath: String, _ operation: AgentWire.Operation, _ fields: [[UInt8]]) throws
        -> [UInt8]
    {
        let response: AgentWire.Message
        do {
            response = try AgentWire.request(socketPath, AgentWire.Message(operation, fields))
        } catch {
            throw RSAError.keychainLocked  // the agent is gone: fall back to the passphrase
        }
        switch response.operation {
        case .ok where response.fields.count == 1:
            return response.fields[0]
        case .error
        where response.fields.first.map({ String(decoding: $0, as: UTF8.self) })
            == "the sealed secret does not open under the store key":
            throw AgentRefusal.doesNotOpen
        default:
            throw RSAError.keychainLocked
        }
    }
}

internal enum StoreSealing {
    /// The associated data of one item's sealed secret.
    static func associatedData(kind: String, identity: [String], itemID: String) -> [UInt8] {
        var out = Array("rsakit keychain item 1".utf8)
        for field in [kind] + identity + [itemID] {
            let bytes = Array(field.utf8)
            let n = UInt32(bytes.count)
            out += [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
            out += bytes
        }
        return out
    }

    /// The associated data of the sealed store key.
    static func storeKeyAssociatedData(_ record: StoreProtectionRecord) -> [UInt8] {
        Array(
            ("rsakit keychain store key "
                + "1\u{0}\(record.opsLimit)\u{0}\(record.memoryLimitByteCount)\u{0}\(record.salt)\u{0}\(record.keyID)")
                .utf8)
    }

    /// Seal `secret` with the store key. - Throws: as ``UnlockedStoreKey/seal(_:associatedData:)``.
    static func seal(_ secret: [UInt8], key: UnlockedStoreKey, associatedData: [UInt8]) throws -> [UInt8] {
        try key.seal(secret, associatedData: associatedData)
    }

    /// Open a sealed secret, or nil when it does not open under this key and identity.
    /// - Throws: as ``UnlockedStoreKey/open(_:associatedData:)``.
    static func open(_ sealed: [UInt8], key: UnlockedStoreKey, associatedData: [UInt8]) throws -> RSASecretBytes? {
        try key.open(sealed, associatedData: associatedData)
    }
}

/// The file `<store>/protection` (``StoreLayout/protectionName``): present exactly when the
/// store is protected.
internal struct StoreProtectionRecord: Codable, Equatable {
    static let magicLine = "rsakit keychain protection 1"

    var format: Int = 1
    /// "argon2id13".
    var kdf: String = "argon2id13"
    var opsLimit: UInt64
    var memoryLimitByteCount: UInt64
    /// Base64 of the 16-byte salt.
    var salt: String
    /// 16 hex digits, random, new at each `protect`.
    var keyID: String
    /// Base64 of nonce || ciphertext || tag of the 32-byte store key.
    var sealedStoreKey: String
    /// "YYYY-MM-DDTHH:MM:SS.mmmZ" of the last passphrase change.
    var passphraseDate: String
    /// The store key sealed to this machine's TPM too (`store protect --tpm`), or nil: see
    /// ``StoreTPMSeal``. A record without it reads and writes as before.
    var tpm: StoreTPMSeal? = nil

    var parameters: RSAArgon2idParameters {
        get throws { try RSAArgon2idParameters(opsLimit: opsLimit, memoryLimitByteCount: memoryLimitByteCount) }
    }

    func encode() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((Self.magicLine + "\n").utf8) + Array(try encoder.encode(self)) + [0x0A]
    }

    static func decode(_ bytes: [UInt8], path: String) throws -> StoreProtectionRecord {
        let magic = Array((magicLine + "\n").utf8)
        guard bytes.starts(with: magic),
            let record = try? JSONDecoder().decode(StoreProtectionRecord.self, from: Data(bytes[magic.count...])),
            record.format == 1, record.kdf == "argon2id13"
        else {
            throw RSAError.storeIOError(path: path, reason: "the protection record is damaged or of an unknown format")
        }
        return record
    }

    /// A new record sealing `storeKey` under a key derived from `passphrase`.
    static func make(storeKey: UnlockedStoreKey, passphrase: RSASecretBytes, parameters: RSAArgon2idParameters) throws
        -> StoreProtectionRecord
    {
        let salt = SystemRandomSource().bytes(Sodium.saltByteCount)
        var record = StoreProtectionRecord(
            opsLimit: parameters.opsLimit, memoryLimitByteCount: parameters.memoryLimitByteCount,
            salt: Base64.encode(salt), keyID: storeKey.keyID, sealedStoreKey: "",
            passphraseDate: StoreItemRecord.formatDate(milliseconds: StoreItemRecord.nowMilliseconds()))
        let kek = try Sodium.argon2id(passphrase: passphrase, salt: salt, parameters: parameters)
        let sealed = try storeKey.localKey().withUnsafeBytes {
            Sodium.seal($0, key: kek, associatedData: StoreSealing.storeKeyAssociatedData(record))
        }
        record.sealedStoreKey = Base64.encode(sealed)
        return record
    }

    /// The store key, opened with `passphrase`.
    ///
    /// - Throws: `RSAError.wrongPassphrase`; `RSAError.invalidKDFParameters`.
    func open(passphrase: RSASecretBytes) throws -> UnlockedStoreKey {
        guard let salt = try? Base64.decode(Array(self.salt.utf8), strict: true), salt.count == Sodium.saltByteCount,
            let sealed = try? Base64.decode(Array(sealedStoreKey.utf8), strict: true)
        else {
            throw RSAError.keychainProtection(reason: "the protection record is damaged")
        }
        let kek = try Sodium.argon2id(passphrase: passphrase, salt: salt, parameters: try parameters)
        guard let key = Sodium.open(sealed, key: kek, associatedData: StoreSealing.storeKeyAssociatedData(self)),
            key.count == Sodium.keyByteCount
        else {
            throw RSAError.wrongPassphrase
        }
        return UnlockedStoreKey(keyID: keyID, key: key)
    }

    /// A fresh random store key with a new key id.
    static func newStoreKey() -> UnlockedStoreKey {
        let key = RSASecretBytes(zeroedCount: Sodium.keyByteCount)
        key.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
        return UnlockedStoreKey(keyID: StoreHex.encode(SystemRandomSource().bytes(8)), key: key)
    }
}
