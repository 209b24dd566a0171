import Dispatch
import Foundation
import RSAKit
import RSAKitCore

/// The benchmark cases, grouped so that every ratio compares figures taken side by side.
struct BenchmarkSuite {
    let options: BenchmarkOptions
    let reporter: Reporter
    let peer: OpenSSLPeer?

    /// Goals are judged only on runs with at least this many samples (the full-run defaults);
    /// a --quick run reports `too-few-samples` instead.
    private var minimumRuns: Int { 5 }

    // MARK: - Private-key operation

    /// anchor-crt, private-raw and decrypt at one size, interleaved.
    func runPrivate(_ key: BenchmarkKey) throws {
        let anchor = try AnchorCRT(key)
        let privateKey = key.privateKey
        let ciphertext = key.ciphertext
        // Every contestant computes the same thing before anything is timed.
        anchor.run(1)
        guard anchor.result == key.encodedMessage else {
            throw BenchmarkFailure(description: "anchor-crt at \(key.bits) bits gives a wrong result")
        }
        guard try privateKey.unprotectedCRTExponentiationForBenchmarks(ciphertext) == key.encodedMessage else {
            throw BenchmarkFailure(description: "private-raw at \(key.bits) bits gives a wrong result")
        }
        guard try privateKey.decrypt(ciphertext) == key.message else {
            throw BenchmarkFailure(description: "decrypt at \(key.bits) bits gives a wrong result")
        }
        let operations = [
            TimedOperation(name: "anchor-crt") { anchor.run($0) },
            TimedOperation(name: "private-raw") { count in
                for _ in 0..<count {
                    BlackHole.consume(try privateKey.unprotectedCRTExponentiationForBenchmarks(ciphertext))
                }
            },
            TimedOperation(name: "decrypt") { count in
                for _ in 0..<count { BlackHole.consume(try privateKey.decrypt(ciphertext)) }
            }
        ]
        let what = [
            "anchor-crt": "C on system GMP: CRT c^d mod n with mpz_powm_sec, no blinding, no check, preallocated",
            "private-raw":
                "RSAKit's constant-time CRT exponentiation and recombination as rsadp runs it (mpn_sec_powm, "
                + "mpn_sec_mul, mpn_sec_div_r), no blinding, no check",
            "decrypt": "RSAKit one-block RSAES-PKCS1-v1_5 decrypt: blinding, CRT, re-encryption check, padding"
        ]
        for result in try measureInterleaved(
            operations, runs: options.runs, runTime: options.runTime,
            warmUpTime: options.warmUpTime)
        {
            reporter.record(
                CaseResult(
                    name: result.name, bits: key.bits, unit: "ops/s",
                    samples: result.samples, perRun: result.opsPerRun,
                    pairedGroup: "private-\(key.bits)", what: what[result.name] ?? ""))
        }
        reporter.ratio(
            "decrypt", versus: "anchor-crt", bits: key.bits, goal: .atLeast(0.9),
            minimumSamples: minimumRuns)
        reporter.ratio("private-raw", versus: "anchor-crt", bits: key.bits)
    }

    // MARK: - Public-key operation

    /// anchor-public, public-raw and encrypt at one size, interleaved.
    func runPublic(_ key: BenchmarkKey) throws {
        let anchor = try AnchorPublic(key)
        let publicKey = key.publicKey
        let encoded = key.encodedMessage
        let message = key.message
        anchor.run(1)
        guard anchor.result == key.ciphertext else {
            throw BenchmarkFailure(description: "anchor-public at \(key.bits) bits gives a wrong result")
        }
        guard try RSAHazmat.rsaep(encoded, key: publicKey) == key.ciphertext else {
            throw BenchmarkFailure(description: "public-raw at \(key.bits) bits gives a wrong result")
        }
        guard try key.privateKey.decrypt(try publicKey.encrypt(message)) == message else {
            throw BenchmarkFailure(description: "encrypt at \(key.bits) bits gives a wrong result")
        }
        let operations = [
            TimedOperation(name: "anchor-public") { anchor.run($0) },
            TimedOperation(name: "public-raw") { count in
                for _ in 0..<count { BlackHole.consume(try RSAHazmat.rsaep(encoded, key: publicKey)) }
            },
            TimedOperation(name: "encrypt") { count in
                for _ in 0..<count { BlackHole.consume(try publicKey.encrypt(message)) }
            }
        ]
        let what = [
            "anchor-public": "C on system GMP: m^65537 mod n with mpz_powm, preallocated",
            "public-raw": "RSAKit RSAEP (m^e mod n) on k bytes, with range check and I2OSP",
            "encrypt": "RSAKit one-block RSAES-PKCS1-v1_5 encrypt of 32 bytes, padding from getrandom"
        ]
        for result in try measureInterleaved(
            operations, runs: options.runs, runTime: options.runTime,
            warmUpTime: options.warmUpTime)
        {
            reporter.record(
                CaseResult(
                    name: result.name, bits: key.bits, unit: "ops/s",
                    samples: result.samples, perRun: result.opsPerRun,
                    pairedGroup: "public-\(key.bits)", what: what[result.name] ?? ""))
        }
        reporter.ratio("public-raw", versus: "anchor-public", bits: key.bits)
        reporter.ratio("encrypt", versus: "anchor-public", bits: key.bits)
    }

    // MARK: - OpenSSL speed

    /// `openssl speed rsaBITS`, `opensslRuns` times, with RSAKit's decrypt timed just before
    /// each run and its encrypt and public-raw just after (half as long as one openssl
    /// measurement each), so that every RSAKit/OpenSSL ratio pairs figures taken within a
    /// second or two; the ratios are the medians over the runs.
    func runOpenSSL(_ key: BenchmarkKey) throws {
        guard let peer else { return }
        let bits = key.bits
        let privateKey = key.privateKey, publicKey = key.publicKey
        let ciphertext = key.ciphertext, message = key.message, encoded = key.encodedMessage
        let operations = [
            TimedOperation(name: "decrypt-beside-openssl") { count in
                for _ in 0..<count { BlackHole.consume(try privateKey.decrypt(ciphertext)) }
            },
            TimedOperation(name: "encrypt-beside-openssl") { count in
                for _ in 0..<count { BlackHole.consume(try publicKey.encrypt(message)) }
            },
            TimedOperation(name: "public-raw-beside-openssl") { count in
                for _ in 0..<count { BlackHole.consume(try RSAHazmat.rsaep(encoded, key: publicKey)) }
            }
        ]
        let seconds = options.besideOpenSSLSeconds
        let counts = try operations.map { try calibrate($0, seconds: seconds, warmUpTime: options.warmUpTime) }
        var ours = Array(repeating: [Double](), count: operations.count)
        var sign: [Double] = [], verify: [Double] = []
        func timeOurs(_ i: Int) throws {
            let elapsed = try time { try operations[i].body(counts[i]) }
            ours[i].append(Double(counts[i]) / elapsed)
        }
        for _ in 0..<options.opensslRuns {
            // openssl speed times sign first, then verify: decrypt goes right before it and
            // encrypt right after, so that each figure sits next to its peer's.
            try timeOurs(0)
            let figures = try peer.speed(bits: bits, seconds: options.opensslSeconds)
            try timeOurs(1)
            try timeOurs(2)
            sign.append(figures.sign)
            verify.append(figures.verify)
        }
        let group = "openssl-\(bits)"
        let what = [
            "decrypt-beside-openssl": "as decrypt, timed just before each openssl speed run (next to its sign phase)",
            "encrypt-beside-openssl": "as encrypt, timed just after each openssl speed run (next to its verify phase)",
            "public-raw-beside-openssl": "as public-raw, timed just after encrypt-beside-openssl"
        ]
        for (i, operation) in operations.enumerated() {
            reporter.record(
                CaseResult(
                    name: operation.name, bits: bits, unit: "ops/s", samples: ours[i],
                    perRun: counts[i], pairedGroup: group, what: what[operation.name] ?? ""))
        }
        reporter.record(
            CaseResult(
                name: "openssl-sign", bits: bits, unit: "ops/s", samples: sign, pairedGroup: group,
                what:
                    "openssl speed -elapsed -seconds \(options.opensslSeconds) rsa\(bits), sign/s: blinded CRT "
                    + "private op with OpenSSL's check, PKCS#1 v1.5 type 1 (closest peer to decrypt)"
            ))
        reporter.record(
            CaseResult(
                name: "openssl-verify", bits: bits, unit: "ops/s", samples: verify, pairedGroup: group,
                what:
                    "openssl speed -elapsed -seconds \(options.opensslSeconds) rsa\(bits), verify/s: public op e = "
                    + "65537 and padding check (closest peer to encrypt)"
            ))
        reporter.ratio("decrypt-beside-openssl", versus: "openssl-sign", bits: bits)
        reporter.ratio(
            "encrypt-beside-openssl", versus: "openssl-verify", bits: bits, goal: .atLeast(1.0),
            minimumSamples: 3)
        reporter.ratio("public-raw-beside-openssl", versus: "openssl-verify", bits: bits)
    }

    // MARK: - Key generation

    /// `count` keys from the plain GMP anchor and from RSAKit, interleaved key by key, and
    /// (when the peer is there) a fifth as many `openssl genpkey` processes.
    func runKeyGeneration(bits: Int, count: Int) throws {
        let anchor = try AnchorKeyGenerator()
        if options.keygenWarmUp {
            // Warm-up: one key each, checked, not timed.
            anchor.generate(bits: bits)
            try anchor.checkLastKey(bits: bits)
            let warm = try RSAPrivateKey.generate(bitCount: bits)
            guard warm.modulusBitCount == bits else {
                throw BenchmarkFailure(description: "keygen gave a \(warm.modulusBitCount)-bit key for \(bits)")
            }
        }
        var anchorMs: [Double] = [], rsakitMs: [Double] = []
        for index in 0..<count {
            anchorMs.append(1000 * time { anchor.generate(bits: bits) })
            try anchor.checkLastKey(bits: bits)
            var key: RSAPrivateKey?
            rsakitMs.append(1000 * (try time { key = try RSAPrivateKey.generate(bitCount: bits) }))
            guard key?.modulusBitCount == bits else {
                throw BenchmarkFailure(description: "keygen gave a wrong-size key for \(bits)")
            }
            if count >= 10, (index + 1) % Swift.max(1, count / 4) == 0 {
                reporter.note("keygen \(bits): \(index + 1) of \(count) keys")
            }
        }
        reporter.record(
            CaseResult(
                name: "anchor-keygen", bits: bits, unit: "ms/key", samples: anchorMs,
                what:
                    "C plain GMP: random odd candidates (gmp_randstate, reference only), mpz_probab_prime_p reps "
                    + "\(AnchorKeyGenerator.reps), d, dP, dQ, qInv"
            ))
        reporter.record(
            CaseResult(
                name: "keygen", bits: bits, unit: "ms/key", samples: rsakitMs,
                what: "RSAPrivateKey.generate: FIPS 186-5 A.1.3 probable primes, OS randomness, full key validation"))
        reporter.ratio(
            "keygen", versus: "anchor-keygen", bits: bits, statistic: "mean",
            goal: .atMost(1.2), minimumSamples: bits <= 2048 ? 100 : 20)

        guard let peer, options.groups.contains(.openssl) else { return }
        var startUp: [Double] = []
        for _ in 0..<5 { startUp.append(try peer.startUpSeconds()) }
        let baseline = Stats(startUp).median
        var peerMs: [Double] = []
        for _ in 0..<Swift.max(1, count / 5) {
            peerMs.append(1000 * (try peer.genpkeySeconds(bits: bits) - baseline))
        }
        reporter.record(
            CaseResult(
                name: "openssl-genpkey", bits: bits, unit: "ms/key", samples: peerMs,
                what: String(
                    format:
                        "openssl genpkey RSA process wall time minus the %.1f ms median of openssl genpkey ED25519 "
                        + "(start-up)",
                    baseline * 1000)))
        reporter.ratio("keygen", versus: "openssl-genpkey", bits: bits, statistic: "mean")
    }

    // MARK: - Chunked throughput

    /// Encrypt and decrypt of one buffer with 1 thread and with every processor, and the
    /// same for the C anchor's CRT exponentiation (each thread on its own fixture): the
    /// anchor's ratio is what this machine gives to that many threads of pure GMP work right
    /// now, the ceiling for the chunked ratio.
    func runChunked(_ key: BenchmarkKey) throws {
        let threads = RSAPKCS1v15Chunking.defaultConcurrency
        let k = key.publicKey.modulusByteCount
        let plaintext = SystemRandomSource().bytesForBenchmark(options.chunkByteCount)
        let ciphertext = try RSAPKCS1v15Chunking.encrypt(plaintext, with: key.publicKey, concurrency: threads)
        let blocks =
            (plaintext.count + key.publicKey.maximumMessageByteCount - 1) / key.publicKey.maximumMessageByteCount
        guard ciphertext.count == blocks * k else {
            throw BenchmarkFailure(description: "chunked encrypt at \(key.bits) bits: wrong output length")
        }
        // Warm-up on a sixteenth of the buffer, both thread counts (every timed decryption
        // below is checked against the plaintext).
        let prefix = Array(plaintext.prefix(Swift.max(1, plaintext.count / 16)))
        let cipherPrefix = Array(ciphertext.prefix(Swift.max(1, blocks / 16) * k))
        for concurrency in [1, threads] {
            _ = try RSAPKCS1v15Chunking.encrypt(prefix, with: key.publicKey, concurrency: concurrency)
            guard
                try RSAPKCS1v15Chunking.decrypt(cipherPrefix, with: key.privateKey, concurrency: concurrency)
                    == Array(plaintext.prefix(cipherPrefix.count / k * key.publicKey.maximumMessageByteCount))
            else {
                throw BenchmarkFailure(
                    description: "chunked decrypt at \(key.bits) bits does not give the plaintext back")
            }
        }
        // The anchor: one fixture per thread; runs of about runTime * 2 seconds.
        let anchors = try (0..<threads).map { _ in try AnchorCRT(key) }
        let anchorOne = time { anchors[0].run(2) } / 2
        let anchorCount = Swift.max(2, Int((options.runTime * 2 / Swift.max(anchorOne, 1e-9)).rounded(.up)))

        let megabytes = Double(plaintext.count) / 1e6
        var samples: [String: [Double]] = [:]
        var busy: [String: [Double]] = [:]
        func measure(_ name: String, _ body: () throws -> Double) rethrows {
            let cpu = processCPUTime()
            let start = now()
            let amount = try body()
            let wall = now() - start
            samples[name, default: []].append(amount / wall)
            busy[name, default: []].append((processCPUTime() - cpu) / wall)
        }
        for run in 0..<options.chunkRuns {
            for concurrency in [1, threads] {
                let suffix = concurrency == 1 ? "1t" : "all"
                try measure("chunked-encrypt-" + suffix) {
                    let output = try RSAPKCS1v15Chunking.encrypt(
                        plaintext, with: key.publicKey, concurrency: concurrency)
                    guard output.count == ciphertext.count else {
                        throw BenchmarkFailure(description: "chunked encrypt at \(key.bits) bits: wrong output length")
                    }
                    return megabytes
                }
                try measure("chunked-decrypt-" + suffix) {
                    let output = try RSAPKCS1v15Chunking.decrypt(
                        ciphertext, with: key.privateKey, concurrency: concurrency)
                    guard output == plaintext else {
                        throw BenchmarkFailure(
                            description: "chunked decrypt at \(key.bits) bits does not give the plaintext back")
                    }
                    return megabytes
                }
                measure("anchor-crt-" + suffix) {
                    let shared = UncheckedSendable(anchors)
                    DispatchQueue.concurrentPerform(iterations: concurrency) { shared.value[$0].run(anchorCount) }
                    return Double(concurrency * anchorCount)
                }
            }
            if options.chunkRuns > 1 { reporter.note("chunked \(key.bits): run \(run + 1) of \(options.chunkRuns)") }
        }
        let size = String(format: "%.2f MiB", Double(plaintext.count) / 1_048_576)
        for name in [
            "chunked-encrypt-1t", "chunked-encrypt-all", "chunked-decrypt-1t", "chunked-decrypt-all",
            "anchor-crt-1t", "anchor-crt-all"
        ] {
            let all = name.hasSuffix("all")
            let threadText = all ? "\(threads) threads" : "1 thread"
            let what: String
            if name.hasPrefix("anchor") {
                what =
                    "C anchor CRT exponentiation (mpz_powm_sec), \(anchorCount) per thread, \(threadText), aggregate "
                    + "ops/s"
            } else {
                let verb = name.contains("encrypt") ? "encrypt" : "decrypt"
                what =
                    "RSAPKCS1v15Chunking.\(verb) of a \(size) buffer in memory, \(threadText); MB = 10^6 plaintext "
                    + "bytes"
            }
            reporter.record(
                CaseResult(
                    name: name, bits: key.bits, unit: name.hasPrefix("anchor") ? "ops/s" : "MB/s",
                    samples: samples[name]!, perRun: name.hasPrefix("anchor") ? anchorCount : nil,
                    threads: all ? threads : 1, cpuPerWall: Stats(busy[name]!).median,
                    pairedGroup: "chunked-\(key.bits)", what: what))
        }
        reporter.ratio(
            "chunked-decrypt-all", versus: "chunked-decrypt-1t", bits: key.bits,
            goal: threads == 2 ? .atLeast(1.9) : nil, minimumSamples: 3)
        reporter.ratio("anchor-crt-all", versus: "anchor-crt-1t", bits: key.bits)
        reporter.ratio("chunked-encrypt-all", versus: "chunked-encrypt-1t", bits: key.bits)
    }
}

/// Hands a value to concurrent closures that only use it in ways the caller knows are safe
/// (here: each thread touches its own anchor object).
struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

extension RSARandomSource {
    /// `count` bytes from this source (benchmark inputs, not secrets).
    func bytesForBenchmark(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }
}
