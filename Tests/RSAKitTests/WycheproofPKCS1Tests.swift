import Foundation
import XCTest
@testable import RSAKit

/// Wycheproof RSAES-PKCS1-v1_5 decryption vectors (schema rsaes_pkcs1_decrypt_schema_v1.json).
final class WycheproofPKCS1Tests: XCTestCase {
    struct File: Decodable {
        let numberOfTests: Int
        let testGroups: [Group]
    }
    struct Group: Decodable {
        let keySize: Int
        let privateKey: PrivateKey
        let tests: [Case]
    }
    struct PrivateKey: Decodable {
        let modulus, publicExponent, privateExponent, prime1, prime2, exponent1, exponent2, coefficient: String
    }
    struct Case: Decodable {
        let tcId: Int
        let comment: String
        let msg: String
        let ct: String
        let result: String
        let flags: [String]
    }

    static let files = ["rsa_pkcs1_2048_test.json", "rsa_pkcs1_3072_test.json", "rsa_pkcs1_4096_test.json"]

    func testWycheproof_PKCS1v15Decryption_AllCases() throws {
        var ran = 0, expected = 0, validPassed = 0, invalidRejected = 0
        for name in Self.files {
            let file = try JSONDecoder().decode(File.self, from: try Vectors.load(name))
            expected += file.numberOfTests
            for group in file.testGroups {
                let c = group.privateKey
                let key = try RSAPrivateKey(
                    modulus: Hex.decode(c.modulus), publicExponent: Hex.decode(c.publicExponent),
                    privateExponent: Hex.decode(c.privateExponent),
                    prime1: Hex.decode(c.prime1), prime2: Hex.decode(c.prime2),
                    exponent1: Hex.decode(c.exponent1), exponent2: Hex.decode(c.exponent2),
                    coefficient: Hex.decode(c.coefficient))
                XCTAssertEqual(key.modulusBitCount, group.keySize, "\(name): key size")
                for test in group.tests {
                    ran += 1
                    let where_ = "\(name) tcId \(test.tcId) (\(test.comment))"
                    switch test.result {
                    case "valid":
                        do {
                            let message = try key.decrypt(Hex.decode(test.ct))
                            XCTAssertEqual(Hex.encode(message), test.msg, where_)
                            validPassed += 1
                        } catch {
                            XCTFail("\(where_): valid case threw \(error)")
                        }
                    case "invalid":
                        XCTAssertThrowsError(try key.decrypt(Hex.decode(test.ct)), where_) { error in
                            XCTAssertEqual(error as? RSAError, .decryptionFailed, "\(where_): every invalid case must fail with the same opaque error")
                        }
                        invalidRejected += 1
                    default:
                        XCTFail("\(where_): unexpected result \(test.result)")
                    }
                }
            }
        }
        print("Wycheproof RSAES-PKCS1-v1_5: \(ran)/\(expected) cases ran (\(validPassed) valid decrypted, \(invalidRejected) invalid rejected with decryptionFailed)")
        XCTAssertEqual(ran, expected)
        XCTAssertEqual(ran, 201, "the three PKCS#1 decryption files hold 201 cases")
    }
}
