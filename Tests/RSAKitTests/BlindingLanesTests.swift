import Foundation
import XCTest
import RSAKit
@testable import RSAKitCore

/// The constant-time path's blinding cache (``PrivateKeyStorage/takeBlindingPairs(_:random:)``):
/// one pair per lane of a batch, squared together by `rsakit_sec_blinding_square_batch`, on
/// the eight-lane kernel (its emulation here, so any CPU runs it) and on GMP.
final class BlindingLanesTests: XCTestCase {
    /// vf and vi of a pair (2 nn limbs, little-endian) as integers.
    private func halves(_ pair: SecretLimbs) -> (vf: BigNumber, vi: BigNumber) {
        let nn = pair.count / 2
        func number(_ offset: Int) -> BigNumber {
            var bytes: [UInt8] = []
            for i in (0..<nn).reversed() {
                let limb = UInt64(pair.limbs[offset + i])
                for shift in stride(from: 56, through: 0, by: -8) {
                    bytes.append(UInt8(truncatingIfNeeded: limb >> UInt64(shift)))
                }
            }
            return BigNumber(bytes: bytes)
        }
        return (number(0), number(nn))
    }

    /// vf vi^e = r^e r^-e = 1 mod n, with both below n.
    private func assertValid(_ pair: SecretLimbs, _ key: RSAPrivateKey, _ what: String) {
        let n = key.storage.n
        let (vf, vi) = halves(pair)
        XCTAssertTrue(vf.compare(n) < 0 && vi.compare(n) < 0, what)
        XCTAssertEqual((vf * vi.powModVarTime(key.storage.e, n)).mod(n), BigNumber(1), what)
    }

    /// The key as the dispatch attaches it (the IFMA kernel on an IFMA CPU, else GMP) and on
    /// the kernel's emulation. Batches of one or two pairs take GMP's squaring on both (the
    /// kernel declines them), three or more the kernel where one is attached.
    /// Each with storage of its own (a fresh blinding cache: the shared test keys' caches
    /// carry other tests' uses).
    private func keys() throws -> [(String, RSAPrivateKey)] {
        let shared = try TestKeys.generated(bits: 1024)
        let s = shared.storage
        let key = try RSAPrivateKey(
            modulus: s.n.minimalBytes, publicExponent: s.e.minimalBytes, privateExponent: s.d.minimalBytes,
            prime1: s.p.minimalBytes, prime2: s.q.minimalBytes, exponent1: s.dP.minimalBytes,
            exponent2: s.dQ.minimalBytes, coefficient: s.qInv.minimalBytes)
        let emulated = try XCTUnwrap(try shared.withVectorKernel(.ifmaEmulated))
        XCTAssertEqual(emulated.storage.vectorKernel, .ifmaEmulated)
        return [("default path (\(String(describing: key.storage.vectorKernel)))", key), ("emulated kernel", emulated)]
    }

    func testBatchSquaring_EqualsTheSquareOfEachPair() throws {
        for (path, key) in try keys() {
            let secret = key.storage.secret, n = key.storage.n
            let random = DeterministicRandomSource(seed: 5)
            for count in 1...ConstantTimeKey.batchLimit {
                let pairs = (0..<count).map { _ in secret.freshBlindingPair(random: random) }
                let before = pairs.map(halves)
                secret.square(pairs)
                for (j, pair) in pairs.enumerated() {
                    let (vf, vi) = halves(pair)
                    let what = "\(path), \(count) pairs, pair \(j)"
                    XCTAssertEqual(vf, (before[j].vf * before[j].vf).mod(n), what)
                    XCTAssertEqual(vi, (before[j].vi * before[j].vi).mod(n), what)
                    assertValid(pair, key, what)
                }
            }
        }
    }

    func testTakeBlindingPairs_OneChainPerLaneRefreshedOnSchedule() throws {
        for (path, key) in try keys() {
            let n = key.storage.n
            let random = DeterministicRandomSource(seed: 9)
            var last = key.storage.takeBlindingPairs(8, random: random).map(halves)
            XCTAssertEqual(
                Set(try last.map { try $0.vf.bytes(count: key.modulusByteCount) }).count, 8,
                "\(path): eight independent lanes")
            // Uses 2 ... 32 of each lane: the square of the lane's previous pair.
            for use in 2...BlindingPair.usesPerRandomValue {
                // Odd uses take a batch of three: only lanes 0...2 advance (lanes 3...7 keep
                // their pair for the next batch of eight).
                let count = use % 2 == 0 ? 8 : 3
                let pairs = key.storage.takeBlindingPairs(count, random: random)
                for (j, pair) in pairs.enumerated() {
                    let (vf, vi) = halves(pair)
                    XCTAssertEqual(vf, (last[j].vf * last[j].vf).mod(n), "\(path), use \(use), lane \(j)")
                    XCTAssertEqual(vi, (last[j].vi * last[j].vi).mod(n), "\(path), use \(use), lane \(j)")
                    assertValid(pair, key, "\(path), use \(use), lane \(j)")
                    last[j] = (vf, vi)
                }
            }
            // Lanes 0...2 have served 32 uses: the next pair there is a fresh r, not a square.
            let fresh = key.storage.takeBlindingPairs(3, random: random)
            for (j, pair) in fresh.enumerated() {
                let (vf, _) = halves(pair)
                XCTAssertNotEqual(vf, (last[j].vf * last[j].vf).mod(n), "\(path): lane \(j) refreshed")
                assertValid(pair, key, "\(path): lane \(j) refreshed")
            }
        }
    }
}
