import Foundation
import XCTest

/// The `openssl` CLI, or a visible skip.
package enum OpenSSL {
    /// `openssl` on `$PATH`, or nil.
    package static let path: String? = TestTools.path(of: "openssl")

    /// The path of `openssl`; throws `XCTSkip` (with the reason) when it is absent.
    package static func require() throws -> String {
        guard let path else { throw XCTSkip("openssl CLI not found on PATH: interop test skipped") }
        return path
    }

    /// Run openssl with `arguments`, feeding `input` on stdin; returns stdout. Fails the test
    /// with stderr when it exits non-zero.
    @discardableResult
    package static func run(
        _ arguments: [String], input: [UInt8] = [], file: StaticString = #filePath, line: UInt = #line
    ) throws -> [UInt8] {
        let result = try runAllowingFailure(arguments, input: input)
        guard result.status == 0 else {
            XCTFail("openssl \(arguments.joined(separator: " ")) failed: \(result.stderr)", file: file, line: line)
            throw CocoaError(.fileReadUnknown)
        }
        return result.stdout
    }

    /// Run openssl with `arguments`, feeding `input` on stdin; returns the exit status, stdout
    /// and stderr whatever the status.
    package static func runAllowingFailure(_ arguments: [String], input: [UInt8] = []) throws -> (
        status: Int32, stdout: [UInt8], stderr: String
    ) {
        let result = try ChildProcess.run([try require()] + arguments, stdin: input)
        return (result.status, result.stdout, result.stderr)
    }
}
