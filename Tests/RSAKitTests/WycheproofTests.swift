import Foundation
import XCTest
import RSAKit

/// Every Wycheproof RSA file (testvectors_v1/rsa_*.json: 83 files, 11,266 tests), one test
/// per family. A case rsakit refuses counts as a failure unless the vector marks it
/// invalid or acceptable; an accepted "acceptable" case must still give the right bytes.
/// Each family prints passed/total; the class prints the grand total at the end.
final class WycheproofTests: XCTestCase {
    static let families: [(name: String, prefix: String)] = [
        ("RSAES-PKCS1-v1_5 decryption", "rsa_pkcs1_"),  // minus the sig_gen files, see `files(_:)`
        ("RSASSA-PKCS1-v1_5 signature generation", "rsa_pkcs1_*_sig_gen"),
        ("RSAES-OAEP decryption", "rsa_oaep_"),
        ("RSAES-OAEP decryption, three-prime keys", "rsa_three_primes_oaep_"),
        ("RSASSA-PKCS1-v1_5 verification", "rsa_signature_"),
        ("RSASSA-PSS verification", "rsa_pss_")
    ]

    private static let lock = NSLock()
    nonisolated(unsafe) private static var tallies: [String: WycheproofTally] = [:]

    static func files(_ family: String) throws -> [String] {
        let all = try Wycheproof.rsaFileNames()
        switch family {
        case "rsa_pkcs1_": return all.filter { $0.hasPrefix("rsa_pkcs1_") && !$0.contains("sig_gen") }
        case "rsa_pkcs1_*_sig_gen": return all.filter { $0.hasPrefix("rsa_pkcs1_") && $0.contains("sig_gen") }
        default: return all.filter { $0.hasPrefix(family) }
        }
    }

    func finish(_ tally: WycheproofTally, expectedFiles: Int, file: StaticString = #filePath, line: UInt = #line) {
        print(tally)
        Self.lock.lock(); Self.tallies[tally.family] = tally; Self.lock.unlock()
        XCTAssertEqual(tally.files, expectedFiles, "\(tally.family): file count", file: file, line: line)
        for failure in tally.failures { XCTFail(failure, file: file, line: line) }
    }

    override class func tearDown() {
        lock.lock(); defer { lock.unlock() }
        guard !tallies.isEmpty else { return }
        let total = tallies.values.reduce(0) { $0 + $1.total }
        let passed = tallies.values.reduce(0) { $0 + $1.passed }
        let files = tallies.values.reduce(0) { $0 + $1.files }
        print(
            "Wycheproof RSA grand total: \(passed)/\(total) passed, \(total - passed) failed, in \(files) files, "
                + "\(tallies.count) of \(families.count) families run"
        )
        super.tearDown()
    }

    // MARK: - Inventory

    func testWycheproof_Inventory_83FilesAnd11266Tests() throws {
        let names = try Wycheproof.rsaFileNames()
        XCTAssertEqual(names.count, 83, "RSA files in testvectors_v1")
        var total = 0
        for name in names { total += try Wycheproof.load(name).numberOfTests }
        XCTAssertEqual(total, 11_266)
        let covered = try Self.families.flatMap { try Self.files($0.prefix) }
        XCTAssertEqual(Set(covered), Set(names), "every RSA file belongs to exactly one family")
        XCTAssertEqual(covered.count, names.count)
    }

    // MARK: - Decryption

    func testWycheproof_PKCS1v15Decryption() throws {
        finish(try decryptionFamily("RSAES-PKCS1-v1_5 decryption", "rsa_pkcs1_") { _ in .pkcs1v15 }, expectedFiles: 3)
    }

    func testWycheproof_OAEPDecryption() throws {
        finish(try decryptionFamily("RSAES-OAEP decryption", "rsa_oaep_", oaep), expectedFiles: 22)
    }

    /// Three-prime keys load (RFC 8017 §3.2), so every valid case must decrypt: a key the
    /// parser refuses fails each of its valid cases, never a skip.
    func testWycheproof_ThreePrimeOAEPDecryption() throws {
        let tally = try decryptionFamily("RSAES-OAEP decryption, three-prime keys", "rsa_three_primes_oaep_", oaep)
        XCTAssertGreaterThan(tally.passed, 0, "\(tally)")
        finish(tally, expectedFiles: 3)
    }

    func oaep(_ group: Wycheproof.Group) throws -> RSAEncryptionPadding {
        guard group.mgf == "MGF1", let sha = group.sha, let hash = RSAHashAlgorithm(name: sha),
            let mgfSha = group.mgfSha, let mgf1 = RSAHashAlgorithm(name: mgfSha)
        else {
            throw RSAError.internalError(
                "unknown OAEP parameters \(String(describing: group.sha)) / \(String(describing: group.mgf)) "
                    + "\(String(describing: group.mgfSha))"
            )
        }
        return .oaep(RSAOAEPParameters(hash: hash, mgf1Hash: mgf1))
    }

    func decryptionFamily(
        _ name: String, _ prefix: String, _ padding: (Wycheproof.Group) throws -> RSAEncryptionPadding
    ) throws -> WycheproofTally {
        var tally = WycheproofTally(family: name)
        for file in try Self.files(prefix) {
            tally.files += 1
            for group in try Wycheproof.load(file).testGroups {
                let key: RSAPrivateKey
                do {
                    key = try RSAPrivateKey(derRepresentation: Hex.decode(group.privateKeyPkcs8 ?? ""))
                } catch {
                    for test in group.tests {
                        tally.record(file, test, refused: "key not loaded: \(error)")
                    }
                    continue
                }
                for test in group.tests {
                    var base = try padding(group)
                    if case let .oaep(p) = base {
                        base = .oaep(
                            RSAOAEPParameters(hash: p.hash, mgf1Hash: p.mgf1Hash, label: Hex.decode(test.label ?? "")))
                    }
                    do {
                        let message = try key.decrypt(Hex.decode(test.ct ?? ""), padding: base)
                        tally.record(
                            file, test,
                            refused: Hex.encode(message) == test.msg
                                ? nil : "decrypted to other bytes \(Hex.encode(message))")
                        if test.result != "valid" && Hex.encode(message) != test.msg {
                            tally.failures.append(
                                "\(file) tcId \(test.tcId): \(test.result) case decrypted to wrong bytes")
                        }
                    } catch let error as RSAError where error == .decryptionFailed {
                        tally.record(file, test, refused: "decryption failed")
                    } catch {
                        tally.record(file, test, refused: "\(error)")
                        tally.failures.append(
                            "\(file) tcId \(test.tcId): failed with \(error), not the opaque decryptionFailed")
                    }
                }
            }
        }
        return tally
    }

    // MARK: - Signatures

    func testWycheproof_PKCS1v15SignatureGeneration() throws {
        var tally = WycheproofTally(family: "RSASSA-PKCS1-v1_5 signature generation")
        for file in try Self.files("rsa_pkcs1_*_sig_gen") {
            tally.files += 1
            for group in try Wycheproof.load(file).testGroups {
                let hash = try XCTUnwrap(
                    group.sha.flatMap(RSAHashAlgorithm.init(name:)), "\(file): hash \(group.sha ?? "-")")
                let key: RSAPrivateKey
                do {
                    key = try RSAPrivateKey(derRepresentation: Hex.decode(group.privateKeyPkcs8 ?? ""))
                } catch {
                    for test in group.tests { tally.record(file, test, refused: "key not loaded: \(error)") }
                    continue
                }
                for test in group.tests {
                    do {
                        let signature = try key.signature(for: Hex.decode(test.msg), hash: hash, padding: .pkcs1v15)
                        let same = Hex.encode(signature) == test.sig
                        tally.record(file, test, refused: same ? nil : "different signature \(Hex.encode(signature))")
                        if !same && test.result != "valid" {
                            tally.failures.append("\(file) tcId \(test.tcId): signature differs")
                        }
                        if !key.publicKey.isValidSignature(
                            signature, for: Hex.decode(test.msg), hash: hash, padding: .pkcs1v15)
                        {
                            tally.failures.append("\(file) tcId \(test.tcId): own signature does not verify")
                        }
                    } catch {
                        tally.record(file, test, refused: "\(error)")
                    }
                }
            }
        }
        finish(tally, expectedFiles: 5)
    }

    func testWycheproof_PKCS1v15SignatureVerification() throws {
        let tally = try verificationFamily("RSASSA-PKCS1-v1_5 verification", "rsa_signature_") {
            group, key, signature, message in
            let hash = try XCTUnwrap(group.sha.flatMap(RSAHashAlgorithm.init(name:)), "hash \(group.sha ?? "-")")
            return key.isValidSignature(signature, for: message, hash: hash, padding: .pkcs1v15)
        }
        finish(tally, expectedFiles: 24)
    }

    func testWycheproof_PSSVerification() throws {
        let tally = try verificationFamily("RSASSA-PSS verification", "rsa_pss_") { group, key, signature, message in
            let sLen = try XCTUnwrap(group.sLen, "sLen")
            if let shake = RSAPSSSHAKE(rawValue: (group.sha ?? "").lowercased()) {
                XCTAssertEqual(group.mgf, group.sha, "SHAKE PSS uses SHAKE as the MGF (RFC 8702)")
                return key.isValidSignature(signature, for: message, shake: shake, saltLength: .byteCount(sLen))
            }
            let hash = try XCTUnwrap(group.sha.flatMap(RSAHashAlgorithm.init(name:)), "hash \(group.sha ?? "-")")
            let mgf1 = try XCTUnwrap(
                group.mgfSha.flatMap(RSAHashAlgorithm.init(name:)), "MGF1 hash \(group.mgfSha ?? "-")")
            XCTAssertEqual(group.mgf, "MGF1")
            let padding: RSASignaturePadding =
                mgf1 == hash ? .pss(saltLength: .byteCount(sLen)) : .pssMGF1(mgf1, saltLength: .byteCount(sLen))
            let valid = key.isValidSignature(signature, for: message, hash: hash, padding: padding)
            if valid {
                // The signer's salt length is recovered by `auto` too (OpenSSL's default on verify).
                let auto: RSASignaturePadding =
                    mgf1 == hash ? .pss(saltLength: .auto) : .pssMGF1(mgf1, saltLength: .auto)
                XCTAssertTrue(
                    key.isValidSignature(signature, for: message, hash: hash, padding: auto), "auto salt length")
            }
            return valid
        }
        finish(tally, expectedFiles: 26)
    }

    func verificationFamily(
        _ name: String, _ prefix: String,
        _ verify: (Wycheproof.Group, RSAPublicKey, [UInt8], [UInt8]) throws -> Bool
    ) throws -> WycheproofTally {
        var tally = WycheproofTally(family: name)
        for file in try Self.files(prefix) {
            tally.files += 1
            for group in try Wycheproof.load(file).testGroups {
                let key: RSAPublicKey
                do {
                    let components = try XCTUnwrap(group.publicKey, "\(file): publicKey")
                    key = try RSAPublicKey(
                        modulus: Hex.decode(components.modulus), publicExponent: Hex.decode(components.publicExponent))
                } catch {
                    for test in group.tests { tally.record(file, test, refused: "key not loaded: \(error)") }
                    continue
                }
                for test in group.tests {
                    let valid = try verify(group, key, Hex.decode(test.sig ?? ""), Hex.decode(test.msg))
                    tally.record(file, test, refused: valid ? nil : "signature rejected")
                }
            }
        }
        return tally
    }
}
