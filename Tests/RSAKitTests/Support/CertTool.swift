import Foundation
import XCTest
import RSAKitTestSupport

/// GnuTLS's `certtool` (gnutls-bin), or a visible skip.
enum CertTool {
    static let path: String? = TestTools.path(of: "certtool")

    /// Run certtool; returns stdout, failing the test with stderr on a non-zero exit.
    @discardableResult
    static func run(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        guard let path else { throw XCTSkip("certtool (gnutls-bin) not found on PATH: test skipped") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            XCTFail("certtool \(arguments.joined(separator: " ")) failed: \(String(decoding: errors, as: UTF8.self))", file: file, line: line)
            throw CocoaError(.fileReadUnknown)
        }
        return [UInt8](data)
    }
}
