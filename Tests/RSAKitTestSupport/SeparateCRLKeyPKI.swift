import Foundation
import RSAKit

/// A PKI whose CA signs certificates with one key and CRLs with another (RFC 5280 §6.3.3 (f),
/// NIST PKITS 4.4.19-4.4.21), made by the real `openssl` CLI in a fresh folder (used by
/// RSAKitTests and RSAKitCLITests). Every key: `openssl genpkey -algorithm RSA -pkeyopt
/// rsa_keygen_bits:2048 -out NAME.key`. The files:
///
///   root.pem          "Separate Keys Root", self-signed, CA:TRUE, keyCertSign+cRLSign
///                     (openssl req -x509 -new -key root.key -subj ... -days 3650 -addext ...)
///   ca-certs.pem      "Separate Keys CA", certsign.key, by the root, serial 0x10, CA:TRUE, keyCertSign only
///   ca-crls.pem       "Separate Keys CA", crlsign.key, by the root, serial 0x11, cRLSign only (no basicConstraints)
///   ca-crls-nousage.pem  "Separate Keys CA", nousage.key, by the root, serial 0x12, digitalSignature only
///   ca-crls-self.pem  "Separate Keys CA", selfcrl.key, by ca-certs (certsign.key), serial 0x13, cRLSign:
///                     a signer whose own status hangs on the CRLs it signs
///   other-root.pem    "Separate Keys Other Root", self-signed; ca-crls-other.pem "Separate Keys CA",
///                     othercrl.key, by the other root, serial 0x14, cRLSign: another anchor's CRL signer
///   good.pem, revoked.pem   "good.separate.test", "revoked.separate.test" by ca-certs, serials 0x1001, 0x1002
///   dp.pem            "dp.separate.test" by ca-certs, serial 0x1003, cRLDistributionPoints: fullName
///                     URI:http://crl.separate.test/ca.crl (``distributionPointURL``)
///   dp-indirect.pem   "dp-indirect.separate.test" by ca-certs, serial 0x1004, cRLDistributionPoints:
///                     fullName URI:http://crl.separate.test/indirect.crl with cRLIssuer the root's name
///     (openssl req -new -key leaf.key -subj /CN=NAME | openssl x509 -req -CA ISSUER.pem -CAkey ISSUER.key
///      -set_serial S -days 3650 -sha256 -extfile NAME.ext -out NAME.pem)
///   CRLs, with authorityKeyIdentifier (openssl ca -batch -config NAME.cnf -gencrl -keyfile KEY -cert SIGNER.pem -out
///   NAME.pem, 30 days):
///     crl-ca.pem         by ca-crls (crlsign.key), lists 0x1002 (2024-01-01)
///     crl-ca-nousage.pem by ca-crls-nousage, crl-ca-self.pem by ca-crls-self, crl-ca-other.pem by
///                        ca-crls-other: each lists nothing
///     crl-root-good.pem  by the root, lists nothing; crl-root-signer-revoked.pem by the root,
///                        lists 0x11 (ca-crls, 2024-02-01)
package final class SeparateCRLKeyPKI: Sendable {
    /// The folder holding every file (under the test process's scratch folder).
    package let directory: String

    /// The absolute path of `name` in ``directory``.
    package func path(_ name: String) -> String { directory + "/" + name }

    /// The certificate file `name` (PEM) read by rsakit.
    package func certificate(_ name: String) throws -> X509Certificate {
        try X509Certificate(
            pemRepresentation: String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: path(name + ".pem"))), as: UTF8.self))
    }

    /// The CRL file `name` (PEM) read by rsakit.
    package func crl(_ name: String) throws -> X509CRL {
        try X509CRL.crls(from: Array(try Data(contentsOf: URL(fileURLWithPath: path(name + ".pem")))))[0]
    }

    /// The subject shared by ca-certs, ca-crls and the other CRL-signer candidates (openssl -subj form).
    package static let caSubject = "/CN=Separate Keys CA/O=RSAKit Tests"

    /// The distribution point URI of dp.pem.
    package static let distributionPointURL = "http://crl.separate.test/ca.crl"
    /// The distribution point URI of dp-indirect.pem, whose CRL the root issues.
    package static let indirectDistributionPointURL = "http://crl.separate.test/indirect.crl"

    /// Make the keys, certificates and CRLs listed above (openssl must be installed).
    /// - Throws: `XCTSkip` without openssl; the failure of any openssl command.
    package init() throws {
        _ = try OpenSSL.require()
        directory = TestScratch.directory.appendingPathComponent("separate-crl-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in ["root", "certsign", "crlsign", "nousage", "selfcrl", "other-root", "othercrl", "leaf"] {
            try OpenSSL.run([
                "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path(name + ".key")
            ])
        }
        for (name, subject) in [
            ("root", "/CN=Separate Keys Root/O=RSAKit Tests"),
            ("other-root", "/CN=Separate Keys Other Root/O=RSAKit Tests")
        ] {
            try OpenSSL.run([
                "req", "-x509", "-new", "-key", path(name + ".key"), "-subj", subject, "-days", "3650",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                "-out", path(name + ".pem")
            ])
        }
        let crlSigner = "keyUsage=critical,cRLSign\n"
        try issue(
            "ca-certs", key: "certsign", subject: Self.caSubject, issuer: "root", serial: "0x10",
            extensions: "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n")
        try issue(
            "ca-crls", key: "crlsign", subject: Self.caSubject, issuer: "root", serial: "0x11", extensions: crlSigner)
        try issue(
            "ca-crls-nousage", key: "nousage", subject: Self.caSubject, issuer: "root", serial: "0x12",
            extensions: "keyUsage=critical,digitalSignature\n")
        try issue(
            "ca-crls-self", key: "selfcrl", subject: Self.caSubject, issuer: "ca-certs", issuerKey: "certsign",
            serial: "0x13",
            extensions: crlSigner)
        try issue(
            "ca-crls-other", key: "othercrl", subject: Self.caSubject, issuer: "other-root", serial: "0x14",
            extensions: crlSigner)
        for (name, serial) in [("good", "0x1001"), ("revoked", "0x1002")] {
            try issue(
                name, key: "leaf", subject: "/CN=\(name).separate.test", issuer: "ca-certs", issuerKey: "certsign",
                serial: serial,
                extensions: "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n")
        }
        let leafUsage = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        try issue(
            "dp", key: "leaf", subject: "/CN=dp.separate.test", issuer: "ca-certs", issuerKey: "certsign",
            serial: "0x1003",
            extensions: leafUsage + "crlDistributionPoints=URI:\(Self.distributionPointURL)\n")
        try issue(
            "dp-indirect", key: "leaf", subject: "/CN=dp-indirect.separate.test", issuer: "ca-certs",
            issuerKey: "certsign", serial: "0x1004",
            extensions: leafUsage
                + "crlDistributionPoints=dp\n[ dp ]\nfullname=URI:\(Self.indirectDistributionPointURL)\n"
                + "CRLissuer=dirName:root_name\n[ root_name ]\nCN=Separate Keys Root\nO=RSAKit Tests\n")
        try makeCRL(
            "crl-ca", signer: "ca-crls", key: "crlsign",
            revoked: [("1002", "240101000000Z", "/CN=revoked.separate.test")])
        try makeCRL("crl-ca-nousage", signer: "ca-crls-nousage", key: "nousage", revoked: [])
        try makeCRL("crl-ca-self", signer: "ca-crls-self", key: "selfcrl", revoked: [])
        try makeCRL("crl-ca-other", signer: "ca-crls-other", key: "othercrl", revoked: [])
        try makeCRL("crl-root-good", signer: "root", key: "root", revoked: [])
        try makeCRL(
            "crl-root-signer-revoked", signer: "root", key: "root", revoked: [("11", "240201000000Z", Self.caSubject)])
    }

    private func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
    }

    private func issue(
        _ name: String, key: String, subject: String, issuer: String, issuerKey: String? = nil,
        serial: String, extensions: String
    ) throws {
        try write(extensions, to: name + ".ext")
        try OpenSSL.run(["req", "-new", "-key", path(key + ".key"), "-subj", subject, "-out", path(name + ".csr")])
        try OpenSSL.run([
            "x509", "-req", "-in", path(name + ".csr"), "-CA", path(issuer + ".pem"), "-CAkey",
            path((issuerKey ?? issuer) + ".key"),
            "-set_serial", serial, "-days", "3650", "-sha256", "-extfile", path(name + ".ext"), "-out",
            path(name + ".pem")
        ])
    }

    /// An `openssl ca` database with one "R" line per revoked entry (serial, date, subject),
    /// a config whose crl_extensions add authorityKeyIdentifier=keyid:always (openssl's
    /// -extended_crl finds a CRL's signer by it), then `openssl ca -batch -config NAME.cnf -gencrl -keyfile KEY -cert
    /// SIGNER.pem -out NAME.pem`.
    /// `extensions`: more lines of the [ crl_ext ] section ("1.2.3.4 = critical,DER:05:00").
    /// `number`: the cRLNumber, hex ("01"). A revoked entry's date may carry a reason
    /// ("240101000000Z,certificateHold", "...,removeFromCRL").
    package func makeCRL(
        _ name: String, signer: String, key: String, revoked: [(String, String, String)], extensions: String = "",
        number: String = "01"
    ) throws {
        try write(
            revoked.map { "R\t391231000000Z\t\($0.1)\t\($0.0)\tunknown\t\($0.2)\n" }.joined(), to: name + "-index.txt")
        try write(number + "\n", to: name + "-crlnumber")
        try write(
            "[ ca ]\ndefault_ca = CA_default\n[ CA_default ]\ndatabase = \(path(name + "-index.txt"))\ncrlnumber = "
                + "\(path(name + "-crlnumber"))\ndefault_md = sha256\ndefault_crl_days = 30\n"
                + "crl_extensions = crl_ext\n[ crl_ext ]\nauthorityKeyIdentifier = keyid:always\n" + extensions,
            to: name + ".cnf")
        try OpenSSL.run([
            "ca", "-batch", "-config", path(name + ".cnf"), "-gencrl", "-keyfile", path(key + ".key"), "-cert",
            path(signer + ".pem"),
            "-out", path(name + ".pem")
        ])
    }
}
