import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// "every byte-taking call accepts `[UInt8]` and `Data`" (RSAKit.md). Each `Data`
/// form added for it is checked against the `[UInt8]` form it forwards to: the same bytes
/// where the operation is deterministic (a seeded random source, one worker), otherwise the
/// other form reads what it wrote. The last test reads the built module's symbol graph and
/// fails when a public call takes `[UInt8]` without a `Data` form beside it.
final class DataOverloadTests: XCTestCase {
    private func random() -> DeterministicRandomSource { DeterministicRandomSource(seed: 28) }

    private func leafKey(_ pki: TestPKI) throws -> RSAPrivateKey {
        let file = try RSAKeyFile(bytes: try Data(contentsOf: URL(fileURLWithPath: pki.leafKey)))
        return try XCTUnwrap(file.privateKey)
    }

    // MARK: - Certificates and PKCS#12

    func testX509Certificate_FromData_MatchesTheByteForm() throws {
        let pki = try TestPKI.shared()
        let server = try pki.certificate("server")
        let der = Data(server.derRepresentation)
        XCTAssertEqual(
            try X509Certificate(derRepresentation: der),
            try X509Certificate(derRepresentation: server.derRepresentation))
        XCTAssertEqual(try X509Certificate(derRepresentation: der[...]), server, "a Data slice")
        let bundle = try Data(contentsOf: URL(fileURLWithPath: pki.path("chain.pem")))
        let fromData = try X509Certificate.certificates(from: bundle)
        XCTAssertEqual(fromData, try X509Certificate.certificates(from: [UInt8](bundle)))
        XCTAssertEqual(fromData.map(\.subjectSummary), ["RSAKit Test Intermediate", "RSAKit Test Root CA"])
        let broken = Data(der.dropLast())
        var errors: [RSAError?] = []
        XCTAssertThrowsError(try X509Certificate(derRepresentation: broken)) { errors.append($0 as? RSAError) }
        XCTAssertThrowsError(try X509Certificate(derRepresentation: [UInt8](broken))) { errors.append($0 as? RSAError) }
        XCTAssertEqual(errors.count, 2)
        XCTAssertEqual(errors.first ?? nil, errors.last ?? nil, "the same error from both forms")
        XCTAssertNotNil(errors.first ?? nil)
    }

    func testPKCS12_WithData_MatchesTheByteForm() throws {
        let pki = try TestPKI.shared()
        let key = try leafKey(pki)
        let certificate = try pki.certificate("server")
        let chain = [try pki.certificate("intermediate")]
        let passphrase = Data("p12 secret".utf8)
        let written: Data = try RSAPKCS12.derRepresentation(
            privateKey: key, certificate: certificate, chain: chain,
            friendlyName: "Server", passphrase: passphrase)
        let fromData = try RSAPKCS12(derRepresentation: written, passphrase: passphrase)
        let fromBytes = try RSAPKCS12(derRepresentation: [UInt8](written), passphrase: [UInt8](passphrase))
        for p12 in [fromData, fromBytes] {
            XCTAssertEqual(p12.privateKey, key)
            XCTAssertEqual(p12.certificate, certificate)
            XCTAssertEqual(p12.chain, chain)
            XCTAssertEqual(p12.friendlyName, "Server")
        }
        XCTAssertEqual(fromData.macDescription, fromBytes.macDescription)
        XCTAssertEqual(
            try RSAPKCS12(derRepresentation: written, passphrase: Array("p12 secret".utf8)).privateKey, key,
            "Data file, [UInt8] passphrase")
        XCTAssertThrowsError(try RSAPKCS12(derRepresentation: written, passphrase: Data("wrong".utf8))) { error in
            XCTAssertEqual(error as? RSAError, .passphraseIncorrect(what: "PKCS#12 file"))
        }
        XCTAssertThrowsError(
            try RSAPKCS12.derRepresentation(privateKey: key, certificate: certificate, passphrase: Data())
        ) { error in
            guard case .passphraseUnusable? = error as? RSAError else { return XCTFail("\(error)") }
        }
    }

    // MARK: - Messages

    func testChunking_WithData_MatchesTheByteForm() throws {
        let key = try TestKeys.generated(bits: 1024)
        let plaintext = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let fromData = try RSAPKCS1v15Chunking.encrypt(plaintext, with: key.publicKey, random: random(), concurrency: 1)
        let fromBytes = try RSAPKCS1v15Chunking.encrypt(
            [UInt8](plaintext), with: key.publicKey, random: random(), concurrency: 1)
        XCTAssertEqual(fromData, Data(fromBytes))
        XCTAssertEqual(fromData.count, 3 * key.blockSize)
        XCTAssertEqual(try RSAPKCS1v15Chunking.decrypt(fromData, with: key), plaintext)
        XCTAssertEqual(
            try RSAPKCS1v15Chunking.decrypt(fromData, with: key),
            Data(try RSAPKCS1v15Chunking.decrypt(fromBytes, with: key)))
        XCTAssertThrowsError(try RSAPKCS1v15Chunking.decrypt(fromData.dropLast(), with: key)) { error in
            guard case .ciphertextLengthInvalid? = error as? RSAError else { return XCTFail("\(error)") }
        }
    }

    func testContainer_WithData_MatchesTheByteForm() throws {
        let key = try TestKeys.generated(bits: 1024)
        // One block: the seeded source is read in the same order by both forms.
        let plaintext = Data("one block of container".utf8)
        let fromData = try RSAMessageContainer.encrypt(plaintext, to: key.publicKey, random: random())
        let fromBytes = try RSAMessageContainer.encrypt([UInt8](plaintext), to: key.publicKey, random: random())
        XCTAssertEqual(fromData, Data(fromBytes))
        XCTAssertEqual(try RSAMessageContainer.decrypt(fromData, with: key), plaintext)
        XCTAssertTrue(RSAMessageContainer.hasMagic(fromData))
        XCTAssertEqual(RSAMessageContainer.hasMagic(plaintext), RSAMessageContainer.hasMagic([UInt8](plaintext)))
        let header = try RSAMessageContainer.Header(parsing: fromData)
        XCTAssertEqual(header, try RSAMessageContainer.Header(parsing: fromBytes))
        XCTAssertEqual(header.recipientFingerprint, key.fingerprint)
        XCTAssertEqual(RSAMessage.recipientFingerprint(of: fromData), key.fingerprint)
        XCTAssertNil(RSAMessage.recipientFingerprint(of: plaintext))
    }

    func testAppleAESGCM_WithData_MatchesTheByteForm() throws {
        let key = try TestKeys.generated(bits: 2048)
        let plaintext = Data("to an Apple device".utf8)
        let fromData = try RSAAppleAESGCM.encrypt(plaintext, to: key.publicKey, random: random())
        let fromBytes = try RSAAppleAESGCM.encrypt([UInt8](plaintext), to: key.publicKey, random: random())
        XCTAssertEqual(fromData, Data(fromBytes))
        XCTAssertEqual(fromData.count, key.blockSize + plaintext.count + 16)
        XCTAssertEqual(try RSAAppleAESGCM.decrypt(fromData, with: key), plaintext)
        XCTAssertThrowsError(try RSAAppleAESGCM.decrypt(fromData.dropLast(), with: key))
    }

    func testArmorAndStreams_WithData_MatchTheByteForms() throws {
        let bytes = Data((0..<200).map { UInt8(truncatingIfNeeded: $0) })
        let armored = RSAArmor.encode(bytes)
        XCTAssertEqual(armored, RSAArmor.encode([UInt8](bytes)))
        XCTAssertEqual(try RSAArmor.decode(Data(armored.utf8)), bytes)
        XCTAssertThrowsError(try RSAArmor.decode(Data("no armor".utf8))) { error in
            guard case .messageInvalid? = error as? RSAError else { return XCTFail("\(error)") }
        }
        var sink = RSAArrayByteSink()
        try sink.write(bytes)
        try sink.write([UInt8](bytes))
        XCTAssertEqual(sink.bytes, [UInt8](bytes) + [UInt8](bytes))
        var source = RSAArrayByteSource(bytes)
        XCTAssertEqual(source.remainingByteCount, bytes.count)
        XCTAssertEqual(try source.read(upTo: 1000), [UInt8](bytes))
    }

    // MARK: - Keys

    func testKeyComponents_FromData_MatchTheByteForms() throws {
        let key = try TestKeys.generated(bits: 1024)
        XCTAssertEqual(
            try RSAPublicKey(modulus: Data(key.modulus), publicExponent: Data(key.publicExponent)), key.publicKey)
        let parts = [
            key.modulus, key.publicExponent, key.privateExponent, key.prime1, key.prime2,
            key.exponent1, key.exponent2, key.coefficient
        ].map { Data($0) }
        XCTAssertEqual(
            try RSAPrivateKey(
                modulus: parts[0], publicExponent: parts[1], privateExponent: parts[2],
                prime1: parts[3], prime2: parts[4], exponent1: parts[5], exponent2: parts[6],
                coefficient: parts[7]), key)
        XCTAssertEqual(
            try RSAPrivateKey(
                modulus: parts[0], publicExponent: parts[1], privateExponent: parts[2],
                prime1: parts[3], prime2: parts[4], exponent1: parts[5], exponent2: parts[6],
                coefficient: parts[7], otherPrimeInfos: []), key)
        XCTAssertThrowsError(
            try RSAPrivateKey(
                modulus: parts[0], publicExponent: parts[1], privateExponent: parts[2],
                prime1: parts[4], prime2: parts[4], exponent1: parts[5], exponent2: parts[6],
                coefficient: parts[7])
        ) { error in
            guard case .invalidKey? = error as? RSAError else { return XCTFail("\(error)") }
        }
        let info = RSAPrivateKey.OtherPrimeInfo(prime: Data([0, 7]), exponent: Data([3]), coefficient: Data([5]))
        XCTAssertEqual(info, RSAPrivateKey.OtherPrimeInfo(prime: [0, 7], exponent: [3], coefficient: [5]))
    }

    func testEncryptedKeyFiles_WithData_MatchTheByteForms() throws {
        let key = try TestKeys.generated(bits: 1024)
        let passphrase = Data("key file secret".utf8)
        let der: Data = try key.encryptedPKCS8DERRepresentation(passphrase: passphrase)
        let pem = try key.encryptedPKCS8PEMRepresentation(passphrase: passphrase)
        XCTAssertTrue(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))
        // Salt and IV are random: each form reads what the other wrote.
        XCTAssertEqual(try RSAKeyFile(bytes: der, passphrase: passphrase).privateKey, key)
        XCTAssertEqual(try RSAKeyFile(bytes: [UInt8](der), passphrase: [UInt8](passphrase)).privateKey, key)
        XCTAssertEqual(try RSAPrivateKey(pemRepresentation: pem, passphrase: passphrase), key)
        XCTAssertEqual(try RSAPrivateKey(pemRepresentation: pem, passphrase: [UInt8](passphrase)), key)
        let fromBytes = try key.encryptedPKCS8PEMRepresentation(passphrase: [UInt8](passphrase))
        XCTAssertEqual(try RSAPrivateKey(pemRepresentation: fromBytes, passphrase: passphrase), key)
        XCTAssertTrue(RSAKeyFile.isEncrypted(der))
        XCTAssertEqual(RSAKeyFile.isEncrypted(der), RSAKeyFile.isEncrypted([UInt8](der)))
        let plain = Data(key.pkcs8PEMRepresentation.utf8)
        XCTAssertFalse(RSAKeyFile.isEncrypted(plain))
        let file = try RSAKeyFile(bytes: plain)
        XCTAssertEqual(file.privateKey, key)
        XCTAssertEqual(file.structureName, try RSAKeyFile(bytes: [UInt8](plain)).structureName)
        XCTAssertThrowsError(try RSAKeyFile(bytes: der, passphrase: Data("wrong".utf8))) { error in
            guard case .passphraseIncorrect? = error as? RSAError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try key.encryptedPKCS8DERRepresentation(passphrase: Data())) { error in
            guard case .passphraseUnusable? = error as? RSAError else { return XCTFail("\(error)") }
        }
    }

    // MARK: - Schemes and hashing

    func testOneBlockEncryptionAndDecryption_WithData_MatchTheByteForms() throws {
        let key = try TestKeys.generated(bits: 1024)
        let message = Data("one block".utf8)
        let ciphertext: Data = try key.publicKey.encrypt(message, random: random())
        XCTAssertEqual(ciphertext, Data(try key.publicKey.encrypt([UInt8](message), random: random())))
        XCTAssertEqual(try key.decrypt(ciphertext), message)
        XCTAssertEqual(try key.decrypt(ciphertext, random: random()), message)
        let oaep = RSAOAEPParameters(hash: .sha256, label: Data("label".utf8))
        XCTAssertEqual(oaep, RSAOAEPParameters(hash: .sha256, label: Array("label".utf8)))
        let sealed: Data = try key.publicKey.encrypt(message, padding: .oaep(oaep))
        XCTAssertEqual(try key.decrypt(sealed, padding: .oaep(oaep), random: random()), message)
        XCTAssertEqual(
            try key.decrypt(sealed, padding: .oaep(oaep), random: random()),
            Data(try key.decrypt([UInt8](sealed), padding: .oaep(oaep), random: random())))
        XCTAssertThrowsError(try key.decrypt(ciphertext.dropLast())) { error in
            XCTAssertEqual(error as? RSAError, .decryptionFailed)
        }
    }

    func testSignatures_WithData_MatchTheByteForms() throws {
        let key = try TestKeys.generated(bits: 1024)
        let message = Data("signed".utf8)
        let digest = RSAHashAlgorithm.sha256.hash(message)
        for padding in [RSASignaturePadding.pkcs1v15, .pss(saltLength: .digestLength)] {
            let fromData: Data = try key.signature(forDigest: digest, hash: .sha256, padding: padding, random: random())
            XCTAssertEqual(
                fromData,
                Data(try key.signature(forDigest: [UInt8](digest), hash: .sha256, padding: padding, random: random())))
            XCTAssertTrue(key.publicKey.isValidSignature(fromData, forDigest: digest, hash: .sha256, padding: padding))
            XCTAssertFalse(
                key.publicKey.isValidSignature(
                    fromData, forDigest: Data(digest.reversed()), hash: .sha256, padding: padding))
        }
        let digestInfo = Data(try RSAHazmat.EMSAPKCS1v15.digestInfo(digest: [UInt8](digest), hash: .sha256))
        let overDigestInfo: Data = try key.signature(forDigestInfo: digestInfo)
        XCTAssertEqual(overDigestInfo, Data(try key.signature(forDigestInfo: [UInt8](digestInfo))))
        XCTAssertTrue(key.publicKey.isValidSignature(overDigestInfo, forDigestInfo: digestInfo))
        XCTAssertFalse(key.publicKey.isValidSignature(overDigestInfo, forDigestInfo: digestInfo.dropLast()))
        for shake in RSAPSSSHAKE.allCases where key.modulusByteCount >= 2 * shake.digestByteCount + 2 {
            let fromData: Data = try key.signature(for: message, shake: shake, random: random())
            XCTAssertEqual(fromData, Data(try key.signature(for: [UInt8](message), shake: shake, random: random())))
            XCTAssertTrue(key.publicKey.isValidSignature(fromData, for: message, shake: shake))
            XCTAssertFalse(key.publicKey.isValidSignature(fromData, for: message + [0], shake: shake))
        }
    }

    func testHashing_WithData_MatchesTheByteForms() {
        let data = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 * 31) })
        var fromData = RSAHasher(algorithm: .sha384)
        fromData.update(data.prefix(100))
        fromData.update(data.dropFirst(100))
        var fromBytes = RSAHasher(algorithm: .sha384)
        fromBytes.update([UInt8](data))
        XCTAssertEqual(fromData.finalize(), fromBytes.finalize())
        XCTAssertEqual(fromData.finalize(), RSAHashAlgorithm.sha384.hash([UInt8](data)))
        for shake in RSAPSSSHAKE.allCases {
            XCTAssertEqual(shake.hash(data), Data(shake.hash([UInt8](data))))
            XCTAssertEqual(shake.output(data, byteCount: 100), Data(shake.output([UInt8](data), byteCount: 100)))
            XCTAssertEqual(shake.output(data, byteCount: 100).count, 100)
        }
    }

    // MARK: - The store and TLS

    func testStoreCertificateByFingerprint_WithData_MatchesTheByteForm() throws {
        let pki = try TestPKI.shared()
        let folder = TestKeys.scratch.appendingPathComponent("data-overloads-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try RSAKeyStore(url: folder)
        let server = try pki.certificate("server")
        let added = try store.addCertificate(server, label: "server")
        XCTAssertEqual(try store.certificate(fingerprint: Data(server.fingerprint)), added)
        XCTAssertEqual(
            try store.certificate(fingerprint: Data(server.fingerprint)),
            try store.certificate(fingerprint: server.fingerprint))
        XCTAssertThrowsError(try store.certificate(fingerprint: Data(repeating: 0, count: 32)))
    }

    /// openssl s_server -accept 127.0.0.1:PORT -Verify 5 -verify_return_error -CAfile root.pem
    ///   -cert server.pem -cert_chain intermediate.pem -key leaf.key -www
    func testTLSWrite_WithData_SendsTheBytes() throws {
        let pki = try TestPKI.shared()
        let directory = TestKeys.scratch.appendingPathComponent("data-overloads-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try TLSTestServer(
            openssl: try OpenSSL.require(),
            arguments: [
                "-Verify", "5", "-verify_return_error", "-CAfile", pki.path("root.pem"),
                "-cert", pki.path("server.pem"), "-cert_chain", pki.path("intermediate.pem"),
                "-key", pki.leafKey, "-www"
            ],
            directory: directory.path)
        defer { server.stop() }
        let identity = try RSATLSClientIdentity(
            privateKey: leafKey(pki), certificate: pki.certificate("client"),
            chain: [pki.certificate("intermediate")])
        var configuration = RSATLSClientConfiguration(serverName: "server.rsakit.test")
        configuration.anchorCertificates = [try pki.certificate("root")]
        configuration.anchorCertificatesOnly = true
        configuration.timeout = 20
        let connection = try RSATLSConnection.connect(
            host: "127.0.0.1", port: server.port,
            configuration: configuration, identity: identity)
        try connection.write(Data("GET / HTTP/1.0\r\n\r\n".utf8))
        var page: [UInt8] = []
        while let bytes = try connection.read(timeout: 20) { page += bytes }
        connection.close()
        XCTAssertTrue(
            String(decoding: page, as: UTF8.self).hasPrefix("HTTP/1.0 200 ok"), String(decoding: page, as: UTF8.self))
        XCTAssertThrowsError(try connection.write(Data([1])))
    }

    // MARK: - Every byte-taking call has a Data form

    /// Calls that take `[UInt8]` only, each with its reason (RSAKit.md says which).
    static let bytesOnly: [(prefix: String, reason: String)] = [
        ("RSAHazmat.", "the hazardous building blocks speak [UInt8] only"),
        ("RSACertificateAttributes.init(", "an attribute record's memberwise initialiser"),
        ("RSAKeychainItemQuery.init(", "a query record's memberwise initialiser (fingerprints and serial as bytes)"),
        ("RSAKeyFingerprint.init(bytes:)", "init?(data:) is its Data form"),
        ("RSAKitProcessHardening.wipe(_:)", "wipes the caller's own array in place (inout)"),
        (
            "RSASecretBytes.init(consuming:)",
            "takes over and wipes the caller's array (inout); init(copying:) takes Data"
        ),
        (
            "RSAOCSPResponseCache.",
            "the trust evaluation's cache protocol: keys are SHA-256 digests and values DER it made itself, never "
                + "the caller's bytes"
        ),
        (
            "RSAKeyStore.cacheOCSPResponse(",
            "RSAKeyStore's conformance to RSAOCSPResponseCache (trust evaluation's cache)"
        ),
        (
            "RSAKeyStore.cachedOCSPResponse(",
            "RSAKeyStore's conformance to RSAOCSPResponseCache (trust evaluation's cache)"
        ),
        ("RSATokenReference.init(", "a reference record's memberwise initialiser (the object id as bytes)"),
        (
            "RSACertificateSigner.init(publicKey:sign:)",
            "the [UInt8] is the signing function's own input, which the builder passes"
        ),
        (
            "RSASystemKeychainClient.",
            "the system agent's wire client, for the PKCS#11 module and the TLS signer, which hold bytes"
        )
    ]

    func testEveryByteTakingCall_HasADataForm() throws {
        var signatures: [String: [[String]]] = [:]
        for symbol in try PublicNamesTests.symbols() {
            guard let parameters = symbol.parameters else { continue }
            // An async Data form's extra `maximumWorkers:` label is set aside, so that it is
            // grouped with the synchronous [UInt8] form it accompanies.
            let path = symbol.pathComponents.joined(separator: ".").replacingOccurrences(
                of: "maximumWorkers:)", with: ")")
            signatures[path, default: []].append(parameters)
        }
        func takesBytes(_ declaration: String) -> Bool { declaration.contains("[UInt8]") }
        var missing: [String] = []
        for (path, forms) in signatures where !Self.bytesOnly.contains(where: { path.hasPrefix($0.prefix) }) {
            for parameters in forms where parameters.contains(where: takesBytes) {
                // A Data form: the same labels and arity, Data (or DataProtocol) wherever
                // this form takes [UInt8]; an async Data form may add a last
                // `maximumWorkers` parameter.
                let hasDataForm = forms.contains { other in
                    let arity =
                        other.count == parameters.count
                        || (other.count == parameters.count + 1 && other.last?.hasPrefix("maximumWorkers") == true)
                    return other != parameters && arity
                        && zip(parameters, other).allSatisfy { !takesBytes($0) || $1.contains("Data") }
                }
                if !hasDataForm { missing.append("\(path) (\(parameters.joined(separator: ", ")))") }
            }
        }
        XCTAssertGreaterThan(signatures.count, 100, "the symbol graph listed too few functions")
        XCTAssertTrue(
            missing.isEmpty,
            "public calls taking [UInt8] without a Data form (add one, or list the call "
                + "with its reason in bytesOnly and RSAKit.md):\n" + missing.sorted().joined(separator: "\n"))
    }
}
