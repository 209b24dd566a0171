import Foundation
import RSAKit

/// A failure of a fixture or of a correctness check: exit status 1.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
}

/// One fixed key and the inputs every case at its size works on.
struct BenchmarkKey {
    let bits: Int
    let privateKey: RSAPrivateKey
    var publicKey: RSAPublicKey { privateKey.publicKey }
    /// A 32-byte message (a typical wrapped session key).
    let message: [UInt8]
    /// One PKCS#1 v1.5 encryption of `message`: the input of every private-key case.
    let ciphertext: [UInt8]
    /// ciphertext^d mod n, k bytes (the encoded message EM): the input of the public cases.
    let encodedMessage: [UInt8]
}

/// Finds and loads the fixed keys of Keys/rsaBITS.pem.
enum Fixtures {
    /// The Keys folder beside this source file (where `swift run` finds it), else the one
    /// below the current directory.
    static func defaultKeysDirectory() -> String {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Keys").path
        if FileManager.default.fileExists(atPath: here) { return here }
        return FileManager.default.currentDirectoryPath + "/Benchmarks/RSAKitBenchmarks/Keys"
    }

    /// Load rsaBITS.pem from `directory` and prepare its inputs.
    /// - Throws: `BenchmarkFailure` when the file is missing or unreadable, has another size,
    ///   or when decrypting the prepared ciphertext does not give the message back.
    static func load(bits: Int, directory: String) throws -> BenchmarkKey {
        let path = "\(directory)/rsa\(bits).pem"
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw BenchmarkFailure(description: "no key file \(path) (see Benchmarks/RSAKitBenchmarks/Keys/README.md)")
        }
        let key = try loadPrivateKey(path: path)
        guard key.modulusBitCount == bits else {
            throw BenchmarkFailure(description: "\(path) holds a \(key.modulusBitCount)-bit key, not \(bits) bits")
        }
        let message = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ bits) }
        let ciphertext = try key.publicKey.encrypt(message)
        guard try key.decrypt(ciphertext) == message else {
            throw BenchmarkFailure(description: "rsa\(bits): decrypt(encrypt(m)) != m")
        }
        let encoded = try RSAHazmat.rsadp(ciphertext, key: key)
        guard try RSAHazmat.rsaep(encoded, key: key.publicKey) == ciphertext else {
            throw BenchmarkFailure(description: "rsa\(bits): RSAEP(RSADP(c)) != c")
        }
        return BenchmarkKey(
            bits: bits, privateKey: key, message: message, ciphertext: ciphertext,
            encodedMessage: encoded)
    }

    /// Read a PEM private key with RSAKit's own parser (PKCS#8 or PKCS#1), which also
    /// validates every CRT relation. No openssl needed.
    static func loadPrivateKey(path: String) throws -> RSAPrivateKey {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw BenchmarkFailure(description: "cannot read \(path): \(error.localizedDescription)")
        }
        do {
            return try RSAPrivateKey(pemRepresentation: text)
        } catch {
            throw BenchmarkFailure(description: "\(path): \(error)")
        }
    }
}

/// The first executable `name` on PATH, or nil.
func findOnPath(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}
