import Foundation

/// Finding the real command-line tools the tests drive (`openssl`, `certtool`, `javac`,
/// `valgrind`...): the first executable of that name on `$PATH` (default `/usr/bin:/bin`).
package enum TestTools {
    /// The absolute path of `name` on `$PATH`, or nil when no executable of that name is there.
    package static func path(of name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// A per-process scratch folder (`$TMPDIR/rsakit-tests-PID`), made on first use.
package enum TestScratch {
    package static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rsakit-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()
}

/// Long cases (4096-bit keys, big files) run when `RSAKIT_LONG_TESTS=1`; CI sets it.
package var longTestsEnabled: Bool { ProcessInfo.processInfo.environment["RSAKIT_LONG_TESTS"] == "1" }
