import CRSAKitAnchors
import Foundation
import RSAKit
import RSAKitCore

/// `--one CASE:BITS`: exactly one operation after two warm-ups, for instruction counting.
///
///     valgrind --tool=callgrind --instr-atstart=no .build/release/RSAKitBenchmarks --one decrypt:2048
///
/// The counted operation runs between callgrind's client requests (zero, start; stop,
/// dump), so the dump holds that one operation and nothing of start-up or key loading.
enum OneCase {
    static let names = [
        "anchor-crt", "private-raw", "decrypt", "anchor-public", "public-raw", "encrypt",
        "anchor-keygen", "keygen", "chunked-encrypt-1t", "chunked-encrypt-all",
        "chunked-decrypt-1t", "chunked-decrypt-all", "vector-1", "vector-8"
    ]

    static func run(name: String, bits: Int, options: BenchmarkOptions, peer: OpenSSLPeer?) throws {
        let operation = try prepare(name: name, bits: bits, options: options, peer: peer)
        try operation()
        try operation()
        rsakit_bench_callgrind_start()
        let seconds = try time(operation)
        rsakit_bench_callgrind_stop()
        print(
            "rsakit-bench one case=\(name) bits=\(bits) seconds=\(String(format: "%.6f", seconds))"
                + " callgrind_requests=\(rsakit_bench_callgrind_available() == 1 ? "compiled-in" : "absent")")
    }

    private static func prepare(
        name: String, bits: Int, options: BenchmarkOptions,
        peer: OpenSSLPeer?
    ) throws -> () throws -> Void {
        switch name {
        case "anchor-keygen":
            let anchor = try AnchorKeyGenerator()
            return { anchor.generate(bits: bits) }
        case "keygen":
            return { BlackHole.consume(try RSAPrivateKey.generate(bitCount: bits).modulus) }
        default:
            break
        }
        let directory = options.keysDirectory ?? Fixtures.defaultKeysDirectory()
        let key = try Fixtures.load(bits: bits, directory: directory)
        let threads = RSAPKCS1v15Chunking.defaultConcurrency
        switch name {
        case "anchor-crt":
            let anchor = try AnchorCRT(key)
            return { anchor.run(1) }
        case "private-raw":
            return { BlackHole.consume(try key.privateKey.unprotectedCRTExponentiationForBenchmarks(key.ciphertext)) }
        case "decrypt":
            return { BlackHole.consume(try key.privateKey.decrypt(key.ciphertext)) }
        case "anchor-public":
            let anchor = try AnchorPublic(key)
            return { anchor.run(1) }
        case "public-raw":
            return { BlackHole.consume(try RSAHazmat.rsaep(key.encodedMessage, key: key.publicKey)) }
        case "encrypt":
            return { BlackHole.consume(try key.publicKey.encrypt(key.message)) }
        case "chunked-encrypt-1t", "chunked-encrypt-all":
            let plaintext = SystemRandomSource().bytesForBenchmark(options.chunkByteCount)
            let concurrency = name.hasSuffix("1t") ? 1 : threads
            return {
                BlackHole.consume(
                    try RSAPKCS1v15Chunking.encrypt(plaintext, with: key.publicKey, concurrency: concurrency))
            }
        case "chunked-decrypt-1t", "chunked-decrypt-all":
            let plaintext = SystemRandomSource().bytesForBenchmark(options.chunkByteCount)
            let ciphertext = try RSAPKCS1v15Chunking.encrypt(plaintext, with: key.publicKey, concurrency: threads)
            let concurrency = name.hasSuffix("1t") ? 1 : threads
            return {
                BlackHole.consume(
                    try RSAPKCS1v15Chunking.decrypt(ciphertext, with: key.privateKey, concurrency: concurrency))
            }
        case "vector-1", "vector-8":
            // The vector cases' work (VectorCases.swift): one block, or eight in one call.
            let implementation = BenchmarkSuite.measurableVectorImplementation
            guard let vectorKey = try key.privateKey.withVectorKernelForBenchmarks(implementation) else {
                throw BenchmarkFailure(description: "the vector kernel does not attach at \(bits) bits")
            }
            let blocks = [[UInt8]](repeating: key.ciphertext, count: name == "vector-8" ? 8 : 1)
            return { BlackHole.consume(try vectorKey.rsadpBatchForBenchmarks(blocks)[0]) }
        default:
            throw UsageError(description: "unknown case '\(name)'")
        }
    }
}
