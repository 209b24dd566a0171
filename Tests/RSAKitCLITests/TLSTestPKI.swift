import Foundation
import XCTest
import RSAKitTestSupport

/// The certificates and keys of the TLS tests, made by the real `openssl` once per process:
///
///   ca.pem/ca.key          "RSAKit TLS Test Root"   self-signed CA
///     openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -subj "/CN=RSAKit TLS Test Root"
///       -days 30 -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
///   int.pem/int.key        "RSAKit TLS Test Intermediate", by the root (CA:TRUE, pathlen:0)
///   srv.pem/srv.key        "localhost" by the intermediate: serverAuth, SAN DNS:localhost, IP:127.0.0.1
///   alice.pem/alice.key    "alice" by the root: clientAuth; alice.p12 = openssl pkcs12 -export (pass "alicepass")
///   other.pem/other.key    "RSAKit TLS Other Root"  an unrelated CA
///   bob.pem/bob.key        "bob" by the other root: clientAuth
///   Leaves: openssl req -newkey rsa:2048 -nodes -keyout X.key -subj ... -out X.csr;
///           openssl x509 -req -in X.csr -CA ISSUER.pem -CAkey ISSUER.key -set_serial N -days 30 -extfile X.ext -out
///           X.pem
final class TLSTestPKI: @unchecked Sendable {
    let directory: String
    private static let lock = NSLock()
    nonisolated(unsafe) private static var instance: TLSTestPKI?

    static func shared(openssl: String) throws -> TLSTestPKI {
        lock.lock(); defer { lock.unlock() }
        if let instance { return instance }
        let pki = try TLSTestPKI(openssl: openssl)
        instance = pki
        return pki
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// Check the page `openssl s_server -www` answered with: an HTTP 200 for a session of
    /// `version` ("TLSv1.3"), in which the server verified a client certificate with `subject`
    /// ("CN=alice, O=RSAKit Tests") signed with RSA-PSS (CertificateVerify).
    static func assertServerSawClientCertificate(
        _ page: String, version: String, subject: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertTrue(page.hasPrefix("HTTP/1.0 200 ok"), page, file: file, line: line)
        XCTAssertTrue(page.contains("New, \(version), Cipher is"), page, file: file, line: line)
        XCTAssertTrue(page.contains("Client certificate"), page, file: file, line: line)
        XCTAssertTrue(page.contains("Subject: \(subject)"), page, file: file, line: line)
        XCTAssertTrue(page.contains("Peer signature type: RSA-PSS"), page, file: file, line: line)
    }

    /// A clientAuth certificate from the test root for a public key only rsakit (or a token)
    /// holds: `openssl x509 -new -force_pubkey PUB -subj SUBJECT -CA ca.pem -CAkey ca.key
    /// -set_serial SERIAL -days 30 -extfile client.ext -out OUTPUT`.
    /// - Parameters: `publicKey` a PEM public key file; `output` where the certificate goes.
    func issueClientCertificate(openssl: String, publicKey: String, subject: String, serial: Int, output: String) throws
    {
        let extensions = output + ".ext"
        try Data("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n".utf8)
            .write(to: URL(fileURLWithPath: extensions))
        let made = try ChildProcess.run(
            [
                openssl, "x509", "-new", "-force_pubkey", publicKey, "-subj", subject,
                "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-set_serial", String(serial),
                "-days", "30", "-extfile", extensions, "-out", output
            ], directory: directory)
        guard made.status == 0 else {
            XCTFail("openssl x509 -new -force_pubkey \(publicKey): \(made.stderr)")
            throw CocoaError(.fileWriteUnknown)
        }
    }

    private init(openssl: String) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "rsakit-tls-pki-\(getpid())-\(UUID().uuidString)"
            ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func run(_ arguments: [String]) throws {
            let result = try ChildProcess.run([openssl] + arguments, directory: directory)
            guard result.status == 0 else {
                XCTFail("openssl \(arguments.joined(separator: " ")): \(result.stderr)")
                throw CocoaError(.fileWriteUnknown)
            }
        }
        func write(_ text: String, _ name: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
        }
        func root(_ name: String, _ subject: String) throws {
            try run([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".pem",
                "-subj", subject, "-days", "30", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign"
            ])
        }
        func leaf(_ name: String, _ subject: String, issuer: String, serial: Int, extensions: String) throws {
            try write(extensions, name + ".ext")
            try run([
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-subj", subject, "-out",
                name + ".csr"
            ])
            try run([
                "x509", "-req", "-in", name + ".csr", "-CA", issuer + ".pem", "-CAkey", issuer + ".key",
                "-set_serial", String(serial), "-days", "30", "-extfile", name + ".ext", "-out", name + ".pem"
            ])
        }
        try root("ca", "/CN=RSAKit TLS Test Root")
        try root("other", "/CN=RSAKit TLS Other Root")
        try leaf(
            "int", "/CN=RSAKit TLS Test Intermediate", issuer: "ca", serial: 2,
            extensions: "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n")
        try leaf(
            "srv", "/CN=localhost", issuer: "int", serial: 3,
            extensions:
                "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                + "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n"
        )
        let client = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n"
        try leaf("alice", "/CN=alice/O=RSAKit Tests", issuer: "ca", serial: 4, extensions: client)
        try leaf("bob", "/CN=bob/O=Elsewhere", issuer: "other", serial: 5, extensions: client)
        // openssl pkcs12 -export -inkey alice.key -in alice.pem -name alice -passout pass:alicepass -out alice.p12
        try run([
            "pkcs12", "-export", "-inkey", "alice.key", "-in", "alice.pem", "-name", "alice",
            "-passout", "pass:alicepass", "-out", "alice.p12"
        ])
    }
}
