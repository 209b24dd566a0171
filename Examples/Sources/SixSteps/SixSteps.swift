import Foundation
import RSAKit

/// The six steps of a ported app (open a store, make a tagged pair, look it up, encrypt,
/// export and import, read an OpenSSL key), as an app writes them, each checked. Usage:
/// `SixSteps <work folder> <openssl genpkey PEM file>`; exits 1 on the first failed check.
@main
struct SixSteps {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 else {
            FileHandle.standardError.write(Data("usage: SixSteps <work folder> <genpkey.pem>\n".utf8))
            exit(64)
        }
        let work = URL(fileURLWithPath: arguments[1], isDirectory: true)
        let genpkeyFile = URL(fileURLWithPath: arguments[2])
        do {
            try await run(work: work, genpkeyFile: genpkeyFile)
            print("all six steps passed")
        } catch let error as RSAError {
            // RSAError is a LocalizedError: the same sentence the rsakit CLI prints.
            FileHandle.standardError.write(Data("SixSteps: \(error.localizedDescription)\n".utf8))
            exit(1)
        }
    }

    static func check(_ condition: Bool, _ what: String) {
        if condition {
            print("  ok: \(what)")
        } else {
            FileHandle.standardError.write(Data("SixSteps: check failed: \(what)\n".utf8))
            exit(1)
        }
    }

    static func run(work: URL, genpkeyFile: URL) async throws {
        // 1. Open a store. A folder made by FileManager (0755) is fine: the store makes it 0700.
        print("1. open a store")
        let storeFolder = work.appendingPathComponent("store", isDirectory: true)
        try FileManager.default.createDirectory(at: storeFolder, withIntermediateDirectories: true)
        let store = try RSAKeyStore(url: storeFolder)
        check(
            try FileManager.default.attributesOfItem(atPath: storeFolder.path)[.posixPermissions] as? Int == 0o700,
            "store folder is 0700")
        // Per application: $XDG_DATA_HOME/rsakit/<identifier>, the analogue of an access group.
        let appLocation = try RSAKeyStore.defaultLocation(applicationIdentifier: "com.example.sixsteps")
        check(appLocation.hasSuffix("/rsakit/com.example.sixsteps"), "per-application location \(appLocation)")

        // 2. Generate a tagged pair in one call; a second call with the same tag fails at once.
        print("2. generate a tagged pair, handle the duplicate")
        let tag = "com.example.sixsteps.key"
        let made = try store.generateKeyPair(tag: tag, label: "Six steps", bitCount: 2048)
        do {
            try store.generateKeyPair(tag: tag, bitCount: 4096)
            check(false, "duplicate tag refused")
        } catch RSAError.duplicateItem(let taken) {
            check(taken == .key(tag: tag, keyClass: .public), "duplicate tag refused before generating: \(taken)")
        }

        // 3. Look it up, with Apple's block size and the fingerprint.
        print("3. look it up")
        let (privateKey, attributes) = try store.privateKeyItem(tag: tag)
        let publicKey = try store.publicKey(tag: tag)
        check(privateKey == made.key && publicKey == made.key.publicKey, "the stored key is the generated key")
        check(privateKey.blockSize == 256 && attributes.keySizeInBits == 2048, "block size 256 bytes, 2048 bits")
        check(attributes.fingerprint == publicKey.fingerprint, "fingerprint \(attributes.fingerprint)")

        // 4. Encrypt 1 MB: in memory (the container), as raw blocks, and file to file.
        print("4. encrypt 1 MB in memory, as raw blocks, file to file")
        var random = SystemRandomNumberGenerator()
        let megabyte = Data((0..<1_048_576).map { _ in UInt8.random(in: 0...255, using: &random) })
        // The Data forms are async: they run off the cooperative pool and stop when cancelled.
        let sealed = try await RSAMessage.encrypt(megabyte, for: publicKey)
        let opened = try await RSAMessage.decrypt(sealed, with: privateKey)
        check(opened == megabyte, "container round trip in memory")
        let blocks = try await RSAMessage.encrypt(
            megabyte, for: publicKey, format: .rawBlocks(padding: .oaep(RSAOAEPParameters())))
        check(blocks.count % publicKey.blockSize == 0, "raw blocks are k bytes each")
        let openedBlocks = try await RSAMessage.decrypt(
            blocks, with: privateKey, format: .rawBlocks(padding: .oaep(RSAOAEPParameters())))
        check(openedBlocks == megabyte, "raw OAEP blocks round trip")
        let plainFile = work.appendingPathComponent("plain.bin")
        let sealedFile = work.appendingPathComponent("plain.rsa")
        let openedFile = work.appendingPathComponent("opened.bin")
        try megabyte.write(to: plainFile)
        try await RSAMessage.encryptFile(at: plainFile, to: sealedFile, for: publicKey)  // async, cancellable
        try await RSAMessage.decryptFile(at: sealedFile, to: openedFile, with: privateKey)
        check(try Data(contentsOf: openedFile) == megabyte, "file to file round trip")

        // 5. Export SPKI PEM and PKCS#1 DER, and import them back.
        print("5. export SPKI PEM and PKCS#1 DER, import them back")
        let spkiPEM = publicKey.pemRepresentation  // "BEGIN PUBLIC KEY"
        let pkcs1DER = privateKey.derRepresentationData  // PKCS#1, as swift-crypto's _CryptoExtras
        check(spkiPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"), "SPKI PEM")
        check(try RSAPublicKey(pemRepresentation: spkiPEM) == publicKey, "SPKI PEM imports back")
        check(try RSAPrivateKey(derRepresentation: pkcs1DER) == privateKey, "PKCS#1 DER imports back")
        check(pkcs1DER != Data(privateKey.pkcs8DERRepresentation), "PKCS#8 is the explicit pkcs8 name")

        // 6. Read a key that `openssl genpkey` wrote (PKCS#8 PEM).
        print("6. read an openssl genpkey key")
        let opensslKey = try RSAPrivateKey(pemBytes: try Data(contentsOf: genpkeyFile))
        check(
            opensslKey.modulusBitCount == 2048,
            "openssl key, \(opensslKey.modulusBitCount) bits, \(opensslKey.fingerprint)")
        try store.addKeyPair(opensslKey, tag: "com.example.sixsteps.openssl")

        // Errors: a message for another key is a typed error carrying the expected fingerprint.
        print("errors")
        do {
            _ = try await RSAMessage.decrypt(sealed, with: opensslKey)
            check(false, "wrong key refused")
        } catch RSAError.encryptedForAnotherKey(let expected) {
            check(
                expected == publicKey.fingerprint,
                "wrong key: \(RSAError.encryptedForAnotherKey(expected: expected).localizedDescription)")
        }
        do {
            _ = try store.privateKey(tag: "com.example.absent")
            check(false, "missing tag refused")
        } catch RSAError.itemNotFound(let missing) {
            check(
                missing == .key(tag: "com.example.absent", keyClass: .private), "missing tag: itemNotFound(\(missing))")
        }
        var tampered = sealed
        tampered[tampered.count - 1] ^= 1
        do {
            _ = try await RSAMessage.decrypt(tampered, with: privateKey)
            check(false, "tampered message refused")
        } catch let error as RSAError {
            check(error == .decryptionFailed, "tampered message: \(error.localizedDescription)")
        }

        // Plus: an armored message decrypted with the store, no tag (the key is found by the
        // fingerprint in its header), and Apple's RSA-OAEP + AES-GCM format.
        print("armor from the store, Apple's format")
        let armored = try await RSAMessage.encrypt(
            Data("for the store".utf8), for: opensslKey.publicKey,
            format: .container(armored: true))
        check(armored.starts(with: Data("-----BEGIN".utf8)), "armored text")
        let fromStore = try await RSAMessage.decrypt(armored, using: store)
        check(fromStore == Data("for the store".utf8), "store finds the key by fingerprint")
        let apple = try await RSAMessage.encrypt(megabyte, for: publicKey, format: .appleAESGCM(hash: .sha256))
        check(apple.count == publicKey.blockSize + megabyte.count + 16, "Apple format: k + length + 16 bytes")
        let openedApple = try await RSAMessage.decrypt(apple, with: privateKey, format: .appleAESGCM(hash: .sha256))
        check(openedApple == megabyte, "Apple format round trip")

        // Concurrency: keys and the store are Sendable; async calls share a bounded worker budget.
        let fingerprints = try await withThrowingTaskGroup(of: RSAKeyFingerprint.self) { group in
            for _ in 0..<4 {
                group.addTask { try store.publicKey(tag: tag).fingerprint }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        check(fingerprints.allSatisfy { $0 == publicKey.fingerprint }, "store used from a task group")
    }
}
