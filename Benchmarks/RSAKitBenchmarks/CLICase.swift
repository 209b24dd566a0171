import Foundation
import RSAKit

/// The `cli` case: whole `rsakit` processes against whole `openssl pkeyutl` processes, one
/// block of 100 bytes encrypted and decrypted with the 2048-bit fixture key read from a
/// key file, run alternately (rsakit, openssl, rsakit, ...) so that each pair of samples
/// is taken within milliseconds. Each sample is the wall time of one process from
/// posix_spawn to waitpid (output to /dev/null): start-up, key-file parsing and one RSA
/// operation, which is what a user of the command line waits for.
///
/// The binary is `--rsakit PATH`, else `rsakit` on PATH (the installed, static build from
/// scripts/install.sh), else the `rsakit` beside this benchmark's executable; the case is
/// skipped with a note when none is found (or when openssl is absent).
struct CLIBenchmark {
    let rsakit: String
    let openssl: String
    let reporter: Reporter
    /// Process pairs per command.
    let pairs: Int

    /// The binary the case times, per the rule above; nil when none is found.
    static func findBinary(explicitPath: String?) -> String? {
        if let explicitPath { return explicitPath }
        if let onPath = findOnPath("rsakit") { return onPath }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "rsakit"
        ).path
        return FileManager.default.isExecutableFile(atPath: beside) ? beside : nil
    }

    /// Fixture files in a fresh folder, then the two pairs of commands, then the ratios.
    /// - Throws: `BenchmarkFailure` when a command fails or a round trip gives another message.
    func run(keyPath: String) throws {
        let folder = NSTemporaryDirectory() + "rsakit-bench-cli-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let key = try Fixtures.loadPrivateKey(path: keyPath)
        let publicPath = folder + "/pub.pem", messagePath = folder + "/message.bin", blockPath = folder + "/block.bin"
        let message = (0..<100).map { UInt8(0x21 + ($0 * 29 + 7) % 94) }  // printable: the check reads stdout as text
        try Data(key.publicKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: publicPath))
        try Data(message).write(to: URL(fileURLWithPath: messagePath))
        // One raw PKCS#1 v1.5 block: both tools decrypt the same input.
        try Data(try key.publicKey.encrypt(message)).write(to: URL(fileURLWithPath: blockPath))

        let commands: [(name: String, rsakit: [String], openssl: [String])] = [
            (
                "encrypt", ["encrypt", "--raw", "--key", publicPath, "--in", messagePath],
                ["pkeyutl", "-encrypt", "-pubin", "-inkey", publicPath, "-in", messagePath]
            ),
            (
                "decrypt", ["decrypt", "--raw", "--key", keyPath, "--in", blockPath],
                ["pkeyutl", "-decrypt", "-inkey", keyPath, "-in", blockPath]
            )
        ]
        // Both tools must do the work before anything is timed.
        let check = try runProcess(rsakit, commands[1].rsakit)
        guard check.status == 0, Array(check.stdout.utf8) == message else {
            throw BenchmarkFailure(
                description: "cli: \(rsakit) decrypt did not give the message back: \(check.stderr.prefix(200))")
        }
        let peer = try runProcess(openssl, commands[1].openssl)
        guard peer.status == 0, Array(peer.stdout.utf8) == message else {
            throw BenchmarkFailure(description: "cli: openssl pkeyutl -decrypt did not give the message back")
        }
        for command in commands {
            var ours: [Double] = [], theirs: [Double] = []
            for _ in 0..<3 {  // warm the page cache and the dynamic loader
                _ = try spawnSeconds(rsakit, command.rsakit)
                _ = try spawnSeconds(openssl, command.openssl)
            }
            for index in 0..<pairs {
                // Alternate which goes first, so that neither always follows the other.
                if index % 2 == 0 {
                    ours.append(try spawnSeconds(rsakit, command.rsakit) * 1000)
                    theirs.append(try spawnSeconds(openssl, command.openssl) * 1000)
                } else {
                    theirs.append(try spawnSeconds(openssl, command.openssl) * 1000)
                    ours.append(try spawnSeconds(rsakit, command.rsakit) * 1000)
                }
            }
            reporter.record(
                CaseResult(
                    name: "cli-\(command.name)", bits: key.modulusBitCount, unit: "ms/process",
                    samples: ours, pairedGroup: "cli-\(command.name)",
                    what: "whole process: \(rsakit) \(command.rsakit[0]) --raw --key FILE, 100 bytes, one block"))
            reporter.record(
                CaseResult(
                    name: "openssl-pkeyutl-\(command.name)", bits: key.modulusBitCount, unit: "ms/process",
                    samples: theirs, pairedGroup: "cli-\(command.name)",
                    what: "whole process: openssl pkeyutl -\(command.name) -inkey FILE, 100 bytes"))
            // Time ratio: at most 1.1 x openssl's process time.
            reporter.ratio(
                "cli-\(command.name)", versus: "openssl-pkeyutl-\(command.name)", bits: key.modulusBitCount,
                goal: .atMost(1.1), minimumSamples: 15)
        }
    }

    /// Wall seconds of one process, stdin, stdout and stderr on /dev/null.
    /// - Throws: `BenchmarkFailure` when it cannot start or exits non-zero.
    func spawnSeconds(_ executable: String, _ arguments: [String]) throws -> Double {
        let start = now()
        let status = try spawnAndWait(executable, arguments, stdout: "/dev/null", stderr: "/dev/null")
        let seconds = now() - start
        guard status == 0 else {
            throw BenchmarkFailure(
                description: "cli: \(executable) \(arguments.joined(separator: " ")) failed (status \(status))")
        }
        return seconds
    }
}
