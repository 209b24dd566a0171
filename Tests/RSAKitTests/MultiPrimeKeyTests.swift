import Foundation
import XCTest
import RSAKit
@testable import RSAKitCore

/// Multi-prime keys (RFC 8017 §3.2, PKCS#1 version 1 with otherPrimeInfos) against the
/// real `openssl` CLI: load from PKCS#1 and PKCS#8, validate each component, decrypt and
/// sign (RSADP over every prime) both ways, export byte-identical.
final class MultiPrimeKeyTests: XCTestCase {
    private typealias F = KeyFormatFixtures

    /// A 3-prime key made by
    /// `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:BITS -pkeyopt rsa_keygen_primes:PRIMES`.
    private func opensslKey(bits: Int = 2048, primes: Int = 3) throws -> (path: String, key: RSAPrivateKey) {
        let path = F.path("multi-\(bits)-\(primes).pem")
        try F.opensslChecked([
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)",
            "-pkeyopt", "rsa_keygen_primes:\(primes)", "-out", path
        ])
        return (path, try RSAPrivateKey(pemRepresentation: String(decoding: try F.readFile(path), as: UTF8.self)))
    }

    func testMultiPrime_LoadsFromPKCS1AndPKCS8_AndExportsByteIdentical() throws {
        // OpenSSL allows 3 primes from 1024 bits, 4 from 4096.
        for (bits, primes) in [(2048, 3), (4096, 4)] {
            let (path, key) = try opensslKey(bits: bits, primes: primes)
            XCTAssertEqual(key.primeCount, primes)
            XCTAssertEqual(key.otherPrimeInfos.count, primes - 2)
            // NOTE: OpenSSL 3.0's `pkey -outform DER` writes a multi-prime key as PKCS#1; `pkcs8 -topk8` gives PKCS#8.
            let pkcs8DER = try F.opensslChecked(["pkcs8", "-topk8", "-nocrypt", "-in", path, "-outform", "DER"])
            let pkcs1DER = try F.opensslChecked(["rsa", "-in", path, "-traditional", "-outform", "DER"])
            let pkcs1PEM = String(decoding: try F.opensslChecked(["rsa", "-in", path, "-traditional"]), as: UTF8.self)
            XCTAssertEqual(key.pkcs8DERRepresentation, pkcs8DER, "PKCS#8 DER, \(primes) primes")
            XCTAssertEqual(key.pkcs1DERRepresentation, pkcs1DER, "PKCS#1 DER, \(primes) primes")
            XCTAssertEqual(key.pkcs1PEMRepresentation, pkcs1PEM)
            XCTAssertEqual(key.pkcs8PEMRepresentation, String(decoding: try F.readFile(path), as: UTF8.self))
            XCTAssertEqual(try RSAPrivateKey(derRepresentation: pkcs1DER), key)
            // OpenSSL reads what rsakit writes and finds the key consistent.
            let written = F.path("rsakit-multi.der")
            try F.writeFile(written, key.pkcs1DERRepresentation)
            let check = try F.openssl(["rsa", "-in", written, "-inform", "DER", "-check", "-noout"])
            XCTAssertEqual(check.status, 0, check.stderr)
        }
    }

    func testMultiPrime_DecryptsOpenSSLCiphertextsAndOpenSSLDecryptsOurs() throws {
        let (path, key) = try opensslKey()
        let publicPath = F.path("multi-pub.pem")
        try F.opensslChecked(["pkey", "-in", path, "-pubout", "-out", publicPath])
        for length in [0, 1, 31, key.maximumMessageByteCount] {
            let message = [UInt8]((0..<length).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) })
            // openssl encrypts, rsakit decrypts.
            let input = F.path("m.bin"), output = F.path("c.bin")
            try F.writeFile(input, message)
            try F.opensslChecked(["pkeyutl", "-encrypt", "-pubin", "-inkey", publicPath, "-in", input, "-out", output])
            XCTAssertEqual(try key.decrypt(try F.readFile(output)), message, "length \(length)")
            // rsakit encrypts, openssl decrypts with the multi-prime key.
            try F.writeFile(output, try key.publicKey.encrypt(message))
            XCTAssertEqual(try F.opensslChecked(["pkeyutl", "-decrypt", "-inkey", path, "-in", output]), message)
        }
    }

    func testMultiPrime_SignaturesBothWays() throws {
        let (path, key) = try opensslKey()
        let publicPath = F.path("multi-pub.pem")
        try F.opensslChecked(["pkey", "-in", path, "-pubout", "-out", publicPath])
        let message = Array("signed with three primes".utf8)
        let messagePath = F.path("msg.txt")
        try F.writeFile(messagePath, message)
        // EMSA-PKCS1-v1_5 with SHA-256 (RFC 8017 §9.2), built here: 0x00 0x01 FF.. 0x00 DigestInfo.
        let digest = RSAHashAlgorithm.sha256.hash(message)
        let digestInfoPrefix: [UInt8] = [
            0x30, 0x31, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
            0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20
        ]
        let t = digestInfoPrefix + digest
        let em = [0x00, 0x01] + [UInt8](repeating: 0xFF, count: key.modulusByteCount - t.count - 3) + [0x00] + t
        // rsakit signs (RSASP1 = RSADP over every prime), openssl verifies.
        let signature = try key.rsadp(em)
        let signaturePath = F.path("sig.bin")
        try F.writeFile(signaturePath, signature)
        let verified = try F.openssl([
            "dgst", "-sha256", "-verify", publicPath, "-signature", signaturePath, messagePath
        ])
        XCTAssertEqual(verified.status, 0, verified.stderr)
        XCTAssertEqual(String(decoding: verified.stdout, as: UTF8.self), "Verified OK\n")
        // openssl signs with the multi-prime key: identical bytes (PKCS#1 v1.5 is deterministic).
        let theirs = try F.opensslChecked(["dgst", "-sha256", "-sign", path, messagePath])
        XCTAssertEqual(theirs, signature)
        XCTAssertEqual(try key.publicKey.rsaep(theirs), em)
    }

    func testMultiPrime_EveryComponentIsValidated() throws {
        let (_, key) = try opensslKey()
        let other = key.otherPrimeInfos[0]
        func build(_ infos: [RSAPrivateKey.OtherPrimeInfo], d: [UInt8]? = nil) throws -> RSAPrivateKey {
            try RSAPrivateKey(
                modulus: key.modulus, publicExponent: key.publicExponent,
                privateExponent: d ?? key.privateExponent, prime1: key.prime1, prime2: key.prime2,
                exponent1: key.exponent1, exponent2: key.exponent2, coefficient: key.coefficient,
                otherPrimeInfos: infos)
        }
        XCTAssertEqual(try build([other]), key)
        func bumped(_ bytes: [UInt8]) -> [UInt8] { (BigNumber(bytes: bytes) + 2).minimalBytes }
        func expect(
            _ infos: [RSAPrivateKey.OtherPrimeInfo], d: [UInt8]? = nil, _ failure: KeyValidationFailure,
            line: UInt = #line
        ) {
            XCTAssertThrowsError(try build(infos, d: d), line: line) { error in
                XCTAssertEqual(error as? RSAError, .invalidKey(failure), line: line)
            }
        }
        var wrong = other; wrong.prime = bumped(other.prime)
        expect([wrong], .multiPrimeProductMismatch)
        wrong = other; wrong.prime = key.prime1
        expect([wrong], .otherPrimeInvalid(index: 3))
        wrong = other; wrong.prime = [1]
        expect([wrong], .otherPrimeInvalid(index: 3))
        wrong = other; wrong.exponent = bumped(other.exponent)
        expect([wrong], .otherPrimeExponentMismatch(index: 3))
        wrong = other; wrong.exponent = [0]
        expect([wrong], .otherPrimeExponentMismatch(index: 3))
        wrong = other; wrong.coefficient = bumped(other.coefficient)
        expect([wrong], .otherPrimeCoefficientMismatch(index: 3))
        wrong = other; wrong.coefficient = other.prime
        expect([wrong], .otherPrimeCoefficientMismatch(index: 3))
        expect([other], d: bumped(key.privateExponent), .privateExponentMismatch)
        expect([], .primeProductMismatch)
        expect(Array(repeating: other, count: 15), .tooManyPrimes(count: 17))
    }

    func testMultiPrime_ConstantTimePathAgreesWithMPZReference() throws {
        let (_, key) = try opensslKey(bits: 2048, primes: 3)
        try ConstantTimePathTests.assertAgreesWithReference(key, randomInputs: 20)
    }
}
