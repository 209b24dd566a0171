import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitPKI

/// PKCS#12 import and export against the real openssl and certtool. Fixtures: ``TestPKI``
/// (leaf.key, server.pem, intermediate.pem, root.pem) and the p12 files made below, the
/// command beside each.
final class PKCS12Tests: XCTestCase {
    private let passphrase = "p12 secret"

    private func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// `openssl pkcs12 -export -inkey leaf.key -in server.pem -certfile CHAIN -name NAME -passout pass:PW EXTRA -out
    /// FILE`
    private func opensslP12(
        _ pki: TestPKI, chain: String? = "chain.pem", name: String? = "Server Identity",
        passout: String? = nil, extra: [String] = []
    ) throws -> [UInt8] {
        let file = pki.path("p12-\(UUID().uuidString).p12")
        var arguments = [
            "pkcs12", "-export", "-inkey", pki.leafKey, "-in", pki.path("server.pem"),
            "-passout", "pass:" + (passout ?? passphrase), "-out", file
        ]
        if let chain { arguments += ["-certfile", pki.path(chain)] }
        if let name { arguments += ["-name", name] }
        try OpenSSL.run(arguments + extra)
        return try bytes(file)
    }

    private func assertServerIdentity(
        _ p12: RSAPKCS12, _ pki: TestPKI, name: String? = "Server Identity",
        chain: [String] = ["RSAKit Test Intermediate", "RSAKit Test Root CA"],
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let key = try XCTUnwrap(try RSAKeyFile(bytes: bytes(pki.leafKey)).privateKey)
        XCTAssertEqual(p12.privateKey, key, file: file, line: line)
        XCTAssertEqual(p12.certificate, try pki.certificate("server"), file: file, line: line)
        XCTAssertEqual(p12.chain.map(\.subjectSummary), chain, file: file, line: line)
        XCTAssertEqual(p12.friendlyName, name, file: file, line: line)
    }

    func testImport_OpenSSLDefault_PBES2AndSHA256MAC() throws {
        let pki = try TestPKI.shared()
        let der = try opensslP12(pki)
        let p12 = try RSAPKCS12(derRepresentation: der, passphrase: Array(passphrase.utf8))
        try assertServerIdentity(p12, pki)
        XCTAssertEqual(p12.macDescription, "SHA256, 2048 iterations")
        XCTAssertEqual(p12.warnings, [])
    }

    /// The import gives its trust (kSecImportItemTrust), evaluated: the test root
    /// in the file is not an anchor by being there; with it added as one, the chain is trusted.
    func testImport_GivesTheEvaluatedTrustOfTheChain() throws {
        let pki = try TestPKI.shared()
        let p12 = try RSAPKCS12(derRepresentation: try opensslP12(pki), passphrase: Array(passphrase.utf8))
        XCTAssertEqual(p12.trust.policy, .basicX509)
        XCTAssertEqual(
            p12.trust.certificates,
            [try pki.certificate("server"), try pki.certificate("intermediate"), try pki.certificate("root")])
        XCTAssertEqual(p12.trustEvaluation.result, .recoverableTrustFailure)
        XCTAssertEqual(p12.trustEvaluation.failures.map(\.kind.code), ["untrusted-root"])
        XCTAssertEqual(p12.trustEvaluation.failures.first?.chainIndex, 2)
        var anchored = p12.trust
        anchored.anchorCertificates = [try pki.certificate("root")]
        anchored.anchorCertificatesOnly = true
        XCTAssertEqual(anchored.evaluate().result, .unspecified)
    }

    func testImport_Legacy_RC2And3DESWithSHA1MAC() throws {
        let pki = try TestPKI.shared()
        // openssl pkcs12 -export -legacy ...: RC2-40 certificates, 3DES key, SHA-1 MAC.
        let der = try opensslP12(pki, extra: ["-legacy"])
        let p12 = try RSAPKCS12(derRepresentation: der, passphrase: Array(passphrase.utf8))
        try assertServerIdentity(p12, pki)
        XCTAssertEqual(p12.macDescription, "SHA1, 2048 iterations")
        for wrong in ["p12 secreT", ""] {
            XCTAssertThrowsError(try RSAPKCS12(derRepresentation: der, passphrase: Array(wrong.utf8))) { error in
                XCTAssertEqual(error as? RSAError, .passphraseIncorrect(what: "PKCS#12 file"), wrong)
            }
        }
    }

    func testImport_EmptyPassphrase() throws {
        let pki = try TestPKI.shared()
        // openssl pkcs12 -export ... -passout pass:   (the empty passphrase)
        for extra in [[], ["-legacy"]] {
            let der = try opensslP12(pki, passout: "", extra: extra)
            let p12 = try RSAPKCS12(derRepresentation: der, passphrase: [])
            try assertServerIdentity(p12, pki)
            XCTAssertThrowsError(try RSAPKCS12(derRepresentation: der, passphrase: Array("x".utf8))) { error in
                XCTAssertEqual(error as? RSAError, .passphraseIncorrect(what: "PKCS#12 file"), "\(extra)")
            }
        }
    }

    func testImport_ChainInAnyOrder() throws {
        let pki = try TestPKI.shared()
        // reversed.pem = root.pem then intermediate.pem
        try pki.write(try pki.read("root.pem") + pki.read("intermediate.pem"), to: "reversed.pem")
        for chain in ["chain.pem", "reversed.pem"] {
            let p12 = try RSAPKCS12(
                derRepresentation: try opensslP12(pki, chain: chain, name: nil), passphrase: Array(passphrase.utf8))
            // No -name: no friendly name; the chain is ordered leaf-upwards either way.
            try assertServerIdentity(p12, pki, name: nil)
        }
    }

    func testImport_CertTool() throws {
        let pki = try TestPKI.shared()
        let file = pki.path("certtool-\(UUID().uuidString).p12")
        // certtool --to-p12 --load-privkey leaf.key --load-certificate server.pem --p12-name "certtool identity"
        //   --password "p12 secret" --outder --outfile FILE
        try CertTool.run([
            "--to-p12", "--load-privkey", pki.leafKey, "--load-certificate", pki.path("server.pem"),
            "--p12-name", "certtool identity", "--password", passphrase, "--outder", "--outfile", file
        ])
        let p12 = try RSAPKCS12(derRepresentation: try bytes(file), passphrase: Array(passphrase.utf8))
        try assertServerIdentity(p12, pki, name: "certtool identity", chain: [])
        XCTAssertNotNil(p12.macDescription)
        XCTAssertThrowsError(try RSAPKCS12(derRepresentation: try bytes(file), passphrase: Array("wrong".utf8))) {
            error in
            XCTAssertEqual(error as? RSAError, .passphraseIncorrect(what: "PKCS#12 file"))
        }
    }

    func testImport_NoMACNoEncryption_Warns() throws {
        let pki = try TestPKI.shared()
        // openssl pkcs12 -export ... -nomac -keypbe NONE -certpbe NONE
        let der = try opensslP12(pki, extra: ["-nomac", "-keypbe", "NONE", "-certpbe", "NONE"])
        let p12 = try RSAPKCS12(derRepresentation: der, passphrase: Array(passphrase.utf8))
        try assertServerIdentity(p12, pki)
        XCTAssertNil(p12.macDescription)
        XCTAssertEqual(
            p12.warnings,
            [
                "the file has no MAC: its integrity was not checked",
                "the private key is stored unencrypted in the file",
                "the certificates are stored unencrypted in the file"
            ])
    }

    func testImport_TamperedMAC_IsIntegrityFailure() throws {
        let pki = try TestPKI.shared()
        for extra in [[], ["-legacy"]] {
            var der = try opensslP12(pki, extra: extra)
            // PFX ::= SEQUENCE { version, authSafe, macData SEQUENCE { DigestInfo { alg, digest }, salt, iterations }
            // }:
            // flip the first octet of the MAC digest.
            let reader = DERReader(der)
            let pfx = try reader.children(of: try reader.element(at: 0, limit: der.count))
            let digestInfo = try reader.children(of: try reader.children(of: pfx[2])[0])
            der[digestInfo[1].content.lowerBound] ^= 0x01
            XCTAssertThrowsError(try RSAPKCS12(derRepresentation: der, passphrase: Array(passphrase.utf8)), "\(extra)")
            { error in
                XCTAssertEqual(error as? RSAError, .pkcs12IntegrityCheckFailed, "\(extra)")
            }
            XCTAssertThrowsError(try RSAPKCS12(derRepresentation: der, passphrase: Array("wrong".utf8)), "\(extra)") {
                error in
                XCTAssertEqual(error as? RSAError, .passphraseIncorrect(what: "PKCS#12 file"), "\(extra)")
            }
        }
    }

    func testImport_NoKeyOrSeveralKeys_AreClearErrors() throws {
        let pki = try TestPKI.shared()
        // openssl pkcs12 -export -nokeys -in chain.pem -passout pass:PW -out FILE
        let file = pki.path("nokey-\(UUID().uuidString).p12")
        try OpenSSL.run([
            "pkcs12", "-export", "-nokeys", "-in", pki.path("chain.pem"), "-passout", "pass:" + passphrase, "-out", file
        ])
        XCTAssertThrowsError(try RSAPKCS12(derRepresentation: try bytes(file), passphrase: Array(passphrase.utf8))) {
            error in
            XCTAssertEqual(
                error as? RSAError,
                .pkcs12Unusable(
                    reason: "it holds no private key (2 certificates only); import certificates with `cert add`"))
        }
        // Two keys: openssl cannot write them, so GnuTLS (through RSAKit's wrapper) does: two
        // shrouded key bags (leaf.key and root.key) and the server certificate, SHA-256 MAC.
        let pfx = try GnuTLSPKCS12()
        for keyPath in [pki.leafKey, pki.rootKey] {
            let bag = try GnuTLSPKCS12Bag()
            let key = try XCTUnwrap(try RSAKeyFile(bytes: bytes(keyPath)).privateKey)
            try bag.addShroudedKey(
                try GnuTLSPrivateKey.plain(der: key.pkcs8DERRepresentation), passphrase: Array(passphrase.utf8),
                keyID: nil, friendlyName: nil)
            try pfx.add(bag)
        }
        let certificates = try GnuTLSPKCS12Bag()
        try certificates.addCertificate(
            der: try pki.certificate("server").derRepresentation, keyID: nil, friendlyName: nil)
        try pfx.add(certificates)
        try pfx.generateSHA256MAC(passphrase: Array(passphrase.utf8))
        XCTAssertThrowsError(try RSAPKCS12(derRepresentation: try pfx.exportDER(), passphrase: Array(passphrase.utf8)))
        { error in
            XCTAssertEqual(
                error as? RSAError,
                .pkcs12Unusable(reason: "it holds 2 private keys; rsakit imports one identity per file"))
        }
        // Not PKCS#12 at all.
        XCTAssertThrowsError(try RSAPKCS12(derRepresentation: try bytes(pki.path("server.pem")), passphrase: [])) {
            error in
            guard case .pkcs12Unusable? = error as? RSAError else { return XCTFail("\(error)") }
        }
        let serverDER = try OpenSSL.run(["x509", "-in", pki.path("server.pem"), "-outform", "DER"])
        XCTAssertThrowsError(try RSAPKCS12(derRepresentation: serverDER, passphrase: [])) { error in
            guard case let .pkcs12Unusable(reason)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.hasPrefix("not a PKCS#12 file"), reason)
        }
    }

    func testExport_IsReadByOpenSSL() throws {
        let pki = try TestPKI.shared()
        let key = try XCTUnwrap(try RSAKeyFile(bytes: bytes(pki.leafKey)).privateKey)
        let server = try pki.certificate("server")
        let chain = [try pki.certificate("intermediate"), try pki.certificate("root")]
        let der = try RSAPKCS12.derRepresentation(
            privateKey: key, certificate: server, chain: chain,
            friendlyName: "Exported Identity", passphrase: Array(passphrase.utf8))
        let file = pki.path("export-\(UUID().uuidString).p12")
        try Data(der).write(to: URL(fileURLWithPath: file))
        // openssl pkcs12 -info -in FILE -passin pass:PW -noenc: the MAC and both bags as OpenSSL 3.0 writes them.
        let result = try OpenSSL.runAllowingFailure([
            "pkcs12", "-info", "-in", file, "-passin", "pass:" + passphrase, "-noenc"
        ])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("MAC: sha256"), result.stderr)
        XCTAssertTrue(result.stderr.contains("PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC"), result.stderr)
        XCTAssertTrue(result.stderr.contains("Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC"), result.stderr)
        let output = String(decoding: result.stdout, as: UTF8.self)
        XCTAssertTrue(output.contains("friendlyName: Exported Identity"), output)
        // localKeyId on key and leaf: SHA-1 of the leaf's DER, as openssl pkcs12 -export writes it.
        let localKeyID =
            "localKeyID: "
            + RSAHashAlgorithm.sha1.hash(server.derRepresentation)
            .map { String(format: "%02X", $0) }.joined(separator: " ")
        XCTAssertEqual(
            output.components(separatedBy: localKeyID).count - 1, 2, "\(localKeyID) on key and certificate: \(output)")
        XCTAssertEqual(
            try X509Certificate.certificates(from: result.stdout).map(\.subjectSummary),
            ["server.rsakit.test", "RSAKit Test Intermediate", "RSAKit Test Root CA"])
        XCTAssertEqual(try RSAKeyFile(bytes: result.stdout).privateKey, key)
        // A wrong passphrase: openssl says the MAC does not verify.
        XCTAssertNotEqual(
            try OpenSSL.runAllowingFailure(["pkcs12", "-info", "-in", file, "-passin", "pass:wrong", "-noenc"]).status,
            0)
        // And rsakit reads its own file back.
        let back = try RSAPKCS12(derRepresentation: der, passphrase: Array(passphrase.utf8))
        XCTAssertEqual(back.privateKey, key)
        XCTAssertEqual(back.certificate, server)
        XCTAssertEqual(back.chain, chain)
        XCTAssertEqual(back.friendlyName, "Exported Identity")
        // The certificate must be the key's.
        XCTAssertThrowsError(
            try RSAPKCS12.derRepresentation(privateKey: key, certificate: chain[0], passphrase: Array(passphrase.utf8))
        ) { error in
            guard case .keyTypeMismatch? = error as? RSAError else { return XCTFail("\(error)") }
        }
    }
}
