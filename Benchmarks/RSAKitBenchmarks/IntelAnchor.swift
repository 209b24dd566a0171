import Foundation

/// Intel's Cryptography Primitives Library as an in-run peer of the vector cases:
/// the `anchor` helper that `../shared/tools/intel-anchor/setup.sh` builds from Intel's
/// wheels on PyPI, run as a child process (never linked into the benchmark or RSAKit).
///
/// - `intel-mb8`: crypto_mb's `mbx_rsa_private_crt_mb8`, eight blocks per call, per block
///   (AVX-512 IFMA only): the peer of `vector-8-*`.
/// - `intel-ipp`: ippcp's `ippsRSA_Decrypt` with a CRT key, one block per call: the peer of
///   `vector-1-*`.
///
/// Neither blinds nor checks its result, as RSAKit's cases do. The helper times itself in
/// process CPU time (`CLOCK_PROCESS_CPUTIME_ID`) around its loop only, so its start-up and
/// key parsing are not counted; RSAKit's cases are timed in wall-clock time, which equals CPU
/// time on an otherwise idle core (`taskset -c 0`), the way to run this group.
struct IntelAnchor {
    let path: String

    /// What the helper can time here: crypto_mb needs AVX-512 IFMA, ippcp runs everywhere.
    struct Modes {
        var mb8: Bool
        var ipp: Bool
    }

    /// The helper at `explicitPath`, else `$RSAKIT_INTEL_ANCHOR`, else setup.sh's cache
    /// (`$INTEL_ANCHOR_DIR/anchor`, then `${TMPDIR:-/tmp}/intel-anchor/anchor`); nil when none
    /// is an executable file.
    static func find(explicitPath: String?) -> IntelAnchor? {
        let environment = ProcessInfo.processInfo.environment
        var candidates = [explicitPath, environment["RSAKIT_INTEL_ANCHOR"]]
        if let dir = environment["INTEL_ANCHOR_DIR"] { candidates.append(dir + "/anchor") }
        let tmp = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        candidates.append(tmp + "/intel-anchor/anchor")
        for case let path? in candidates where FileManager.default.isExecutableFile(atPath: path) {
            return IntelAnchor(path: path)
        }
        return nil
    }

    /// `anchor KEY check 1`: which modes ran and matched OpenSSL's result on this key.
    /// - Throws: `BenchmarkFailure` when the helper fails to run.
    func check(keyPath: String) throws -> Modes {
        // The check writes lane 0's input and results as *.bin files into its working
        // folder: give it a temporary one, removed afterwards.
        let folder = NSTemporaryDirectory() + "rsakit-intel-anchor-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let absoluteKey = keyPath.hasPrefix("/") ? keyPath : FileManager.default.currentDirectoryPath + "/" + keyPath
        let result = try runProcess("/usr/bin/env", ["-C", folder, path, absoluteKey, "check", "1"])
        guard result.status == 0 else {
            throw BenchmarkFailure(
                description: "intel anchor check failed (status \(result.status)): \(result.stderr.prefix(300))")
        }
        let lines = (result.stdout + "\n" + result.stderr).split(separator: "\n")
        return Modes(
            mb8: lines.contains { $0.hasPrefix("mb8 ") && $0.contains("match=yes") },
            ipp: lines.contains { $0.hasPrefix("ippcp ") && $0.contains("match=yes") })
    }

    /// One timed helper run of about `blocks` blocks: `anchor KEY MODE ITERS` (mb8: ITERS
    /// calls of 8 blocks). Returns the blocks done and the CPU seconds of its loop.
    /// - Throws: `BenchmarkFailure` when the helper fails or prints no result line.
    func run(keyPath: String, mode: String, blocks: Int) throws -> (operations: Int, seconds: Double) {
        let iterations = mode == "mb8" ? max(1, (blocks + 7) / 8) : max(1, blocks)
        let result = try runProcess(path, [keyPath, mode, String(iterations)])
        guard result.status == 0 else {
            throw BenchmarkFailure(
                description: "intel anchor \(mode) failed (status \(result.status)): \(result.stderr.prefix(300))")
        }
        // "anchor impl=mb8 bits=2048 ops=2400 cpu_s=0.3330 ops_per_cpu_s=7207.8 ..."
        for line in result.stdout.split(separator: "\n") where line.hasPrefix("anchor ") {
            var fields: [Substring: Substring] = [:]
            for field in line.split(separator: " ") {
                let parts = field.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { fields[parts[0]] = parts[1] }
            }
            if let ops = fields["ops"].flatMap({ Int($0) }), let seconds = fields["cpu_s"].flatMap({ Double($0) }),
                ops > 0, seconds > 0
            {
                return (ops, seconds)
            }
        }
        throw BenchmarkFailure(description: "intel anchor \(mode) printed no result line")
    }
}
