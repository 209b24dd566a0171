// The `rsakit` executable's way in (Sources/RSAKitCLI/main.swift, in this package): package
// access, apart from the `@_spi(Fuzzing)` names the Fuzz package's harness reads.

#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// What the executable calls: the command line, and the status for a failure before it ran.
package enum RSAKitCommandLineEntry {
    /// Run `arguments` (the words after the program's name) as `rsakit` does; the process's
    /// exit status (0, 1, 64, 65, 66 or 73, docs/scripting.md).
    package static func run(_ arguments: [String]) -> Int32 {
        RSAKitCommandLine.run(arguments).rawValue
    }

    /// The exit status of a failure before any command ran (1).
    package static let failureStatus = ExitStatus.failure.rawValue
}
