#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// A progress line on stderr for long encryptions and decryptions, rewritten in place as
/// `pv` and `curl` do: bytes done, rate and, when the input size is known, percent and time
/// left. Shown only when stderr is a terminal, the work passes ``ProgressMeter/threshold``
/// bytes, and `--quiet` is not given; never on a pipe or a file. One writer: only the
/// thread that reads the input draws, and each redraw is one write(2) of a whole line.
final class ProgressMeter {
    /// Work smaller than this (4 MiB) shows no progress.
    static let threshold = 4 << 20
    /// Seconds between redraws.
    static let interval = 0.25

    private let total: Int?
    private let verb: String
    private var done = 0
    private let start: Double
    private var lastDraw = 0.0
    private var drawn = false

    /// nil when progress must not be shown (stderr not a terminal, --quiet).
    static func make(_ arguments: ParsedArguments, verb: String, inputDescriptor: Int32) -> ProgressMeter? {
        guard !arguments.flag("quiet"), stderrIsTerminal else { return nil }
        var info = stat()
        var total: Int?
        if fstat(inputDescriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            let position = lseek(inputDescriptor, 0, SEEK_CUR)
            total = Int(info.st_size) - Int(max(0, position))
        }
        return ProgressMeter(total: total, verb: verb)
    }

    init(total: Int?, verb: String) {
        self.total = total
        self.verb = verb
        start = ProgressMeter.now()
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Count `byteCount` more bytes; redraw when due.
    func advance(_ byteCount: Int) {
        done += byteCount
        guard done >= ProgressMeter.threshold || (total ?? 0) >= ProgressMeter.threshold else { return }
        let time = ProgressMeter.now()
        guard time - lastDraw >= ProgressMeter.interval else { return }
        lastDraw = time
        draw(time)
    }

    /// The final line (when any was drawn), ended with a newline.
    func finish() {
        guard drawn else { return }
        draw(ProgressMeter.now())
        printError("\n")
        RSAOutputFile.setOpenLineOnStandardError(false)
    }

    /// Clear the line (on failure, so the error message starts at column 0).
    func abandon() {
        guard drawn else { return }
        printError("\r\u{1B}[K")
        RSAOutputFile.setOpenLineOnStandardError(false)
    }

    private func draw(_ time: Double) {
        if !drawn { RSAOutputFile.setOpenLineOnStandardError(true) }
        drawn = true
        let elapsed = max(time - start, 1e-3)
        let rate = Double(done) / elapsed
        var line = "\rrsakit: \(verb) \(ProgressMeter.size(Double(done)))"
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            line += " of \(ProgressMeter.size(Double(total))) (\(Int(fraction * 100))%)"
            line += ", \(ProgressMeter.size(rate))/s"
            if done < total, rate > 0 {
                line += ", \(ProgressMeter.duration(Double(total - done) / rate)) left"
            }
        } else {
            line += ", \(ProgressMeter.size(rate))/s"
        }
        printError(line + "\u{1B}[K")
    }

    /// "512 B", "3.4 MiB" (binary units).
    static func size(_ bytes: Double) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = bytes, unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        if unit == 0 { return "\(Int(value)) B" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    /// "42s", "3m05s", "2h10m".
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m" + (s % 60 < 10 ? "0" : "") + "\(s % 60)s" }
        return "\(s / 3600)h" + ((s % 3600) / 60 < 10 ? "0" : "") + "\((s % 3600) / 60)m"
    }
}

/// A byte source that reports what it reads to a meter (or passes through when none).
struct ProgressSource<Inner: RSAByteSource>: RSAByteSource {
    var inner: Inner
    let meter: ProgressMeter?

    init(_ inner: Inner, _ meter: ProgressMeter?) {
        self.inner = inner
        self.meter = meter
    }

    mutating func read(upTo maximumCount: Int) throws -> [UInt8] {
        let bytes = try inner.read(upTo: maximumCount)
        meter?.advance(bytes.count)
        return bytes
    }

    var remainingByteCount: Int? { inner.remainingByteCount }
}
