import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// Runs Tests/ConstantTimeHarness under `valgrind --tool=memcheck` with every secret
/// marked undefined (see the harness's header comment) and counts memcheck's reports of
/// secret-dependent control flow or addressing:
///   "Conditional jump or move depends on uninitialised value(s)" and
///   "Use of uninitialised value of size N".
/// The constant-time path (RSAES-PKCS1-v1_5 and RSAES-OAEP decryption, the padding decodes,
/// the container frame check, two- and three-prime keys) must give zero; the planted-branch variant must give some (so
/// the
/// harness cannot pass vacuously), and so must the planted branch inside the OAEP decode); the pre-rewrite mpz path is
/// measured for the record.
/// Skips visibly without valgrind.
final class ConstantTimeHarnessTests: XCTestCase {
    struct Report {
        var conditional = 0
        var uninitialisedUse = 0
        var harnessLine = ""
        var log = ""
        var total: Int { conditional + uninitialisedUse }
    }

    private static let valgrind: String? = TestTools.path(of: "valgrind")

    /// The harness built beside the test bundle, copied without its DWARF 5 debug info
    /// (valgrind 3.19 cannot read what Swift's clang writes and gives up on the binary).
    private static func harness() throws -> String {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var products = URL(fileURLWithPath: executable).deletingLastPathComponent()
        if products.lastPathComponent.hasSuffix(".xctest") { products.deleteLastPathComponent() }
        let built = products.appendingPathComponent("ConstantTimeHarness").path
        guard FileManager.default.isExecutableFile(atPath: built) else {
            throw RSAError.internalError("ConstantTimeHarness is not built; run `swift build --build-tests` first")
        }
        let stripped = TestKeys.scratch.appendingPathComponent("ConstantTimeHarness-\(getpid())").path
        if !FileManager.default.fileExists(atPath: stripped) {
            let strip = try run("/usr/bin/env", ["strip", "--strip-debug", "-o", stripped, built])
            guard strip.status == 0 else { throw RSAError.internalError("strip failed: \(strip.output)") }
        }
        return stripped
    }

    /// `executable arguments...` with stdout and stderr in one log; memcheck runs take minutes,
    /// hence the 30-minute deadline.
    private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try ChildProcess.runMerged([executable] + arguments, timeout: 1800)
    }

    /// Run the harness in `mode` on the key at `keyPath` under memcheck and count reports.
    static func memcheck(_ mode: String, keyPath: String, operations: Int = 4) throws -> Report {
        guard let valgrind else {
            let message = "VALGRIND NOT FOUND: the constant-time harness did not run (apt-get install valgrind)"
            FileHandle.standardError.write(Data("\n*** \(message) ***\n".utf8))
            throw XCTSkip(message)
        }
        let result = try run(
            valgrind,
            [
                "--tool=memcheck", "--error-limit=no", "--num-callers=24",
                try harness(), mode, keyPath, String(operations)
            ])
        var report = Report(log: result.output)
        for line in result.output.split(separator: "\n") {
            if line.contains("Conditional jump or move depends on uninitialised value") { report.conditional += 1 }
            if line.contains("Use of uninitialised value") { report.uninitialisedUse += 1 }
            if line.hasPrefix("harness ") { report.harnessLine = String(line) }
        }
        XCTAssertEqual(result.status, 0, result.output.suffix(3000).description)
        XCTAssertTrue(report.harnessLine.contains("failed=0"), "harness results: \(report.harnessLine)")
        XCTAssertTrue(report.harnessLine.contains("valgrind=true"), report.harnessLine)
        FileHandle.standardError.write(
            Data(
                ("constant-time harness mode=\(mode) key=\(URL(fileURLWithPath: keyPath).lastPathComponent): "
                    + "conditional=\(report.conditional) use=\(report.uninitialisedUse) | \(report.harnessLine)\n")
                    .utf8))
        return report
    }

    /// A 2048-bit key written by openssl (two primes), and a 3-prime one.
    private func keys() throws -> [String] {
        let (twoPrime, _) = try TestKeys.openssl(bits: 2048)
        let threePrime = TestKeys.scratch.appendingPathComponent("ct-harness-3prime-\(getpid()).pem").path
        if !FileManager.default.fileExists(atPath: threePrime) {
            // Command: openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -pkeyopt rsa_keygen_primes:3 -out
            // PATH
            try OpenSSL.run([
                "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                "-pkeyopt", "rsa_keygen_primes:3", "-out", threePrime
            ])
        }
        return [twoPrime, threePrime]
    }

    func testConstantTimePath_NoSecretDependentBranchOrIndexUnderMemcheck() throws {
        for key in try keys() {
            let report = try ConstantTimeHarnessTests.memcheck("ct", keyPath: key, operations: 6)
            XCTAssertEqual(report.conditional, 0, "conditional jumps on secrets:\n\(report.log.suffix(6000))")
            XCTAssertEqual(report.uninitialisedUse, 0, "secret-dependent uses:\n\(report.log.suffix(6000))")
        }
    }

    func testHarness_WithoutMarkingReportsNothing() throws {
        let report = try ConstantTimeHarnessTests.memcheck("none", keyPath: try keys()[0])
        XCTAssertEqual(report.total, 0, report.log.suffix(4000).description)
    }

    func testHarness_CatchesAPlantedSecretDependentBranch() throws {
        let report = try ConstantTimeHarnessTests.memcheck("plant", keyPath: try keys()[0])
        XCTAssertGreaterThan(report.conditional, 0, "the planted branch went unreported:\n\(report.log.suffix(4000))")
        XCTAssertTrue(report.log.contains("branching_kernel"), "the report should name the planted kernel")
    }

    func testHarness_CatchesAPlantedBranchInTheOAEPDecode() throws {
        // A probe inside EME-OAEP's decode branches once on the unmasked DB: the OAEP part of
        // `ct` (SHA-1 and SHA-256, with and without a label, valid and broken EMs, an OAEP
        // container) must see secrets there, or its 0 would be vacuous.
        let report = try ConstantTimeHarnessTests.memcheck("plant-oaep", keyPath: try keys()[0], operations: 2)
        XCTAssertGreaterThan(
            report.conditional, 0, "the planted OAEP branch went unreported:\n\(report.log.suffix(4000))")
        XCTAssertTrue(report.log.contains("rsakit_plant_oaep_probe"), "the report should name the planted probe")
        XCTAssertTrue(report.harnessLine.contains("planted_taken=some"), report.harnessLine)
    }

    func testHarness_MeasuresTheMPZReferencePath() throws {
        // The pre-rewrite path (mpz_mod, mpz_mul around mpz_powm_sec) is not constant-time:
        // the harness must say so. The counts are printed for the record.
        let report = try ConstantTimeHarnessTests.memcheck("mpz", keyPath: try keys()[0])
        XCTAssertGreaterThan(report.total, 0)
    }
}
