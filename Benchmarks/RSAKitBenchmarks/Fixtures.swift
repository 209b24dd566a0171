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
    static func load(bits: Int, directory: String, openssl: String?) throws -> BenchmarkKey {
        let path = "\(directory)/rsa\(bits).pem"
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw BenchmarkFailure(description: "no key file \(path) (see Benchmarks/RSAKitBenchmarks/Keys/README.md)")
        }
        let key = try loadPrivateKey(path: path, openssl: openssl)
        guard key.modulusBitCount == bits else {
            throw BenchmarkFailure(description: "\(path) holds a \(key.modulusBitCount)-bit key, not \(bits) bits")
        }
        let message = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ bits) }
        let ciphertext = try key.publicKey.encrypt(message)
        guard try key.decrypt(ciphertext) == message else {
            throw BenchmarkFailure(description: "rsa\(bits): decrypt(encrypt(m)) != m")
        }
        let encoded = try key.rsadp(ciphertext)
        guard try key.publicKey.rsaep(encoded) == ciphertext else {
            throw BenchmarkFailure(description: "rsa\(bits): RSAEP(RSADP(c)) != c")
        }
        return BenchmarkKey(bits: bits, privateKey: key, message: message, ciphertext: ciphertext,
                            encodedMessage: encoded)
    }

    /// Read a PEM private key.
    ///
    /// NOTE: RSAKit has no PEM/DER layer on this branch yet (it is being built on `formats`),
    /// so the components come from `openssl pkey -text` and go through RSAKit's validating
    /// component initialiser. Replace with `RSAPrivateKey(pemRepresentation:)` once it lands.
    static func loadPrivateKey(path: String, openssl: String?) throws -> RSAPrivateKey {
        guard let openssl else {
            throw BenchmarkFailure(description: "reading \(path) needs the openssl CLI until RSAKit parses PEM itself")
        }
        let result = try runProcess(openssl, ["pkey", "-in", path, "-text", "-noout"])
        guard result.status == 0 else {
            throw BenchmarkFailure(description: "openssl pkey -in \(path) failed: \(result.stderr)")
        }
        var fields: [String: [UInt8]] = [:]
        var current: String?
        var hex = ""
        func finish() {
            if let current { fields[current] = bytes(fromHex: hex) }
            current = nil
            hex = ""
        }
        for line in result.stdout.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if line.first?.isWhitespace == true {
                hex += trimmed.replacingOccurrences(of: ":", with: "")
                continue
            }
            finish()
            if trimmed.hasSuffix(":") {
                current = String(trimmed.dropLast())
            } else if trimmed.hasPrefix("publicExponent:") {
                // "publicExponent: 65537 (0x10001)"
                let number = trimmed.dropFirst("publicExponent:".count)
                    .trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? ""
                guard let e = UInt64(number) else {
                    throw BenchmarkFailure(description: "\(path): cannot read the public exponent")
                }
                var big = withUnsafeBytes(of: e.bigEndian) { Array($0) }
                while big.first == 0 { big.removeFirst() }
                fields["publicExponent"] = big
            }
        }
        finish()
        let names = ["modulus", "publicExponent", "privateExponent", "prime1", "prime2",
                     "exponent1", "exponent2", "coefficient"]
        for name in names where fields[name] == nil {
            throw BenchmarkFailure(description: "\(path): openssl printed no \(name)")
        }
        return try RSAPrivateKey(
            modulus: fields["modulus"]!, publicExponent: fields["publicExponent"]!,
            privateExponent: fields["privateExponent"]!, prime1: fields["prime1"]!,
            prime2: fields["prime2"]!, exponent1: fields["exponent1"]!,
            exponent2: fields["exponent2"]!, coefficient: fields["coefficient"]!)
    }

    private static func bytes(fromHex hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var high: UInt8?
        for c in hex.utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: continue
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        return out
    }
}

/// What a child process printed and how it ended.
struct ProcessResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Run `executable` with `arguments` and wait; stdout and stderr captured.
func runProcess(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Drain stderr on another thread while reading stdout, so that neither pipe can fill
    // up and block the child.
    final class Box: @unchecked Sendable { var data = Data() }
    let errBox = Box()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errBox.data = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    let errData = errBox.data
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus,
                         stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
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
