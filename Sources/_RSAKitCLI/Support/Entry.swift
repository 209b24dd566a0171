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
        // tpm2-pkcs11 prints its errors on stderr at any log level; the command's own line
        // says what failed. A user who sets TPM2_PKCS11_LOG_LEVEL wants the module's lines.
        RSATPMConfiguration.silencesModuleLog = getenv("TPM2_PKCS11_LOG_LEVEL") == nil
        return RSAKitCommandLine.run(arguments).rawValue
    }

    /// The exit status of a failure before any command ran (1).
    package static let failureStatus = ExitStatus.failure.rawValue
}
