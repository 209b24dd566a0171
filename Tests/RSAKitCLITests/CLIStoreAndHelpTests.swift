import Foundation
import XCTest

/// Help, version, JSON output, store location precedence, import/export with openssl.
final class CLIStoreAndHelpTests: CLITestCase {
    func testHelp_EveryCommandHasFixedSections() throws {
        for command in [
            "genpair", "encrypt", "decrypt", "import", "export", "list", "show", "delete", "store", "password", "cert"
        ] {
            for form in [[command, "--help"], ["help", command]] {
                let result = try rsakitOK(form)
                let text = result.stdoutText
                XCTAssertTrue(text.hasPrefix("OVERVIEW: "), "\(form): \(text)")
                XCTAssertTrue(text.contains("\n\nUSAGE: rsakit \(command)"), "\(form)")
                XCTAssertTrue(text.contains("\n\nOPTIONS:\n"), "\(form)")
                XCTAssertTrue(text.contains("--store <DIR>"), "\(form)")
                XCTAssertEqual(result.stderr, "")
            }
        }
        let main = try rsakitOK(["--help"]).stdoutText
        XCTAssertTrue(main.contains("SUBCOMMANDS:"))
        XCTAssertEqual(try rsakitOK(["--version"]).stdoutText.hasPrefix("rsakit "), true)
        XCTAssertEqual(try rsakitOK(["-V"]).stdoutText, try rsakitOK(["--version"]).stdoutText)
        XCTAssertEqual(try rsakitOK(["-h"]).stdoutText, main)
    }

    func testJSON_ListAndShow() throws {
        try rsakitOK(["genpair", "--tag", "json-a", "--bits", "1024", "--label", "first key"])
        try rsakitOK(["genpair", "--tag", "json-b", "--bits", "2048"])
        let list =
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["list", "--json"]).stdout)) as! [[String: Any]]
        XCTAssertEqual(list.count, 4)
        let a = list.filter { $0["applicationTag"] as? String == "json-a" }
        XCTAssertEqual(Set(a.map { $0["keyClass"] as! String }), ["public", "private"])
        XCTAssertEqual(a.first?["label"] as? String, "first key")
        XCTAssertEqual(a.first?["keySizeInBits"] as? Int, 1024)
        XCTAssertEqual(a.first?["blockSize"] as? Int, 128)
        XCTAssertEqual(a.first?["maximumRawBlockPayload"] as? Int, 117)
        XCTAssertEqual(a.first?["maximumContainerBlockPayload"] as? Int, 60)
        XCTAssertTrue(
            list.first { $0["applicationTag"] as? String == "json-b" }?["label"] is NSNull, "label: null when absent")

        let show =
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["show", "--tag", "json-b", "--json"]).stdout))
            as! [[String: Any]]
        XCTAssertEqual(show.count, 2)
        let rfc3339 = ISO8601DateFormatter()
        rfc3339.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for item in show {
            XCTAssertEqual(item["keySizeInBits"] as? Int, 2048)
            XCTAssertEqual(item["blockSize"] as? Int, 256)
            XCTAssertEqual(item["maximumRawBlockPayload"] as? Int, 245)
            XCTAssertEqual(item["maximumContainerBlockPayload"] as? Int, 188)
            XCTAssertEqual(item["class"] as? String, "key")
            XCTAssertNil(item["fingerprintBase64"], "one encoding per kind of value: fingerprints are hex")
            XCTAssertEqual((item["fingerprint"] as? String)?.count, 64)
            XCTAssertFalse((item["itemID"] as? String ?? "").isEmpty)
            let created = item["creationDate"] as? String ?? ""
            XCTAssertNotNil(rfc3339.date(from: created), created)
            XCTAssertEqual(created.count, "2025-01-31T12:00:00.000Z".count, created)
        }
        XCTAssertEqual(show[0]["fingerprint"] as? String, show[1]["fingerprint"] as? String)
    }

    func testFingerprint_MatchesOpenSSL() throws {
        let openssl = try openssl()
        try rsakitOK(["genpair", "--tag", "fp", "--bits", "1024"])
        let show = try rsakitOK(["show", "--tag", "fp"]).stdoutText
        let hex = show.split(separator: "\n").first { $0.hasPrefix("fingerprint (hex): ") }!.dropFirst(
            "fingerprint (hex): ".count)
        let pub = path("fp.pem")
        try rsakitOK(["export", "--tag", "fp", "--out", pub])
        let der = try runProcess(openssl, ["pkey", "-pubin", "-in", pub, "-outform", "DER"])
        let digest = try runProcess(openssl, ["dgst", "-sha256", "-r"], stdin: der.stdout)
        XCTAssertEqual(String(digest.stdoutText.prefix(64)), String(hex))
    }

    func testStoreLocation_Precedence() throws {
        let explicit = path("explicit"), env = path("env"), xdg = path("xdg"), home = path("home")
        func run(_ args: [String], store: String?, xdgHome: String?) throws -> Result {
            try rsakit(
                args, environment: ["RSAKIT_STORE": store, "XDG_DATA_HOME": xdgHome, "HOME": home],
                useDefaultStore: false)
        }
        // --store beats $RSAKIT_STORE beats $XDG_DATA_HOME/rsakit beats ~/.local/share/rsakit.
        XCTAssertEqual(
            try run(["genpair", "--tag", "t1", "--bits", "1024", "--store", explicit], store: env, xdgHome: xdg).status,
            0)
        XCTAssertEqual(try run(["genpair", "--tag", "t2", "--bits", "1024"], store: env, xdgHome: xdg).status, 0)
        XCTAssertEqual(try run(["genpair", "--tag", "t3", "--bits", "1024"], store: nil, xdgHome: xdg).status, 0)
        XCTAssertEqual(try run(["genpair", "--tag", "t4", "--bits", "1024"], store: nil, xdgHome: nil).status, 0)
        XCTAssertEqual(try run(["show", "--tag", "t1", "--store", explicit], store: nil, xdgHome: nil).status, 0)
        XCTAssertEqual(try run(["show", "--tag", "t2", "--store", env], store: nil, xdgHome: nil).status, 0)
        XCTAssertEqual(try run(["show", "--tag", "t3", "--store", xdg + "/rsakit"], store: nil, xdgHome: nil).status, 0)
        XCTAssertEqual(
            try run(["show", "--tag", "t4", "--store", home + "/.local/share/rsakit"], store: nil, xdgHome: nil).status,
            0)
        XCTAssertEqual(
            try run(["show", "--tag", "t1"], store: env, xdgHome: nil).status, 66, "t1 is only in the explicit store")
        // Folders are 0700.
        for folder in [explicit, env, xdg + "/rsakit", home + "/.local/share/rsakit"] {
            let mode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as! Int
            XCTAssertEqual(mode & 0o777, 0o700, folder)
        }
    }

    func testImportExport_OpenSSLFormats() throws {
        let openssl = try openssl()
        let key = path("k.pem")
        XCTAssertEqual(
            try runProcess(openssl, ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key])
                .status, 0)
        let imported = try rsakitOK(["import", "--tag", "imported", key, "--label", "from openssl"])
        XCTAssertTrue(imported.stdoutText.contains("imported key pair"))
        let modulus = try runProcess(openssl, ["rsa", "-in", key, "-noout", "-modulus"]).stdoutText

        for (format, der, args) in [
            ("spki", false, ["-pubin"]), ("pkcs1", false, ["-RSAPublicKey_in"]),
            ("spki", true, ["-pubin", "-inform", "DER"])
        ] {
            let out = path("pub-\(format)-\(der)")
            try rsakitOK(["export", "--tag", "imported", "--format", format, "--out", out] + (der ? ["--der"] : []))
            let r = try runProcess(openssl, ["rsa"] + args + ["-in", out, "-noout", "-modulus"])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stdoutText, modulus, "\(format) der=\(der)")
        }
        for format in ["pkcs8", "pkcs1"] {
            let out = path("priv-\(format)")
            try rsakitOK(["export", "--tag", "imported", "--private", "--format", format, "--out", out])
            let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as! Int
            XCTAssertEqual(mode & 0o777, 0o600)
            let r = try runProcess(openssl, ["rsa", "-in", out, "-check", "-noout"])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdoutText.contains("RSA key ok"))
        }
        try rsakitOK(["delete", "--tag", "imported", "--public-only"])
        XCTAssertEqual(try rsakit(["show", "--tag", "imported"]).status, 0, "private item remains")
        try rsakitOK(["delete", "--tag", "imported"])
        XCTAssertEqual(try rsakit(["show", "--tag", "imported"]).status, 66)
    }
}
