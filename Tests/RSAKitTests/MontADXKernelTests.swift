import Foundation
import XCTest
internal import CRSAKitMontADX
internal import CRSAKitMontADXSeam
import RSAKit
@testable import RSAKitCore
import RSAKitTestSupport

/// The radix-2^64 Montgomery kernel on mulx/adcx/adox (CRSAKitMontADX), called directly:
/// its known-answer digest, every entry point against GMP at every modulus size from 1 to 64
/// limbs (odd and padded sizes included) on edge and random inputs, argument refusals, and
/// the kernel under valgrind with its secrets marked undefined plus the harness's two planted
/// controls; then the kernel in the private path's seam (rsakit_adx_sec_attach): RSADP against
/// GMP for two- and three-prime keys up to 4160 bits, batches, a simulated fault caught by the
/// re-encryption check, and every Wycheproof RSAES-PKCS1-v1_5 case. Every test skips visibly
/// on a CPU without BMI2/ADX (and off x86-64, where the target is stubs).
final class MontADXKernelTests: XCTestCase {
    // MARK: - Helpers

    typealias Rng = VectorKernelTests.Rng

    static func requireADX() throws {
        try XCTSkipUnless(
            rsakit_adx_cpu_supported() == 1,
            "this CPU has no BMI2/ADX (or is not x86-64): the ADX kernel is NOT TESTED here")
    }

    /// base^exp mod n by GMP (mpz_powm through BigNumber).
    static func gmpPowm(_ base: [UInt64], _ exp: [UInt64], _ n: [UInt64]) throws -> [UInt64] {
        try VectorKernelTests.gmp(base, exp, n)
    }

    /// a b mod n by GMP.
    static func gmpMulMod(_ a: [UInt64], _ b: [UInt64], _ n: [UInt64]) throws -> [UInt64] {
        let bn = { (x: [UInt64]) in BigNumber(bytes: VectorKernelTests.bytes(x)) }
        let r = (bn(a) * bn(b)).mod(bn(n))
        return VectorKernelTests.limbs(try r.bytes(count: 8 * n.count))
    }

    static func withModulus<R>(_ n: [UInt64], _ body: (OpaquePointer) throws -> R) throws -> R {
        let m = try XCTUnwrap(
            n.withUnsafeBufferPointer { rsakit_adx_modulus_create($0.baseAddress, n.count) },
            "modulus_create refused \(n.count) limbs")
        defer { rsakit_adx_modulus_destroy(m) }
        return try body(m)
    }

    static func powm(_ m: OpaquePointer, _ base: [UInt64], _ exp: [UInt64]) -> (Int32, [UInt64]) {
        var r = [UInt64](repeating: 0xAA, count: base.count)
        let status = rsakit_adx_powm(m, &r, base, exp, exp.count)
        return (status, r)
    }

    /// 0, 1, n - 1, then `random` random values of n's limb count (any value below
    /// 2^(64 limbs), so some are above n).
    static func bases(_ n: [UInt64], _ rng: inout Rng, random: Int) -> [[UInt64]] {
        let zero = [UInt64](repeating: 0, count: n.count)
        var one = zero; one[0] = 1
        var nMinus1 = n; nMinus1[0] -= 1  // n is odd
        return [zero, one, nMinus1] + (0..<random).map { _ in rng.limbs(n.count) }
    }

    // MARK: - Known answer and dispatch facts

    func testKnownAnswer_MatchesTheDigestComputedByPython() throws {
        try Self.requireADX()
        XCTAssertEqual(rsakit_adx_known_answer_test(), 0)
        XCTAssertEqual(rsakit_adx_usable(), 1)
    }

    func testCPUCheck_AgreesWithProcCPUInfo() throws {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let flags = Set(
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ").map(String.init) ?? []
        )
        #if arch(x86_64)
        XCTAssertEqual(rsakit_adx_cpu_supported() == 1, flags.contains("adx") && flags.contains("bmi2"))
        #else
        XCTAssertEqual(rsakit_adx_cpu_supported(), 0)
        XCTAssertNil(rsakit_adx_modulus_create([3], 1))
        XCTAssertEqual(rsakit_adx_known_answer_test(), -1)
        #endif
    }

    // MARK: - Against GMP

    /// Every limb count 1 ... 64: a random odd modulus with its top bit set, a full-length
    /// random exponent on a random base, and the edge bases 0, 1, n - 1 on a 2-limb exponent.
    func testPowm_MatchesGMPAtEveryLimbCount() throws {
        try Self.requireADX()
        var rng = Rng(state: 0xADC0_FFEE_1234_5679)
        for count in 1...64 {
            let n = VectorKernelTests.modulus(&rng, count)
            try Self.withModulus(n) { m in
                XCTAssertEqual(rsakit_adx_modulus_limbs(m), count)
                let full = rng.limbs(count)
                let base = rng.limbs(count)
                let (status, r) = Self.powm(m, base, full)
                XCTAssertEqual(status, 0)
                XCTAssertEqual(r, try Self.gmpPowm(base, full, n), "\(count) limbs, full-length exponent")
                let short = rng.limbs(2)
                for (k, b) in Self.bases(n, &rng, random: 0).enumerated() {
                    XCTAssertEqual(
                        Self.powm(m, b, short).1, try Self.gmpPowm(b, short, n), "\(count) limbs, edge base \(k)")
                }
            }
        }
    }

    /// Exponents 0, 1, 2, all ones, a single top bit; moduli of all-ones limbs and of small top
    /// limbs (5, and 1: n just above 2^(64 (limbs - 1)), where the constants' doublings start);
    /// bases at or above n.
    func testPowm_EdgeExponentsModuliAndBases() throws {
        try Self.requireADX()
        var rng = Rng(state: 0x0DDB_A11_5EED)
        for count in [8, 9, 16, 17, 24, 31, 32, 64] {
            var smallTop = VectorKernelTests.modulus(&rng, count)
            smallTop[count - 1] = 5
            var topOne = VectorKernelTests.modulus(&rng, count)  // just above 2^(64 (count - 1))
            topOne[count - 1] = 1
            let moduli = [
                VectorKernelTests.modulus(&rng, count), [UInt64](repeating: ~0, count: count), smallTop, topOne
            ]
            for n in moduli {
                try Self.withModulus(n) { m in
                    let zero = [UInt64](repeating: 0, count: 2)
                    var topBit = zero; topBit[1] = 1 << 63
                    let exps: [[UInt64]] = [zero, [1, 0], [2, 0], [~0, ~0], topBit]
                    let allOnes = [UInt64](repeating: ~0, count: count)
                    for b in Self.bases(n, &rng, random: 1) + [n, allOnes] {
                        for e in exps {
                            XCTAssertEqual(Self.powm(m, b, e).1, try Self.gmpPowm(b, e, n), "\(count) limbs, e \(e)")
                        }
                    }
                }
            }
        }
    }

    /// The CRT form: two moduli of different limb counts (p and q of one key need not have
    /// the same), both results against GMP, and r aliasing base.
    func testPowm2_MatchesGMP() throws {
        try Self.requireADX()
        var rng = Rng(state: 0x5EC0_4D2)
        for (c0, c1) in [(16, 16), (24, 23), (32, 31), (8, 64)] {
            let n0 = VectorKernelTests.modulus(&rng, c0), n1 = VectorKernelTests.modulus(&rng, c1)
            let expLimbs = max(c0, c1)
            let e0 = rng.limbs(expLimbs), e1 = rng.limbs(expLimbs)
            let b0 = rng.limbs(c0), b1 = rng.limbs(c1)
            try Self.withModulus(n0) { m0 in
                try Self.withModulus(n1) { m1 in
                    var r0 = b0, r1 = b1  // results written over their bases
                    XCTAssertEqual(rsakit_adx_powm2(expLimbs, m0, &r0, r0, e0, m1, &r1, r1, e1), 0)
                    XCTAssertEqual(r0, try Self.gmpPowm(b0, e0, n0), "\(c0) limbs")
                    XCTAssertEqual(r1, try Self.gmpPowm(b1, e1, n1), "\(c1) limbs")
                }
            }
        }
    }

    /// The re-encryption check's form: e = 65537, 3, 1 and a 2-limb public exponent, at
    /// sizes from 1 to 64 limbs (the check runs on n, up to 64 limbs for 4096-bit keys).
    func testPublicExponent_MatchesGMP() throws {
        try Self.requireADX()
        var rng = Rng(state: 0xE_65537)
        let exponents: [([UInt64], Int)] = [([65537], 17), ([3], 2), ([1], 1), ([0x8000_0000_0000_0001, 0x1234], 77)]
        for count in [1, 5, 8, 9, 16, 24, 32, 33, 48, 63, 64] {
            let n = VectorKernelTests.modulus(&rng, count)
            try Self.withModulus(n) { m in
                for b in Self.bases(n, &rng, random: 2) {
                    for (e, bits) in exponents {
                        var r = [UInt64](repeating: 0xAA, count: count)
                        XCTAssertEqual(rsakit_adx_powm_public_exponent(m, &r, b, e, e.count, bits), 0)
                        XCTAssertEqual(r, try Self.gmpPowm(b, e, n), "\(count) limbs, e \(e)")
                    }
                }
            }
        }
    }

    /// Blinding and unblinding products at every limb count, edge factors included, and r
    /// aliasing a.
    func testMulMod_MatchesGMPAtEveryLimbCount() throws {
        try Self.requireADX()
        var rng = Rng(state: 0xB11_4D)
        for count in 1...64 {
            let n = VectorKernelTests.modulus(&rng, count)
            try Self.withModulus(n) { m in
                let values = Self.bases(n, &rng, random: 2)
                for a in values {
                    for b in [values[2], values[3], values[4]] {
                        var r = a
                        XCTAssertEqual(rsakit_adx_mulmod(m, &r, r, b), 0)
                        XCTAssertEqual(r, try Self.gmpMulMod(a, b, n), "\(count) limbs")
                    }
                }
            }
        }
    }

    // MARK: - Arguments

    func testArguments_OutOfRangeAreRefusedAndZeroTheResult() throws {
        try Self.requireADX()
        XCTAssertNil(rsakit_adx_modulus_create([UInt64](repeating: 0xFF, count: 65), 65))
        XCTAssertNil(rsakit_adx_modulus_create([3], 0))
        XCTAssertNil(rsakit_adx_modulus_create(nil, 4))
        var rng = Rng(state: 77)
        let n = VectorKernelTests.modulus(&rng, 16)
        try Self.withModulus(n) { m in
            let base = rng.limbs(16)
            let exp = [UInt64](repeating: 3, count: 129)
            var r = [UInt64](repeating: 0xAA, count: 16)
            XCTAssertEqual(rsakit_adx_powm(m, &r, base, exp, 0), -1)
            XCTAssertEqual(r, [UInt64](repeating: 0, count: 16))
            r = [UInt64](repeating: 0xAA, count: 16)
            XCTAssertEqual(rsakit_adx_powm(m, &r, base, exp, 129), -1)
            XCTAssertEqual(r, [UInt64](repeating: 0, count: 16))
            r = [UInt64](repeating: 0xAA, count: 16)
            XCTAssertEqual(rsakit_adx_powm_public_exponent(m, &r, base, [65537], 1, 0), -1)
            XCTAssertEqual(r, [UInt64](repeating: 0, count: 16))
            XCTAssertEqual(rsakit_adx_powm_public_exponent(m, &r, base, [65537], 1, 65), -1)
            XCTAssertEqual(rsakit_adx_powm(nil, &r, base, exp, 1), -1)
            XCTAssertEqual(rsakit_adx_mulmod(m, &r, nil, base), -1)
        }
        XCTAssertEqual(rsakit_adx_modulus_limbs(nil), 0)
    }

    // MARK: - The private path with the kernel in the seam

    /// A copy of `gmpKey` with a storage of its own (so that re-attaching a kernel touches no
    /// shared key) whose constant-time form runs on the ADX kernel (or, with `faulty`, on its
    /// fault-injecting form).
    static func adxKey(_ gmpKey: RSAPrivateKey, faulty: Bool = false) throws -> RSAPrivateKey {
        let key = try XCTUnwrap(try gmpKey.withVectorKernel(.reference))
        let status = key.storage.secret.withHandle {
            faulty ? rsakit_adx_sec_attach_faulty_for_tests($0) : rsakit_adx_sec_attach($0)
        }
        XCTAssertEqual(status, 0, "rsakit_adx_sec_attach refused the key")
        return key
    }

    func checkPrivatePath(_ gmpKey: RSAPrivateKey, _ name: String) throws {
        let key = try Self.adxKey(gmpKey)
        let random = DeterministicRandomSource(seed: 5)
        let inputs = try ConstantTimePathTests.inputs(for: gmpKey, randomInputs: 1)
        for (i, c) in inputs.enumerated() {
            XCTAssertEqual(
                try key.rsadp(c, random: random), try ConstantTimePathTests.plainRSADP(gmpKey, c), "\(name) input \(i)")
        }
        for count in [2, 8] {
            let batch = Array(inputs.prefix(count))
            XCTAssertEqual(
                try key.rsadp(batch: batch, random: random),
                try batch.map { try ConstantTimePathTests.plainRSADP(gmpKey, $0) }, "\(name) batch of \(count)")
        }
    }

    /// Two-prime keys of 1024 to 4096 bits: exponentiations, blinding products and the check all
    /// on the kernel (n of at most 64 limbs).
    func testPrivatePath_TwoPrimeKeysOnTheADXSeamMatchGMP() throws {
        try Self.requireADX()
        for bits in [1024, 2048, 3072, 4096] {
            try checkPrivatePath(try TestKeys.generated(bits: bits), "\(bits) bits")
        }
    }

    /// Three-prime keys (`openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:B -pkeyopt
    /// rsa_keygen_primes:3`): at 2048 bits the primes differ in limb count from n's halves; at
    /// 4160 bits n has 65 limbs, beyond the kernel, so the check runs prime by prime and is
    /// recombined, and the blinding products stay on GMP.
    func testPrivatePath_ThreePrimeKeysOnTheADXSeamMatchGMP() throws {
        try Self.requireADX()
        for bits in [2048, 4160] {
            let path = TestKeys.scratch.appendingPathComponent("adx-multi-3-\(bits).pem").path
            _ = try OpenSSL.run([
                "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)",
                "-pkeyopt", "rsa_keygen_primes:3", "-out", path
            ])
            let gmpKey = try RSAPrivateKey(
                pemRepresentation: String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self))
            XCTAssertEqual(gmpKey.storage.otherPrimes.count, 1)
            try checkPrivatePath(gmpKey, "3 primes, \(bits) bits")
        }
    }

    /// A residue with one bit flipped after the exponentiation must be refused by the
    /// re-encryption check, for one block and for a batch.
    func testCheck_AFaultOnTheADXSeamIsCaught() throws {
        try Self.requireADX()
        for bits in [1024, 2048] {
            let gmpKey = try TestKeys.generated(bits: bits)
            let c = try gmpKey.publicKey.encrypt([UInt8](repeating: 0x5A, count: 20))
            XCTAssertEqual(try Self.adxKey(gmpKey).decrypt(c), [UInt8](repeating: 0x5A, count: 20))
            let faulty = try Self.adxKey(gmpKey, faulty: true)
            XCTAssertThrowsError(try faulty.rsadp(c), "\(bits) bits, one block") { error in
                guard case .internalError? = error as? RSAError else { return XCTFail("\(error)") }
            }
            XCTAssertThrowsError(
                try faulty.rsadp(batch: [[UInt8]](repeating: c, count: 8), random: SystemRandomSource()),
                "\(bits) bits, eight blocks")
        }
    }

    /// Every Wycheproof RSAES-PKCS1-v1_5 case (2048, 3072 and 4096 bits) through the ADX seam:
    /// each case alone, then the valid ones in groups of 8.
    func testWycheproof_EveryCaseThroughTheADXSeam() throws {
        try Self.requireADX()
        var ran = 0
        for name in PKCS1DecryptionVectors.files {
            let file = try JSONDecoder().decode(PKCS1DecryptionVectors.File.self, from: try Vectors.load(name))
            for group in file.testGroups {
                let key = try Self.adxKey(try PKCS1DecryptionVectors.key(of: group))
                ran += try PKCS1DecryptionVectors.check(group, key: key, name: name, on: "the ADX seam")
            }
        }
        XCTAssertGreaterThanOrEqual(ran, 201)
    }

    // MARK: - Constant time under valgrind

    /// The built MontADXCTHarness (beside the test bundle), stripped of its debug sections
    /// (valgrind 3.19 cannot read Swift clang's DWARF 5), or a visible skip.
    static func valgrindSetup() throws -> (valgrind: String, harness: String) {
        try requireADX()
        let url = Bundle.main.bundleURL.appendingPathComponent("MontADXCTHarness")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw XCTSkip("MontADXCTHarness not built at \(url.path): run `swift build --build-tests` first")
        }
        let valgrind = ["/usr/bin/valgrind", "/usr/local/bin/valgrind"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        guard let valgrind, FileManager.default.isExecutableFile(atPath: "/usr/bin/objcopy") else {
            throw XCTSkip("valgrind (and objcopy) not installed: the constant-time check of the ADX kernel is NOT RUN")
        }
        let copy = TestKeys.scratch.appendingPathComponent("MontADXCTHarness-nodebug").path
        try? FileManager.default.removeItem(atPath: copy)
        let strip = try ChildProcess.runMerged(["/usr/bin/objcopy", "--strip-debug", url.path, copy], environment: [:])
        XCTAssertEqual(strip.status, 0, strip.output)
        return (valgrind, copy)
    }

    func testValgrind_KernelHasNoSecretDependentBranchOrIndex() throws {
        let (valgrind, harness) = try Self.valgrindSetup()
        let result = try ChildProcess.runMerged(
            [valgrind, "--tool=memcheck", "--error-exitcode=99", harness], environment: [:])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertTrue(result.output.contains("MontADXCTHarness: ct, 0 mismatches"), result.output)
        XCTAssertEqual(VectorKernelTests.errorCount(result.output), 0, result.output)
        XCTAssertFalse(result.output.contains("uninitialised value"), result.output)
    }

    func testValgrind_HarnessCatchesAPlantedBranchOnAnExponentBit() throws {
        let (valgrind, harness) = try Self.valgrindSetup()
        let result = try ChildProcess.runMerged(
            [valgrind, "--tool=memcheck", "--error-exitcode=99", harness, "--plant-leak"], environment: [:])
        XCTAssertEqual(result.status, 99, result.output)
        XCTAssertTrue(result.output.contains("Conditional jump or move depends on uninitialised value"), result.output)
        XCTAssertGreaterThan(VectorKernelTests.errorCount(result.output) ?? 0, 0)
    }

    /// A branch on a kernel result before it is marked defined must be reported: memcheck's
    /// definedness tracking flows through mulx/adcx/adox, so the 0 above is not vacuous.
    func testValgrind_SecretnessFlowsThroughTheAssembly() throws {
        let (valgrind, harness) = try Self.valgrindSetup()
        let result = try ChildProcess.runMerged(
            [valgrind, "--tool=memcheck", "--error-exitcode=99", harness, "--plant-derived"], environment: [:])
        XCTAssertEqual(result.status, 99, result.output)
        XCTAssertGreaterThan(VectorKernelTests.errorCount(result.output) ?? 0, 0)
    }
}
