// The libsodium wrapper: the only Swift folder that imports CSodium.
//
// What the keychain takes from libsodium:
//   - Argon2id (crypto_pwhash, ALG_ARGON2ID13; RFC 9106) to derive a key-encryption key from
//     a passphrase;
//   - XChaCha20-Poly1305 IETF AEAD (crypto_aead_xchacha20poly1305_ietf_*;
//     draft-irtf-cfrg-xchacha) to seal secrets, with 24-byte random nonces;
//   - sodium_memzero for passphrase material and derived keys.
// Nonces, salts and keys come from SystemRandomSource (getrandom), not from randombytes.

import RSAKitCore
import RSAKitPKI
internal import CSodium

/// Argon2id cost parameters (libsodium's `opslimit` and `memlimit`), recorded in a protected
/// store so that it can be opened whatever the defaults become.
public struct RSAArgon2idParameters: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The number of passes over memory (libsodium `opslimit`), at least 1.
    public let opsLimit: UInt64
    /// The memory used, in bytes (libsodium `memlimit`), at least 8 KiB.
    public let memoryLimitByteCount: UInt64

    /// Parameters from explicit values.
    ///
    /// - Throws: `RSAError.invalidKDFParameters` outside libsodium's limits.
    public init(opsLimit: UInt64, memoryLimitByteCount: UInt64) throws {
        guard opsLimit >= UInt64(crypto_pwhash_opslimit_min()), opsLimit <= UInt64(crypto_pwhash_opslimit_max()),
            memoryLimitByteCount >= UInt64(crypto_pwhash_memlimit_min()),
            memoryLimitByteCount <= min(UInt64(crypto_pwhash_memlimit_max()), 1 << 42)
        else {
            throw RSAError.invalidKDFParameters(
                reason: "opslimit \(opsLimit) or memlimit \(memoryLimitByteCount) bytes is outside libsodium's limits")
        }
        self.opsLimit = opsLimit
        self.memoryLimitByteCount = memoryLimitByteCount
    }

    private init(unchecked opsLimit: Int, _ memoryLimit: Int) {
        self.opsLimit = UInt64(opsLimit)
        self.memoryLimitByteCount = UInt64(memoryLimit)
    }

    /// libsodium's INTERACTIVE parameters (2 passes, 64 MiB).
    public static var interactive: RSAArgon2idParameters {
        RSAArgon2idParameters(unchecked: crypto_pwhash_opslimit_interactive(), crypto_pwhash_memlimit_interactive())
    }
    /// libsodium's MODERATE parameters (3 passes, 256 MiB): the keychain's default.
    public static var moderate: RSAArgon2idParameters {
        RSAArgon2idParameters(unchecked: crypto_pwhash_opslimit_moderate(), crypto_pwhash_memlimit_moderate())
    }
    /// libsodium's SENSITIVE parameters (4 passes, 1 GiB).
    public static var sensitive: RSAArgon2idParameters {
        RSAArgon2idParameters(unchecked: crypto_pwhash_opslimit_sensitive(), crypto_pwhash_memlimit_sensitive())
    }

    /// "argon2id opslimit=3 memlimit=268435456".
    public var description: String { "argon2id opslimit=\(opsLimit) memlimit=\(memoryLimitByteCount)" }
}

/// The libsodium calls the keychain makes.
internal enum Sodium {
    /// sodium_init() once per process (thread-safe; idempotent in libsodium too).
    private static let initialised: Bool = sodium_init() >= 0

    private static func ready() {
        precondition(initialised, "rsakit: sodium_init failed")
    }

    /// Argon2id salt length (crypto_pwhash_SALTBYTES, 16).
    static let saltByteCount = Int(crypto_pwhash_saltbytes())
    /// XChaCha20-Poly1305 key length (32 bytes).
    static let keyByteCount = Int(crypto_aead_xchacha20poly1305_ietf_keybytes())
    /// XChaCha20-Poly1305 nonce length (24 bytes).
    static let nonceByteCount = Int(crypto_aead_xchacha20poly1305_ietf_npubbytes())
    /// Poly1305 tag length (16 bytes).
    static let tagByteCount = Int(crypto_aead_xchacha20poly1305_ietf_abytes())

    /// Zero `count` bytes at `pointer` (sodium_memzero: not optimised away).
    static func memzero(_ pointer: UnsafeMutableRawPointer, _ count: Int) {
        ready()
        sodium_memzero(pointer, count)
    }

    /// A 32-byte key derived from `passphrase` and the 16-byte `salt` with Argon2id v1.3.
    ///
    /// - Throws: `RSAError.invalidKDFParameters` when libsodium refuses (out of memory for
    ///   `memlimit`, for example).
    static func argon2id(passphrase: RSASecretBytes, salt: [UInt8], parameters: RSAArgon2idParameters) throws
        -> RSASecretBytes
    {
        ready()
        precondition(salt.count == saltByteCount)
        let key = RSASecretBytes(zeroedCount: keyByteCount)
        let status = key.withUnsafeMutableBytes { out in
            passphrase.withUnsafeBytes { pass in
                crypto_pwhash(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(out.count),
                    pass.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(pass.count),
                    salt, parameters.opsLimit, Int(parameters.memoryLimitByteCount),
                    crypto_pwhash_alg_argon2id13())
            }
        }
        guard status == 0 else {
            throw RSAError.invalidKDFParameters(
                reason: "argon2id failed with \(parameters.description) (not enough memory?)")
        }
        return key
    }

    /// Seal `plaintext` under the 32-byte `key`: nonce (24 random bytes from getrandom) ||
    /// XChaCha20-Poly1305 ciphertext || tag (16 bytes), authenticating `associatedData` too.
    static func seal(_ plaintext: UnsafeRawBufferPointer, key: RSASecretBytes, associatedData: [UInt8]) -> [UInt8] {
        ready()
        precondition(key.count == keyByteCount)
        var out = [UInt8](repeating: 0, count: nonceByteCount + plaintext.count + tagByteCount)
        out.withUnsafeMutableBytes { buffer in
            SystemRandomSource().fill(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<nonceByteCount]))
            let nonce = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: UInt8.self)
            let cipher = (buffer.baseAddress! + nonceByteCount).assumingMemoryBound(to: UInt8.self)
            var cipherLength: UInt64 = 0
            let status = key.withUnsafeBytes { k in
                crypto_aead_xchacha20poly1305_ietf_encrypt(
                    cipher, &cipherLength,
                    plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                    associatedData, UInt64(associatedData.count), nil, nonce,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            precondition(status == 0 && cipherLength == UInt64(plaintext.count + tagByteCount))
        }
        return out
    }

    /// Open what ``seal(_:key:associatedData:)`` made.
    ///
    /// - Returns: the plaintext, nil when the tag does not verify (wrong key, other
    ///   associated data, or modified bytes) or `sealed` is too short.
    static func open(_ sealed: [UInt8], key: RSASecretBytes, associatedData: [UInt8]) -> RSASecretBytes? {
        ready()
        guard sealed.count >= nonceByteCount + tagByteCount, key.count == keyByteCount else { return nil }
        let plaintext = RSASecretBytes(zeroedCount: sealed.count - nonceByteCount - tagByteCount)
        let status: Int32 = plaintext.withUnsafeMutableBytes { out in
            sealed.withUnsafeBytes { buffer in
                key.withUnsafeBytes { k in
                    var length: UInt64 = 0
                    // RSASecretBytes always has a base address, also for an empty plaintext.
                    return crypto_aead_xchacha20poly1305_ietf_decrypt(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, nil,
                        (buffer.baseAddress! + nonceByteCount).assumingMemoryBound(to: UInt8.self),
                        UInt64(sealed.count - nonceByteCount),
                        associatedData, UInt64(associatedData.count),
                        buffer.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return status == 0 ? plaintext : nil
    }
}
