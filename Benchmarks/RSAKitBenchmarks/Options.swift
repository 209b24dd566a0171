/// The groups of cases a run can select with `--cases`.
enum CaseGroup: String, CaseIterable, Codable {
    /// anchor-crt, private-raw, decrypt (ops/s per size).
    case `private`
    /// anchor-public, public-raw, encrypt (ops/s per size).
    case `public`
    /// anchor-keygen, keygen (ms per key, per key-generation size).
    case keygen
    /// chunked-encrypt-1t/-all, chunked-decrypt-1t/-all (MB/s per size).
    case chunked
    /// openssl-sign, openssl-verify (per size) and openssl-genpkey (per key-generation size).
    case openssl
    /// sign-pkcs1, sign-pss, verify-pkcs1, verify-pss, oaep-encrypt, oaep-decrypt (ops/s per
    /// size), each beside `openssl speed rsaN` when the peer is there (SchemeCases.swift).
    case schemes
    /// cli-encrypt, cli-decrypt against openssl-pkeyutl-encrypt/-decrypt: whole processes,
    /// 2048 bits, 100 bytes (CLIBenchmark).
    case cli
    /// anchor-crt, vector-1-IMPL, vector-8-IMPL: the radix-2^52 kernel in the private path
    /// (IMPL = ifma where the CPU has it, else the portable reference).
    case vector
    /// tpm-rsakit-* against tpm-tpm2tools-*: RSA-2048 OAEP decryption and PKCS#1 v1.5
    /// signing in swtpm, a software TPM, whole processes (TPMBenchmark). Only when named in
    /// --cases: it starts a TPM emulator.
    case tpm

    /// The groups a run without --cases takes: every one but `tpm`.
    static let defaultGroups = Set(allCases).subtracting([.tpm])
}

/// A usage error: reported on stderr with the usage line, exit status 64.
struct UsageError: Error, CustomStringConvertible {
    let description: String
}

/// Everything the command line chooses, after validation.
struct BenchmarkOptions {
    var quick = false
    var json = false
    var sizes: [Int] = [1024, 2048, 3072, 4096]
    /// Key-generation sizes and how many keys to time at each (per generator).
    var keygen: [(bits: Int, count: Int)] = [(2048, 100), (4096, 20)]
    var groups: Set<CaseGroup> = CaseGroup.defaultGroups
    /// Timed runs per operation case.
    var runs = 7
    /// Target wall time of one timed run, seconds.
    var runTime = 1.0
    /// Warm-up per operation case, seconds (at least two operations).
    var warmUpTime = 0.3
    /// Chunked buffer size in bytes.
    var chunkByteCount = 10 * 1_048_576
    var chunkRuns = 3
    /// One untimed key per generator before the timed ones (off in --quick).
    var keygenWarmUp = true
    var opensslSeconds = 1
    var opensslRuns = 7
    /// Length of one timed run of an RSAKit case that sits beside `openssl speed`: half of
    /// openssl's own phase, so that both see the same moment of the machine; in --quick the
    /// run time, since a quick figure is indicative only and openssl's phase cannot be
    /// shorter than a second (this took the smoke run's openssl and schemes groups from
    /// 36 s to about 20 s on a 2-core Xeon).
    var besideOpenSSLSeconds: Double { quick ? runTime : Double(opensslSeconds) / 2 }
    /// The rsakit binary of the cli case, or nil for CLIBenchmark.findBinary's default.
    var rsakitPath: String?
    /// Process pairs per cli command (quick: 5).
    var cliPairs = 41
    /// Explicit openssl binary, or nil for the first `openssl` on PATH.
    var opensslPath: String?
    /// Intel's anchor helper for the vector group, or nil for IntelAnchor.find's default.
    var intelAnchorPath: String?
    var useOpenSSL = true
    /// Directory holding rsaBITS.pem, or nil for the default.
    var keysDirectory: String?
    /// `--one CASE:BITS`.
    var one: (caseName: String, bits: Int)?

    static let helpText = """
        OVERVIEW: Time RSAKit's hot paths across key sizes against plain GMP (in-process anchors)
        and, when the openssl CLI is present, OpenSSL, all in one run, and print the ratios.

        USAGE: RSAKitBenchmarks [--quick] [--json] [--sizes LIST] [--cases LIST] [options]
               RSAKitBenchmarks --one CASE:BITS

        OPTIONS:
          --quick                 Short run over every size and case (CI smoke run, under a
                                  minute). Its figures are indicative only.
          --json                  Print one JSON document on stdout instead of lines.
          --sizes LIST            Key sizes in bits for the private, public, chunked and openssl
                                  cases (default 1024,2048,3072,4096; fixed keys rsaBITS.pem).
          --keygen LIST           Key-generation sizes and key counts per generator, as
                                  BITS:COUNT,... (default 2048:100,4096:20; quick 2048:3,4096:1).
          --cases LIST            Groups to run, from private, public, keygen, chunked, openssl,
                                  schemes (signatures and OAEP beside openssl speed),
                                  cli, vector, tpm (default: all but tpm, which starts swtpm,
                                  a software TPM, and times rsakit beside tpm2-tools).
          --rsakit PATH           The rsakit binary for the cli case (default: rsakit on PATH, as
                                  scripts/install.sh puts it, else the one beside this program).
          --cli-pairs N           rsakit/openssl process pairs per cli command (default 41; quick 5),
                                  and rsakit/tpm2-tools pairs per tpm operation.
          --runs N                Timed runs per operation case (default 7; quick 3).
          --run-time SECONDS      Target length of one timed run (default 1; quick 0.03).
          --chunk-mib MIB         Buffer for the chunked cases in MiB (default 10; quick 0.0625).
          --chunk-runs N          Timed runs per chunked case (default 3; quick 1).
          --openssl-seconds N     Seconds per `openssl speed` measurement (default 1).
          --openssl-runs N        `openssl speed` runs per size, each beside RSAKit's own
                                  (default 7; quick 1).
          --openssl PATH          The openssl binary (default: `openssl` on PATH).
          --no-openssl            Do not run the OpenSSL peer.
          --intel-anchor PATH     Intel's crypto_mb/ippcp helper for the vector group, built by
                                  ../shared/tools/intel-anchor/setup.sh (default:
                                  $RSAKIT_INTEL_ANCHOR, else setup.sh's cache); run this group
                                  on one idle core (taskset -c 0).
          --keys DIR              Directory holding rsa1024.pem ... rsa4096.pem (default: the
                                  Keys folder beside the benchmark's sources).
          --one CASE:BITS         Run exactly one operation of CASE at BITS after two warm-ups,
                                  between callgrind start/stop requests, and print one line.
                                  For `valgrind --tool=callgrind --instr-atstart=no`.
                                  CASE: anchor-crt, private-raw, decrypt, anchor-public,
                                  public-raw, encrypt, anchor-keygen, keygen, chunked-encrypt-1t,
                                  chunked-encrypt-all, chunked-decrypt-1t, chunked-decrypt-all,
                                  vector-1, vector-8 (eight blocks in one call).
          -h, --help              Show this help.

        OUTPUT:
          The first line names the private-key path (ifma or gmp) and the CPU's vector flags.
          One line per case on stdout: `rsakit-bench case=NAME bits=B unit=U median=... min=...
          max=... runs=N ...`, then `rsakit-bench ratio ...` lines (with goal= and verdict= where
          the design sets a goal). Progress notes go to stderr. Exit 0 on success, 1 when a
          correctness check or a fixture fails, 64 on a usage error.
        """

    /// Parse `arguments` (without the program name).
    /// - Throws: `UsageError` for unknown options, missing or malformed values.
    static func parse(_ arguments: [String]) throws -> BenchmarkOptions? {
        var options = BenchmarkOptions()
        // --quick changes defaults; explicit options given anywhere override them.
        if arguments.contains("--quick") { options.applyQuickDefaults() }
        var index = 0
        func value(_ name: String) throws -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(description: "\(name) needs a value") }
            return arguments[index]
        }
        func positiveInt(_ name: String) throws -> Int {
            let text = try value(name)
            guard let n = Int(text), n > 0 else {
                throw UsageError(description: "\(name) needs a positive integer, not '\(text)'")
            }
            return n
        }
        func positiveDouble(_ name: String) throws -> Double {
            let text = try value(name)
            guard let x = Double(text), x > 0, x.isFinite else {
                throw UsageError(description: "\(name) needs a positive number, not '\(text)'")
            }
            return x
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-h", "--help":
                return nil
            case "--quick":
                options.quick = true
            case "--json":
                options.json = true
            case "--sizes":
                options.sizes = try parseSizes(try value(argument), option: argument)
            case "--keygen":
                options.keygen = try parseKeygen(try value(argument))
            case "--cases":
                let text = try value(argument)
                var groups = Set<CaseGroup>()
                for name in text.split(separator: ",") {
                    guard let group = CaseGroup(rawValue: String(name)) else {
                        throw UsageError(
                            description:
                                "unknown case group '\(name)' (private, public, keygen, chunked, openssl, schemes, "
                                + "cli, vector, tpm)"
                        )
                    }
                    groups.insert(group)
                }
                guard !groups.isEmpty else { throw UsageError(description: "--cases needs at least one group") }
                options.groups = groups
            case "--runs":
                options.runs = try positiveInt(argument)
            case "--run-time":
                options.runTime = try positiveDouble(argument)
                options.warmUpTime = Swift.min(0.3, options.runTime)
            case "--chunk-mib":
                let mib = try positiveDouble(argument)
                options.chunkByteCount = max(1, Int(mib * 1_048_576))
            case "--chunk-runs":
                options.chunkRuns = try positiveInt(argument)
            case "--openssl-seconds":
                options.opensslSeconds = try positiveInt(argument)
            case "--openssl-runs":
                options.opensslRuns = try positiveInt(argument)
            case "--openssl":
                options.opensslPath = try value(argument)
            case "--intel-anchor":
                options.intelAnchorPath = try value(argument)
            case "--rsakit":
                options.rsakitPath = try value(argument)
            case "--cli-pairs":
                options.cliPairs = try positiveInt(argument)
            case "--no-openssl":
                options.useOpenSSL = false
            case "--keys":
                options.keysDirectory = try value(argument)
            case "--one":
                let text = try value(argument)
                let parts = text.split(separator: ":")
                guard parts.count == 2, let bits = Int(parts[1]), bits > 0,
                    OneCase.names.contains(String(parts[0]))
                else {
                    throw UsageError(
                        description:
                            "--one needs CASE:BITS with CASE one of \(OneCase.names.joined(separator: ", ")), not "
                            + "'\(text)'"
                    )
                }
                options.one = (String(parts[0]), bits)
            default:
                throw UsageError(description: "unknown option '\(argument)'")
            }
            index += 1
        }
        if !options.useOpenSSL { options.groups.remove(.openssl); options.groups.remove(.cli) }
        return options
    }

    private mutating func applyQuickDefaults() {
        quick = true
        keygen = [(2048, 3), (4096, 1)]
        runs = 3
        runTime = 0.03
        warmUpTime = 0.03
        chunkByteCount = 65_536
        keygenWarmUp = false
        chunkRuns = 1
        opensslRuns = 1
        cliPairs = 5
    }

    private static func parseSizes(_ text: String, option: String) throws -> [Int] {
        var sizes: [Int] = []
        for item in text.split(separator: ",") {
            guard let bits = Int(item), bits >= 1024, bits % 8 == 0 else {
                throw UsageError(
                    description: "\(option): '\(item)' is not a key size in bits (a multiple of 8, >= 1024)")
            }
            if !sizes.contains(bits) { sizes.append(bits) }
        }
        guard !sizes.isEmpty else { throw UsageError(description: "\(option) needs at least one size") }
        return sizes
    }

    private static func parseKeygen(_ text: String) throws -> [(bits: Int, count: Int)] {
        var result: [(bits: Int, count: Int)] = []
        for item in text.split(separator: ",") {
            let parts = item.split(separator: ":")
            guard parts.count == 2, let bits = Int(parts[0]), let count = Int(parts[1]),
                bits >= 1024, bits % 2 == 0, bits <= 16384, count > 0
            else {
                throw UsageError(
                    description: "--keygen: '\(item)' is not BITS:COUNT (even BITS in 1024...16384, COUNT > 0)")
            }
            result.removeAll { $0.bits == bits }
            result.append((bits, count))
        }
        guard !result.isEmpty else { throw UsageError(description: "--keygen needs at least one BITS:COUNT") }
        return result
    }
}
