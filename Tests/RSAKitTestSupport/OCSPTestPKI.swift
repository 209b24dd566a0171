import Foundation
import XCTest

/// A small PKI for OCSP (RFC 6960) made by the real `openssl` CLI in a fresh folder, and
/// `openssl ocsp` responders on 127.0.0.1 (used by RSAKitTests and RSAKitCLITests). The
/// commands, run in ``init()``:
///
///   openssl req -x509 -new -newkey rsa:2048 -nodes -keyout ca.key -subj "/CN=RSAKit OCSP Test CA" -days 3650
///     -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign -out ca.pem
///   openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out leaf.key
///   responder.pem: "RSAKit OCSP Responder", by the CA, extendedKeyUsage=OCSPSigning (a delegated responder)
///   forged.pem:    "Forged Responder", self-signed, extendedKeyUsage=OCSPSigning (not the CA's)
///   good.pem, revoked.pem, unknown.pem: "NAME.ocsp.test", by the CA, serials 1001, 1002, 1003,
///     authorityInfoAccess=OCSP;URI:http://127.0.0.1:PORT (``port``, the responder's)
///     (openssl req -new -key leaf.key -subj /CN=NAME.ocsp.test | openssl x509 -req -CA ca.pem
///      -CAkey ca.key -set_serial 0xSERIAL -days 30 -sha256 -extfile NAME.ext)
///   sub.pem: "RSAKit OCSP Sub CA", by the CA (CA:TRUE, leaf.key), serial 2001, the same AIA;
///   subleaf.pem: "subleaf.ocsp.test", by the sub CA (-CA sub.pem -CAkey leaf.key), serial 3001
///   aia-cer.pem, aia-p7c.pem: "aia-cer.ocsp.test", "aia-p7c.ocsp.test", by the sub CA, serials 3002, 3003,
///     authorityInfoAccess=caIssuers;URI:http://127.0.0.1:CRLPORT/sub.cer (or sub.p7c): the sub CA's
///     certificate served by ``startCRLServer()`` as DER (openssl x509 -outform DER) and as a
///     certs-only PKCS#7 (openssl crl2pkcs7 -nocrl -certfile sub.pem -outform DER)
///   index.txt (openssl ca's database): 1001 valid; 1002 revoked 2024-01-01, keyCompromise;
///     1003 absent (the responder answers "unknown"); 2001 (the sub CA) revoked 2024-06-01, cACompromise.
package final class OCSPTestPKI {
    package let directory: String
    /// The port the certificates' AIA names (``startResponder(forged:port:)`` with no port uses it).
    package let port: Int
    /// The port of the HTTP server the certificates' cRLDistributionPoints name
    /// (``startCRLServer()``): http://127.0.0.1:PORT/ca.crl.
    package let crlPort: Int

    package func path(_ name: String) -> String { directory + "/" + name }

    package init() throws {
        _ = try OpenSSL.require()
        directory = TestScratch.directory.appendingPathComponent("ocsp-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try TLSTestServer.freePort()
        crlPort = try TLSTestServer.freePort()
        try OpenSSL.run([
            "req", "-x509", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", path("ca.key"),
            "-subj", "/CN=RSAKit OCSP Test CA", "-days", "3650",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            "-out", path("ca.pem")
        ])
        try OpenSSL.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path("leaf.key")])
        try issue(
            "responder", subject: "/CN=RSAKit OCSP Responder", serial: "0x1000",
            extensions: "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=OCSPSigning\n")
        // openssl req -x509 -new -key leaf.key -subj "/CN=Forged Responder" -days 30 -addext
        // extendedKeyUsage=OCSPSigning -out forged.pem
        try OpenSSL.run([
            "req", "-x509", "-new", "-key", path("leaf.key"), "-subj", "/CN=Forged Responder", "-days", "30",
            "-addext", "extendedKeyUsage=OCSPSigning", "-out", path("forged.pem")
        ])
        for (name, serial) in [("good", "1001"), ("revoked", "1002"), ("unknown", "1003")] {
            try issue(
                name, subject: "/CN=\(name).ocsp.test", serial: "0x" + serial,
                extensions: "basicConstraints=CA:FALSE\nauthorityInfoAccess=OCSP;URI:http://127.0.0.1:\(port)\n"
                    + "crlDistributionPoints=URI:http://127.0.0.1:\(crlPort)/ca.crl\n")
        }
        try issue(
            "sub", subject: "/CN=RSAKit OCSP Sub CA", serial: "0x2001",
            extensions:
                "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
                + "authorityInfoAccess=OCSP;URI:http://127.0.0.1:\(port)\n"
        )
        try issue(
            "subleaf", subject: "/CN=subleaf.ocsp.test", serial: "0x3001", issuer: "sub", issuerKey: "leaf.key",
            extensions: "basicConstraints=CA:FALSE\nauthorityInfoAccess=OCSP;URI:http://127.0.0.1:\(port)\n")
        for (name, serial, file) in [("aia-cer", "3002", "sub.cer"), ("aia-p7c", "3003", "sub.p7c")] {
            try issue(
                name, subject: "/CN=\(name).ocsp.test", serial: "0x" + serial, issuer: "sub", issuerKey: "leaf.key",
                extensions:
                    "basicConstraints=CA:FALSE\nauthorityInfoAccess=caIssuers;URI:http://127.0.0.1:\(crlPort)/\(file)\n"
            )
        }
        try OpenSSL.run(["x509", "-in", path("sub.pem"), "-outform", "DER", "-out", path("sub.cer")])
        try OpenSSL.run([
            "crl2pkcs7", "-nocrl", "-certfile", path("sub.pem"), "-outform", "DER", "-out", path("sub.p7c")
        ])
        try Data(
            ("V\t391231000000Z\t\t1001\tunknown\t/CN=good.ocsp.test\n"
                + "R\t391231000000Z\t240101000000Z,keyCompromise\t1002\tunknown\t/CN=revoked.ocsp.test\n"
                + "R\t391231000000Z\t240601000000Z,CACompromise\t2001\tunknown\t/CN=RSAKit OCSP Sub CA\n").utf8
        )
        .write(to: URL(fileURLWithPath: path("index.txt")))
        // The CA's CRL from the same database (1002 and 2001 revoked):
        // openssl ca -batch -config crl.cnf -gencrl -keyfile ca.key -cert ca.pem -out ca.crl
        try Data("01\n".utf8).write(to: URL(fileURLWithPath: path("crlnumber")))
        try Data(
            ("[ ca ]\ndefault_ca = CA_default\n[ CA_default ]\ndatabase = \(path("index.txt"))\ncrlnumber = "
                + "\(path("crlnumber"))\ndefault_md = sha256\ndefault_crl_days = 30\n")
                .utf8
        )
        .write(to: URL(fileURLWithPath: path("crl.cnf")))
        try OpenSSL.run([
            "ca", "-batch", "-config", path("crl.cnf"), "-gencrl", "-keyfile", path("ca.key"), "-cert", path("ca.pem"),
            "-out", path("ca.crl")
        ])
    }

    private func issue(
        _ name: String, subject: String, serial: String, issuer: String = "ca", issuerKey: String = "ca.key",
        extensions: String
    ) throws {
        try Data(extensions.utf8).write(to: URL(fileURLWithPath: path(name + ".ext")))
        try OpenSSL.run(["req", "-new", "-key", path("leaf.key"), "-subj", subject, "-out", path(name + ".csr")])
        try OpenSSL.run([
            "x509", "-req", "-in", path(name + ".csr"), "-CA", path(issuer + ".pem"), "-CAkey", path(issuerKey),
            "-set_serial", serial, "-days", "30", "-sha256", "-extfile", path(name + ".ext"), "-out",
            path(name + ".pem")
        ])
    }

    /// A running `openssl ocsp -index index.txt -port PORT -rsigner (responder|forged).pem
    /// -rkey leaf.key -CA ca.pem -ndays 1` (it listens on every address; queried on 127.0.0.1).
    /// `stop()` (also `deinit`) kills it.
    package final class Responder {
        package let port: Int
        private let process: ChildProcess
        let logPath: String

        init(port: Int, process: ChildProcess, logPath: String) {
            self.port = port
            self.process = process
            self.logPath = logPath
        }

        package var url: String { "http://127.0.0.1:\(port)" }

        /// SIGTERM, then SIGKILL after 2 s; reaped.
        package func stop() {
            guard process.isRunning else { return }
            process.send(SIGTERM)
            _ = try? process.wait(timeout: 2)
        }

        deinit { stop() }
    }

    /// One PKI and its delegated responder for a test class (OCSPRevocationTests,
    /// CLIOCSPTests): made on the first ``get()`` and kept until ``stop()``, which the class's
    /// `tearDown` calls. Used from one test at a time, as XCTest runs them.
    package final class ClassFixture: @unchecked Sendable {
        private var made: (pki: OCSPTestPKI, responder: Responder)?

        package init() {}

        /// The class's PKI and running responder, made now if this is the first call.
        package func get() throws -> (OCSPTestPKI, Responder) {
            if let made { return made }
            let pki = try OCSPTestPKI()
            let responder = try pki.startResponder()
            made = (pki, responder)
            return (pki, responder)
        }

        /// Stop the responder and forget both.
        package func stop() {
            made?.responder.stop()
            made = nil
        }
    }

    /// Start a responder (signed by the delegated responder certificate, or by the forged one)
    /// on `port` (default ``port``, which the certificates name); waits (at most 15 s) for its
    /// "ACCEPT" line.
    package func startResponder(forged: Bool = false, port: Int? = nil) throws -> Responder {
        try startResponder(
            signer: forged ? "forged" : "responder", key: "leaf.key", port: port ?? (forged ? nil : self.port))
    }

    /// Start a responder signing with `signer`.pem and `key` (e.g. "ca" and "ca.key": the
    /// issuer signs directly), with `extra` options (e.g. "-resp_no_certs"), on `port` (a
    /// free one by default).
    package func startResponder(signer: String, key: String, extra: [String] = [], port: Int? = nil) throws -> Responder
    {
        let port = try port ?? TLSTestServer.freePort()
        let log = path("ocsp-\(port).log")
        let process = try ChildProcess(
            [
                try OpenSSL.require(), "ocsp", "-index", path("index.txt"), "-port", String(port),
                "-rsigner", path(signer + ".pem"), "-rkey", path(key), "-CA", path("ca.pem"), "-ndays", "1"
            ] + extra,
            directory: directory, stdout: .appending(log), stderr: .appending(log))
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline && process.isRunning {
            if ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("ACCEPT") {
                return Responder(port: port, process: process, logPath: log)
            }
            usleep(20_000)
        }
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        process.kill9()
        XCTFail("openssl ocsp did not start: \(text)")
        throw CocoaError(.executableLoad)
    }

    /// `python3 -u -m http.server CRLPORT --bind 127.0.0.1 --directory DIR`: serves ca.crl at
    /// the URL the certificates' distribution points name. Skips when python3 is absent.
    package func startCRLServer() throws -> ChildProcess {
        guard let python = TestTools.path(of: "python3") else {
            throw XCTSkip("python3 is missing: no HTTP server for the CRL")
        }
        let log = path("http-\(crlPort).log")
        try? FileManager.default.removeItem(atPath: log)  // an earlier server's "Serving HTTP" must not count
        let process = try ChildProcess(
            [python, "-u", "-m", "http.server", String(crlPort), "--bind", "127.0.0.1", "--directory", directory],
            directory: directory, stdout: .appending(log), stderr: .appending(log))
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline && process.isRunning {
            if ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("Serving HTTP") { return process }
            usleep(20_000)
        }
        process.kill9()
        XCTFail("python3 http.server did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        throw CocoaError(.executableLoad)
    }

    /// A socket on 127.0.0.1 that listens (the kernel completes connections) but never reads
    /// or answers: a responder that does not answer. Closed by `close(fd)` in the caller.
    package static func silentListener() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(fd, pointer, length) == 0, listen(fd, 4) == 0 else { return -1 }
                return getsockname(fd, pointer, &length)
            }
        }
        guard bound == 0 else { close(fd); throw CocoaError(.fileWriteUnknown) }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
