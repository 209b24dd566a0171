// RSAKitBenchmarks: RSAKit's hot paths across key sizes, side by side with plain GMP and
// OpenSSL. See BENCHMARKS.md for the commands and the latest figures.
import CRSAKitAnchors
import Foundation
import RSAKit

func runBenchmarks(_ options: BenchmarkOptions) throws {
    let peer = OpenSSLPeer.find(explicitPath: options.opensslPath)
    if let one = options.one {
        try OneCase.run(name: one.caseName, bits: one.bits, options: options, peer: peer)
        return
    }
    let reporter = Reporter(json: options.json, quick: options.quick)
    let usePeer = options.groups.contains(.openssl) ? peer : nil
    if options.groups.contains(.openssl), peer == nil {
        reporter.note("openssl CLI not found: skipping the OpenSSL peer (no rsakit/OpenSSL ratios)")
    }
    var meta = RunMetadata(
        date: ISO8601DateFormatter().string(from: Date()),
        mode: options.quick ? "quick" : "full",
        processors: RSAPKCS1v15Chunking.defaultConcurrency,
        cpuModel: cpuModelName(),
        gmpVersion: String(cString: rsakit_bench_gmp_version()),
        openssl: peer?.version,
        loadAverageAtStart: loadAverage(),
        loadAverageAtEnd: nil,
        settings: [
            "sizes": options.sizes.map(String.init).joined(separator: ","),
            "keygen": options.keygen.map { "\($0.bits):\($0.count)" }.joined(separator: ","),
            "cases": CaseGroup.allCases.filter(options.groups.contains).map(\.rawValue).joined(separator: ","),
            "runs": String(options.runs),
            "runTimeSeconds": String(options.runTime),
            "chunkBytes": String(options.chunkByteCount),
            "chunkRuns": String(options.chunkRuns),
            "opensslSeconds": String(options.opensslSeconds),
            "opensslRuns": String(options.opensslRuns),
            "privateKeyPath": RSAKitEngine.privateKeyPath.rawValue,
            "privateKeyPathDescription": RSAKitEngine.privateKeyPathDescription,
            "cpuFlags": cpuVectorFlags().joined(separator: ",")
        ])
    if !options.json {
        emit(
            "rsakit-bench path private=\(RSAKitEngine.privateKeyPath.rawValue)"
                + " description=\"\(RSAKitEngine.privateKeyPathDescription)\""
                + " cpu_flags=\(cpuVectorFlags().joined(separator: ","))")
        emit(
            "rsakit-bench run date=\(meta.date) mode=\(meta.mode) processors=\(meta.processors)"
                + " cpu=\"\(meta.cpuModel)\" gmp=\(meta.gmpVersion) openssl=\"\(meta.openssl ?? "absent")\""
                + " loadavg=" + (meta.loadAverageAtStart.map { String(format: "%.2f", $0) } ?? "unknown"))
    }
    let suite = BenchmarkSuite(options: options, reporter: reporter, peer: usePeer)
    let start = now()

    let needsKeys = !options.groups.isDisjoint(with: [.private, .public, .chunked, .schemes, .vector])
    var keys: [Int: BenchmarkKey] = [:]
    if needsKeys {
        let directory = options.keysDirectory ?? Fixtures.defaultKeysDirectory()
        for bits in options.sizes {
            keys[bits] = try Fixtures.load(bits: bits, directory: directory)
        }
    }
    for bits in options.sizes {
        if let key = keys[bits] {
            if options.groups.contains(.private) {
                reporter.note("private-key cases at \(bits) bits")
                try suite.runPrivate(key)
            }
            if options.groups.contains(.public) {
                reporter.note("public-key cases at \(bits) bits")
                try suite.runPublic(key)
            }
        }
        if usePeer != nil {
            // The peer needs the key for RSAKit's side of the paired figures.
            let key =
                try keys[bits]
                ?? Fixtures.load(
                    bits: bits, directory: options.keysDirectory ?? Fixtures.defaultKeysDirectory())
            keys[bits] = key
            reporter.note("openssl speed rsa\(bits), beside RSAKit")
            try suite.runOpenSSL(key)
        }
    }
    if options.groups.contains(.schemes) {
        // Signatures and OAEP, beside openssl speed unless --no-openssl (or no openssl).
        let schemesPeer = options.useOpenSSL ? peer : nil
        let schemes = BenchmarkSuite(options: options, reporter: reporter, peer: schemesPeer)
        for bits in options.sizes {
            guard let key = keys[bits] else { continue }
            reporter.note(
                "signature and OAEP cases at \(bits) bits"
                    + (schemesPeer == nil ? "" : ", beside openssl speed rsa\(bits)"))
            try schemes.runSchemes(key)
        }
    }
    if options.groups.contains(.keygen) {
        for (bits, count) in options.keygen {
            reporter.note("key generation at \(bits) bits, \(count) keys per generator")
            try suite.runKeyGeneration(bits: bits, count: count)
        }
    }
    if options.groups.contains(.vector) {
        for bits in options.sizes {
            guard let key = keys[bits] else { continue }
            reporter.note("vector-kernel cases at \(bits) bits")
            try suite.runVector(key)
        }
    }
    if options.groups.contains(.chunked) {
        for bits in options.sizes {
            guard let key = keys[bits] else { continue }
            reporter.note("chunked cases at \(bits) bits")
            try suite.runChunked(key)
        }
    }
    if options.groups.contains(.cli) {
        if let openssl = peer?.path, let binary = CLIBenchmark.findBinary(explicitPath: options.rsakitPath) {
            reporter.note("cli: whole processes, \(binary) against openssl pkeyutl, 2048 bits")
            let directory = options.keysDirectory ?? Fixtures.defaultKeysDirectory()
            try CLIBenchmark(rsakit: binary, openssl: openssl, reporter: reporter, pairs: options.cliPairs)
                .run(keyPath: directory + "/rsa2048.pem")
        } else {
            reporter.note(
                "cli: skipped (needs the rsakit binary, see scripts/install.sh or --rsakit, and the openssl CLI)")
        }
    }
    if options.groups.contains(.tpm) {
        if let binary = CLIBenchmark.findBinary(explicitPath: options.rsakitPath), let tools = TPMBenchmark.findTools()
        {
            reporter.note("tpm: swtpm, a software TPM: whole processes, \(binary) against tpm2-tools, 2048 bits")
            try TPMBenchmark(rsakit: binary, reporter: reporter, pairs: options.cliPairs).run(tools: tools)
        } else {
            reporter.note(
                "tpm: skipped (needs the rsakit binary, see scripts/install.sh or --rsakit, and "
                    + TPMBenchmark.toolNames.joined(separator: ", ") + ")")
        }
    }
    meta.loadAverageAtEnd = loadAverage()
    reporter.note(
        String(
            format: "done in %.1f s, load average %.2f at the end", now() - start,
            meta.loadAverageAtEnd ?? -1))
    try reporter.finish(meta: meta)
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("rsakit-bench: error: \(message)\n".utf8))
    exit(status)
}

do {
    guard let options = try BenchmarkOptions.parse(Array(CommandLine.arguments.dropFirst())) else {
        print(BenchmarkOptions.helpText)
        exit(0)
    }
    try runBenchmarks(options)
} catch let error as UsageError {
    FileHandle.standardError.write(
        Data(
            """
            rsakit-bench: error: \(error.description)
            usage: RSAKitBenchmarks [--quick] [--json] [--sizes LIST] [--cases LIST] [options] (--help for all)

            """.utf8))
    exit(64)
} catch let error as BenchmarkFailure {
    fail(error.description, status: 1)
} catch {
    fail("\(error)", status: 1)
}
