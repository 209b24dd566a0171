import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport
@testable import RSAKitKeychain

/// CRL items: one per issuer, a newer CRL number supersedes, bad CRLs refused by
/// name without writing; stored CRLs used by trust evaluation. CRLs made by openssl (TestPKI:
/// crl-good number 1, crl-revoked number 2 listing the server, crl-stale, crl-forged).
final class KeychainCRLTests: KeychainTestCase {
    private func crl(_ name: String, _ pki: TestPKI) throws -> X509CRL {
        try XCTUnwrap(try X509CRL.crls(from: Array(try pki.read(name + ".pem").utf8)).first)
    }

    /// Every file under the store, by path: compared around a refused add.
    private func snapshot() throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: storePath)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let full = storePath + "/" + relative
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[relative] = try Data(contentsOf: URL(fileURLWithPath: full))
            }
        }
        return files
    }

    func testAddCRL_NewerNumberSupersedes_OlderAndDuplicatesRefused_NothingWritten() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let good = try crl("crl-good", pki), revoked = try crl("crl-revoked", pki)
        let first = try store.addCRL(good)
        XCTAssertNil(first.superseded)
        XCTAssertEqual(first.attributes.issuer, "O=RSAKit Tests,CN=RSAKit Test Intermediate")
        XCTAssertEqual(first.attributes.crlNumber, [0x01])
        XCTAssertEqual(first.attributes.revokedCount, 0)
        XCTAssertEqual(first.attributes.fingerprint, RSAHashAlgorithm.sha256.hash(good.derRepresentation))
        XCTAssertEqual(
            first.attributes.thisUpdate.timeIntervalSince1970, good.thisUpdate.timeIntervalSince1970, accuracy: 0.001)
        XCTAssertTrue(first.attributes.itemID.contains("-crl-"))

        let second = try store.addCRL(revoked)
        XCTAssertEqual(second.superseded?.crlNumber, [0x01])
        XCTAssertEqual(second.attributes.crlNumber, [0x02])
        XCTAssertEqual(second.attributes.revokedCount, 1)
        XCTAssertEqual(try store.allCRLs().map(\.crlNumber), [[0x02]], "one item per issuer")
        XCTAssertEqual(try store.allCRLValues(), [revoked])

        // The file: 0600 in a 0700 folder, a magic line, the metadata, the PEM.
        let hash = StoreLayout.crlHash(issuer: revoked.issuer)
        let path = storePath + "/" + StoreLayout.crlPath(hash: hash)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(
            atPath: (path as NSString).deletingLastPathComponent)
        XCTAssertEqual((folderAttributes[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        XCTAssertTrue(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("rsakit crl item 1\n{"))

        let before = try snapshot()
        assertThrows(
            .crlRefused(
                reason:
                    "a newer CRL of \"O=RSAKit Tests,CN=RSAKit Test Intermediate\" is stored (number 0x02): this one "
                    + "is superseded"
            ),
            try store.addCRL(good))
        assertThrows(
            .duplicateItem(RSAKeychainItemQuery(itemClass: .crl, issuer: revoked.issuer, serialNumber: [0x02])),
            try store.addCRL(revoked))
        assertThrows(
            .crlRefused(
                reason:
                    "the CRL of \"O=RSAKit Tests,CN=RSAKit Test Intermediate\" is stale: nextUpdate "
                    + "2020-02-01T00:00:00Z has passed"
            ),
            try store.addCRL(try crl("crl-stale", pki)))
        XCTAssertThrowsError(try store.addCRL(good, at: Date(timeIntervalSince1970: 0))) { error in
            guard case let RSAError.crlRefused(reason)? = error as? RSAError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("is not yet valid: thisUpdate"), reason)
        }
        XCTAssertEqual(try snapshot(), before, "a refused CRL changes nothing")
    }

    func testAddCRL_ForgedSignatureRefusedWhenTheIssuerIsStored() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        try store.addCertificate(try pki.certificate("intermediate"))
        let before = try snapshot()
        assertThrows(
            .crlRefused(
                reason:
                    "the signature of the CRL of \"O=RSAKit Tests,CN=RSAKit Test Intermediate\" does not verify with "
                    + "the key of the stored certificate of that name"
            ),
            try store.addCRL(try crl("crl-forged", pki)))
        XCTAssertEqual(try snapshot(), before)
        XCTAssertEqual(
            try store.addCRL(try crl("crl-good", pki)).attributes.crlNumber, [0x01],
            "the real intermediate's CRL verifies")
    }

    func testStoredCRLs_UsedByTrustEvaluation_DeleteByIssuerAndFingerprint() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let revoked = try crl("crl-revoked", pki)
        try store.addCRL(revoked)
        var trust = RSATrust(
            certificates: [try pki.certificate("server"), try pki.certificate("intermediate")], policy: .basicX509)
        trust.anchorCertificates = [try pki.certificate("root")]
        trust.anchorCertificatesOnly = true
        var withStore = trust
        try withStore.addKeychain(store)
        let evaluation = withStore.evaluate()
        XCTAssertEqual(evaluation.result, .fatalTrustFailure)
        XCTAssertEqual(evaluation.failures.map(\.kind), [.revoked(date: Date(timeIntervalSince1970: 1_704_067_200))])

        assertThrows(
            .itemNotFound(
                RSAKeychainItemQuery(itemClass: .crl, certificateFingerprint: [UInt8](repeating: 1, count: 32))),
            try store.deleteCRL(fingerprint: [UInt8](repeating: 1, count: 32)))
        XCTAssertEqual(
            try store.deleteCRL(fingerprint: RSAHashAlgorithm.sha256.hash(revoked.derRepresentation)).crlNumber, [0x02])
        XCTAssertEqual(try store.allCRLs(), [])
        try store.addCRL(try crl("crl-good", pki))
        withStore = trust
        try withStore.addKeychain(store)
        XCTAssertEqual(withStore.evaluate().result, .unspecified)
        XCTAssertEqual(withStore.evaluate().revocation.first?.status, .good)
        assertThrows(
            .itemNotFound(RSAKeychainItemQuery(itemClass: .crl, issuer: "CN=Nobody")),
            try store.deleteCRL(issuer: "CN=Nobody"))
        XCTAssertEqual(try store.deleteCRL(issuer: revoked.issuer).crlNumber, [0x01])
        XCTAssertEqual(try store.allCRLs(), [])
    }

    func testAddCRLs_BundleIsAllOrNothing() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let good = try crl("crl-good", pki), revoked = try crl("crl-revoked", pki), stale = try crl("crl-stale", pki)
        try store.addCertificate(try pki.certificate("root"))
        let before = try snapshot()
        XCTAssertThrowsError(try store.addCRLs([good, stale]))
        XCTAssertThrowsError(try store.addCRLs([revoked, good]), "the second is older than the first")
        XCTAssertEqual(try snapshot(), before, "nothing of a refused bundle is written")
        let added = try store.addCRLs([good, revoked])
        XCTAssertEqual(added.map(\.attributes.crlNumber), [[0x01], [0x02]])
        XCTAssertEqual(added.map(\.superseded), [nil, nil], "superseded inside the bundle, not in the store")
        XCTAssertEqual(try store.allCRLValues(), [revoked])
    }

    /// CRL and certificate items are read by one reader of the three-line item files
    /// (StorePEMItemFile): each kind of damage is named, with the file's path.
    func testDamagedCRLAndCertificateItems_AreNamed() throws {
        let pki = try TestPKI.shared()
        let store = try RSAKeyStore(path: storePath)
        let good = try crl("crl-good", pki)
        try store.addCRL(good)
        let path = storePath + "/" + StoreLayout.crlPath(hash: StoreLayout.crlHash(issuer: good.issuer))
        let original = try String(contentsOfFile: path, encoding: .utf8)
        let otherPEM = try pki.read("crl-revoked.pem")
        let pemStart = try XCTUnwrap(original.range(of: "-----BEGIN X509 CRL-----"))
        for (text, reason) in [
            (
                original.replacingOccurrences(of: "rsakit crl item 1", with: "rsakit crl item 9"),
                "the file does not start with \"rsakit crl item 1\""
            ),
            (
                original.replacingOccurrences(of: "\"fingerprint\"", with: "\"fingerprints\""),
                "the metadata record is not valid"
            ),
            (original.replacingOccurrences(of: "X509 CRL", with: "X509 CRX"), "the PEM block is not one \"X509 CRL\""),
            (
                String(original[..<pemStart.lowerBound]) + otherPEM,
                "the fingerprint in the metadata does not match the CRL"
            )
        ] {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try store.allCRLs()) { error in
                XCTAssertEqual(error as? RSAError, .damagedItem(tag: nil, path: path, reason: reason))
            }
        }
        try original.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(try store.allCRLValues(), [good])

        let intermediate = try pki.certificate("intermediate")
        let itemID = try store.addCertificate(intermediate).itemID
        let certificatePath =
            storePath + "/"
            + StoreLayout.certificatePath(
                hash: StoreLayout.certificateHash(
                    issuer: intermediate.issuer,
                    serialNumber: intermediate.serialNumber, group: "default"))
        let certificateText = try String(contentsOfFile: certificatePath, encoding: .utf8)
        try certificateText.replacingOccurrences(of: "CERTIFICATE-----", with: "X509 CRL-----").write(
            toFile: certificatePath, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try store.certificateValue(id: itemID)) { error in
            XCTAssertEqual(
                error as? RSAError,
                .damagedItem(tag: nil, path: certificatePath, reason: "the PEM block is not one \"CERTIFICATE\""))
        }
    }
}
