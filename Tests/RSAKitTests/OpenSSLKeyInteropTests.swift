import Foundation
import XCTest
import RSAKit

/// Interop of the key formats with the real `openssl` CLI, in both directions.
/// Every test skips visibly when openssl is not on PATH.
///
/// Keys: `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:{1024,2047,2048,3072[,4096]}
/// -pkeyopt rsa_keygen_pubexp:{3,17,65537}`, generated once per test process
/// (4096 only with RSAKIT_LONG_TESTS=1).
final class OpenSSLKeyInteropTests: XCTestCase {
    typealias F = KeyFormatFixtures

    /// One file OpenSSL wrote from a generated key, and what rsakit must make of it.
    private struct OpenSSLOutput {
        let command: String
        let path: String
        /// nil where OpenSSL versions differ: 3.0's `pkey -outform DER` writes PKCS#1
        /// ("type-specific") DER for RSA, other versions PKCS#8.
        let format: RSAKeyFormat?
        let isPEM: Bool
        let isPrivate: Bool
    }

    /// Convert `key` with each OpenSSL command that writes an RSA key format.
    private func openSSLOutputs(of key: F.GeneratedKey) throws -> [OpenSSLOutput] {
        var outputs = [
            OpenSSLOutput(
                command: "openssl genpkey (PEM)", path: key.path, format: .pkcs8, isPEM: true, isPrivate: true)
        ]
        let traditionalPEM = F.path("traditional.pem")
        let conversions: [(args: [String], format: RSAKeyFormat?, isPEM: Bool, isPrivate: Bool)] = [
            (["pkey", "-in", key.path, "-outform", "DER"], nil, false, true),
            (["pkcs8", "-topk8", "-nocrypt", "-in", key.path, "-outform", "DER"], .pkcs8, false, true),
            (["rsa", "-in", key.path, "-outform", "DER"], nil, false, true),
            (["pkey", "-in", key.path, "-traditional"], .pkcs1, true, true),
            (["rsa", "-in", key.path, "-traditional"], .pkcs1, true, true),
            (["rsa", "-in", key.path, "-traditional", "-outform", "DER"], .pkcs1, false, true),
            (["rsa", "-in", key.path, "-RSAPublicKey_out"], .pkcs1, true, false),
            (["rsa", "-in", key.path, "-RSAPublicKey_out", "-outform", "DER"], .pkcs1, false, false),
            (["pkey", "-in", key.path, "-pubout"], .spki, true, false),
            (["pkey", "-in", key.path, "-pubout", "-outform", "DER"], .spki, false, false),
            (["rsa", "-in", key.path, "-pubout"], .spki, true, false),
            (["rsa", "-in", key.path, "-pubout", "-outform", "DER"], .spki, false, false),
            (["pkcs8", "-topk8", "-nocrypt", "-in", traditionalPEM], .pkcs8, true, true),
            (["pkcs8", "-topk8", "-nocrypt", "-in", traditionalPEM, "-outform", "DER"], .pkcs8, false, true)
        ]
        try F.opensslChecked(["rsa", "-in", key.path, "-traditional", "-out", traditionalPEM])
        for conversion in conversions {
            let path = F.path("converted")
            try F.opensslChecked(conversion.args + ["-out", path])
            outputs.append(
                OpenSSLOutput(
                    command: "openssl " + conversion.args.joined(separator: " "), path: path,
                    format: conversion.format, isPEM: conversion.isPEM, isPrivate: conversion.isPrivate))
        }
        return outputs
    }

    /// The components OpenSSL prints for the private key at `path`.
    private func openSSLComponents(_ path: String) throws -> [String: [UInt8]] {
        let text = try F.opensslChecked(["rsa", "-in", path, "-noout", "-text"])
        let fields = F.parseOpenSSLText(String(decoding: text, as: UTF8.self))
        for name in [
            "modulus", "publicexponent", "privateexponent", "prime1", "prime2", "exponent1", "exponent2", "coefficient"
        ] {
            XCTAssertNotNil(fields[name], "openssl -text did not print \(name)")
        }
        return fields
    }

    // MARK: OpenSSL -> rsakit

    func testOpenSSLToRSAKit_EveryFormatLoadsWithTheSameComponents() throws {
        for key in try F.allGeneratedKeys() {
            let expected = try openSSLComponents(key.path)
            for output in try openSSLOutputs(of: key) {
                let context = "\(key.bitCount)-bit e=\(key.exponent), \(output.command)"
                let bytes = try F.readFile(output.path)
                let file = try RSAKeyFile(bytes: bytes)
                if let format = output.format {
                    XCTAssertEqual(file.format, format, context)
                }
                // Written back in the format and encoding it was read in, it is the same file.
                let rewritten: [UInt8]
                switch file.key {
                case let .publicKey(key):
                    rewritten =
                        output.isPEM
                        ? Array(try key.pemRepresentation(format: file.format).utf8)
                        : try key.derRepresentation(format: file.format)
                case let .privateKey(key):
                    rewritten =
                        output.isPEM
                        ? Array(try key.pemRepresentation(format: file.format).utf8)
                        : try key.derRepresentation(format: file.format)
                }
                XCTAssertEqual(rewritten, bytes, context)
                XCTAssertEqual(file.isPEM, output.isPEM, context)
                XCTAssertEqual(file.warnings, [], context)
                XCTAssertEqual(file.publicKey.modulus, expected["modulus"], context)
                XCTAssertEqual(file.publicKey.publicExponent, expected["publicexponent"], context)
                XCTAssertEqual(
                    file.publicKey.publicExponent, F.minimal(F.hexBytes(String(key.exponent, radix: 16))), context)
                XCTAssertEqual(file.publicKey.modulusBitCount, key.bitCount, context)
                XCTAssertEqual(file.publicKey.modulusByteCount, (key.bitCount + 7) / 8, context)
                if output.isPrivate {
                    guard case let .privateKey(privateKey) = file.key else {
                        XCTFail("\(context): expected a private key"); continue
                    }
                    XCTAssertEqual(privateKey.privateExponent, expected["privateexponent"], context)
                    XCTAssertEqual(privateKey.prime1, expected["prime1"], context)
                    XCTAssertEqual(privateKey.prime2, expected["prime2"], context)
                    XCTAssertEqual(privateKey.exponent1, expected["exponent1"], context)
                    XCTAssertEqual(privateKey.exponent2, expected["exponent2"], context)
                    XCTAssertEqual(privateKey.coefficient, expected["coefficient"], context)
                    // The typed initialisers agree with RSAKeyFile.
                    let typed =
                        output.isPEM
                        ? try RSAPrivateKey(pemRepresentation: String(decoding: bytes, as: UTF8.self))
                        : try RSAPrivateKey(derRepresentation: bytes)
                    XCTAssertEqual(typed, privateKey, context)
                } else {
                    guard case let .publicKey(publicKey) = file.key else {
                        XCTFail("\(context): expected a public key"); continue
                    }
                    let typed =
                        output.isPEM
                        ? try RSAPublicKey(pemRepresentation: String(decoding: bytes, as: UTF8.self))
                        : try RSAPublicKey(derRepresentation: bytes)
                    XCTAssertEqual(typed, publicKey, context)
                }
            }
        }
    }

    /// rsakit writes exactly the bytes OpenSSL writes for the same key, in every format.
    func testRSAKitOutput_IsByteIdenticalToOpenSSLOutput() throws {
        for key in try F.allGeneratedKeys() {
            let privateKey = try RSAPrivateKey(pemRepresentation: key.pem)
            let publicKey = privateKey.publicKey
            let context = "\(key.bitCount)-bit e=\(key.exponent)"
            XCTAssertEqual(privateKey.pkcs8PEMRepresentation, key.pem, context)
            let cases: [(args: [String], mine: [UInt8])] = [
                (
                    ["pkcs8", "-topk8", "-nocrypt", "-in", key.path, "-outform", "DER"],
                    privateKey.pkcs8DERRepresentation
                ),
                (["rsa", "-in", key.path, "-traditional", "-outform", "DER"], privateKey.pkcs1DERRepresentation),
                (["rsa", "-in", key.path, "-traditional"], Array(privateKey.pkcs1PEMRepresentation.utf8)),
                // The unqualified names mean PKCS#1, as in swift-crypto's _CryptoExtras.
                (["rsa", "-in", key.path, "-traditional", "-outform", "DER"], privateKey.derRepresentation),
                (["rsa", "-in", key.path, "-traditional"], Array(privateKey.pemRepresentation.utf8)),
                (
                    ["rsa", "-in", key.path, "-traditional", "-outform", "DER"],
                    [UInt8](privateKey.derRepresentationData)
                ),
                (["pkey", "-in", key.path, "-pubout", "-outform", "DER"], [UInt8](publicKey.derRepresentationData)),
                (["pkey", "-in", key.path, "-pubout", "-outform", "DER"], publicKey.derRepresentation),
                (["pkey", "-in", key.path, "-pubout"], Array(publicKey.pemRepresentation.utf8)),
                (["rsa", "-in", key.path, "-RSAPublicKey_out", "-outform", "DER"], publicKey.pkcs1DERRepresentation),
                (["rsa", "-in", key.path, "-RSAPublicKey_out"], Array(publicKey.pkcs1PEMRepresentation.utf8))
            ]
            for (args, mine) in cases {
                let theirs = try F.opensslChecked(args)
                XCTAssertEqual(mine, theirs, "\(context): openssl \(args.joined(separator: " "))")
            }
        }
    }

    func testGenpkeyDEROutput_Loads() throws {
        let path = F.path("genpkey.der")
        try F.opensslChecked([
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-outform", "DER", "-out", path
        ])
        let der = try F.readFile(path)
        let key = try RSAPrivateKey(derRepresentation: der)
        let expected = try openSSLComponents(path)
        XCTAssertEqual(key.modulus, expected["modulus"])
        XCTAssertEqual(key.privateExponent, expected["privateexponent"])
        // OpenSSL 3.0 writes PKCS#1 here, other versions PKCS#8; the file says which.
        let file = try RSAKeyFile(bytes: der)
        XCTAssertFalse(file.isPEM)
        XCTAssertEqual(try key.derRepresentation(format: file.format), der)
    }

    /// Other OpenSSL commands that write new RSA keys: genrsa (both forms), req -newkey.
    func testOtherOpenSSLKeyWriters_Load() throws {
        let genrsa = F.path("genrsa.pem"), traditional = F.path("genrsa-traditional.pem")
        let reqKey = F.path("req-key.pem"), reqCert = F.path("req-cert.pem")
        try F.opensslChecked(["genrsa", "-out", genrsa, "1024"])
        try F.opensslChecked(["genrsa", "-traditional", "-out", traditional, "1024"])
        try F.opensslChecked([
            "req", "-newkey", "rsa:1024", "-nodes", "-keyout", reqKey, "-subj", "/CN=rsakit test",
            "-x509", "-days", "1", "-out", reqCert
        ])
        for (path, format) in [(genrsa, RSAKeyFormat.pkcs8), (traditional, .pkcs1), (reqKey, .pkcs8)] {
            let file = try RSAKeyFile(bytes: try F.readFile(path))
            let expected = try openSSLComponents(path)
            XCTAssertEqual(file.format, format, path)
            XCTAssertEqual(file.privateKey?.modulus, expected["modulus"], path)
            XCTAssertEqual(file.privateKey?.coefficient, expected["coefficient"], path)
        }
        // The certificate req wrote holds the same public key; its own SPKI extracts cleanly.
        let spki = try F.opensslChecked(["x509", "-in", reqCert, "-pubkey", "-noout"])
        XCTAssertEqual(
            try RSAPublicKey(pemRepresentation: String(decoding: spki, as: UTF8.self)),
            try RSAPrivateKey(pemRepresentation: String(decoding: try F.readFile(reqKey), as: UTF8.self)).publicKey)
    }

    // MARK: rsakit -> OpenSSL

    /// Keys of both origins: generated by rsakit, and generated by OpenSSL then re-written.
    private func keysToExport() throws -> [(name: String, key: RSAPrivateKey)] {
        var keys: [(String, RSAPrivateKey)] = [
            ("rsakit 1024-bit e=3", try TestKeys.generated(bits: 1024, exponent: 3)),
            ("rsakit 2048-bit e=65537", try RSAPrivateKey.generate(bitCount: 2048))
        ]
        for generated in try F.allGeneratedKeys() {
            keys.append(
                (
                    "openssl \(generated.bitCount)-bit e=\(generated.exponent)",
                    try RSAPrivateKey(pemRepresentation: generated.pem)
                ))
        }
        return keys
    }

    func testRSAKitToOpenSSL_EveryFileIsReadWithoutComplaint() throws {
        try F.requireOpenSSL()
        for (name, key) in try keysToExport() {
            let modulusLine = "Modulus=" + F.hex(key.modulus).uppercased() + "\n"
            // Private keys: pkey reads them, rsa -check passes, the modulus matches.
            let privateFiles: [(bytes: [UInt8], inform: String)] = [
                (key.pkcs8DERRepresentation, "DER"), (Array(key.pkcs8PEMRepresentation.utf8), "PEM"),
                (key.pkcs1DERRepresentation, "DER"), (Array(key.pkcs1PEMRepresentation.utf8), "PEM")
            ]
            for (index, file) in privateFiles.enumerated() {
                let path = F.path("private-\(index)")
                try F.writeFile(path, file.bytes)
                let context = "\(name), private file \(index) (\(file.inform))"
                let pkey = try F.openssl(["pkey", "-in", path, "-inform", file.inform, "-noout"])
                XCTAssertEqual(pkey.status, 0, "\(context): \(pkey.stderr)")
                XCTAssertEqual(pkey.stderr, "", context)
                let check = try F.openssl(["rsa", "-in", path, "-inform", file.inform, "-check", "-noout"])
                XCTAssertEqual(check.status, 0, "\(context): \(check.stderr)")
                XCTAssertEqual(check.stdoutText, "RSA key ok\n", context)
                XCTAssertEqual(check.stderr, "", context)
                let modulus = try F.openssl(["rsa", "-in", path, "-inform", file.inform, "-modulus", "-noout"])
                XCTAssertEqual(modulus.stdoutText, modulusLine, context)
            }
            // Public keys: SPKI via -pubin, PKCS#1 via -RSAPublicKey_in; pkey -pubin reads both.
            let publicKey = key.publicKey
            let publicFiles: [(bytes: [UInt8], inform: String, rsaFlag: String)] = [
                (publicKey.derRepresentation, "DER", "-pubin"),
                (Array(publicKey.pemRepresentation.utf8), "PEM", "-pubin"),
                (publicKey.pkcs1DERRepresentation, "DER", "-RSAPublicKey_in"),
                (Array(publicKey.pkcs1PEMRepresentation.utf8), "PEM", "-RSAPublicKey_in")
            ]
            for (index, file) in publicFiles.enumerated() {
                let path = F.path("public-\(index)")
                try F.writeFile(path, file.bytes)
                let context = "\(name), public file \(index) (\(file.inform), \(file.rsaFlag))"
                let modulus = try F.openssl([
                    "rsa", file.rsaFlag, "-in", path, "-inform", file.inform, "-modulus", "-noout"
                ])
                XCTAssertEqual(modulus.status, 0, "\(context): \(modulus.stderr)")
                XCTAssertEqual(modulus.stdoutText, modulusLine, context)
                XCTAssertEqual(modulus.stderr, "", context)
                let pkey = try F.openssl(["pkey", "-pubin", "-in", path, "-inform", file.inform, "-noout", "-text"])
                XCTAssertEqual(pkey.status, 0, "\(context): \(pkey.stderr)")
                let printed = F.parseOpenSSLText(pkey.stdoutText)
                XCTAssertEqual(printed["modulus"], key.modulus, context)
                XCTAssertEqual(printed["exponent"], key.publicExponent, context)
            }
        }
    }

    /// OpenSSL can use an rsakit-written key: it decrypts what rsakit encrypted and vice versa.
    func testRSAKitWrittenKey_WorksInOpenSSLPkeyutl() throws {
        try F.requireOpenSSL()
        let key = try RSAPrivateKey(pemRepresentation: try F.generatedKey(bits: 2048, exponent: 65537).pem)
        let privatePath = F.path("key.pem"), publicPath = F.path("pub.pem")
        try F.writeFile(privatePath, Array(key.pkcs1PEMRepresentation.utf8))
        try F.writeFile(publicPath, Array(key.publicKey.pemRepresentation.utf8))
        let message = Array("formats interop".utf8)
        let ciphertext = try key.publicKey.encrypt(message)
        let decrypted = try F.opensslChecked(
            ["pkeyutl", "-decrypt", "-inkey", privatePath, "-pkeyopt", "rsa_padding_mode:pkcs1"], stdin: ciphertext)
        XCTAssertEqual(decrypted, message)
        let theirs = try F.opensslChecked(
            ["pkeyutl", "-encrypt", "-pubin", "-inkey", publicPath, "-pkeyopt", "rsa_padding_mode:pkcs1"],
            stdin: message)
        XCTAssertEqual(try key.decrypt(theirs), message)
    }

    // MARK: Fingerprints

    func testFingerprint_EqualsOpenSSLPkeyDERSha256sum() throws {
        try F.requireOpenSSL()
        guard (try? F.shell("command -v sha256sum"))?.status == 0 else {
            throw XCTSkip("sha256sum is not on PATH")
        }
        for key in try F.allGeneratedKeys() {
            let publicKey = try RSAPrivateKey(pemRepresentation: key.pem).publicKey
            let spkiPath = F.path("spki.pem"), pkcs1Path = F.path("pkcs1.pem")
            try F.writeFile(spkiPath, Array(publicKey.pemRepresentation.utf8))
            try F.writeFile(pkcs1Path, Array(publicKey.pkcs1PEMRepresentation.utf8))
            let sum = try F.shell("'\(F.openSSLPath!)' pkey -pubin -in '\(spkiPath)' -outform DER | sha256sum")
            XCTAssertEqual(sum.status, 0, sum.stderr)
            let expectedHex = String(sum.stdoutText.prefix(64))
            let context = "\(key.bitCount)-bit e=\(key.exponent)"
            XCTAssertEqual(publicKey.fingerprint.hexString, expectedHex, context)
            // The same fingerprint whichever format the key was read from.
            let fromPKCS1 = try RSAKeyFile(bytes: try F.readFile(pkcs1Path)).publicKey
            XCTAssertEqual(fromPKCS1.fingerprint.hexString, expectedHex, context)
            XCTAssertEqual(try RSAPrivateKey(pemRepresentation: key.pem).fingerprint.hexString, expectedHex, context)
            // The OpenSSH-style form: unpadded base64 of the same digest.
            let b64 = try F.shell(
                "'\(F.openSSLPath!)' pkey -in '\(key.path)' -pubout -outform DER | '\(F.openSSLPath!)' dgst -sha256 "
                    + "-binary | '\(F.openSSLPath!)' base64 -A"
            )
            let expectedBase64 =
                "SHA256:"
                + b64.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "=", with: "")
            XCTAssertEqual(publicKey.fingerprint.base64String, expectedBase64, context)
        }
    }

    // MARK: Inputs OpenSSL writes that rsakit refuses on purpose

    func testEncryptedKeysFromOpenSSL_NeedTheirPassphrase() throws {
        let key = try F.generatedKey(bits: 1024, exponent: 65537)
        let commands: [[String]] = [
            ["pkcs8", "-topk8", "-in", key.path, "-v2", "aes-256-cbc", "-passout", "pass:secret"],
            ["pkcs8", "-topk8", "-in", key.path, "-v2", "aes-256-cbc", "-passout", "pass:secret", "-outform", "DER"],
            ["pkey", "-in", key.path, "-aes256", "-passout", "pass:secret"],
            ["rsa", "-in", key.path, "-aes256", "-traditional", "-passout", "pass:secret"]
        ]
        for args in commands {
            let bytes = try F.opensslChecked(args)
            let context = "openssl " + args.joined(separator: " ")
            XCTAssertThrowsError(try RSAKeyFile(bytes: bytes), context) { error in
                guard case .passphraseNeeded? = error as? RSAError else { return XCTFail("\(context): \(error)") }
            }
            XCTAssertEqual(
                try RSAKeyFile(bytes: bytes, passphrase: Array("secret".utf8)).privateKey,
                try RSAKeyFile(bytes: Array(key.pem.utf8)).privateKey, context)
        }
    }

    func testCertificatesFromOpenSSL_AreRefused() throws {
        let key = try F.generatedKey(bits: 1024, exponent: 65537)
        let pem = try F.opensslChecked([
            "req", "-x509", "-new", "-key", key.path, "-subj", "/CN=rsakit test", "-days", "1"
        ])
        let pemPath = F.path("cert.pem")
        try F.writeFile(pemPath, pem)
        let der = try F.opensslChecked(["x509", "-in", pemPath, "-outform", "DER"])
        for bytes in [pem, der] {
            XCTAssertThrowsError(try RSAKeyFile(bytes: bytes)) { error in
                XCTAssertEqual(error as? RSAError, .unsupportedKeyFormat(reason: RSAKeyFile.certificateReason))
            }
        }
        XCTAssertThrowsError(try RSAPublicKey(derRepresentation: der)) { error in
            XCTAssertEqual(error as? RSAError, .unsupportedKeyFormat(reason: RSAKeyFile.certificateReason))
        }
        let csr = try F.opensslChecked(["req", "-new", "-key", key.path, "-subj", "/CN=rsakit test", "-outform", "DER"])
        XCTAssertThrowsError(try RSAKeyFile(bytes: csr)) { error in
            XCTAssertEqual(
                error as? RSAError, .unsupportedKeyFormat(reason: "certification requests (CSRs) are not supported"))
        }
    }

    func testMultiPrimeKeysFromOpenSSL_LoadAndExportByteIdentical() throws {
        // Multi-prime interop in depth (decrypt, sign, both directions): MultiPrimeKeyTests.
        let path = F.path("multiprime.pem")
        try F.opensslChecked([
            "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
            "-pkeyopt", "rsa_keygen_primes:3", "-out", path
        ])
        // NOTE: OpenSSL 3.0's `pkey -outform DER` writes a multi-prime key as PKCS#1; `pkcs8 -topk8` gives PKCS#8.
        let pkcs8 = try F.opensslChecked(["pkcs8", "-topk8", "-nocrypt", "-in", path, "-outform", "DER"])
        let traditional = try F.opensslChecked(["rsa", "-in", path, "-traditional", "-outform", "DER"])
        for bytes in [try F.readFile(path), pkcs8, traditional] {
            let file = try RSAKeyFile(bytes: bytes)
            guard case let .privateKey(key) = file.key else { return XCTFail("not a private key") }
            XCTAssertEqual(key.primeCount, 3)
            XCTAssertEqual(key.pkcs8DERRepresentation, pkcs8)
            XCTAssertEqual(key.pkcs1DERRepresentation, traditional)
        }
        let spki = try F.opensslChecked(["pkey", "-in", path, "-pubout", "-outform", "DER"])
        XCTAssertEqual(try RSAPublicKey(derRepresentation: spki).modulusBitCount, 2048)
    }

    func testNonRSAKeysFromOpenSSL_AreRefusedByAlgorithm() throws {
        let cases: [(args: [String], reasonPrefix: String)] = [
            (
                ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
                "not an RSA key: an elliptic-curve key"
            ),
            (["genpkey", "-algorithm", "ED25519"], "not an RSA key: an Ed25519 key")
        ]
        for (args, reasonPrefix) in cases {
            let path = F.path("other.pem")
            try F.opensslChecked(args + ["-out", path])
            let publicDER = try F.opensslChecked(["pkey", "-in", path, "-pubout", "-outform", "DER"])
            for bytes in [try F.readFile(path), publicDER] {
                XCTAssertThrowsError(try RSAKeyFile(bytes: bytes), args.joined(separator: " ")) { error in
                    guard case let .unsupportedKeyFormat(reason)? = error as? RSAError else {
                        return XCTFail("\(args): unexpected \(error)")
                    }
                    XCTAssertTrue(reason.hasPrefix(reasonPrefix), "\(args): \(reason)")
                }
            }
        }
        // OpenSSL's own EC key format is refused by its label.
        let ecPath = F.path("ec.pem")
        try F.opensslChecked(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", ecPath])
        XCTAssertThrowsError(try RSAKeyFile(bytes: try F.readFile(ecPath))) { error in
            XCTAssertEqual(
                error as? RSAError, .unsupportedKeyFormat(reason: "not an RSA key: PEM block \"EC PRIVATE KEY\""))
        }
    }

    /// `openssl pkcs12 -nodes` output: "Bag Attributes" text, a certificate and a key.
    func testPKCS12ExportWithBagAttributes_LoadsTheKeyAndSaysWhichBlock() throws {
        let key = try F.generatedKey(bits: 1024, exponent: 65537)
        let certPath = F.path("cert.pem"), p12Path = F.path("bundle.p12")
        try F.opensslChecked([
            "req", "-x509", "-new", "-key", key.path, "-subj", "/CN=rsakit test", "-days", "1", "-out", certPath
        ])
        try F.opensslChecked([
            "pkcs12", "-export", "-inkey", key.path, "-in", certPath, "-passout", "pass:x", "-out", p12Path
        ])
        let text = try F.opensslChecked(["pkcs12", "-in", p12Path, "-passin", "pass:x", "-nodes"])
        XCTAssertTrue(
            String(decoding: text, as: UTF8.self).contains("Bag Attributes"), "openssl pkcs12 output changed shape")
        let file = try RSAKeyFile(bytes: text)
        XCTAssertEqual(file.privateKey, try RSAPrivateKey(pemRepresentation: key.pem))
        XCTAssertEqual(file.format, .pkcs8)
        XCTAssertEqual(file.warnings.count, 1)
        XCTAssertTrue(
            file.warnings[0].hasPrefix("file has 2 PEM blocks; using the first key block (block "), file.warnings[0])
        XCTAssertTrue(file.warnings[0].hasSuffix(", PRIVATE KEY)"), file.warnings[0])
    }
}
