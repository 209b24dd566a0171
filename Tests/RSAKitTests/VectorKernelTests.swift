import Foundation
import XCTest
internal import CRSAKitVector
import RSAKit
import RSAKitTestSupport
@testable import RSAKitCore
@testable import RSAKitKeychain

/// The radix-2^52 Montgomery exponentiation (CRSAKitVector): the portable
/// reference and the kernel's algorithm (its scalar emulation) against GMP on random and
/// edge inputs, lane independence of the multi-buffer form, the dispatch
/// (RSAKIT_DISABLE_IFMA, the reported path), the private path with the kernel plugged into
/// the constant-time seam, the reference under valgrind with secrets marked undefined, and
/// the real IFMA kernel where the CPU has it (skipped visibly elsewhere).
final class VectorKernelTests: XCTestCase {
    // MARK: - Helpers

    struct Rng {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return state
        }
        mutating func limbs(_ count: Int) -> [UInt64] { (0..<count).map { _ in next() } }
    }

    static func bytes(_ limbs: [UInt64]) -> [UInt8] {
        limbs.reversed().flatMap { limb in
            (0..<8).reversed().map { UInt8(truncatingIfNeeded: limb >> (8 * UInt64($0))) }
        }
    }

    static func limbs(_ bytes: [UInt8]) -> [UInt64] {
        precondition(bytes.count % 8 == 0)
        return stride(from: bytes.count, to: 0, by: -8).map { end in
            bytes[(end - 8)..<end].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
    }

    /// base^exp mod n by GMP (mpz_powm through BigNumber).
    static func gmp(_ base: [UInt64], _ exp: [UInt64], _ n: [UInt64]) throws -> [UInt64] {
        let r = BigNumber(bytes: bytes(base)).powModVarTime(BigNumber(bytes: bytes(exp)), BigNumber(bytes: bytes(n)))
        return limbs(try r.bytes(count: 8 * n.count))
    }

    static func withModulus<R>(_ n: [UInt64], _ body: (OpaquePointer) throws -> R) throws -> R {
        let m = try XCTUnwrap(n.withUnsafeBufferPointer { rsakit_vec_modulus_create($0.baseAddress, n.count) })
        defer { rsakit_vec_modulus_destroy(m) }
        return try body(m)
    }

    static func powm(_ impl: rsakit_vec_impl, _ m: OpaquePointer, _ base: [UInt64], _ exp: [UInt64]) -> (
        Int32, [UInt64]
    ) {
        var r = [UInt64](repeating: 0xAA, count: base.count)
        let status = rsakit_vec_powm(impl, m, &r, base, exp, exp.count)
        return (status, r)
    }

    static func powm8(_ impl: rsakit_vec_impl, _ m: OpaquePointer, _ bases: [[UInt64]], _ exp: [UInt64]) -> (
        Int32, [[UInt64]]
    ) {
        let l = bases[0].count
        var r = [UInt64](repeating: 0xAA, count: 8 * l)
        let status = rsakit_vec_powm8(impl, m, &r, bases.flatMap { $0 }, exp, exp.count)
        return (status, (0..<8).map { Array(r[($0 * l)..<(($0 + 1) * l)]) })
    }

    /// How many random inputs a check draws besides its crafted and edge ones: `full` in the
    /// long run (RSAKIT_FULL_SAMPLES=1, set by scripts/long-run.sh), `ci` otherwise, to keep
    /// CI within its time budget on machines without IFMA, where the emulation is slow. Every
    /// crafted and edge input is checked in both; only the random sampling is smaller.
    static let fullSamples = ProcessInfo.processInfo.environment["RSAKIT_FULL_SAMPLES"] == "1"
    static func randomSamples(full: Int, ci: Int) -> Int { fullSamples ? full : ci }

    /// An odd modulus of `count` limbs with its top bit set.
    static func modulus(_ rng: inout Rng, _ count: Int) -> [UInt64] {
        var n = rng.limbs(count)
        n[0] |= 1
        n[count - 1] |= 1 << 63
        return n
    }

    /// Edge bases for n: 0, 1, 2, n - 1, n - 2, n - 2^20 (just below n), n with its low limb
    /// cleared minus 1, all-ones limbs below a top limb of n's top - 1, then random ones.
    static func edgeBases(_ n: [UInt64], _ rng: inout Rng, random: Int) -> [[UInt64]] {
        let count = n.count
        func minus(_ v: UInt64) -> [UInt64] {
            var r = n, borrow = v
            for i in 0..<count {
                let (d, o) = r[i].subtractingReportingOverflow(borrow)
                r[i] = d; borrow = o ? 1 : 0
            }
            return r
        }
        let zero = [UInt64](repeating: 0, count: count)
        var one = zero; one[0] = 1
        var two = zero; two[0] = 2
        var lowCleared = n; lowCleared[0] = 0  // n with its low limb cleared
        lowCleared[1] &-= 1; lowCleared[0] = ~0  // ... minus 1 (n[1] has no borrow issue: n[1] != 0 in practice)
        var allOnes = [UInt64](repeating: ~0, count: count); allOnes[count - 1] = n[count - 1] - 1
        var bases = [zero, one, two, minus(1), minus(2), minus(1 << 20), allOnes]
        if n[1] != 0 { bases.append(lowCleared) }
        for _ in 0..<random {
            var b = rng.limbs(count)
            b[count - 1] >>= 1
            bases.append(b)
        }
        return bases
    }

    /// (limb count, exponent limbs) per case: the three size classes exactly, sizes below a
    /// class, with full-length exponents where the debug build's speed allows.
    static let sizes: [(limbs: Int, expLimbs: Int)] = [(16, 16), (24, 4), (32, 4), (7, 7), (8, 8), (17, 3), (32, 32)]

    // MARK: - Reference and kernel algorithm against GMP

    func checkAgainstGMP(_ impl: rsakit_vec_impl, name: String) throws {
        var rng = Rng(state: 0x1234_5678_9ABC_DEF1)
        for (count, expLimbs) in Self.sizes {
            var moduli = [Self.modulus(&rng, count)]
            if count == 16 { moduli.append([UInt64](repeating: ~0, count: count)) }  // all-ones limbs
            for n in moduli {
                var exps = [rng.limbs(expLimbs)]
                if count <= 16 {
                    exps.append([UInt64](repeating: ~0, count: expLimbs))  // all-ones exponent
                    exps.append([1] + [UInt64](repeating: 0, count: expLimbs - 1))  // e = 1
                }
                // Above 16 limbs only bases 0, 3 and 6 (edges) run singly and the first 8 as lanes.
                let bases = Self.edgeBases(n, &rng, random: count <= 16 ? Self.randomSamples(full: 4, ci: 1) : 1)
                try Self.withModulus(n) { m in
                    for exp in exps {
                        for (i, base) in bases.enumerated() where count <= 16 || i % 3 == 0 {
                            let (status, r) = Self.powm(impl, m, base, exp)
                            XCTAssertEqual(status, 0)
                            XCTAssertEqual(r, try Self.gmp(base, exp, n), "\(name) single, \(count) limbs, base \(i)")
                        }
                        let lanes = Array(bases.prefix(8))
                        let (status, r) = Self.powm8(impl, m, lanes, exp)
                        XCTAssertEqual(status, 0)
                        for l in 0..<8 {
                            XCTAssertEqual(r[l], try Self.gmp(lanes[l], exp, n), "\(name) lane \(l), \(count) limbs")
                        }
                    }
                }
            }
        }
    }

    /// rsakit_vec_powm2: two moduli of one size class (of equal or different limb counts) in
    /// lockstep, each result equal to GMP's, edge bases paired with random ones; moduli of
    /// two size classes are refused with both results zeroed.
    func checkDualAgainstGMP(_ impl: rsakit_vec_impl, name: String) throws {
        var rng = Rng(state: 0x0DDB_A11C_0FFE_E002)
        for (limbs0, limbs1, expLimbs) in [(8, 8, 8), (16, 16, 16), (16, 13, 5), (24, 24, 4), (32, 32, 4), (32, 25, 3)]
        {
            let n0 = Self.modulus(&rng, limbs0), n1 = Self.modulus(&rng, limbs1)
            let random = Self.randomSamples(full: 2, ci: 1)
            let bases0 = Self.edgeBases(n0, &rng, random: random), bases1 = Self.edgeBases(n1, &rng, random: random)
            let e0 = rng.limbs(expLimbs), e1 = rng.limbs(expLimbs)
            try Self.withModulus(n0) { m0 in
                try Self.withModulus(n1) { m1 in
                    for i in 0..<min(bases0.count, bases1.count) where limbs0 <= 16 || i % 3 == 0 {
                        let b0 = bases0[i], b1 = bases1[bases1.count - 1 - i]
                        var r0 = [UInt64](repeating: 0xAA, count: limbs0), r1 = [UInt64](repeating: 0xAA, count: limbs1)
                        let status = rsakit_vec_powm2(impl, expLimbs, m0, &r0, b0, e0, m1, &r1, b1, e1)
                        XCTAssertEqual(status, 0)
                        XCTAssertEqual(
                            r0, try Self.gmp(b0, e0, n0), "\(name) dual first, \(limbs0)/\(limbs1) limbs, base \(i)")
                        XCTAssertEqual(
                            r1, try Self.gmp(b1, e1, n1), "\(name) dual second, \(limbs0)/\(limbs1) limbs, base \(i)")
                    }
                }
            }
        }
        let n0 = Self.modulus(&rng, 16), n1 = Self.modulus(&rng, 17)
        try Self.withModulus(n0) { m0 in
            try Self.withModulus(n1) { m1 in
                var r0 = [UInt64](repeating: 0xAA, count: 16), r1 = [UInt64](repeating: 0xAA, count: 17)
                XCTAssertEqual(rsakit_vec_powm2(impl, 1, m0, &r0, rng.limbs(16), [3], m1, &r1, rng.limbs(17), [3]), -1)
                XCTAssertEqual(r0, [UInt64](repeating: 0, count: 16))
                XCTAssertEqual(r1, [UInt64](repeating: 0, count: 17))
            }
        }
    }

    /// rsakit_vec_powm_public_exponent and its eight-lane form (the re-encryption check's
    /// m'^e mod n) equal GMP's for e = 65537, 3, 1 and a 64-bit e, on edge and random bases.
    func checkPublicExponentAgainstGMP(_ impl: rsakit_vec_impl, name: String) throws {
        var rng = Rng(state: 0x0E0E_0E0E_0E0E_0E0E)
        let exponents: [[UInt64]] = [[65537], [3], [1], [rng.next() | 1 << 63], [0xFFFF_FFFF, 1]]
        for limbs in [16, 32, 11] {
            let n = Self.modulus(&rng, limbs)
            let bases = Self.edgeBases(n, &rng, random: Self.randomSamples(full: 2, ci: 1))
            try Self.withModulus(n) { m in
                for e in exponents {
                    let ebits = e.count * 64 - e.last!.leadingZeroBitCount
                    for (i, base) in bases.enumerated() {
                        var r = [UInt64](repeating: 0xAA, count: limbs)
                        XCTAssertEqual(rsakit_vec_powm_public_exponent(impl, m, &r, base, e, e.count, ebits), 0)
                        XCTAssertEqual(r, try Self.gmp(base, e, n), "\(name) e \(e), \(limbs) limbs, base \(i)")
                    }
                    let lanes = Array(bases.prefix(8))
                    var r8 = [UInt64](repeating: 0xAA, count: 8 * limbs)
                    XCTAssertEqual(
                        rsakit_vec_powm8_public_exponent(impl, m, &r8, lanes.flatMap { $0 }, e, e.count, ebits), 0)
                    for l in 0..<8 {
                        XCTAssertEqual(
                            Array(r8[(l * limbs)..<((l + 1) * limbs)]), try Self.gmp(lanes[l], e, n),
                            "\(name) e \(e), \(limbs) limbs, lane \(l)")
                    }
                }
                var r = [UInt64](repeating: 0xAA, count: limbs)
                XCTAssertEqual(
                    rsakit_vec_powm_public_exponent(impl, m, &r, bases[0], [3], 1, 0), -1, "ebits 0 is refused")
                XCTAssertEqual(r, [UInt64](repeating: 0, count: limbs))
            }
        }
    }

    /// rsakit_vec_mulmod8 (the eight-lane path's blinding and unblinding products) equals
    /// GMP's a b mod n lane by lane, on edge values against edge and random factors, in the
    /// classes the private path uses it (16, 24 and 32 limbs, and 11).
    func checkMulModAgainstGMP(_ impl: rsakit_vec_impl, name: String) throws {
        var rng = Rng(state: 0x5EED_0B1D_0000_0021)
        for limbs in [16, 24, 32, 11] {
            let n = Self.modulus(&rng, limbs)
            let N = BigNumber(bytes: Self.bytes(n))
            let values = Self.edgeBases(n, &rng, random: 8)
            try Self.withModulus(n) { m in
                for shift in [0, 3, 5] {
                    let a = (0..<8).map { values[$0 % values.count] }
                    let b = (0..<8).map { values[($0 + shift + 1) % values.count] }
                    var r = [UInt64](repeating: 0xAA, count: 8 * limbs)
                    XCTAssertEqual(rsakit_vec_mulmod8(impl, m, &r, a.flatMap { $0 }, b.flatMap { $0 }), 0)
                    for l in 0..<8 {
                        let expected = (BigNumber(bytes: Self.bytes(a[l])) * BigNumber(bytes: Self.bytes(b[l]))).mod(N)
                        XCTAssertEqual(
                            Array(r[(l * limbs)..<((l + 1) * limbs)]), Self.limbs(try expected.bytes(count: 8 * limbs)),
                            "\(name) \(limbs) limbs, shift \(shift), lane \(l)")
                    }
                    // r may alias a.
                    var aliased = a.flatMap { $0 }
                    XCTAssertEqual(
                        aliased.withUnsafeMutableBufferPointer { buffer in
                            rsakit_vec_mulmod8(impl, m, buffer.baseAddress, buffer.baseAddress, b.flatMap { $0 })
                        }, 0)
                    XCTAssertEqual(aliased, r, "\(name) \(limbs) limbs, r aliasing a")
                }
            }
        }
    }

    func testMulMod_ReferenceAndEmulatedKernelMatchGMP() throws {
        try checkMulModAgainstGMP(RSAKIT_VEC_IMPL_REFERENCE, name: "reference")
        try checkMulModAgainstGMP(RSAKIT_VEC_IMPL_IFMA_EMULATED, name: "emulated kernel")
    }

    func testIFMAKernel_MulModMatchesGMP() throws {
        try requireIFMA()
        try checkMulModAgainstGMP(RSAKIT_VEC_IMPL_IFMA, name: "IFMA kernel")
    }

    func testPublicExponent_ReferenceAndEmulatedKernelMatchGMP() throws {
        try checkPublicExponentAgainstGMP(RSAKIT_VEC_IMPL_REFERENCE, name: "reference")
        try checkPublicExponentAgainstGMP(RSAKIT_VEC_IMPL_IFMA_EMULATED, name: "emulated kernel")
    }

    func testIFMAKernel_PublicExponentMatchesGMP() throws {
        try requireIFMA()
        try checkPublicExponentAgainstGMP(RSAKIT_VEC_IMPL_IFMA, name: "IFMA kernel")
    }

    func testDual_ReferenceAndEmulatedKernelMatchGMP() throws {
        try checkDualAgainstGMP(RSAKIT_VEC_IMPL_REFERENCE, name: "reference")
        try checkDualAgainstGMP(RSAKIT_VEC_IMPL_IFMA_EMULATED, name: "emulated kernel")
    }

    func testReference_MatchesGMP_EdgeAndRandomInputs() throws {
        try checkAgainstGMP(RSAKIT_VEC_IMPL_REFERENCE, name: "reference")
    }

    func testKernelAlgorithmEmulated_MatchesGMP_EdgeAndRandomInputs() throws {
        try checkAgainstGMP(RSAKIT_VEC_IMPL_IFMA_EMULATED, name: "emulated kernel")
    }

    func testSelfTest_ReferenceAndEmulatedKernelPass() {
        XCTAssertEqual(rsakit_vec_selftest(RSAKIT_VEC_IMPL_REFERENCE), 0)
        XCTAssertEqual(rsakit_vec_selftest(RSAKIT_VEC_IMPL_IFMA_EMULATED), 0)
    }

    /// The dispatch's known-answer digest is the portable reference's (the constant in
    /// rsakit_vector_dispatch.c was made by it), and the kernel's algorithm gives it too.
    func testKnownAnswer_ReferenceAndEmulatedKernelMatchTheDigest() {
        XCTAssertEqual(rsakit_vec_known_answer_test(RSAKIT_VEC_IMPL_REFERENCE), 0)
        XCTAssertEqual(rsakit_vec_known_answer_test(RSAKIT_VEC_IMPL_IFMA_EMULATED), 0)
    }

    /// Seven fixed lanes and one varying lane (at several positions): the fixed lanes'
    /// results never move and every lane matches GMP.
    func checkLanesIndependent(_ impl: rsakit_vec_impl) throws {
        var rng = Rng(state: 0xDEAD_BEEF_F00D_0001)
        for count in [16, 24] {
            let n = Self.modulus(&rng, count)
            let exp = rng.limbs(3)
            var fixed = Self.edgeBases(n, &rng, random: 8)
            fixed = Array(fixed.shuffledDeterministically(seed: UInt64(count)).prefix(8))
            try Self.withModulus(n) { m in
                let expected = try fixed.map { try Self.gmp($0, exp, n) }
                for varying in [0, 3, 7] {
                    for value in Self.edgeBases(n, &rng, random: 2).prefix(5) {
                        var lanes = fixed
                        lanes[varying] = value
                        let (status, r) = Self.powm8(impl, m, lanes, exp)
                        XCTAssertEqual(status, 0)
                        for l in 0..<8 where l != varying {
                            XCTAssertEqual(r[l], expected[l], "fixed lane \(l) moved (varying lane \(varying))")
                        }
                        XCTAssertEqual(r[varying], try Self.gmp(value, exp, n), "varying lane \(varying)")
                    }
                }
            }
        }
    }

    func testMultiBuffer_LanesIndependent_Reference() throws { try checkLanesIndependent(RSAKIT_VEC_IMPL_REFERENCE) }

    func testMultiBuffer_LanesIndependent_EmulatedKernel() throws {
        try checkLanesIndependent(RSAKIT_VEC_IMPL_IFMA_EMULATED)
    }

    func testLayoutConversions_RoundTripAndPlaceDigits() throws {
        var rng = Rng(state: 99)
        for count in [16, 24, 32, 5, 8, 9] {
            let n = Self.modulus(&rng, count)
            try Self.withModulus(n) { m in
                let words = rsakit_vec_modulus_words(m), digits = rsakit_vec_modulus_digits(m)
                XCTAssertEqual(digits, count <= 8 ? 10 : count <= 16 ? 20 : count <= 24 ? 30 : 40)
                XCTAssertEqual(words, (digits + 7) / 8 * 8)
                var x = rng.limbs(count)
                var d = [UInt64](repeating: 0, count: words)
                rsakit_vec_to_digits(m, &d, x)
                // digit i = bits [52 i, 52 i + 52): check digit 1 by hand.
                XCTAssertEqual(d[1], ((x[0] >> 52) | (x[1] << 12)) & 0xF_FFFF_FFFF_FFFF)
                XCTAssertTrue(d.allSatisfy { $0 < 1 << 52 })
                XCTAssertTrue(d[digits...].allSatisfy { $0 == 0 }, "pad words are zero")
                var back = [UInt64](repeating: 0, count: count)
                rsakit_vec_from_digits(m, &back, d)
                XCTAssertEqual(back, x)
                var d8 = [UInt64](repeating: 0, count: 8 * digits)
                rsakit_vec_to_lane(m, &d8, 5, x)
                XCTAssertEqual(d8[8 * 1 + 5], d[1])
                XCTAssertEqual(d8[8 * 1 + 4], 0)
                rsakit_vec_from_lane(m, &back, d8, 5)
                XCTAssertEqual(back, x)
                x[0] = 0
            }
        }
    }

    // MARK: - Dispatch

    func testDispatch_ReportsThePathThatRuns() {
        let env = ProcessInfo.processInfo.environment["RSAKIT_DISABLE_IFMA"] ?? ""
        let disabled = !env.isEmpty && env != "0"
        let path = RSAKitEngine.privateKeyPath
        let forced = ProcessInfo.processInfo.environment["RSAKIT_ENGINE"] ?? ""
        if forced.isEmpty && (disabled || !RSAKitEngine.cpuSupportsIFMA) {
            XCTAssertEqual(path, RSAKitEngine.cpuSupportsADX ? .adx : .gmp)
        }
        if forced.isEmpty {
            XCTAssertEqual(rsakit_vec_private_path() == RSAKIT_VEC_PATH_IFMA, path == .ifma)
        }
        XCTAssertTrue(RSAKitEngine.privateKeyPathDescription.hasPrefix(path.rawValue + " ("))
        if !RSAKitEngine.cpuSupportsIFMA {
            print("note: this CPU has no AVX-512 IFMA: the private path is \(RSAKitEngine.privateKeyPathDescription)")
        }
        // A key built now carries the kernel exactly when the dispatch says ifma.
        if let key = try? TestKeys.generated(bits: 1024) {
            XCTAssertEqual(key.storage.vectorKernel == .ifma, path == .ifma)
            XCTAssertEqual(key.storage.path, path)
            XCTAssertEqual(key.preferredBlockGroupSize, path == .ifma ? 8 : 1)
        }
    }

    /// The built VectorCTHarness (beside the test bundle), or a visible skip.
    static func harness() throws -> URL {
        let url = Bundle.main.bundleURL.appendingPathComponent("VectorCTHarness")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw XCTSkip("VectorCTHarness not built at \(url.path): run `swift build --build-tests` first")
        }
        return url
    }

    func testDispatch_DisableIFMAIsHonouredInAFreshProcess() throws {
        let harness = try Self.harness().path
        var env = ProcessInfo.processInfo.environment
        env["RSAKIT_DISABLE_IFMA"] = "1"
        let disabled = try ChildProcess.runMerged([harness, "--path"], environment: env)
        XCTAssertEqual(disabled.status, 0)
        XCTAssertTrue(disabled.output.hasPrefix("1 gmp ("), disabled.output)
        XCTAssertTrue(disabled.output.contains("RSAKIT_DISABLE_IFMA"), disabled.output)
        for value in [nil, "0"] as [String?] {
            env["RSAKIT_DISABLE_IFMA"] = value
            let free = try ChildProcess.runMerged([harness, "--path"], environment: env)
            XCTAssertEqual(free.status, 0)
            let expected = RSAKitEngine.cpuSupportsIFMA ? ["3 ifma (", "2 gmp ("] : ["0 gmp ("]
            XCTAssertTrue(
                expected.contains { free.output.hasPrefix($0) },
                "RSAKIT_DISABLE_IFMA=\(value ?? "unset"): \(free.output)")
        }
    }

    func testDispatch_IFMACallsFailWhereTheCPULacksIt() throws {
        guard !RSAKitEngine.cpuSupportsIFMA else {
            throw XCTSkip("this CPU has AVX-512 IFMA: the refusal path is not reachable here")
        }
        var rng = Rng(state: 5)
        let n = Self.modulus(&rng, 16)
        try Self.withModulus(n) { m in
            let (status, r) = Self.powm(RSAKIT_VEC_IMPL_IFMA, m, rng.limbs(16), [3])
            XCTAssertEqual(status, -1)
            XCTAssertEqual(r, [UInt64](repeating: 0, count: 16))
            XCTAssertEqual(rsakit_vec_selftest(RSAKIT_VEC_IMPL_IFMA), -1)
            XCTAssertEqual(rsakit_vec_known_answer_test(RSAKIT_VEC_IMPL_IFMA), -1)
        }
        let key = try TestKeys.generated(bits: 1024)
        XCTAssertNil(try key.withVectorKernel(.ifma), "the IFMA kernel must not attach without the CPU")
    }

    // MARK: - The private path with the kernel in the constant-time seam

    func checkPrivatePath(_ impl: VectorImplementation, bits: [Int]) throws {
        for size in bits {
            let gmpKey = try TestKeys.generated(bits: size)
            let key = try XCTUnwrap(try gmpKey.withVectorKernel(impl))
            XCTAssertEqual(key.storage.vectorKernel, impl)
            XCTAssertEqual(key.preferredBlockGroupSize, 8)
            let random = DeterministicRandomSource(seed: 3)
            let inputs = try ConstantTimePathTests.inputs(for: gmpKey, randomInputs: Self.randomSamples(full: 3, ci: 1))
            for (i, c) in inputs.enumerated() {
                XCTAssertEqual(
                    try key.rsadp(c, random: random), try ConstantTimePathTests.plainRSADP(gmpKey, c),
                    "\(impl) rsadp \(size) input \(i)")
            }
            // Batches of 2 (single-buffer) and 8 (multi-buffer).
            for count in [2, 8] {
                let batch = Array(inputs.prefix(count))
                let got = try key.rsadp(batch: batch, random: random)
                XCTAssertEqual(
                    got, try batch.map { try ConstantTimePathTests.plainRSADP(gmpKey, $0) }, "\(impl) batch of \(count)"
                )
            }
            // Chunked decryption in 8-block groups (19 blocks: two full groups and a short one),
            // serial and parallel, against the GMP key's output.
            let message = (0..<(19 * (gmpKey.modulusByteCount - 11) - 5)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let ciphertext = try RSAPKCS1v15Chunking.encrypt(message, with: gmpKey.publicKey)
            for concurrency in [1, 3] {
                XCTAssertEqual(
                    try RSAPKCS1v15Chunking.decrypt(ciphertext, with: key, concurrency: concurrency), message)
            }
            var broken = ciphertext
            broken[ciphertext.count - 1] ^= 1
            XCTAssertThrowsError(try RSAPKCS1v15Chunking.decrypt(broken, with: key)) { error in
                XCTAssertEqual(error as? RSAError, RSAError.decryptionFailed)
            }
        }
    }

    func testPrivatePath_EmulatedKernelInTheSeamMatchesGMP() throws {
        try checkPrivatePath(.ifmaEmulated, bits: [1024, 2048])
    }

    func testPrivatePath_ReferenceInTheSeamMatchesGMP() throws {
        try checkPrivatePath(.reference, bits: [1024])
    }

    /// A 3-prime key (`openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -pkeyopt
    /// rsa_keygen_primes:3`): the seam runs one exponentiation per prime, each its own class.
    func testPrivatePath_MultiPrimeKeyOnTheEmulatedKernel() throws {
        // At 3072 bits n has no kernel context of its own: the check runs on the three
        // primes and is recombined (seam_check_by_primes), for one block and for eight.
        for bits in [2048, 3072] {
            let path = TestKeys.scratch.appendingPathComponent("vector-multi-3-\(bits).pem").path
            _ = try OpenSSL.run([
                "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)",
                "-pkeyopt", "rsa_keygen_primes:3", "-out", path
            ])
            let gmpKey = try RSAPrivateKey(
                pemRepresentation: String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self))
            XCTAssertEqual(gmpKey.storage.otherPrimes.count, 1)
            let key = try XCTUnwrap(try gmpKey.withVectorKernel(.ifmaEmulated))
            let random = DeterministicRandomSource(seed: 11)
            let inputs = try ConstantTimePathTests.inputs(for: gmpKey, randomInputs: Self.randomSamples(full: 2, ci: 1))
            for (i, c) in inputs.enumerated() {
                XCTAssertEqual(
                    try key.rsadp(c, random: random), try ConstantTimePathTests.plainRSADP(gmpKey, c),
                    "\(bits) bits, input \(i)")
            }
            let batch = Array(inputs.prefix(8))
            XCTAssertEqual(
                try key.rsadp(batch: batch, random: random),
                try batch.map { try ConstantTimePathTests.plainRSADP(gmpKey, $0) }, "\(bits) bits, a batch")
        }
    }

    func testPrivatePath_DecryptsOpenSSLCiphertextOnTheVectorKernel() throws {
        let (path, gmpKey) = try TestKeys.openssl(bits: 2048)
        let key = try XCTUnwrap(try gmpKey.withVectorKernel(RSAKitEngine.cpuSupportsIFMA ? .ifma : .ifmaEmulated))
        let message = Array("the multi-buffer lanes each decrypt their own block".utf8)
        let ciphertext = try OpenSSL.run(
            ["pkeyutl", "-encrypt", "-inkey", path, "-pkeyopt", "rsa_padding_mode:pkcs1"], input: message)
        XCTAssertEqual(ciphertext.count, key.modulusByteCount)
        XCTAssertEqual(try key.decrypt(ciphertext), message)
    }

    /// Every Wycheproof RSAES-PKCS1-v1_5 case through the vector kernel (the IFMA kernel where
    /// the CPU has it, else its emulation): each case alone (single-buffer), then the valid
    /// ones in groups of 8 (multi-buffer). The GMP fallback runs them in WycheproofTests.
    /// Without IFMA (the emulation is slow in a debug build): the 2048-bit file in full with
    /// RSAKIT_LONG_TESTS=1 (else its first 24 cases), the 3072/4096-bit files' first 12 cases.
    func testWycheproof_EveryCaseThroughTheVectorKernel() throws {
        let impl: VectorImplementation = RSAKitEngine.cpuSupportsIFMA ? .ifma : .ifmaEmulated
        let long = ProcessInfo.processInfo.environment["RSAKIT_LONG_TESTS"] == "1"
        var ran = 0
        for name in PKCS1DecryptionVectors.files {
            let file = try JSONDecoder().decode(PKCS1DecryptionVectors.File.self, from: try Vectors.load(name))
            let limit = impl == .ifma ? Int.max : name.contains("2048") ? (long ? Int.max : 24) : 12
            for group in file.testGroups {
                let key = try XCTUnwrap(try PKCS1DecryptionVectors.key(of: group).withVectorKernel(impl))
                ran += try PKCS1DecryptionVectors.check(group, key: key, limit: limit, name: name, on: "\(impl)")
            }
        }
        print("Wycheproof through the vector kernel (\(impl)): \(ran) cases")
        XCTAssertGreaterThanOrEqual(ran, impl == .ifma ? 201 : long ? 100 : 48)
    }

    // MARK: - The real kernel (AVX-512 IFMA machines only)

    func requireIFMA() throws {
        guard RSAKitEngine.cpuSupportsIFMA else {
            let message =
                "THIS CPU HAS NO AVX-512 IFMA: the IFMA kernel itself is NOT TESTED here (the emulated kernel and "
                + "the reference are)"
            FileHandle.standardError.write(Data(("\n*** " + message + " ***\n").utf8))
            throw XCTSkip(message)
        }
    }

    func testIFMAKernel_MatchesGMP_EdgeAndRandomInputs() throws {
        try requireIFMA()
        XCTAssertEqual(rsakit_vec_selftest(RSAKIT_VEC_IMPL_IFMA), 0)
        XCTAssertEqual(rsakit_vec_known_answer_test(RSAKIT_VEC_IMPL_IFMA), 0)
        try checkAgainstGMP(RSAKIT_VEC_IMPL_IFMA, name: "IFMA kernel")
    }

    func testIFMAKernel_DualMatchesGMP() throws {
        try requireIFMA()
        try checkDualAgainstGMP(RSAKIT_VEC_IMPL_IFMA, name: "IFMA kernel")
    }

    /// The re-encryption check on the kernel refuses a faulty CRT half, for one block (p and
    /// q in lockstep) and for a batch of eight (one multi-buffer call); the same key without
    /// the fault decrypts both. Up to 2048 bits the check runs mod n; at 3072 bits prime by
    /// prime, recombined (seam_check_by_primes).
    func checkFaultIsCaught(_ implementation: VectorImplementation) throws {
        for bits in [1024, 2048, 3072] {
            let key = try TestKeys.generated(bits: bits)
            let message = [UInt8](repeating: 0x5A, count: 20)
            let c = try key.publicKey.encrypt(message)
            let good = try XCTUnwrap(try key.withVectorKernel(implementation))
            XCTAssertEqual(try good.decrypt(c), message)
            XCTAssertEqual(
                try good.rsadp(batch: [[UInt8]](repeating: c, count: 8), random: SystemRandomSource()).count, 8)
            let faulty = try XCTUnwrap(try key.withVectorKernel(implementation))
            XCTAssertTrue(faulty.storage.secret.attachFaultyVectorKernelForTests(implementation))
            XCTAssertThrowsError(try faulty.rsadp(c), "\(bits) bits, one block") { error in
                guard case .internalError? = error as? RSAError else { return XCTFail("\(error)") }
            }
            XCTAssertThrowsError(
                try faulty.rsadp(batch: [[UInt8]](repeating: c, count: 8), random: SystemRandomSource()),
                "\(bits) bits, eight blocks")
        }
    }

    func testCheck_AFaultIsCaughtByTheCheckOnTheEmulatedKernel() throws {
        try checkFaultIsCaught(.ifmaEmulated)
    }

    func testIFMAKernel_AFaultIsCaughtByTheCheckOnTheKernel() throws {
        try requireIFMA()
        try checkFaultIsCaught(.ifma)
    }

    func testIFMAKernel_LanesIndependent() throws {
        try requireIFMA()
        try checkLanesIndependent(RSAKIT_VEC_IMPL_IFMA)
    }

    func testIFMAKernel_PrivatePathMatchesGMP() throws {
        try requireIFMA()
        try checkPrivatePath(.ifma, bits: [1024, 2048, 3072, 4096])
    }

    // MARK: - Constant time under valgrind

    /// valgrind cannot read Swift's debug info, so the harness runs from a copy with its
    /// debug sections stripped (symbols stay, for readable reports).
    static func valgrindSetup() throws -> (valgrind: String, harness: String) {
        let harness = try Self.harness()
        let valgrind = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        guard let valgrind, FileManager.default.isExecutableFile(atPath: "/usr/bin/objcopy") else {
            throw XCTSkip(
                "valgrind (and objcopy) not installed: the constant-time check of the radix-2^52 reference is NOT RUN")
        }
        let copy = TestKeys.scratch.appendingPathComponent("VectorCTHarness-nodebug").path
        try? FileManager.default.removeItem(atPath: copy)
        let strip = try ChildProcess.runMerged(
            ["/usr/bin/objcopy", "--strip-debug", harness.path, copy], environment: [:])
        XCTAssertEqual(strip.status, 0, strip.output)
        return (valgrind, copy)
    }

    static func errorCount(_ output: String) -> Int? {
        guard let range = output.range(of: "ERROR SUMMARY: ") else { return nil }
        return Int(output[range.upperBound...].prefix { $0.isNumber })
    }

    func testValgrind_ReferenceHasNoSecretDependentBranchOrIndex() throws {
        let (valgrind, harness) = try Self.valgrindSetup()
        let result = try ChildProcess.runMerged(
            [valgrind, "--tool=memcheck", "--error-exitcode=99", harness], environment: [:])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("ok: 0 mismatches"), result.output)
        XCTAssertEqual(Self.errorCount(result.output), 0, result.output)
        XCTAssertFalse(result.output.contains("uninitialised value"), result.output)
    }

    func testValgrind_HarnessCatchesAPlantedSecretBranch() throws {
        let (valgrind, harness) = try Self.valgrindSetup()
        let result = try ChildProcess.runMerged(
            [valgrind, "--tool=memcheck", "--error-exitcode=99", harness, "--plant-leak"], environment: [:])
        XCTAssertEqual(result.status, 99, result.output)
        XCTAssertTrue(result.output.contains("Conditional jump or move depends on uninitialised value"), result.output)
        XCTAssertGreaterThan(Self.errorCount(result.output) ?? 0, 0)
    }
}

private extension Array {
    /// A fixed permutation (so "fixed lanes" mix edge and random values).
    func shuffledDeterministically(seed: UInt64) -> [Element] {
        var rng = VectorKernelTests.Rng(state: seed &+ 0x9E37_79B9)
        var a = self
        for i in stride(from: a.count - 1, to: 0, by: -1) {
            let j = Int(rng.next() % UInt64(i + 1))
            a.swapAt(i, j)
        }
        return a
    }
}

/// The Wycheproof RSAES-PKCS1-v1_5 decryption files (schema rsaes_pkcs1_decrypt_schema_v1.json),
/// decoded with the private-key components the kernel tests need (this file and MontADXKernelTests).
enum PKCS1DecryptionVectors {
    struct File: Decodable {
        let numberOfTests: Int
        let testGroups: [Group]
    }
    struct Group: Decodable {
        let keySize: Int
        let privateKey: PrivateKey
        let tests: [Case]
    }
    struct PrivateKey: Decodable {
        let modulus, publicExponent, privateExponent, prime1, prime2, exponent1, exponent2, coefficient: String
    }
    struct Case: Decodable {
        let tcId: Int
        let comment: String
        let msg: String
        let ct: String
        let result: String
        let flags: [String]
    }

    static let files = ["rsa_pkcs1_2048_test.json", "rsa_pkcs1_3072_test.json", "rsa_pkcs1_4096_test.json"]

    /// The group's key as RSAKit reads it (on the process's path).
    static func key(of group: Group) throws -> RSAPrivateKey {
        let c = group.privateKey
        return try RSAPrivateKey(
            modulus: Hex.decode(c.modulus), publicExponent: Hex.decode(c.publicExponent),
            privateExponent: Hex.decode(c.privateExponent),
            prime1: Hex.decode(c.prime1), prime2: Hex.decode(c.prime2),
            exponent1: Hex.decode(c.exponent1), exponent2: Hex.decode(c.exponent2),
            coefficient: Hex.decode(c.coefficient))
    }

    /// The group's first `limit` cases through `key`: each alone (a valid one gives its
    /// message, any other `RSAError.decryptionFailed`), then the valid ones eight at a time
    /// through the batch path. Returns the number of cases run.
    static func check(_ group: Group, key: RSAPrivateKey, limit: Int = Int.max, name: String, on path: String) throws
        -> Int
    {
        var ran = 0
        var valid: [(ct: [UInt8], msg: String)] = []
        for test in group.tests.prefix(limit) {
            ran += 1
            let where_ = "\(name) tcId \(test.tcId) (\(test.comment)) on \(path)"
            if test.result == "valid" {
                XCTAssertEqual(Hex.encode(try key.decrypt(Hex.decode(test.ct))), test.msg, where_)
                valid.append((Hex.decode(test.ct), test.msg))
            } else {
                XCTAssertThrowsError(try key.decrypt(Hex.decode(test.ct)), where_) { error in
                    XCTAssertEqual(error as? RSAError, .decryptionFailed, where_)
                }
            }
        }
        var start = 0
        while start < valid.count {
            let chunk = Array(valid[start..<min(start + 8, valid.count)])
            let got = try key.decrypt(blocks: chunk.map { $0.ct[...] }, random: SystemRandomSource())
            XCTAssertEqual(
                got.map(Hex.encode), chunk.map(\.msg), "\(name) valid cases \(start)... in one group on \(path)")
            start += 8
        }
        return ran
    }
}
