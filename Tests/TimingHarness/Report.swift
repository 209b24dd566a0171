// The harness's output: one grep-able line per target as it finishes, then a Markdown
// table (target, classes, measurements per class, max |t| and its test, verdict).

import Foundation

/// dudect's threshold for "definitely not constant time" in the paper's experiments.
let leakThreshold = 4.5

/// One measured target, judged.
struct TargetReport {
    let target: TimingTarget
    let measurement: TargetMeasurement
    let maximum: (t: Double, count: Int, test: String, difference: Double)
    let ticksPerMicrosecond: Double

    var leaks: Bool { maximum.t > leakThreshold }

    /// `caught`/`MISSED` for the planted leak; for the real targets `ok`, `LEAK` (a
    /// difference the call's result does not reveal: a side channel), or `revealed` (a
    /// difference between classes the result tells apart anyway).
    var verdict: String {
        if target.isPlanted { return leaks ? "caught" : "MISSED" }
        return leaks ? (target.resultRevealsClass ? "revealed" : "LEAK") : "ok"
    }

    var perClass: (Int, Int) {
        let raw = measurement.statistics.raw
        return (Int(raw.count.0), Int(raw.count.1))
    }

    /// Class 0's mean minus class 1's in the test of the largest |t|, in nanoseconds ("-"
    /// for the second-order test, whose means are squared deviations).
    var differenceInNanoseconds: String {
        maximum.test == "second-order" ? "-" : String(format: "%.0f", maximum.difference / ticksPerMicrosecond * 1000)
    }

    /// One line for the logs.
    var line: String {
        let raw = measurement.statistics.raw
        let us0 = raw.mean.0 / ticksPerMicrosecond, us1 = raw.mean.1 / ticksPerMicrosecond
        return "timing: target=\(target.name) per_class=\(perClass.0)/\(perClass.1) "
            + String(
                format: "max_t=%.2f test=%@ test_n=%d delta_ns=%@ raw_t=%.2f mean_us=%.2f/%.2f seconds=%.0f verdict=%@",
                maximum.t, maximum.test, maximum.count, differenceInNanoseconds, raw.t, us0, us1, measurement.seconds,
                verdict)
    }

    /// One row of the Markdown table.
    var row: String {
        "| \(target.name) | \(target.classes.0) vs \(target.classes.1) | \(target.resultRevealsClass ? "yes" : "no") | "
            + "\(min(perClass.0, perClass.1)) | " + String(format: "%.2f (%@) | ", maximum.t, maximum.test)
            + "\(verdict) |"
    }
}

/// Write `line` to standard output at once (unbuffered: the log shows each target as it ends).
func output(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func printTable(_ reports: [TargetReport]) {
    output("| target | classes | result tells them apart | measurements per class | max abs t (test) | verdict |")
    output("| --- | --- | --- | --- | --- | --- |")
    for report in reports { output(report.row) }
}
