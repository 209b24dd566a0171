// The timing harness, dudect-style (Reparaz, Balasch, Verbauwhede 2017): for each target,
// two classes of prepared inputs, measured in random interleaved order, compared by Welch's
// t-test on the raw and percentile-cropped measurements; |t| > 4.5 is a leak. Build it in
// release mode and run it through scripts/timing.sh:
//
//     swift build -c release --product TimingHarness
//     .build/release/TimingHarness [--per-class N] [--process-per-class N] [--planted-per-class N]
//         [--targets a,b]         [--bits 1024 | --key FILE.pem] [--rsakit PATH] [--clock tsc|monotonic-raw] [--strict]
//
// Targets: pkcs1-valid-vs-random, pkcs1-first-byte, pkcs1-second-byte, pkcs1-no-separator,
// pkcs1-short-ps, pkcs1-separator-last, pkcs1-max-length,
// pkcs1-invalid-first-byte-vs-no-separator, pkcs1-invalid-second-byte-vs-short-ps,
// control-valid-vs-valid (one class against itself: must show nothing),
// rsadp-valid-vs-first-byte (RSADP alone), oaep-valid-vs-random, container-frame,
// container-frame-vs-padding, planted-early-return (the harness's own leak: must be
// caught), and process-decrypt-raw (needs --rsakit). Default: all of them.
// Verdicts: `ok` (|t| <= 4.5); `LEAK` (|t| > 4.5 between classes that the call's result
// does not tell apart: a side channel); `revealed` (|t| > 4.5 between classes the result
// tells apart anyway, valid against invalid or two lengths of M: nothing new for the
// caller, an oracle for a protocol that hides the error); `caught`/`MISSED` for the plant.
// Exit status: 0; 1 when the planted leak is not caught or a target's inputs do not give
// the outcome its class says; 2 with --strict when a target's verdict is LEAK; 64 for a
// usage error.

import Foundation
import RSAKit

struct Options {
    var perClass = 100_000
    var processPerClass = 2_000
    var plantedPerClass: Int? = nil
    var targets: [String]? = nil
    var bits = 1024
    var keyFile: String? = nil
    var rsakit: String? = nil
    var clock = TimingClock.tsc
    var strict = false
}

func usage(_ message: String) -> Never {
    FileHandle.standardError.write(
        Data(
            ("TimingHarness: \(message)\nusage: TimingHarness [--per-class N] [--process-per-class N] "
                + "[--planted-per-class N] [--targets a,b] [--bits N | --key FILE] [--rsakit PATH] [--clock "
                + "tsc|monotonic-raw] [--strict]\n")
                .utf8))
    exit(64)
}

func parseOptions(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments[...]
    func value(_ name: String) -> String {
        guard let next = rest.popFirst() else { usage("\(name) needs a value") }
        return next
    }
    func number(_ name: String) -> Int {
        guard let n = Int(value(name)), n > 0 else { usage("\(name) needs a positive whole number") }
        return n
    }
    while let argument = rest.popFirst() {
        switch argument {
        case "--per-class": options.perClass = number(argument)
        case "--process-per-class": options.processPerClass = number(argument)
        case "--planted-per-class": options.plantedPerClass = number(argument)
        case "--targets": options.targets = value(argument).split(separator: ",").map(String.init)
        case "--bits": options.bits = number(argument)
        case "--key": options.keyFile = value(argument)
        case "--rsakit": options.rsakit = value(argument)
        case "--clock":
            guard let clock = TimingClock(rawValue: value(argument)) else { usage("--clock is tsc or monotonic-raw") }
            options.clock = clock
        case "--strict": options.strict = true
        default: usage("unknown option \(argument)")
        }
    }
    return options
}

func note(_ text: String) { FileHandle.standardError.write(Data("TimingHarness: \(text)\n".utf8)) }

let options = parseOptions(Array(CommandLine.arguments.dropFirst()))
let key: RSAPrivateKey
if let keyFile = options.keyFile {
    key = try RSAPrivateKey(pemRepresentation: String(contentsOfFile: keyFile, encoding: .utf8))
} else {
    key = try RSAPrivateKey.generate(bitCount: options.bits)
}
let workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("rsakit-timing-\(getpid())")
try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: workDirectory) }

// The plant first: its verdict is the one the smoke run asserts, so it gets the freshest heap.
var targets =
    [plantedTarget(key: key)] + pkcs1Targets(key: key)
    + [rsadpTarget(key: key), oaepTarget(key: key)] + containerTargets(key: key)
if let rsakit = options.rsakit {
    targets.append(try processTarget(key: key, rsakit: rsakit, directory: workDirectory))
}
if let wanted = options.targets {
    for name in wanted where !targets.contains(where: { $0.name == name }) {
        usage("unknown target \(name)\(name.hasPrefix("process") ? " (give --rsakit)" : "")")
    }
    targets = targets.filter { wanted.contains($0.name) }
} else if options.rsakit == nil {
    note("no --rsakit: the process-decrypt-raw target is left out")
}

let ticksPerMicrosecond = options.clock.ticksPerMicrosecond()
output(
    "timing: bits=\(key.modulusBitCount) clock=\(options.clock.rawValue) "
        + "ticks_per_us=\(String(format: "%.1f", ticksPerMicrosecond)) per_class=\(options.perClass) "
        + "process_per_class=\(options.processPerClass) threshold=\(leakThreshold)"
)
var reports: [TargetReport] = []
var broken = false
for target in targets {
    let perClass =
        target.isProcess
        ? options.processPerClass
        : target.isPlanted ? options.plantedPerClass ?? options.perClass : options.perClass
    let batchSize = target.isProcess ? max(20, min(200, perClass / 2)) : max(1_000, min(10_000, perClass / 2))
    note("\(target.name): \(perClass) per class, batches of \(batchSize)")
    let measurement = measure(target, perClass: perClass, batchSize: batchSize, clock: options.clock)
    if measurement.mismatches > 0 {
        note("\(target.name): \(measurement.mismatches) measurements did not give their class's outcome")
        broken = true
    }
    // dudect counts a cropped test once it has "enough measurements" (10,000); at small
    // runs, a tenth of the smaller class.
    let minimumCount = min(10_000, max(20, measurement.statistics.raw.smallerClass / 10))
    let report = TargetReport(
        target: target, measurement: measurement,
        maximum: measurement.statistics.maximum(
            minimumCount: minimumCount,
            expectingClass0Slower: target.isPlanted),
        ticksPerMicrosecond: ticksPerMicrosecond)
    output(report.line)
    reports.append(report)
}
printTable(reports)

let missed = reports.filter { $0.target.isPlanted && !$0.leaks }
let leaking = reports.filter { $0.verdict == "LEAK" }
for report in missed {
    note(
        "the planted leak \(report.target.name) was NOT detected (max |t| "
            + "\(String(format: "%.2f", report.maximum.t)) <= \(leakThreshold))"
    )
}
for report in leaking {
    note(
        "\(report.target.name) shows |t| = \(String(format: "%.2f", report.maximum.t)) > \(leakThreshold) between "
            + "classes its result does not tell apart"
    )
}
output(
    "timing: summary targets=\(targets.count) measured=\(reports.count) "
        + "planted=\(!reports.contains { $0.target.isPlanted } ? "absent" : missed.isEmpty ? "caught" : "MISSED") "
        + "leaks=\(leaking.count) revealed=\(reports.filter { $0.verdict == "revealed" }.count)"
)
if broken || !missed.isEmpty { exit(1) }
if options.strict && !leaking.isEmpty { exit(2) }
