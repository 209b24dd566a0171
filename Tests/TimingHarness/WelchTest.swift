// The statistics of dudect (Reparaz, Balasch, Verbauwhede, "Dude, is my code constant
// time?", DATE 2017): Welch's t-test between the two classes' timings, computed online
// (Welford's mean and variance, no stored measurements), on the raw measurements, on the
// measurements cropped at 100 percentiles, and as a second-order test. dudect.h's layout,
// in Swift.

import Foundation

/// Welch's t-test between two classes, with each class's mean and variance kept online.
struct WelchTest {
    private(set) var count: (Double, Double) = (0, 0)
    private(set) var mean: (Double, Double) = (0, 0)
    private var m2: (Double, Double) = (0, 0)

    /// Add one measurement `x` of class `cls` (0 or 1): Welford's update.
    mutating func add(_ x: Double, class cls: Int) {
        if cls == 0 {
            count.0 += 1
            let delta = x - mean.0
            mean.0 += delta / count.0
            m2.0 += delta * (x - mean.0)
        } else {
            count.1 += 1
            let delta = x - mean.1
            mean.1 += delta / count.1
            m2.1 += delta * (x - mean.1)
        }
    }

    /// Measurements of both classes.
    var total: Int { Int(count.0 + count.1) }

    /// The smaller of the two classes' counts.
    var smallerClass: Int { Int(min(count.0, count.1)) }

    /// t = (mean_0 - mean_1) / sqrt(var_0 / n_0 + var_1 / n_1); 0 until each class has two.
    var t: Double {
        guard count.0 > 1, count.1 > 1 else { return 0 }
        let variance0 = m2.0 / (count.0 - 1)
        let variance1 = m2.1 / (count.1 - 1)
        let denominator = (variance0 / count.0 + variance1 / count.1).squareRoot()
        return denominator > 0 ? (mean.0 - mean.1) / denominator : 0
    }
}

/// dudect's set of tests over one target: raw, cropped at each percentile, second order.
struct DudectStatistics {
    /// dudect's DUDECT_NUMBER_PERCENTILES.
    static let percentileCount = 100

    /// The crop fraction of test i: 1 - 0.5^(10 (i + 1) / 100), from 0.067 to 0.999, dense
    /// near the top where preemptions and cache misses put the outliers (dudect.h).
    static func cropFraction(_ i: Int) -> Double {
        1 - pow(0.5, 10 * Double(i + 1) / Double(percentileCount))
    }

    /// The second-order test starts once this many raw measurements fixed the means.
    static let secondOrderStart = 10_000

    /// Thresholds estimated from the first batch (which is then thrown away).
    let thresholds: [UInt64]
    private(set) var raw = WelchTest()
    private(set) var cropped: [WelchTest]
    private(set) var secondOrder = WelchTest()

    /// Estimate the crop thresholds from `firstBatch` (both classes together).
    init(firstBatch: [UInt64]) {
        let sorted = firstBatch.sorted()
        thresholds = (0..<Self.percentileCount).map { i in
            sorted[min(sorted.count - 1, Int(Double(sorted.count) * Self.cropFraction(i)))]
        }
        cropped = Array(repeating: WelchTest(), count: Self.percentileCount)
    }

    mutating func add(_ ticks: UInt64, class cls: Int) {
        let x = Double(ticks)
        raw.add(x, class: cls)
        for i in 0..<Self.percentileCount where ticks < thresholds[i] {
            cropped[i].add(x, class: cls)
        }
        // Second order: the squared distance from the class's mean (dudect's centred product).
        if raw.total >= Self.secondOrderStart {
            let centred = x - (cls == 0 ? raw.mean.0 : raw.mean.1)
            secondOrder.add(centred * centred, class: cls)
        }
    }

    /// The test with the largest |t| among those with enough measurements (at least
    /// `minimumCount` in its smaller class, dudect's "enough measurements"): its |t|, the
    /// measurements it holds, its name ("raw", "p0.933", "second-order") and its
    /// difference of the class means (class 0 minus class 1, in ticks; squared ticks for
    /// the second-order test). With `expectingClass0Slower`, the largest t of that sign
    /// instead (first-order tests only): for the planted leak, whose class 0 does more work.
    func maximum(minimumCount: Int, expectingClass0Slower: Bool = false) -> (
        t: Double, count: Int, test: String, difference: Double
    ) {
        let score = { (test: WelchTest) in expectingClass0Slower ? test.t : abs(test.t) }
        var best = (t: score(raw), count: raw.total, test: "raw", difference: raw.mean.0 - raw.mean.1)
        for (i, test) in cropped.enumerated() where test.smallerClass >= minimumCount && score(test) > best.t {
            best = (score(test), test.total, String(format: "p%.3f", Self.cropFraction(i)), test.mean.0 - test.mean.1)
        }
        if !expectingClass0Slower && secondOrder.smallerClass >= minimumCount && abs(secondOrder.t) > best.t {
            best = (abs(secondOrder.t), secondOrder.total, "second-order", secondOrder.mean.0 - secondOrder.mean.1)
        }
        return best
    }
}
