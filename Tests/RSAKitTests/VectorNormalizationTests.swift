import Foundation
import XCTest
internal import CRSAKitVector
import RSAKit

/// The closing normalization of the single-buffer products (normalize1 over zmm, normalize4
/// over ymm in rsakit_vector_kernel_single.inc), on crafted digits: its carry-lookahead step,
/// a carry out of a digit that the first pass left at 2^52 or more rippling through digits
/// left at exactly 2^52 - 1, needs a digit of exactly 2^52 - 1, which products of random
/// numbers almost never leave. VectorKernelTests' edge inputs reach it in normalize1 but not
/// in normalize4 (the dual product of every one-block private operation with 1024- and
/// 2048-bit keys): with normalize4's propagation removed, all of VectorKernelTests passed.
/// Each case here is checked against a serial carry propagation, on the kernel's emulation
/// (every CPU) and on the AVX-512 IFMA kernel (skipped visibly without it).
final class VectorNormalizationTests: XCTestCase {
    static let mask: UInt64 = (1 << 52) - 1

    /// The radix-2^52 digits of sum(digits[i] 2^(52 i)) mod 2^(52 count), by a serial carry.
    static func expected(_ digits: [UInt64]) -> [UInt64] {
        var carry: UInt64 = 0
        return digits.map { digit in
            let t = (digit & mask) + carry
            carry = (digit >> 52) + (t >> 52)
            return t & mask
        }
    }

    /// (digits per vector, vector counts) of the two forms: zmm (half 0) and ymm (half 1).
    static let forms: [(half: Int32, lanes: Int)] = [(0, 8), (1, 4)]

    func normalized(_ impl: rsakit_vec_impl, half: Int32, _ digits: [UInt64], vectors: Int) throws -> [UInt64] {
        var words = digits
        let status = rsakit_vec_normalize_for_tests(impl, half, &words, vectors)
        XCTAssertEqual(status, 0, "normalize (\(impl), half \(half), \(vectors) vectors)")
        return words
    }

    /// Crafted cases for `count` digits: a carry generated in the first pass or by the
    /// lookahead, rippling through runs of 2^52 - 1 across every vector boundary.
    static func craftedCases(count: Int, lanes: Int) -> [[UInt64]] {
        var cases: [[UInt64]] = []
        // A digit at 2^52 + 7 generates a carry through every digit above it (all 2^52 - 1):
        // all of them become 0 and the carry leaves the top (dropped).
        cases.append([(1 << 52) + 7] + [UInt64](repeating: mask, count: count - 1))
        // The same chain stopping one digit below the top, which takes the carry.
        if count >= 3 {
            cases.append([(1 << 52) + 7] + [UInt64](repeating: mask, count: count - 2) + [5])
        }
        // Second level: digit i - 1 = 2^52 hands 1 to digit i = 2^52 - 1 in the first pass
        // (digit i is then 2^52: a generate), digit i + 1 is left at 2^52 - 1 (a propagate),
        // so digit i + 2 receives the carry: at every position, vector boundaries included.
        for i in 1..<max(1, count - 2) {
            var d = [UInt64](repeating: 3, count: count)
            d[i - 1] = 1 << 52
            d[i] = mask
            d[i + 1] = mask
            cases.append(d)
        }
        // From each vector boundary b, a carry made in the first pass (digit b - 1 = 2^52 hands
        // 1 to digit b = 2^52 - 1, a generate) ripples through 2^52 - 1 to the top.
        for b in stride(from: lanes, to: count, by: lanes) {
            var d = [UInt64](repeating: mask, count: count)
            d[b - 1] = 1 << 52
            cases.append(d)
        }
        // Runs of 2^52 - 1 with no carry coming in stay as they are (a propagate alone moves
        // nothing): digit 0 = 2^53 - 2 keeps 2^52 - 2 and hands 1 to digit 1 = 2^52 - 2.
        var quiet = [UInt64](repeating: mask, count: count)
        quiet[0] = mask << 1
        if count > 1 { quiet[1] = mask - 1 }
        cases.append(quiet)
        // The largest first-pass carries (digits of 2^64 - 1) into digits near 2^52 - 1.
        var d = [UInt64](repeating: 0, count: count)
        for j in 0..<count { d[j] = j % 2 == 0 ? UInt64.max : mask - 4095 }
        cases.append(d)
        return cases
    }

    /// Random digits biased toward the values where carries ripple: 2^52 - 1, 2^52, small
    /// numbers above 2^52, and full 64-bit digits.
    static func randomCase(count: Int, rng: inout VectorKernelTests.Rng) -> [UInt64] {
        (0..<count).map { _ in
            let r = rng.next()
            switch r % 6 {
            case 0, 1: return mask
            case 2: return (1 << 52) + (r >> 60)
            case 3: return mask - (r >> 62)
            case 4: return r >> 3
            default: return rng.next()
            }
        }
    }

    func checkNormalization(_ impl: rsakit_vec_impl) throws {
        var rng = VectorKernelTests.Rng(state: 0x5EED_CA11)
        var checked = 0, rippled = 0
        for form in Self.forms {
            for vectors in 1...5 {
                let count = form.lanes * vectors
                var cases = Self.craftedCases(count: count, lanes: form.lanes)
                for _ in 0..<300 { cases.append(Self.randomCase(count: count, rng: &rng)) }
                for digits in cases {
                    let got = try normalized(impl, half: form.half, digits, vectors: vectors)
                    XCTAssertEqual(
                        got, Self.expected(digits), "\(impl) half \(form.half) \(vectors) vectors: \(digits)")
                    checked += 1
                    // Count the cases that needed the lookahead: a digit exactly 2^52 - 1 after
                    // the first pass, with a carry coming into it.
                    let firstPass = (0..<count).map { j in (digits[j] & Self.mask) + (j == 0 ? 0 : digits[j - 1] >> 52)
                    }
                    if (1..<count).contains(where: { firstPass[$0] == Self.mask && firstPass[$0 - 1] > Self.mask }) {
                        rippled += 1
                    }
                }
            }
        }
        XCTAssertGreaterThan(rippled, 100, "the cases must reach the carry-lookahead step")
        print(
            "normalization (\(impl == RSAKIT_VEC_IMPL_IFMA ? "IFMA kernel" : "emulated kernel")): \(checked) cases, "
                + "\(rippled) with a carry through a 2^52 - 1 digit"
        )
    }

    func testNormalization_Emulated_MatchesSerialCarry() throws {
        try checkNormalization(RSAKIT_VEC_IMPL_IFMA_EMULATED)
    }

    func testNormalization_IFMAKernel_MatchesSerialCarry() throws {
        guard RSAKitEngine.cpuSupportsIFMA else {
            let message =
                "THIS CPU HAS NO AVX-512 IFMA: the IFMA kernel's normalization is NOT TESTED here (its emulation is)"
            FileHandle.standardError.write(Data(("\n*** " + message + " ***\n").utf8))
            throw XCTSkip(message)
        }
        try checkNormalization(RSAKIT_VEC_IMPL_IFMA)
    }

    func testNormalization_RefusesWhatItCannotRun() {
        var words = [UInt64](repeating: Self.mask + 1, count: 48)
        let before = words
        XCTAssertEqual(rsakit_vec_normalize_for_tests(RSAKIT_VEC_IMPL_REFERENCE, 0, &words, 1), -1)
        XCTAssertEqual(rsakit_vec_normalize_for_tests(RSAKIT_VEC_IMPL_IFMA_EMULATED, 0, &words, 0), -1)
        XCTAssertEqual(rsakit_vec_normalize_for_tests(RSAKIT_VEC_IMPL_IFMA_EMULATED, 0, &words, 6), -1)
        XCTAssertEqual(words, before, "a refused call leaves the words as they were")
        if !RSAKitEngine.cpuSupportsIFMA {
            XCTAssertEqual(rsakit_vec_normalize_for_tests(RSAKIT_VEC_IMPL_IFMA, 0, &words, 1), -1)
        }
    }
}
