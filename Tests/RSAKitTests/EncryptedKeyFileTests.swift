import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// Encrypted key files in and out, against the real openssl (both directions).
///
/// In: `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048` (TestPKI's leaf.key),
/// then each command listed in `forms` with `-passout pass:correct horse`; rsakit must read
/// every one with the passphrase, ask for it without one, and say "wrong passphrase"
/// for a wrong one. Out: rsakit writes PBES2 and `openssl pkey -passin` reads it.
final class EncryptedKeyFileTests: XCTestCase {
    private let passphrase = "correct horse"

    private struct Form {
        let arguments: [String]
        let scheme: String
        let what: String
    }

    /// The encrypted forms openssl writes, and the scheme rsakit must name.
    private let forms: [Form] = [
        Form(
            arguments: ["pkcs8", "-topk8", "-v2", "aes-256-cbc"],
            scheme: "PBES2: PBKDF2-HMAC-SHA256, 2048 iterations, AES-256-CBC", what: "PKCS#8 EncryptedPrivateKeyInfo"),
        Form(
            arguments: ["pkcs8", "-topk8", "-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA1", "-iter", "1000"],
            scheme: "PBES2: PBKDF2-HMAC-SHA1, 1000 iterations, AES-128-CBC", what: "PKCS#8 EncryptedPrivateKeyInfo"),
        Form(
            arguments: ["pkcs8", "-topk8", "-v2", "aes-192-cbc", "-v2prf", "hmacWithSHA512"],
            scheme: "PBES2: PBKDF2-HMAC-SHA512, 2048 iterations, AES-192-CBC", what: "PKCS#8 EncryptedPrivateKeyInfo"),
        Form(
            arguments: ["pkcs8", "-topk8", "-v2", "des3"],
            scheme: "PBES2: PBKDF2-HMAC-SHA256, 2048 iterations, DES-EDE3-CBC", what: "PKCS#8 EncryptedPrivateKeyInfo"),
        Form(
            arguments: ["pkcs8", "-topk8", "-v2", "aes-256-cbc", "-outform", "DER"],
            scheme: "PBES2: PBKDF2-HMAC-SHA256, 2048 iterations, AES-256-CBC", what: "PKCS#8 EncryptedPrivateKeyInfo"),
        // PBES2 with RC2-CBC: GnuTLS lacks RC2, rsakit decrypts it over Nettle.
        Form(
            arguments: ["pkcs8", "-topk8", "-v2", "rc2-cbc", "-provider", "legacy", "-provider", "default"],
            scheme: "PBES2: PBKDF2-HMAC-SHA256, 2048 iterations, RC2-CBC (128-bit effective key)",
            what: "PKCS#8 EncryptedPrivateKeyInfo"),
        Form(
            arguments: ["pkcs8", "-topk8", "-v1", "PBE-SHA1-3DES"],
            scheme: "PKCS#12 PBE: PKCS#12 KDF (SHA-1), 2048 iterations, DES-EDE3-CBC",
            what: "PKCS#8 EncryptedPrivateKeyInfo"),
        Form(
            arguments: ["pkcs8", "-topk8", "-v1", "PBE-SHA1-RC2-40", "-provider", "legacy", "-provider", "default"],
            scheme: "PKCS#12 PBE: PKCS#12 KDF (SHA-1), 2048 iterations, RC2-40-CBC",
            what: "PKCS#8 EncryptedPrivateKeyInfo"),
        Form(
            arguments: ["pkcs8", "-topk8", "-v1", "PBE-MD5-DES", "-provider", "legacy", "-provider", "default"],
            scheme: "PBES1: MD5, 2048 iterations, DES-CBC", what: "PKCS#8 EncryptedPrivateKeyInfo"),
        Form(
            arguments: ["pkey", "-aes256"], scheme: "PBES2: PBKDF2-HMAC-SHA256, 2048 iterations, AES-256-CBC",
            what: "PKCS#8 EncryptedPrivateKeyInfo"),
        Form(
            arguments: ["rsa", "-aes256", "-traditional"],
            scheme: "OpenSSL legacy PEM: EVP_BytesToKey-MD5, AES-256-CBC", what: "OpenSSL encrypted PEM key"),
        Form(
            arguments: ["rsa", "-aes128", "-traditional"],
            scheme: "OpenSSL legacy PEM: EVP_BytesToKey-MD5, AES-128-CBC", what: "OpenSSL encrypted PEM key"),
        Form(
            arguments: ["rsa", "-des3", "-traditional"], scheme: "OpenSSL legacy PEM: EVP_BytesToKey-MD5, DES-EDE3-CBC",
            what: "OpenSSL encrypted PEM key")
    ]

    private func plainKey(_ pki: TestPKI) throws -> RSAPrivateKey {
        try XCTUnwrap(RSAKeyFile(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: pki.leafKey)))).privateKey)
    }

    func testRead_EveryOpenSSLForm_WithPassphrase() throws {
        let pki = try TestPKI.shared()
        let expected = try plainKey(pki)
        for form in forms {
            let context = "openssl " + form.arguments.joined(separator: " ")
            // openssl FORM -in leaf.key -passout "pass:correct horse"
            let bytes = try OpenSSL.run(form.arguments + ["-in", pki.leafKey, "-passout", "pass:" + passphrase])
            XCTAssertTrue(RSAKeyFile.isEncrypted(bytes), context)
            let file = try RSAKeyFile(bytes: bytes, passphrase: Array(passphrase.utf8))
            XCTAssertEqual(file.privateKey, expected, context)
            XCTAssertEqual(file.encryption?.description, form.scheme, context)
            XCTAssertEqual(file.isPEM, !form.arguments.contains("DER"), context)

            XCTAssertThrowsError(try RSAKeyFile(bytes: bytes), context) { error in
                XCTAssertEqual(error as? RSAError, .passphraseNeeded(what: form.what), context)
            }
            for wrong in ["correct horsf", "", "Correct horse", "correct horse battery"] {
                XCTAssertThrowsError(
                    try RSAKeyFile(bytes: bytes, passphrase: Array(wrong.utf8)), "\(context) / \(wrong)"
                ) { error in
                    XCTAssertEqual(error as? RSAError, .passphraseIncorrect(what: form.what), "\(context) / \(wrong)")
                }
            }
        }
    }

    func testRead_ManyWrongPassphrases_AreAllWrongPassphrase() throws {
        // A wrong key leaves valid CBC padding about once in 256 tries; that must still
        // say "wrong passphrase", never "malformed".
        let pki = try TestPKI.shared()
        let bytes = try OpenSSL.run([
            "pkcs8", "-topk8", "-v2", "aes-128-cbc", "-iter", "1", "-in", pki.leafKey, "-passout", "pass:" + passphrase
        ])
        for index in 0..<600 {
            XCTAssertThrowsError(try RSAKeyFile(bytes: bytes, passphrase: Array("wrong-\(index)".utf8))) { error in
                XCTAssertEqual(
                    error as? RSAError, .passphraseIncorrect(what: "PKCS#8 EncryptedPrivateKeyInfo"), "wrong-\(index)")
            }
        }
    }

    func testRead_Scrypt_IsRefusedByName() throws {
        let pki = try TestPKI.shared()
        // openssl pkcs8 -topk8 -scrypt -in leaf.key -passout pass:...
        let bytes = try OpenSSL.run(["pkcs8", "-topk8", "-scrypt", "-in", pki.leafKey, "-passout", "pass:" + passphrase]
        )
        for candidate in [Array(passphrase.utf8), nil] {
            XCTAssertThrowsError(try RSAKeyFile(bytes: bytes, passphrase: candidate)) { error in
                guard case let .unsupportedKeyFormat(reason)? = error as? RSAError else { return XCTFail("\(error)") }
                XCTAssertTrue(
                    reason.hasPrefix("scrypt-based PKCS#8 encryption (openssl pkcs8 -scrypt) is not supported"), reason)
            }
        }
        // A cipher GnuTLS lacks is named too: openssl pkcs8 -topk8 -v2 camellia-256-cbc.
        let camellia = try OpenSSL.run([
            "pkcs8", "-topk8", "-v2", "camellia-256-cbc", "-in", pki.leafKey, "-passout", "pass:" + passphrase
        ])
        XCTAssertThrowsError(try RSAKeyFile(bytes: camellia, passphrase: Array(passphrase.utf8))) { error in
            guard case let .unsupportedKeyFormat(reason)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.hasPrefix("PBES2 with the cipher CAMELLIA-256-CBC is not supported by GnuTLS"), reason)
        }
    }

    func testWrite_PBES2_IsReadByOpenSSL() throws {
        let pki = try TestPKI.shared()
        let key = try plainKey(pki)
        let pem = try key.encryptedPKCS8PEMRepresentation(passphrase: Array(passphrase.utf8))
        XCTAssertTrue(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))
        // openssl asn1parse shows the parameters: PBES2, PBKDF2, >= 600000 iterations, hmacWithSHA256, aes-256-cbc.
        let structure = String(decoding: try OpenSSL.run(["asn1parse"], input: Array(pem.utf8)), as: UTF8.self)
        for name in [":PBES2", ":PBKDF2", ":hmacWithSHA256", ":aes-256-cbc"] {
            XCTAssertTrue(structure.contains(name), "\(name) in \(structure)")
        }
        let file = try RSAKeyFile(bytes: Array(pem.utf8), passphrase: Array(passphrase.utf8))
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(file.encryption?.iterationCount), 600_000)
        XCTAssertEqual(file.privateKey, key)
        // openssl pkey -passin "pass:correct horse" -traditional: the same key.
        let path = pki.path("rsakit-encrypted-\(UUID().uuidString).pem")
        try Data(pem.utf8).write(to: URL(fileURLWithPath: path))
        let plain = try OpenSSL.run(["pkey", "-in", path, "-passin", "pass:" + passphrase, "-outform", "DER"])
        XCTAssertEqual(try RSAPrivateKey(derRepresentation: plain), key)
        // A wrong passphrase: openssl refuses too.
        XCTAssertNotEqual(
            try OpenSSL.runAllowingFailure(["pkey", "-in", path, "-passin", "pass:wrong", "-noout"]).status, 0)
        // Two encryptions differ (random salt and IV).
        XCTAssertNotEqual(
            try key.encryptedPKCS8DERRepresentation(passphrase: Array(passphrase.utf8)),
            try key.encryptedPKCS8DERRepresentation(passphrase: Array(passphrase.utf8)))
        XCTAssertThrowsError(try key.encryptedPKCS8DERRepresentation(passphrase: [])) { error in
            guard case .passphraseUnusable? = error as? RSAError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try key.encryptedPKCS8DERRepresentation(passphrase: [0x61, 0x00, 0x62])) { error in
            guard case .passphraseUnusable? = error as? RSAError else { return XCTFail("\(error)") }
        }
    }
}
