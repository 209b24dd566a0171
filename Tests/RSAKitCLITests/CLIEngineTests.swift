import Foundation
import XCTest
import RSAKitTestSupport

/// The private-key path as a user chooses and sees it, through the built binary: each path
/// this CPU runs (`RSAKIT_ENGINE=gmp|adx|ifma`) decrypts what `openssl pkeyutl` encrypted,
/// in one block and chunked, at 2048 and 4096 bits (two primes) and 3072 bits (three primes);
/// `rsakit --version` names the path; a forced path the machine cannot run, or a value that
/// names none, is a clear error; `RSAKIT_DISABLE_IFMA=1` leaves the next fastest path.
final class CLIEngineTests: CLITestCase {
    /// The CPU's flags from /proc/cpuinfo (empty where it cannot be read).
    static let cpuFlags: Set<Substring> = {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
        else { return [] }
        return Set(line.split(separator: " "))
    }()

    static var runnablePaths: [String] {
        var paths = ["gmp"]
        if cpuFlags.contains("bmi2") && cpuFlags.contains("adx") { paths.append("adx") }
        if cpuFlags.contains("avx512ifma") && cpuFlags.contains("avx512vl") { paths.append("ifma") }
        return paths
    }

    func versionPath(_ environment: [String: String?]) throws -> String {
        let version = try rsakitOK(["--version"], environment: environment).stdoutText
        let line = version.split(separator: "\n").first { $0.hasPrefix("private-key path: ") }
        return String(try XCTUnwrap(line, version).dropFirst("private-key path: ".count))
    }

    func testEveryRunnablePath_DecryptsWhatOpenSSLEncrypted() throws {
        _ = try OpenSSL.require()
        print("note: private-key paths this CPU runs: \(Self.runnablePaths.joined(separator: ", "))")
        for (bits, primes) in [(2048, 2), (3072, 3), (4096, 2)] {
            let key = path("k\(bits).pem")
            _ = try OpenSSL.run([
                "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)",
                "-pkeyopt", "rsa_keygen_primes:\(primes)", "-out", key
            ])
            // Ten blocks of PKCS#1 v1.5, each made by openssl: chunked decryption's groups.
            var ciphertext: [UInt8] = []
            var plaintext: [UInt8] = []
            for index in 0..<10 {
                let block = Array("block \(index) of \(bits) bits".utf8)
                let input = try write(block, to: "m\(index)")
                ciphertext += try OpenSSL.run(["pkeyutl", "-encrypt", "-inkey", key, "-in", input])
                plaintext += block
            }
            for engine in Self.runnablePaths {
                let environment: [String: String?] = ["RSAKIT_ENGINE": engine]
                XCTAssertTrue(try versionPath(environment).hasPrefix(engine + " ("), engine)
                let out = try rsakitOK(["decrypt", "--raw", "--key", key], stdin: ciphertext, environment: environment)
                XCTAssertEqual(out.stdout, plaintext, "RSAKIT_ENGINE=\(engine), \(bits) bits, \(primes) primes")
            }
        }
    }

    func testUnsetEngine_RunsTheFastestPath_AndDisableIFMALeavesTheNext() throws {
        let fastest = Self.runnablePaths.last!
        XCTAssertTrue(try versionPath(["RSAKIT_ENGINE": nil, "RSAKIT_DISABLE_IFMA": nil]).hasPrefix(fastest + " ("))
        let withoutIFMA = Self.runnablePaths.filter { $0 != "ifma" }.last!
        let disabled = try versionPath(["RSAKIT_ENGINE": nil, "RSAKIT_DISABLE_IFMA": "1"])
        XCTAssertTrue(disabled.hasPrefix(withoutIFMA + " ("), disabled)
        if Self.runnablePaths.contains("ifma") {
            XCTAssertTrue(disabled.contains("RSAKIT_DISABLE_IFMA"), disabled)
        }
    }

    func testEngineThatNamesNoPath_OrCannotRun_IsAClearError() throws {
        let key = path("k.pem")
        _ = try OpenSSL.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key])
        var cases: [(String, String)] = [("fast", "RSAKIT_ENGINE=fast names no path: give ifma, adx or gmp")]
        for engine in ["adx", "ifma"] where !Self.runnablePaths.contains(engine) {
            cases.append((engine, "RSAKIT_ENGINE=\(engine), but "))
        }
        if cases.count == 1 {
            print("note: this CPU runs every path: a forced path it cannot run is not reachable here")
        }
        for (engine, message) in cases {
            let environment: [String: String?] = ["RSAKIT_ENGINE": engine]
            XCTAssertTrue(try versionPath(environment).hasPrefix("unavailable: "), engine)
            let failed = try rsakit(
                ["decrypt", "--raw", "--key", key], stdin: [UInt8](repeating: 1, count: 256),
                environment: environment)
            XCTAssertNotEqual(failed.status, 0)
            XCTAssertTrue(failed.stderr.contains(message), failed.stderr)
            XCTAssertTrue(failed.stdout.isEmpty)
        }
    }
}
