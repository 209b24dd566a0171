import Foundation
import RSAKit

/// A small PKI made by the real `openssl` CLI, once per test process, in the scratch folder
/// (used by RSAKitTests and RSAKitCLITests; leaf.key is the key of every leaf).
/// Every file's command is written beside the code that runs it.
///
///   Root CA        "RSAKit Test Root CA"      self-signed, CA:TRUE, keyCertSign+cRLSign, 2019-2039
///   Intermediate   "RSAKit Test Intermediate" signed by the root, CA:TRUE pathlen:0, 2019-2039
///   server         "server.rsakit.test"       by the intermediate, serverAuth, SAN DNS/IP
///   client         "RSAKit Test Client"       by the intermediate, clientAuth, SAN email
///   expired        "expired.rsakit.test"      `openssl ca -startdate 20200101000000Z -enddate 20210101000000Z`
///   notYetValid    "future.rsakit.test"       `openssl ca -startdate 20380101000000Z -enddate 20390101000000Z`
///   untrustedRoot  "RSAKit Untrusted Root"    self-signed, not given as an anchor
///   untrustedLeaf  "untrusted.rsakit.test"    by the untrusted root
///   tampered       the server certificate with the last signature octet flipped
///   nonCAIssued    "victim.rsakit.test"       signed by the server certificate (CA:FALSE)
///   wrongEKU       "codesign.rsakit.test"     by the intermediate, codeSigning only
///   crossRoot      "RSAKit Cross Root"        self-signed (the untrusted root's key), 2019-2039
///   intermediateCross  the intermediate's subject and key, signed by the cross root: a
///                  cross-signed alternative path to another anchor
///   CRLs of the intermediate (openssl ca -gencrl, commands in makeCRL): crl-good.pem (no
///   entry, number 1), crl-revoked.pem (server, serial 5E5E01, revoked 2024-01-01, number 2),
///   crl-stale.pem (2020-01-01 .. 2020-02-01), crl-forged.pem (the intermediate's name,
///   signed by the untrusted root's key through fake-intermediate.pem)
package final class TestPKI: @unchecked Sendable {
    package let directory: URL
    private var caSerial = 0x5E5E10
    package private(set) var rootKey = "", intermediateKey = "", leafKey = "", untrustedRootKey = ""

    private static let lock = NSLock()
    nonisolated(unsafe) private static var instance: TestPKI?

    /// The shared PKI (skips when openssl is absent).
    package static func shared() throws -> TestPKI {
        lock.lock(); defer { lock.unlock() }
        if let instance { return instance }
        let pki = try TestPKI()
        instance = pki
        return pki
    }

    package func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The certificate file `name` (PEM) read by rsakit.
    package func certificate(_ name: String) throws -> X509Certificate {
        try X509Certificate(
            pemRepresentation: String(
                decoding: try Data(contentsOf: URL(fileURLWithPath: path(name + ".pem"))), as: UTF8.self))
    }

    private init() throws {
        _ = try OpenSSL.require()
        directory = TestScratch.directory.appendingPathComponent("pki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out NAME.key
        for name in ["root", "intermediate", "leaf", "untrusted-root"] {
            try OpenSSL.run([
                "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path(name + ".key")
            ])
        }
        rootKey = path("root.key"); intermediateKey = path("intermediate.key")
        leafKey = path("leaf.key"); untrustedRootKey = path("untrusted-root.key")

        // Root and intermediate are valid 2019-01-01 .. 2039-12-31 (openssl ca sets the
        // dates), so the expired leaf (2020) evaluates at a verify date inside its validity.
        // openssl req -new -key root.key -subj "/CN=RSAKit Test Root CA/O=RSAKit Tests" -out root.csr
        // openssl ca -batch -config ca.cnf -selfsign -keyfile root.key -in root.csr
        //   -startdate 20190101000000Z -enddate 20391231000000Z -extensions ca_ext -notext -out root.pem
        try caIssued(
            "root", key: rootKey, subject: "/CN=RSAKit Test Root CA/O=RSAKit Tests", signer: nil, signerKey: rootKey,
            start: "20190101000000Z", end: "20391231000000Z", section: "ca_ext")
        try caIssued(
            "untrusted-root", key: untrustedRootKey, subject: "/CN=RSAKit Untrusted Root/O=Elsewhere", signer: nil,
            signerKey: untrustedRootKey, start: "20190101000000Z", end: "20391231000000Z", section: "ca_ext")
        // openssl ca -batch -config ca.cnf -cert root.pem -keyfile root.key -in intermediate.csr
        //   -startdate 20190101000000Z -enddate 20391231000000Z -extensions intermediate_ext -notext -out
        //   intermediate.pem
        try caIssued(
            "intermediate", key: intermediateKey, subject: "/CN=RSAKit Test Intermediate/O=RSAKit Tests",
            signer: "root",
            signerKey: rootKey, start: "20190101000000Z", end: "20391231000000Z", section: "intermediate_ext")
        let serverExtensions =
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
            + "extendedKeyUsage=serverAuth\n"
            + "subjectAltName=DNS:server.rsakit.test,DNS:*.wild.rsakit.test,IP:127.0.0.1\n"
        try issue(
            "server", key: leafKey, subject: "/CN=server.rsakit.test/O=RSAKit Tests",
            issuer: "intermediate", issuerKey: intermediateKey, serial: "0x5e5e01", extensions: serverExtensions)
        try issue(
            "client", key: leafKey, subject: "/CN=RSAKit Test Client/O=RSAKit Tests",
            issuer: "intermediate", issuerKey: intermediateKey, serial: "0x5e5e02",
            extensions:
                "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                + "extendedKeyUsage=clientAuth\nsubjectAltName=email:client@rsakit.test\n"
        )
        try issue(
            "wrong-eku", key: leafKey, subject: "/CN=codesign.rsakit.test",
            issuer: "intermediate", issuerKey: intermediateKey, serial: "0x5e5e03",
            extensions:
                "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=codeSigning\n"
                + "subjectAltName=DNS:codesign.rsakit.test\n"
        )
        try issue(
            "untrusted-leaf", key: leafKey, subject: "/CN=untrusted.rsakit.test",
            issuer: "untrusted-root", issuerKey: untrustedRootKey, serial: "0x5e5e04", extensions: serverExtensions)
        // A certificate "issued" by the server leaf, which is not a CA.
        try issue(
            "non-ca-issued", key: leafKey, subject: "/CN=victim.rsakit.test",
            issuer: "server", issuerKey: leafKey, serial: "0x5e5e05",
            extensions:
                "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:victim.rsakit.test\n")
        // Subject equal to issuer but signed by another key: "same-name-signer" is a
        // self-signed CA named /CN=RSAKit Same Name (the untrusted root's key), and
        // "same-name" carries that name too, with the leaf's key, signed by the signer.
        try caIssued(
            "same-name-signer", key: untrustedRootKey, subject: "/CN=RSAKit Same Name", signer: nil,
            signerKey: untrustedRootKey, start: "20190101000000Z", end: "20391231000000Z", section: "ca_ext")
        try issue(
            "same-name", key: leafKey, subject: "/CN=RSAKit Same Name",
            issuer: "same-name-signer", issuerKey: untrustedRootKey, serial: "0x5e5e06",
            extensions: "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n")
        // openssl ca -batch -config ca.cnf -cert intermediate.pem -keyfile intermediate.key -in expired.csr
        //   -startdate 20200101000000Z -enddate 20210101000000Z -extensions expired_ext -notext -out expired.pem
        try caIssued(
            "expired", key: leafKey, subject: "/CN=expired.rsakit.test", signer: "intermediate",
            signerKey: intermediateKey,
            start: "20200101000000Z", end: "20210101000000Z", section: "expired_ext")
        // The same with -startdate 20380101000000Z -enddate 20390101000000Z (inside the CAs' validity).
        try caIssued(
            "not-yet-valid", key: leafKey, subject: "/CN=future.rsakit.test", signer: "intermediate",
            signerKey: intermediateKey,
            start: "20380101000000Z", end: "20390101000000Z", section: "future_ext")
        // tampered.pem: openssl x509 -in server.pem -outform DER, last octet (inside the
        // signature BIT STRING) XOR 0x01, back to PEM (base64 in 64-character lines, RFC 7468).
        var der = try OpenSSL.run(["x509", "-in", path("server.pem"), "-outform", "DER"])
        der[der.count - 1] ^= 0x01
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        try write("-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n", to: "tampered.pem")
        // A cross-signed intermediate: the same name and key as "intermediate", issued by
        // "cross-root" (openssl ca -cert cross-root.pem -keyfile untrusted-root.key ...).
        try caIssued(
            "cross-root", key: untrustedRootKey, subject: "/CN=RSAKit Cross Root/O=Elsewhere", signer: nil,
            signerKey: untrustedRootKey, start: "20190101000000Z", end: "20391231000000Z", section: "ca_ext")
        try caIssued(
            "intermediate-cross", key: intermediateKey, subject: "/CN=RSAKit Test Intermediate/O=RSAKit Tests",
            signer: "cross-root", signerKey: untrustedRootKey, start: "20190101000000Z", end: "20391231000000Z",
            section: "intermediate_ext")
        try makeCRL("crl-good", signer: "intermediate", signerKey: intermediateKey, revoked: [], number: "01")
        try makeCRL(
            "crl-revoked", signer: "intermediate", signerKey: intermediateKey,
            revoked: [("5E5E01", "240101000000Z", "/CN=server.rsakit.test/O=RSAKit Tests")], number: "02")
        try makeCRL(
            "crl-stale", signer: "intermediate", signerKey: intermediateKey, revoked: [], number: "03",
            window: ("20200101000000Z", "20200201000000Z"))
        // openssl req -x509 -new -key untrusted-root.key -subj "/CN=RSAKit Test Intermediate/O=RSAKit Tests" -days 30
        // -out fake-intermediate.pem
        try OpenSSL.run([
            "req", "-x509", "-new", "-key", untrustedRootKey, "-subj", "/CN=RSAKit Test Intermediate/O=RSAKit Tests",
            "-days", "30", "-out", path("fake-intermediate.pem")
        ])
        try makeCRL("crl-forged", signer: "fake-intermediate", signerKey: untrustedRootKey, revoked: [], number: "04")
        // chain.pem: intermediate then root (a bundle).
        try write(try read("intermediate.pem") + read("root.pem"), to: "chain.pem")
    }

    package func read(_ name: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path(name))), as: UTF8.self)
    }

    package func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
    }

    /// A CRL of `signer`: an `openssl ca` database with one "R" line per revoked entry
    /// (serial, revocation date, subject), then
    /// `openssl ca -batch -config crl-NAME.cnf -gencrl -keyfile KEY -cert SIGNER.pem
    ///  [-crl_lastupdate A -crl_nextupdate B] -out NAME.pem` (30 days from now by default).
    private func makeCRL(
        _ name: String, signer: String, signerKey: String, revoked: [(String, String, String)],
        number: String, window: (String, String)? = nil
    ) throws {
        let database = path(name + "-index.txt"), serial = path(name + "-crlnumber")
        try write(
            revoked.map { "R\t391231000000Z\t\($0.1)\t\($0.0)\tunknown\t\($0.2)\n" }.joined(), to: name + "-index.txt")
        try write(number + "\n", to: name + "-crlnumber")
        try write(
            "[ ca ]\ndefault_ca = CA_default\n[ CA_default ]\ndatabase = \(database)\ncrlnumber = "
                + "\(serial)\ndefault_md = sha256\ndefault_crl_days = 30\n",
            to: name + ".cnf")
        var arguments = [
            "ca", "-batch", "-config", path(name + ".cnf"), "-gencrl", "-keyfile", signerKey, "-cert",
            path(signer + ".pem")
        ]
        if let window { arguments += ["-crl_lastupdate", window.0, "-crl_nextupdate", window.1] }
        try OpenSSL.run(arguments + ["-out", path(name + ".pem")])
    }

    private func issue(
        _ name: String, key: String, subject: String, issuer: String, issuerKey: String,
        serial: String, extensions: String, days: Int = 825
    ) throws {
        try write(extensions, to: name + ".ext")
        // openssl req -new -key KEY -subj SUBJECT -out NAME.csr
        try OpenSSL.run(["req", "-new", "-key", key, "-subj", subject, "-out", path(name + ".csr")])
        // openssl x509 -req -in NAME.csr -CA ISSUER.pem -CAkey ISSUER.key -set_serial S -days D -sha256 -extfile
        // NAME.ext -out NAME.pem
        try OpenSSL.run([
            "x509", "-req", "-in", path(name + ".csr"), "-CA", path(issuer + ".pem"), "-CAkey", issuerKey,
            "-set_serial", serial, "-days", String(days), "-sha256", "-extfile", path(name + ".ext"),
            "-out", path(name + ".pem")
        ])
    }

    /// `openssl ca -batch -config ca-NAME.cnf (-cert SIGNER.pem | -selfsign) -keyfile SIGNERKEY -in NAME.csr
    ///  -startdate START -enddate END -extensions SECTION -notext -out NAME.pem`, the config below.
    private func caIssued(
        _ name: String, key: String, subject: String, signer: String?, signerKey: String,
        start: String, end: String, section: String
    ) throws {
        let ca = directory.appendingPathComponent("ca-\(name)")
        try FileManager.default.createDirectory(
            at: ca.appendingPathComponent("newcerts"), withIntermediateDirectories: true)
        try Data().write(to: ca.appendingPathComponent("index.txt"))
        caSerial += 1
        try Data((String(caSerial, radix: 16) + "\n").utf8).write(to: ca.appendingPathComponent("serial"))
        let config = """
            [ ca ]
            default_ca = CA_default
            [ CA_default ]
            database = \(ca.path)/index.txt
            new_certs_dir = \(ca.path)/newcerts
            serial = \(ca.path)/serial
            default_md = sha256
            policy = policy_any
            unique_subject = no
            preserve = yes
            [ policy_any ]
            commonName = supplied
            organizationName = optional
            [ ca_ext ]
            basicConstraints = critical,CA:TRUE
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash
            [ intermediate_ext ]
            basicConstraints = critical,CA:TRUE,pathlen:0
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid
            [ expired_ext ]
            basicConstraints = CA:FALSE
            keyUsage = critical,digitalSignature,keyEncipherment
            extendedKeyUsage = serverAuth
            subjectAltName = DNS:expired.rsakit.test
            [ future_ext ]
            basicConstraints = CA:FALSE
            keyUsage = critical,digitalSignature,keyEncipherment
            extendedKeyUsage = serverAuth
            subjectAltName = DNS:future.rsakit.test

            """
        try write(config, to: "ca-\(name).cnf")
        try OpenSSL.run(["req", "-new", "-key", key, "-subj", subject, "-out", path(name + ".csr")])
        let signing = signer.map { ["-cert", path($0 + ".pem")] } ?? ["-selfsign"]
        try OpenSSL.run(
            ["ca", "-batch", "-config", path("ca-\(name).cnf")] + signing + [
                "-keyfile", signerKey,
                "-in", path(name + ".csr"), "-startdate", start, "-enddate", end,
                "-extensions", section, "-notext", "-out", path(name + ".pem")
            ])
    }
}
