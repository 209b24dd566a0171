// Measuring one target dudect's way: batches of measurements, each measurement of a class
// drawn at random (SystemRandomNumberGenerator) so that the two classes are interleaved and
// any drift of the machine (another process, frequency, the blinding cache's refresh every
// 32 operations) falls on both alike; the first batch warms up and sets the crop
// percentiles, then is thrown away; the first few measurements of every batch are dropped.

import CTimingClock

/// The clock a measurement reads.
enum TimingClock: String {
    /// The time stamp counter (LFENCE; RDTSC ... RDTSCP; LFENCE): about 20 ns to read, and
    /// with constant_tsc it ticks at a fixed rate whatever the core's frequency.
    case tsc
    /// clock_gettime(CLOCK_MONOTONIC_RAW) through the vDSO, in nanoseconds.
    case monotonicRaw = "monotonic-raw"

    @inline(__always) func begin() -> UInt64 {
        self == .tsc ? rsakit_timing_tsc_begin() : rsakit_timing_monotonic_raw_ns()
    }

    @inline(__always) func end() -> UInt64 {
        self == .tsc ? rsakit_timing_tsc_end() : rsakit_timing_monotonic_raw_ns()
    }

    /// Ticks per microsecond, measured over `milliseconds` against CLOCK_MONOTONIC_RAW.
    func ticksPerMicrosecond(milliseconds: UInt64 = 100) -> Double {
        guard self == .tsc, rsakit_timing_has_tsc() == 1 else { return 1000 }
        let ns0 = rsakit_timing_monotonic_raw_ns()
        let t0 = begin()
        while rsakit_timing_monotonic_raw_ns() - ns0 < milliseconds * 1_000_000 {}
        let t1 = end()
        let ns1 = rsakit_timing_monotonic_raw_ns()
        return Double(t1 - t0) / (Double(ns1 - ns0) / 1000)
    }
}

/// Two classes of inputs and the operation timed on them.
///
/// Inputs are made fresh for every measurement, before its batch (dudect's
/// prepare_inputs): with fixed pools, the pools' own public differences (the ciphertexts'
/// values, where their bytes lie in memory) averaged over a few hundred inputs differ by a
/// few ns between two pools of one class, which 10^6 measurements resolve (|t| 16 between two
/// pools of 256 valid ciphertexts). Only the process target keeps a pool (its resolution is
/// milliseconds).
struct TimingTarget {
    let name: String
    /// What class 0 and class 1 are, for the report.
    let classes: (String, String)
    /// Make the inputs of one batch: slot i gets a fresh input of class `classes[i]`
    /// (untimed). Nil for a target with a fixed pool of `poolSize` inputs per class.
    let prepare: ((_ classes: [Int]) -> Void)?
    /// Inputs per class of a fixed pool (a measurement picks one at random).
    let poolSize: Int
    /// The timed operation on input `item` (the slot, or the pool index) of class `cls`;
    /// true when it succeeded.
    let run: (_ cls: Int, _ item: Int) -> Bool
    /// What `run` must return for each class (checked on every measurement).
    let expected: (Bool, Bool)
    /// Whether the call's result already tells the classes apart (one succeeds and the
    /// other fails, or M's lengths differ): a timing difference then tells the caller
    /// nothing new, but does tell whoever sees only the time (a protocol that hides the
    /// error: implicit rejection's case). Default: the expected outcomes differ.
    var resultRevealsClass: Bool
    /// The harness's own deliberate leak (must be caught), not RSAKit code.
    var isPlanted = false
    /// A whole process per measurement (far fewer measurements).
    var isProcess = false

    init(
        name: String, classes: (String, String), prepare: ((_ classes: [Int]) -> Void)?, poolSize: Int = 0,
        run: @escaping (Int, Int) -> Bool, expected: (Bool, Bool), resultRevealsClass: Bool? = nil
    ) {
        self.name = name
        self.classes = classes
        self.prepare = prepare
        self.poolSize = poolSize
        self.run = run
        self.expected = expected
        self.resultRevealsClass = resultRevealsClass ?? (expected.0 != expected.1)
    }
}

/// The outcome of measuring one target.
struct TargetMeasurement {
    let statistics: DudectStatistics
    let seconds: Double
    /// Measurements (the warm-up batch included) whose outcome was not their class's: the
    /// target would then time something else than it says.
    let mismatches: Int
}

/// dudect drops the first measurements of each batch (dudect.h: "discard the first few").
let discardedPerBatch = 10

/// Measure `target` until each class has about `perClass` measurements in the statistics.
/// - Parameters:
///   - batchSize: measurements per batch; the first batch only warms up and sets the
///     percentiles.
func measure(_ target: TimingTarget, perClass: Int, batchSize: Int, clock: TimingClock) -> TargetMeasurement {
    var generator = SystemRandomNumberGenerator()
    var classes = [Int](repeating: 0, count: batchSize)
    var items = [Int](repeating: 0, count: batchSize)
    var times = [UInt64](repeating: 0, count: batchSize)
    var mismatches = 0
    let started = rsakit_timing_monotonic_raw_ns()

    func runBatch() {
        for i in 0..<batchSize {
            classes[i] = Int(generator.next() & 1)
            items[i] = target.prepare == nil ? Int.random(in: 0..<target.poolSize, using: &generator) : i
        }
        target.prepare?(classes)
        for i in 0..<batchSize {
            let cls = classes[i]
            let item = items[i]
            let t0 = clock.begin()
            let ok = target.run(cls, item)
            let t1 = clock.end()
            times[i] = t1 &- t0
            if ok != (cls == 0 ? target.expected.0 : target.expected.1) { mismatches += 1 }
        }
    }

    runBatch()
    var statistics = DudectStatistics(firstBatch: times)
    while statistics.raw.total < 2 * perClass {
        runBatch()
        for i in discardedPerBatch..<batchSize {
            statistics.add(times[i], class: classes[i])
        }
    }
    let seconds = Double(rsakit_timing_monotonic_raw_ns() - started) / 1e9
    return TargetMeasurement(statistics: statistics, seconds: seconds, mismatches: mismatches)
}
