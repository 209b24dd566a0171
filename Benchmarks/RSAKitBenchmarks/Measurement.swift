#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic wall-clock time in seconds (CLOCK_MONOTONIC; arbitrary origin).
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// CPU seconds used so far by all threads of this process (CLOCK_PROCESS_CPUTIME_ID).
func processCPUTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// The 1-minute load average (runnable processes, ours included), or nil.
func loadAverage() -> Double? {
    var loads = [Double](repeating: 0, count: 3)
    return getloadavg(&loads, 3) >= 1 ? loads[0] : nil
}

/// Seconds taken by `body`.
@inline(never)
func time(_ body: () throws -> Void) rethrows -> Double {
    let start = now()
    try body()
    return now() - start
}

/// Summary of a set of samples.
struct Stats: Codable {
    let count: Int
    let median: Double
    let min: Double
    let max: Double
    let mean: Double
    /// Sample standard deviation (0 for one sample).
    let stddev: Double

    init(_ samples: [Double]) {
        precondition(!samples.isEmpty, "no samples")
        let sorted = samples.sorted()
        count = sorted.count
        median =
            sorted.count % 2 == 1
            ? sorted[sorted.count / 2]
            : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        min = sorted.first!
        max = sorted.last!
        mean = sorted.reduce(0, +) / Double(sorted.count)
        let m = mean
        stddev =
            sorted.count > 1
            ? (sorted.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(sorted.count - 1)).squareRoot()
            : 0
    }
}

/// One operation case: `body(count)` performs `count` complete operations, timed here; or,
/// for a peer that times itself in a helper process, `measured(count)` performs about
/// `count` operations and reports how many it did and the seconds they took.
struct TimedOperation {
    let name: String
    let body: (Int) throws -> Void
    let measured: ((Int) throws -> (operations: Int, seconds: Double))?

    init(name: String, body: @escaping (Int) throws -> Void) {
        self.name = name
        self.body = body
        self.measured = nil
    }

    private init(name: String, measured: @escaping (Int) throws -> (operations: Int, seconds: Double)) {
        self.name = name
        self.body = { _ = try measured($0) }
        self.measured = measured
    }

    /// A case timed by a helper process (IntelAnchor): `measured(count)` reports its own
    /// operations and seconds.
    static func selfTimed(name: String, measured: @escaping (Int) throws -> (operations: Int, seconds: Double))
        -> TimedOperation
    {
        TimedOperation(name: name, measured: measured)
    }

    /// Run about `count` operations: how many ran and the seconds they took on `clock`.
    func timedRun(_ count: Int, clock: () -> Double = now) throws -> (operations: Int, seconds: Double) {
        if let measured { return try measured(count) }
        let start = clock()
        try body(count)
        return (count, clock() - start)
    }
}

/// Throughput samples (operations per second) of several operations measured in turn.
struct InterleavedResult {
    let name: String
    let opsPerRun: Int
    let samples: [Double]
}

/// Warm each operation up, size its runs, then time `runs` rounds in which every operation
/// runs once, in turn (starting with a different one each round), so that all of them see
/// the same machine load.
///
/// Warm-up doubles the batch until one batch lasts `warmUpTime` (at least two operations);
/// each timed run then performs as many operations as fit in `runTime` at that speed.
///
/// `clock` is wall-clock time (`now`) unless a group compares with a peer that reports CPU
/// time, which passes `processCPUTime`.
func measureInterleaved(
    _ operations: [TimedOperation], runs: Int, runTime: Double, warmUpTime: Double, clock: () -> Double = now
) throws -> [InterleavedResult] {
    let counts = try operations.map { try calibrate($0, seconds: runTime, warmUpTime: warmUpTime, clock: clock) }
    var samples = Array(repeating: [Double](), count: operations.count)
    for run in 0..<runs {
        // Rotate the order from run to run, so that no operation always goes first (or
        // always follows the same neighbour).
        for offset in operations.indices {
            let i = (run + offset) % operations.count
            let operation = operations[i]
            let count = counts[i]
            let (done, seconds) = try operation.timedRun(count, clock: clock)
            samples[i].append(Double(done) / seconds)
        }
    }
    return operations.indices.map {
        InterleavedResult(name: operations[$0].name, opsPerRun: counts[$0], samples: samples[$0])
    }
}

/// Warm `operation` up, doubling the batch (from two operations) until one batch lasts
/// `warmUpTime`, and return how many operations fit in `seconds` at that speed (at least 1).
func calibrate(_ operation: TimedOperation, seconds: Double, warmUpTime: Double, clock: () -> Double = now) throws
    -> Int
{
    var batch = 2
    while true {
        let (done, elapsed) = try operation.timedRun(batch, clock: clock)
        if elapsed >= warmUpTime || batch >= 1 << 24 {
            let perOp = elapsed / Double(max(done, 1))
            return Swift.max(1, Int((seconds / Swift.max(perOp, 1e-9)).rounded(.up)))
        }
        batch *= 2
    }
}

/// Keeps values alive so that the optimiser cannot drop the work that produced them.
enum BlackHole {
    nonisolated(unsafe) static var sink: UInt8 = 0

    @inline(never)
    static func consume(_ bytes: [UInt8]) {
        sink &+= bytes.first ?? 0
    }
}
