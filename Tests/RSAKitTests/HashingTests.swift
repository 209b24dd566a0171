import XCTest
import RSAKit
import RSAKitTestSupport

/// The hashing layer over Nettle: names, lengths, known answers, incremental use, and the
/// real `openssl dgst` on the same inputs.
final class HashingTests: XCTestCase {
    /// FIPS 180-4 / FIPS 202 example "abc" (NIST CSRC examples; also `printf abc | openssl dgst -H -r`).
    static let abc: [RSAHashAlgorithm: String] = [
        .sha1: "a9993e364706816aba3e25717850c26c9cd0d89d",
        .sha224: "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7",
        .sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        .sha384: "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
        .sha512:
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423"
            + "643ce80e2a9ac94fa54ca49f",
        .sha512_224: "4634270f707b6a54daae7530460842e20e37ed265ceee9a43e8924aa",
        .sha512_256: "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23",
        .sha3_224: "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf",
        .sha3_256: "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
        .sha3_384: "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25",
        .sha3_512:
            "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4c"
            + "f408d5a56592f8274eec53f0"
    ]

    func testHash_KnownAnswersForAbc() {
        XCTAssertEqual(RSAHashAlgorithm.allCases.count, 11)
        for algorithm in RSAHashAlgorithm.allCases {
            let digest = algorithm.hash(Array("abc".utf8))
            XCTAssertEqual(Hex.encode(digest), Self.abc[algorithm], algorithm.rawValue)
            XCTAssertEqual(digest.count, algorithm.digestByteCount, algorithm.rawValue)
        }
        XCTAssertEqual([20, 28, 32, 48, 64, 28, 32, 28, 32, 48, 64], RSAHashAlgorithm.allCases.map(\.digestByteCount))
    }

    func testHash_MatchesOpenSSLDgst() throws {
        _ = try OpenSSL.require()
        let inputs: [[UInt8]] = [[], Array(0..<200).map { UInt8($0) }, [UInt8](repeating: 0x61, count: 1_000)]
        for algorithm in RSAHashAlgorithm.allCases {
            for input in inputs {
                // Command: openssl dgst -<name> -r  (stdin)
                let out = String(
                    decoding: try OpenSSL.run(["dgst", "-\(algorithm.rawValue)", "-r"], input: input), as: UTF8.self)
                let expected = String(out.split(separator: " ").first ?? "")
                XCTAssertEqual(
                    Hex.encode(algorithm.hash(input)), expected, "\(algorithm.rawValue), \(input.count) bytes")
            }
        }
    }

    func testHasher_IncrementalEqualsOneShotAndCopiesAreIndependent() {
        let data = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for algorithm in RSAHashAlgorithm.allCases {
            var hasher = RSAHasher(algorithm: algorithm)
            var offset = 0
            for size in [0, 1, 63, 64, 65, 127, 1_000, 1_680] {
                hasher.update(Array(data[offset..<(offset + size)]))
                offset += size
            }
            XCTAssertEqual(offset, data.count)
            XCTAssertEqual(hasher.finalize(), algorithm.hash(data), algorithm.rawValue)
            // finalize leaves the state alone; a copy diverges without touching the original.
            var copy = hasher
            copy.update([1, 2, 3])
            XCTAssertEqual(hasher.finalize(), algorithm.hash(data), "\(algorithm.rawValue): original unchanged")
            XCTAssertEqual(copy.finalize(), algorithm.hash(data + [1, 2, 3]), "\(algorithm.rawValue): copy")
        }
    }

    func testName_AcceptsCommonSpellings() {
        XCTAssertEqual(RSAHashAlgorithm(name: "sha256"), .sha256)
        XCTAssertEqual(RSAHashAlgorithm(name: "SHA-256"), .sha256)
        XCTAssertEqual(RSAHashAlgorithm(name: "sha-256"), .sha256)
        XCTAssertEqual(RSAHashAlgorithm(name: "SHA1"), .sha1)
        XCTAssertEqual(RSAHashAlgorithm(name: "SHA-512/256"), .sha512_256)
        XCTAssertEqual(RSAHashAlgorithm(name: "sha512-224"), .sha512_224)
        XCTAssertEqual(RSAHashAlgorithm(name: "SHA3-384"), .sha3_384)
        XCTAssertEqual(RSAHashAlgorithm(name: "sha3_512"), .sha3_512)
        XCTAssertNil(RSAHashAlgorithm(name: "md5"))
        XCTAssertNil(RSAHashAlgorithm(name: "sha"))
        XCTAssertNil(RSAHashAlgorithm(name: "shake128"))
        for algorithm in RSAHashAlgorithm.allCases {
            XCTAssertEqual(RSAHashAlgorithm(name: algorithm.rawValue), algorithm)
            XCTAssertEqual(RSAHashAlgorithm(name: algorithm.displayName), algorithm)
        }
    }

    func testSHA256_DelegatesAndKeepsItsShape() {
        XCTAssertEqual(RSAHashAlgorithm.sha256.hash(Array("abc".utf8)), RSAHashAlgorithm.sha256.hash(Array("abc".utf8)))
        XCTAssertEqual(RSAHashAlgorithm.sha256.digestByteCount, 32)
    }
}
