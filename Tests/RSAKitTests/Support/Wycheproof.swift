import Foundation
import XCTest
import RSAKit

/// Wycheproof's RSA JSON (schemas rsaes_pkcs1_decrypt, rsaes_oaep_decrypt,
/// rsassa_pkcs1_generate, rsassa_pkcs1_verify, rsassa_pss_verify,
/// rsassa_pss_with_parameters_verify), decoded with Codable. Fields a schema lacks are nil.
enum Wycheproof {
    struct File: Decodable {
        let schema: String
        let numberOfTests: Int
        let testGroups: [Group]
    }

    struct Group: Decodable {
        let keySize: Int
        let sha: String?
        let mgf: String?
        let mgfSha: String?
        let sLen: Int?
        let publicKey: PublicKey?
        /// PKCS#8 PrivateKeyInfo DER as hex: read through RSAKit's own key parser.
        let privateKeyPkcs8: String?
        let tests: [Case]
    }

    struct PublicKey: Decodable {
        let modulus: String
        let publicExponent: String
    }

    struct Case: Decodable {
        let tcId: Int
        let comment: String
        let flags: [String]
        let msg: String
        let ct: String?
        let sig: String?
        let label: String?
        let result: String
    }

    /// Every rsa_*.json file in the vector folder, sorted (fails loudly when absent).
    static func rsaFileNames() throws -> [String] {
        _ = try Vectors.load("rsa_pkcs1_2048_test.json")  // the loud "NOT FOUND" path
        let names = try FileManager.default.contentsOfDirectory(atPath: Vectors.directory!.path)
        return names.filter { $0.hasPrefix("rsa_") && $0.hasSuffix(".json") }.sorted()
    }

    static func load(_ name: String) throws -> File {
        try JSONDecoder().decode(File.self, from: try Vectors.load(name))
    }
}

/// Pass/fail counts of one family, with the failures named by file and tcId.
struct WycheproofTally: CustomStringConvertible {
    let family: String
    var files = 0
    var total = 0
    var passed = 0
    var failures: [String] = []

    /// Score one case: `outcome` is nil when rsakit accepted (decrypted to the right bytes,
    /// verified, or signed identically), else why it did not.
    mutating func record(_ file: String, _ test: Wycheproof.Case, refused outcome: String?) {
        total += 1
        switch (test.result, outcome) {
        case ("valid", nil), ("acceptable", _), ("invalid", .some):
            passed += 1
        case ("valid", .some(let why)):
            failures.append("\(file) tcId \(test.tcId) [\(test.comment)]: valid case refused: \(why)")
        case ("invalid", nil):
            failures.append("\(file) tcId \(test.tcId) [\(test.comment)]: invalid case accepted")
        default:
            failures.append("\(file) tcId \(test.tcId): unknown result \(test.result)")
        }
    }

    var description: String {
        var line = "Wycheproof \(family): \(passed)/\(total) passed in \(files) files"
        if !failures.isEmpty { line += ", \(failures.count) FAILED" }
        return line
    }
}
