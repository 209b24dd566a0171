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
    package static func run(_ arguments: [String], input: [UInt8] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        let result = try runAllowingFailure(arguments, input: input)
        guard result.status == 0 else {
            XCTFail("openssl \(arguments.joined(separator: " ")) failed: \(result.stderr)", file: file, line: line)
            throw CocoaError(.fileReadUnknown)
        }
        return result.stdout
    }

    /// Run openssl with `arguments`, feeding `input` on stdin; returns the exit status, stdout
    /// and stderr whatever the status.
    package static func runAllowingFailure(_ arguments: [String], input: [UInt8] = []) throws -> (status: Int32, stdout: [UInt8], stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try require())
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe()
        let errURL = TestScratch.directory.appendingPathComponent("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let errHandle = try FileHandle(forWritingTo: errURL)
        defer { try? errHandle.close(); try? FileManager.default.removeItem(at: errURL) }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = errHandle
        try process.run()
        let inputData = Data(input)
        let writer = Thread {
            stdin.fileHandleForWriting.write(inputData)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        return (process.terminationStatus, [UInt8](out), String(decoding: errData, as: UTF8.self))
    }
}
