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
        let result = try ChildProcess.run([path] + arguments)
        guard result.status == 0 else {
            XCTFail("certtool \(arguments.joined(separator: " ")) failed: \(result.stderr)", file: file, line: line)
            throw CocoaError(.fileReadUnknown)
        }
        return result.stdout
    }
}
