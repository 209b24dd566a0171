import Foundation
import XCTest
@_spi(Fuzzing) import RSAKit

/// Inputs found by the fuzz harnesses (Fuzz/, scripts/fuzz.sh), kept as regression tests.
/// Each input lives under Tests/RSAKitTests/Fixtures/fuzz/<harness>/ (see the README there);
/// scripts/fuzz.sh also replays them, as seeds, through the harness that found them.
final class FuzzRegressionTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fuzz")

    func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Self.fixtures.appendingPathComponent(name)))
    }

    func fuzzKey() throws -> RSAPrivateKey {
        try RSAPrivateKey(pemRepresentation: String(decoding: try fixture("fuzz-key.pem"), as: UTF8.self))
    }

    /// FuzzContainer: a full block followed by a final block with an empty payload decrypted,
    /// but encrypt never writes it (the same message re-encrypts to one block fewer). The
    /// fixture is a version 1 container (60-byte header, 17-byte frames, k - 28 payload bytes);
    /// version 2 refuses the same shape by the same rule.
    func testContainer_RejectsEmptyFinalBlockAfterFullOne() throws {
        let key = try fuzzKey()
        let container = Array(try fixture("FuzzContainer/empty-final-block-after-full").dropFirst())  // mode byte
        let k = key.modulusByteCount
        XCTAssertEqual(container.count, 60 + 2 * k, "a version 1 header and two blocks")
        // The blocks themselves are sound: block 0 is full and not final, block 1 final and empty.
        let header = try RSAMessageContainer.Header(parsing: container)
        let frame0 = try key.decrypt(Array(container[60..<(60 + k)]))
        let frame1 = try key.decrypt(Array(container[(60 + k)...]))
        XCTAssertEqual(Array(frame0[0..<8]), Array(header.messageID[0..<8]))
        XCTAssertEqual(frame0[16], 0)
        XCTAssertEqual(frame0.count - 17, k - 28, "a full version 1 payload")
        XCTAssertEqual(Array(frame1[8..<16]), [0, 0, 0, 0, 0, 0, 0, 1])
        XCTAssertEqual(frame1[16], 1)
        XCTAssertEqual(frame1.count, 17)
        // The container as a whole is refused, with the one opaque error.
        var source = RSAArrayByteSource(Array(container[60...]))
        var sink = RSAArrayByteSink()
        XCTAssertThrowsError(try RSAMessageContainer.decrypt(header: header, from: &source, to: &sink, with: key)) {
            error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed)
        }
        // Block 0 alone, made final, is the canonical encoding of the same message: the
        // fixture's 512-bit key is too small for version 2 (k - 68 < 1), so the version 1 rule
        // is what this input exercises.
    }

    /// FuzzPEM: carriage returns before the BEGIN line. The scanner trims them and finds the
    /// block, but the quick BEGIN-line test did not, so the file was diagnosed as broken framing.
    func testKeyFile_ReadsPEMWithCarriageReturnsBeforeBegin() throws {
        let bytes = try fixture("FuzzPEM/cr-before-begin-line")
        XCTAssertEqual(Array(bytes.prefix(3)), [0x0D, 0x0D, 0x0D])
        XCTAssertTrue(PEMDocument.containsBeginLine(bytes))
        let file = try RSAKeyFile(bytes: bytes)
        XCTAssertTrue(file.isPEM)
        XCTAssertEqual(file.format, .spki)
        XCTAssertEqual(file.publicKey, try fuzzKey().publicKey)
    }

    /// FuzzKeyFile: an SPKI whose id-RSASSA-PSS AlgorithmIdentifier has NULL parameters
    /// (RFC 4055: absent). It is read, with a note, as a key without parameters, but the
    /// identifier's bytes were kept as read, so every export wrote the NULL back and every
    /// reload gave the note again. A noted identifier is now kept in DER. (The fixture is the
    /// fuzzer's input as found in a CI smoke run: a mutated seed SPKI.)
    func testKeyFile_PSSIdentifierWithNullParametersExportsAsDER() throws {
        let input = try fixture("FuzzKeyFile/pss-null-parameters")
        XCTAssertEqual(
            Array(input[6..<19]), [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0A, 0x05, 0x00],
            "id-RSASSA-PSS with NULL parameters")
        let file = try RSAKeyFile(bytes: input)
        XCTAssertEqual(file.warnings.count, 1)
        XCTAssertTrue(file.warnings[0].contains("NULL parameters"), file.warnings[0])
        let key = file.publicKey
        XCTAssertNotNil(key.pssRestriction)
        XCTAssertNil(key.pssRestriction?.parameters)
        XCTAssertEqual(
            key.pssRestriction?.algorithmIdentifierDER,
            [0x30, 0x0B, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0A])
        for bytes in [try key.derRepresentation(format: .spki), Array(try key.pemRepresentation(format: .spki).utf8)] {
            let back = try RSAKeyFile(bytes: bytes)
            XCTAssertEqual(back.warnings, [])
            XCTAssertEqual(back.publicKey, key)
        }
    }

    /// FuzzX509: a certificate whose version INTEGER is 12. GnuTLS parses it and reports
    /// version 13 (its value plus one, as for v1-v3), which X509Certificate passed on although
    /// RFC 5280 §4.1.2.1 knows only v1-v3 and `version` promised 1, 2 or 3. The fixture is the
    /// fuzzer's input: the seed chain's openssl-made leaf, mutated (the version and a few other bytes).
    func testX509_RejectsVersionBeyondV3() throws {
        let der = try fixture("FuzzX509/version-13")
        XCTAssertEqual(Array(der[8..<13]), [0xA0, 0x03, 0x02, 0x01, 0x0C], "[0] EXPLICIT Version INTEGER 12")
        for input in [der, Array(PEMDocument.encode(der, label: "CERTIFICATE").utf8)] {
            XCTAssertThrowsError(try X509Certificate.certificates(from: input)) { error in
                guard case let .malformedCertificate(reason)? = error as? RSAError else {
                    return XCTFail("expected malformedCertificate, got \(error)")
                }
                XCTAssertTrue(reason.contains("v13"), reason)
            }
        }
        // The same bytes with version 2 (v3) are a certificate rsakit reads.
        var v3 = der
        v3[12] = 0x02
        let certificate = try X509Certificate(derRepresentation: v3)
        XCTAssertEqual(certificate.version, 3)
        XCTAssertEqual(certificate.subjectSummary, "www.example.com")
    }

    /// FuzzPKCS12: a certificate whose keyUsage `critical` BOOLEAN is 0x01 (DER wants 0xFF,
    /// X.690 §11.1; OpenSSL, GnuTLS and rsakit read it). The re-export went through
    /// `gnutls_pkcs12_bag_set_crt`, which re-encodes the certificate via libtasn1: the BOOLEAN
    /// came back as 0xFF, so the written certificate was no longer the one read, and its
    /// signature (over the original bytes) no longer verified. The fixture is made by
    /// `Fuzz/make-fixtures.py` (the CI run's artifact was on the CI machine): the fixed fuzz
    /// key and a self-signed certificate signed over the 0x01 form, in a PKCS#12 file with no
    /// MAC and nothing encrypted, as the fuzzer's mutated seeds were.
    func testPKCS12_ReexportKeepsCertificateBytes() throws {
        let p12 = try RSAPKCS12(
            derRepresentation: try fixture("FuzzPKCS12/boolean-true-01"), passphrase: Array("fuzz".utf8))
        let der = p12.certificate.derRepresentation
        let keyUsage: [UInt8] = [0x06, 0x03, 0x55, 0x1D, 0x0F, 0x01, 0x01, 0x01]  // OID 2.5.29.15, BOOLEAN 0x01
        XCTAssertNotNil(Self.range(of: keyUsage, in: der), "the fixture's certificate has the 0x01 BOOLEAN")
        XCTAssertTrue(Self.hasValidSelfSignature(der), "the fixture's certificate is signed over its own bytes")
        XCTAssertEqual(p12.privateKey, try fuzzKey())

        let exported = try RSAPKCS12.derRepresentation(
            privateKey: p12.privateKey, certificate: p12.certificate,
            friendlyName: "regression", passphrase: Array("fuzz".utf8))
        let back = try RSAPKCS12(derRepresentation: exported, passphrase: Array("fuzz".utf8))
        XCTAssertEqual(back.certificate.derRepresentation, der, "the certificate is written byte for byte")
        XCTAssertTrue(Self.hasValidSelfSignature(back.certificate.derRepresentation))
        XCTAssertEqual(back.privateKey, p12.privateKey)
        XCTAssertEqual(back.friendlyName, "regression")
        XCTAssertEqual(back.warnings, [])
        // The re-encoding GnuTLS would have done: the same certificate with 0xFF, whose signature fails.
        var reencoded = der
        let at = try XCTUnwrap(Self.range(of: keyUsage, in: der)).upperBound - 1
        reencoded[at] = 0xFF
        XCTAssertFalse(Self.hasValidSelfSignature(reencoded))
    }

    /// FuzzAgentWire: one connection of 338 pipelined requests (7,755 bytes) got 278 answers.
    /// Not the agent's fault: the harness read the answers only after the agent had served
    /// them all, a unix socket counts about a kilobyte of send buffer per small frame, and the
    /// agent, blocked for its 5 s send timeout, closed the connection of a client that did not
    /// read. The harness now reads while the agent serves, as a client does; every request
    /// gets exactly one answer.
    func testAgentWire_ManyPipelinedRequestsAreEachAnswered() throws {
        let input = try fixture("FuzzAgentWire/many-unread-answers")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rsakit-agentwire-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try RSAKeyStore(path: folder.appendingPathComponent("store").path, createIfMissing: true)
        try store.protect(passphrase: RSASecretBytes(utf8: "fuzz"), parameters: .interactive)
        try store.unlock(passphrase: RSASecretBytes(utf8: "fuzz"))
        let connection = try RSAKitFuzzing.agentConnection(store: store, clientBytes: input)
        XCTAssertEqual(connection.trailingBytes, 0)
        XCTAssertEqual(connection.responses.count, 338, "one answer per request the agent reads")
        XCTAssertTrue(
            connection.responses.allSatisfy { $0.decoded?.operation == 0x80 || $0.decoded?.operation == 0x81 })
    }

    /// FuzzOCSP's seeds (Fuzz/Corpus/FuzzOCSP, signed by the harness's fixed CA and its
    /// delegated responder, keys discarded) are judged as their names say, at the harness's
    /// fixed time: so a harness that never sees a believed status cannot pass for coverage.
    func testOCSP_FuzzSeedsAreJudgedAsTheirNamesSay() throws {
        let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz")
        let chain = try X509Certificate.certificates(
            from: Array(try Data(contentsOf: fuzz.appendingPathComponent("Sources/FuzzOCSP/chain.pem"))))
        XCTAssertEqual(chain.count, 2)
        let leaf = chain[0], ca = chain[1]
        let now = leaf.notValidBefore.addingTimeInterval(86_400)
        func judge(_ name: String) throws -> RSAKitFuzzing.OCSPVerdict {
            let body = Array(try Data(contentsOf: fuzz.appendingPathComponent("Corpus/FuzzOCSP/seed-\(name)")))
            return RSAKitFuzzing.ocspJudge(body, certificate: leaf, issuer: ca, now: now)
        }
        let good = try judge("good-direct")
        XCTAssertEqual(good.status, "good")
        XCTAssertTrue(good.signatureVerifies)
        let revoked = try judge("revoked-delegated")
        XCTAssertEqual(revoked.status, "revoked")
        XCTAssertEqual(revoked.revocationReason, 1, "keyCompromise")
        XCTAssertEqual(revoked.revocationDate, Date(timeIntervalSince1970: 1_704_067_200), "2024-01-01T00:00:00Z")
        XCTAssertEqual(try judge("unknown").status, "unknown")
        let forged = try judge("forged")
        XCTAssertEqual(forged.status, "not-checked", "signed by another CA of the same name")
        XCTAssertFalse(forged.signatureVerifies)
        XCTAssertEqual(try judge("try-later").status, "not-checked")
        XCTAssertTrue(try judge("try-later").source.contains("tryLater"))
        // A delegated responder that leaves out its own certificate cannot be checked.
        XCTAssertEqual(try judge("good-delegated-nocerts").status, "not-checked")
        // One flipped bit in the signed data: no status.
        var body = Array(try Data(contentsOf: fuzz.appendingPathComponent("Corpus/FuzzOCSP/seed-good-direct")))
        body[body.count / 3] ^= 0x01
        XCTAssertEqual(RSAKitFuzzing.ocspJudge(body, certificate: leaf, issuer: ca, now: now).status, "not-checked")
    }

    static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { Array(haystack[$0..<($0 + needle.count)]) == needle }
            .map { $0..<($0 + needle.count) }
    }

    /// Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }:
    /// the signature (sha256WithRSAEncryption) checked with the certificate's own public key.
    static func hasValidSelfSignature(_ der: [UInt8]) -> Bool {
        let reader = DERReader(der)
        guard let outer = try? reader.element(at: 0, limit: der.count),
            let tbs = try? reader.element(at: outer.content.lowerBound, limit: outer.end),
            let algorithm = try? reader.element(at: tbs.end, limit: outer.end),
            let signature = try? reader.element(at: algorithm.end, limit: outer.end),
            let certificate = try? X509Certificate(derRepresentation: der)
        else { return false }
        return certificate.publicKey?.isValidSignature(
            Array(der[(signature.content.lowerBound + 1)..<signature.end]),
            for: Array(der[tbs.offset..<tbs.end]),
            hash: .sha256, padding: .pkcs1v15) == true
    }
}
