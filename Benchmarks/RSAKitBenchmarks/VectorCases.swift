import Foundation
import RSAKit
import RSAKitCore

// The radix-2^52 vector kernel beside the raw GMP anchor and, when the helper
// is built, Intel's crypto_mb and ippcp (IntelAnchor.swift): the full private operation
// (blinding, CRT, check, unblinding) with the kernel in the constant-time seam, one block per
// call (single-buffer, p and q in lockstep) and eight per call (multi-buffer, per block).

extension BenchmarkSuite {
    /// The implementation this machine can time: the IFMA kernel where the CPU has it,
    /// else the portable reference (which is NOT the kernel: its figures say nothing about
    /// IFMA speed).
    static var measurableVectorImplementation: RSABenchmarkVectorImplementation {
        RSAKitEngine.cpuSupportsIFMA ? .ifma : .reference
    }

    /// anchor-crt, decrypt-path (what RSAKit runs here), vector-1 and vector-8, interleaved.
    func runVector(_ key: BenchmarkKey) throws {
        let implementation = Self.measurableVectorImplementation
        guard let vectorKey = try key.privateKey.withVectorKernelForBenchmarks(implementation) else {
            reporter.note("vector cases at \(key.bits) bits skipped: primes above 2048 bits stay on GMP")
            return
        }
        if implementation == .reference {
            reporter.note(
                "NOTE: this CPU has no AVX-512 IFMA: only the portable reference can be measured; "
                    + "the vector-* figures below are the reference, NOT the IFMA kernel")
        }
        let anchor = try AnchorCRT(key)
        let ciphertext = key.ciphertext
        let eight = [[UInt8]](repeating: ciphertext, count: 8)
        anchor.run(1)
        guard anchor.result == key.encodedMessage,
            try vectorKey.rsadpBatchForBenchmarks([ciphertext]) == [key.encodedMessage],
            try vectorKey.rsadpBatchForBenchmarks(eight) == [[UInt8]](repeating: key.encodedMessage, count: 8)
        else {
            throw BenchmarkFailure(
                description: "vector kernel (\(implementation.rawValue)) at \(key.bits) bits gives a wrong result")
        }
        var operations = [
            TimedOperation(name: "anchor-crt") { anchor.run($0) },
            TimedOperation(name: "vector-1-\(implementation.rawValue)") { count in
                for _ in 0..<count { BlackHole.consume(try vectorKey.rsadpBatchForBenchmarks([ciphertext])[0]) }
            },
            TimedOperation(name: "vector-8-\(implementation.rawValue)") { count in
                // count blocks, in calls of 8 (a last shorter call for the remainder).
                var left = count
                while left > 0 {
                    let n = min(8, left)
                    BlackHole.consume(try vectorKey.rsadpBatchForBenchmarks(Array(eight.prefix(n)))[0])
                    left -= n
                }
            }
        ]
        var ratioPeers = [
            ("vector-1-\(implementation.rawValue)", "anchor-crt", nil as Goal?),
            ("vector-8-\(implementation.rawValue)", "anchor-crt", nil as Goal?)
        ]
        var peerWhat: [String: String] = [:]
        if let intel = IntelAnchor.find(explicitPath: options.intelAnchorPath) {
            let keyPath = (options.keysDirectory ?? Fixtures.defaultKeysDirectory()) + "/rsa\(key.bits).pem"
            let modes = try intel.check(keyPath: keyPath)
            if modes.mb8 {
                operations.append(
                    TimedOperation.selfTimed(
                        name: "intel-mb8", measured: { try intel.run(keyPath: keyPath, mode: "mb8", blocks: $0) }))
                peerWhat["intel-mb8"] =
                    "Intel crypto_mb mbx_rsa_private_crt_mb8 (helper process, CPU time of its loop): 8 blocks per "
                    + "call, per block; no blinding, no check"
                ratioPeers.append(("vector-8-\(implementation.rawValue)", "intel-mb8", .atLeast(1.0)))
            } else {
                reporter.note(
                    "intel-mb8 not run at \(key.bits) bits: crypto_mb cannot run on this CPU (no AVX-512 IFMA)")
            }
            if modes.ipp {
                operations.append(
                    TimedOperation.selfTimed(
                        name: "intel-ipp", measured: { try intel.run(keyPath: keyPath, mode: "ipp", blocks: $0) }))
                peerWhat["intel-ipp"] =
                    "Intel ippcp ippsRSA_Decrypt, CRT key (helper process, CPU time of its loop): one block per "
                    + "call; no blinding, no check"
                ratioPeers.append(("vector-1-\(implementation.rawValue)", "intel-ipp", .atLeast(1.0)))
            }
        } else {
            reporter.note(
                "intel anchors not run: build the helper with ../shared/tools/intel-anchor/setup.sh "
                    + "and pass --intel-anchor PATH (or set RSAKIT_INTEL_ANCHOR)")
        }
        let what = [
            "anchor-crt": "C on system GMP: CRT c^d mod n with mpz_powm_sec, no blinding, no check",
            "vector-1-\(implementation.rawValue)":
                "RSADP, one block per call, vector kernel (\(implementation.rawValue)) single-buffer in the seam; "
                + "blinding, CRT, check",
            "vector-8-\(implementation.rawValue)":
                "RSADP, 8 blocks per call, vector kernel (\(implementation.rawValue)) multi-buffer in the seam; per "
                + "block"
        ]
        // CPU time of this process (one thread), as the Intel helper reports its own: on a
        // shared virtual machine wall-clock time also counts time stolen by other guests.
        for result in try measureInterleaved(
            operations, runs: options.runs, runTime: options.runTime,
            warmUpTime: options.warmUpTime, clock: processCPUTime)
        {
            reporter.record(
                CaseResult(
                    name: result.name, bits: key.bits, unit: "ops/s",
                    samples: result.samples, perRun: result.opsPerRun,
                    pairedGroup: "vector-\(key.bits)", what: what[result.name] ?? peerWhat[result.name] ?? ""))
        }
        for (name, versus, goal) in ratioPeers {
            reporter.ratio(name, versus: versus, bits: key.bits, goal: goal, minimumSamples: 3)
        }
    }
}

/// The CPU flags that decide the private path, from /proc/cpuinfo (empty when unreadable).
func cpuVectorFlags() -> [String] {
    guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
    else { return [] }
    let wanted: Set<Substring> = [
        "avx2", "bmi2", "adx", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512ifma", "avx512vbmi"
    ]
    return line.split(separator: " ").filter { wanted.contains($0) }.map(String.init)
}
