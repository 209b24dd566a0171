import XCTest
@testable import RSAKit

final class SmokeTests: XCTestCase {
    func testBuilds() throws {
        XCTAssertEqual(EMEPKCS1v15.overheadByteCount, 11)
    }
}
