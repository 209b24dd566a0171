import Foundation

/// One measured case at one size.
struct CaseResult: Codable {
    /// Case name (`decrypt`, `anchor-crt`, `openssl-sign`, ...).
    let name: String
    let bits: Int
    /// `ops/s` (higher is better), `ms/key` (lower is better) or `MB/s` (10^6 bytes of
    /// plaintext per second, higher is better).
    let unit: String
    let median: Double
    let min: Double
    let max: Double
    let mean: Double
    let stddev: Double
    /// Timed runs (for key generation: keys timed).
    let runs: Int
    /// Operations per timed run, where a run is a batch.
    let perRun: Int?
    /// Threads used (chunked cases).
    let threads: Int?
    /// Median of process CPU time / wall time per run (chunked cases): how many cores the
    /// run kept busy. Below the thread count when threads waited (for a lock, for I/O, or
    /// for a core that another process held).
    let cpuPerWall: Double?
    /// What exactly was timed.
    let what: String
    /// Every sample, in run order (ops/s, ms or MB/s as `unit` says).
    let samples: [Double]
    /// Cases measured in turn within each run share a group name: their samples pair up by
    /// index, and ratios between them are taken per run (see ``Reporter/ratio``).
    let pairedGroup: String?

    init(
        name: String, bits: Int, unit: String, samples: [Double], perRun: Int? = nil,
        threads: Int? = nil, cpuPerWall: Double? = nil, pairedGroup: String? = nil, what: String
    ) {
        let stats = Stats(samples)
        self.samples = samples; self.pairedGroup = pairedGroup
        self.name = name; self.bits = bits; self.unit = unit
        median = stats.median; min = stats.min; max = stats.max; mean = stats.mean
        stddev = stats.stddev; runs = stats.count
        self.perRun = perRun; self.threads = threads; self.cpuPerWall = cpuPerWall; self.what = what
    }
}

/// A design goal for a ratio.
enum Goal {
    case atLeast(Double)
    case atMost(Double)

    var text: String {
        switch self {
        case .atLeast(let x): return ">=" + String(format: "%.2f", x)
        case .atMost(let x): return "<=" + String(format: "%.2f", x)
        }
    }

    func isMet(by value: Double) -> Bool {
        switch self {
        case .atLeast(let x): return value >= x
        case .atMost(let x): return value <= x
        }
    }
}

/// A ratio of two cases measured in the same run.
struct RatioResult: Codable {
    /// The case in the numerator (RSAKit's).
    let name: String
    let bits: Int
    /// The case in the denominator (anchor, peer, or the one-thread figure).
    let versus: String
    /// How the value was taken: `paired-median` (the median over runs of the per-run ratio,
    /// for cases measured in turn within each run), `median` (ratio of the medians) or
    /// `mean` (ratio of the means, for key generation).
    let statistic: String
    let value: Double
    /// The design goal, e.g. ">=0.90", or nil when the ratio is informative only.
    let goal: String?
    /// `met`, `missed`, `no-goal`, `indicative` (every goal of a --quick run: information,
    /// not a judgement), or `too-few-samples` (a goal that needs more samples
    /// than this run took, e.g. in --quick mode).
    let verdict: String
}

/// Collects results, prints one line per case as it comes (unless JSON was asked for) and
/// the JSON document or the summary at the end.
final class Reporter {
    let json: Bool
    private(set) var results: [CaseResult] = []
    private(set) var ratios: [RatioResult] = []

    /// A --quick run: goals are printed as information (verdict `indicative`).
    let quick: Bool

    init(json: Bool, quick: Bool = false) {
        self.json = json
        self.quick = quick
    }

    /// Progress notes: always stderr, never mixed with the data; one write per note.
    func note(_ text: String) {
        FileHandle.standardError.write(Data(("rsakit-bench: " + text + "\n").utf8))
    }

    func record(_ result: CaseResult) {
        results.append(result)
        guard !json else { return }
        var line = "rsakit-bench case=\(result.name) bits=\(result.bits) unit=\(result.unit)"
        line += " median=\(format(result.median)) min=\(format(result.min)) max=\(format(result.max))"
        line += " mean=\(format(result.mean)) stddev=\(format(result.stddev)) runs=\(result.runs)"
        if let perRun = result.perRun { line += " per_run=\(perRun)" }
        if let threads = result.threads { line += " threads=\(threads)" }
        if let busy = result.cpuPerWall { line += " cpu_per_wall=" + String(format: "%.2f", busy) }
        emit(line)
    }

    /// Record numerator / denominator of `statistic` for two recorded cases.
    /// - Parameter minimumSamples: below this many samples in either case the verdict is
    ///   `too-few-samples` instead of met/missed.
    func ratio(
        _ name: String, versus: String, bits: Int, statistic: String = "median",
        goal: Goal? = nil, minimumSamples: Int = 1
    ) {
        guard let a = results.last(where: { $0.name == name && $0.bits == bits }),
            let b = results.last(where: { $0.name == versus && $0.bits == bits })
        else { return }
        let value: Double
        var statistic = statistic
        if statistic == "median", let group = a.pairedGroup, group == b.pairedGroup,
            a.samples.count == b.samples.count, b.samples.allSatisfy({ $0 > 0 })
        {
            // Same runs, measured one after the other: divide run by run, then take the
            // median, so that a slow patch of the machine hits both sides of each ratio.
            value = Stats(zip(a.samples, b.samples).map { $0 / $1 }).median
            statistic = "paired-median"
        } else {
            let (x, y) = statistic == "mean" ? (a.mean, b.mean) : (a.median, b.median)
            guard y > 0 else { return }
            value = x / y
        }
        let verdict: String
        if let goal {
            if quick {
                verdict = "indicative"
            } else if Swift.min(a.runs, b.runs) < minimumSamples {
                verdict = "too-few-samples"
            } else {
                verdict = goal.isMet(by: value) ? "met" : "missed"
            }
        } else {
            verdict = "no-goal"
        }
        let r = RatioResult(
            name: name, bits: bits, versus: versus, statistic: statistic,
            value: value, goal: goal?.text, verdict: verdict)
        ratios.append(r)
        guard !json else { return }
        emit(ratioLine(r))
    }

    private func ratioLine(_ r: RatioResult) -> String {
        var line = "rsakit-bench ratio case=\(r.name) bits=\(r.bits) vs=\(r.versus) of=\(r.statistic)"
        line += " value=" + String(format: "%.3f", r.value)
        if let goal = r.goal { line += " goal=\(goal)" }
        line += " verdict=\(r.verdict)"
        return line
    }

    /// Print the JSON document, or the goal lines again as a summary.
    func finish(meta: RunMetadata) throws {
        if json {
            struct Document: Codable {
                let meta: RunMetadata
                let results: [CaseResult]
                let ratios: [RatioResult]
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(Document(meta: meta, results: results, ratios: ratios))
            emit(String(decoding: data, as: UTF8.self))
            return
        }
        let goals = ratios.filter { $0.goal != nil }
        guard !goals.isEmpty else { return }
        if meta.mode == "quick" {
            // A smoke run proves the benchmark works; its few short samples judge nothing.
            emit(
                "rsakit-bench goals (quick run: figures indicative only; goals are judged in full runs, see "
                    + "BENCHMARKS.md):"
            )
        } else {
            emit("rsakit-bench summary: \(goals.filter { $0.verdict == "met" }.count) of \(goals.count) goals met")
        }
        for r in goals { emit(ratioLine(r)) }
    }

    func format(_ x: Double) -> String {
        if x >= 100 { return String(format: "%.1f", x) }
        if x >= 1 { return String(format: "%.3f", x) }
        return String(format: "%.5f", x)
    }
}

/// Where and how the run happened.
struct RunMetadata: Codable {
    let date: String
    let mode: String
    let processors: Int
    let cpuModel: String
    let gmpVersion: String
    /// `openssl version` of the peer found, whether or not its cases ran.
    let openssl: String?
    /// 1-minute load average when the run started and ended: other work on the machine
    /// lowers every figure, and the all-cores figures most.
    let loadAverageAtStart: Double?
    var loadAverageAtEnd: Double?
    let settings: [String: String]
}

/// The CPU model name from /proc/cpuinfo ("unknown" elsewhere).
func cpuModelName() -> String {
    guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown" }
    for line in text.split(separator: "\n") where line.hasPrefix("model name") {
        if let colon = line.firstIndex(of: ":") {
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }
    return "unknown"
}

/// Write one line of data (or the JSON document) to stdout with a single write(2), unbuffered:
/// with the notes on stderr also one write each, lines never interleave mid-line when both
/// streams go to one terminal or pipe (`2>&1 | tee`).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
