import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// Hex helpers for tests.
enum Hex {
    static func decode(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var chars = Array(text.utf8)
        if chars.count % 2 == 1 { chars.insert(UInt8(ascii: "0"), at: 0) }
        bytes.reserveCapacity(chars.count / 2)
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: fatalError("not hex: \(c)")
            }
        }
        var i = 0
        while i < chars.count {
            bytes.append(nibble(chars[i]) << 4 | nibble(chars[i + 1]))
            i += 2
        }
        return bytes
    }

    static func encode(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// A deterministic random source for tests only (xorshift-based; never cryptographic).
final class DeterministicRandomSource: RSARandomSource, @unchecked Sendable {
    private var state: UInt64
    private let lock = NSLock()
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        lock.lock(); defer { lock.unlock() }
        for i in buffer.indices {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            buffer[i] = UInt8(truncatingIfNeeded: state >> 24)
        }
    }
}

/// A byte sink that records the largest single write (to check that streaming stays bounded).
struct CountingSink: RSAByteSink {
    var inner = RSAArrayByteSink()
    var largestWrite = 0
    mutating func write(_ bytes: [UInt8]) throws {
        largestWrite = max(largestWrite, bytes.count)
        try inner.write(bytes)
    }
}

/// Where the Wycheproof vectors are: $RSAKIT_VECTORS (the wycheproof folder or its
/// testvectors_v1), else ../shared/vectors/wycheproof/testvectors_v1 beside the package.
enum Vectors {
    static var directory: URL? {
        let fm = FileManager.default
        var candidates: [URL] = []
        if let env = ProcessInfo.processInfo.environment["RSAKIT_VECTORS"], !env.isEmpty {
            let base = URL(fileURLWithPath: env)
            candidates += [base.appendingPathComponent("testvectors_v1"), base]
        } else {
            let packageRoot = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            candidates.append(
                packageRoot.deletingLastPathComponent()
                    .appendingPathComponent("shared/vectors/wycheproof/testvectors_v1"))
        }
        return candidates.first { fm.fileExists(atPath: $0.appendingPathComponent("rsa_pkcs1_2048_test.json").path) }
    }

    /// The file's contents, or a loud skip when the vectors are absent.
    static func load(_ name: String) throws -> Data {
        guard let dir = directory else {
            let message =
                "WYCHEPROOF VECTORS NOT FOUND: set RSAKIT_VECTORS or place shared/vectors/wycheproof beside the "
                + "package; \(name) NOT RUN"
            FileHandle.standardError.write(Data(("\n*** " + message + " ***\n").utf8))
            throw XCTSkip(message)
        }
        return try Data(contentsOf: dir.appendingPathComponent(name))
    }
}

/// Key helpers over the shared `OpenSSL` runner (RSAKitTestSupport).
extension OpenSSL {
    /// Generate a key with `openssl genpkey` into `directory`; returns the PEM path and the
    /// key parsed from `openssl pkey -text` (so no rsakit parser is involved).
    static func generateKey(bits: Int, exponent: Int = 65537, in directory: URL) throws -> (
        path: String, key: RSAPrivateKey
    ) {
        let path = directory.appendingPathComponent("openssl-\(bits)-\(exponent)-\(UUID().uuidString).pem").path
        // Command: openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:BITS -pkeyopt rsa_keygen_pubexp:E -out PATH
        try run([
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)",
            "-pkeyopt", "rsa_keygen_pubexp:\(exponent)", "-out", path
        ])
        let text = String(decoding: try run(["pkey", "-in", path, "-text", "-noout"]), as: UTF8.self)
        return (path, try parseTextKey(text))
    }

    /// Parse the component listing of `openssl pkey -text -noout`.
    static func parseTextKey(_ text: String) throws -> RSAPrivateKey {
        var fields: [String: [UInt8]] = [:]
        var current: String?
        var hex = ""
        func flush() {
            if let name = current { fields[name] = Hex.decode(hex) }
            current = nil; hex = ""
        }
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(rawLine)
            if line.hasPrefix(" ") {
                hex += line.filter { $0.isHexDigit }
                continue
            }
            flush()
            if line.hasPrefix("publicExponent:") {
                // "publicExponent: 65537 (0x10001)"
                let value = line.split(separator: "(").last!.dropFirst(2).dropLast()
                fields["publicExponent"] = Hex.decode(String(value))
            } else if line.hasSuffix(":"), !line.contains(" ") {
                current = String(line.dropLast())
            }
        }
        flush()
        func f(_ name: String) throws -> [UInt8] {
            guard let v = fields[name] else { throw RSAError.malformedKey(reason: "openssl text lacks \(name)") }
            return v
        }
        return try RSAPrivateKey(
            modulus: f("modulus"), publicExponent: f("publicExponent"), privateExponent: f("privateExponent"),
            prime1: f("prime1"), prime2: f("prime2"), exponent1: f("exponent1"), exponent2: f("exponent2"),
            coefficient: f("coefficient"))
    }
}

/// Minimal DER writer for PKCS#1 RSAPrivateKey (RFC 8017 A.1.2), test-only, so the engine's
/// interop tests can hand keys to openssl before the Encoding layer is involved.
enum TestDER {
    static func length(_ n: Int) -> [UInt8] { KeyFormatFixtures.derLength(n) }
    static func integer(_ magnitude: [UInt8]) -> [UInt8] {
        var body = Array(magnitude.drop { $0 == 0 })
        if body.isEmpty || body[0] & 0x80 != 0 { body.insert(0, at: 0) }
        return [0x02] + length(body.count) + body
    }
    static func pkcs1PrivateKey(_ key: RSAPrivateKey) -> [UInt8] {
        let body =
            integer([0]) + integer(key.modulus) + integer(key.publicExponent)
            + integer(key.privateExponent) + integer(key.prime1) + integer(key.prime2)
            + integer(key.exponent1) + integer(key.exponent2) + integer(key.coefficient)
        return [0x30] + length(body.count) + body
    }
}

/// Keys shared across tests, generated once per process.
enum TestKeys {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [String: RSAPrivateKey] = [:]

    /// An rsakit-generated key of `bits` bits (cached). A prime search that meets FIPS
    /// 186-5 A.1.3's bound (about once in 1,360 with e = 3) is started again by `generate`
    /// itself (`RSAPrivateKey.maximumGenerationAttempts`).
    static func generated(bits: Int, exponent: UInt64 = 65537) throws -> RSAPrivateKey {
        let name = "gen-\(bits)-\(exponent)"
        lock.lock(); defer { lock.unlock() }
        if let key = cache[name] { return key }
        let key = try RSAPrivateKey.generate(bitCount: bits, publicExponent: exponent)
        cache[name] = key
        return key
    }

    /// An openssl-generated key of `bits` bits (cached; skips when openssl is absent).
    static func openssl(bits: Int, exponent: Int = 65537) throws -> (path: String, key: RSAPrivateKey) {
        let name = "openssl-\(bits)-\(exponent)"
        lock.lock(); defer { lock.unlock() }
        if let key = cache[name], let path = paths[name] { return (path, key) }
        let generated = try OpenSSL.generateKey(bits: bits, exponent: exponent, in: scratch)
        cache[name] = generated.key
        paths[name] = generated.path
        return generated
    }
    nonisolated(unsafe) private static var paths: [String: String] = [:]

    /// The per-process scratch folder (`TestScratch.directory`, shared with RSAKitTestSupport).
    static var scratch: URL { TestScratch.directory }
}

/// Apple's RSA-OAEP + AES-GCM vectors: `apple/` beside `wycheproof/` in the folder named by
/// $RSAKIT_VECTORS (which may name the vectors folder, `wycheproof/` or its `testvectors_v1/`),
/// else ../shared/vectors/apple beside the package.
enum AppleVectors {
    static let fileName = "rsa_oaep_aesgcm_known_ciphertext.json"

    static var directory: URL? {
        var candidates: [URL] = []
        if let env = ProcessInfo.processInfo.environment["RSAKIT_VECTORS"], !env.isEmpty {
            let base = URL(fileURLWithPath: env)
            candidates += [
                base.appendingPathComponent("apple"),
                base.deletingLastPathComponent().appendingPathComponent("apple"),
                base.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("apple")
            ]
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.deletingLastPathComponent().appendingPathComponent("shared/vectors/apple"))
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent(fileName).path) }
    }
}
