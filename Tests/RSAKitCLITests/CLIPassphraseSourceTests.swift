import Foundation
import XCTest
import RSAKitTestSupport

/// The store's passphrase has
/// its own source (`--store-passin`, `RSAKIT_STORE_PASSIN`) beside the file's (`--passin`),
/// every wrong-passphrase error names the store or the file, a malformed SPEC is never echoed,
/// and only a command that adds an item creates a store, once its input has been read.
final class CLIPassphraseSourceTests: CLITestCase {
    /// A PKCS#12 file (key + self-signed certificate "alice") whose passphrase is `p12-secret`.
    private func makePKCS12() throws -> String {
        _ = try openssl()
        let key = path("alice.key"), certificate = path("alice.pem"), p12 = path("alice.p12")
        _ = try OpenSSL.run([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate,
            "-subj", "/CN=alice", "-days", "30"
        ])
        _ = try OpenSSL.run([
            "pkcs12", "-export", "-inkey", key, "-in", certificate, "-name", "alice",
            "-passout", "pass:p12-secret", "-out", p12
        ])
        return p12
    }

    /// A protected store (passphrase `store-secret`) holding one 1024-bit pair "k".
    private func protectedStore() throws {
        try rsakitOK(["genpair", "--tag", "k", "--bits", "1024"])
        try rsakitOK(["store", "protect", "--kdf", "interactive", "--store-passin", "pass:store-secret"])
    }

    func testIdentityImport_IntoAProtectedStore_TakesEachPassphraseFromItsOwnSource() throws {
        let p12 = try makePKCS12()
        try protectedStore()
        // The one --passin cannot serve both: the error names the store, not the file.
        let one = try rsakit(["identity", "import", p12, "--passin", "pass:p12-secret"])
        assertFailure(one, status: 65, contains: "wrong passphrase for the key store at \(storeDirectory.path)")
        XCTAssertFalse(one.stderr.contains("PKCS#12"), one.stderr)
        // A wrong p12 passphrase names the file.
        let badFile = try rsakit([
            "identity", "import", p12, "--passin", "pass:nope", "--store-passin", "pass:store-secret"
        ])
        assertFailure(badFile, status: 65, contains: "cannot import '\(p12)': wrong passphrase for the PKCS#12 file")
        // Each from its own option, and the store's from RSAKIT_STORE_PASSIN.
        let imported = try rsakitOK([
            "identity", "import", p12, "--passin", "pass:p12-secret", "--store-passin", "pass:store-secret"
        ])
        XCTAssertTrue(imported.stdoutText.hasPrefix("imported identity: alice\n"), imported.stdoutText)
        try rsakitOK(["identity", "delete", "--label", "alice"])
        try rsakitOK(
            ["identity", "import", p12, "--passin", "env:P12_PASS"],
            environment: ["P12_PASS": "p12-secret", "RSAKIT_STORE_PASSIN": "pass:store-secret"])
        XCTAssertTrue(try rsakitOK(["identity", "list"]).stdoutText.hasPrefix("alice  tag: alice"))
        // The imported private key is sealed under the store's passphrase, not the file's.
        let exported = try rsakitOK([
            "identity", "export", "--label", "alice", "--format", "pem", "--store-passin", "pass:store-secret"
        ])
        XCTAssertTrue(exported.stdoutText.hasPrefix("-----BEGIN PRIVATE KEY-----\n"), exported.stdoutText)
        assertFailure(
            try rsakit([
                "identity", "export", "--label", "alice", "--format", "pem", "--store-passin", "pass:p12-secret"
            ]),
            status: 65, contains: "wrong passphrase for the key store at")
    }

    func testStorePassin_OpensTheStore_AndPassinStillServesItAlone() throws {
        try protectedStore()
        _ = try write(Array("to the store\n".utf8), to: "m")
        try rsakitOK(["encrypt", "--tag", "k", "--in", path("m"), "--out", path("c")])
        // --store-passin wins over --passin for the store.
        XCTAssertEqual(
            try rsakitOK([
                "decrypt", "--tag", "k", "--in", path("c"), "--store-passin", "pass:store-secret",
                "--passin", "pass:not-the-store"
            ]).stdoutText, "to the store\n")
        // Without a store source, --passin and RSAKIT_PASSIN still open it (scripts written before the split).
        XCTAssertEqual(
            try rsakitOK(["decrypt", "--tag", "k", "--in", path("c"), "--passin", "pass:store-secret"]).stdoutText,
            "to the store\n")
        XCTAssertEqual(
            try rsakitOK(
                ["decrypt", "--tag", "k", "--in", path("c")],
                environment: ["RSAKIT_PASSIN": "pass:store-secret"]
            ).stdoutText, "to the store\n")
        // RSAKIT_STORE_PASSIN wins over RSAKIT_PASSIN.
        XCTAssertEqual(
            try rsakitOK(
                ["decrypt", "--tag", "k", "--in", path("c")],
                environment: ["RSAKIT_PASSIN": "pass:x", "RSAKIT_STORE_PASSIN": "pass:store-secret"]
            ).stdoutText,
            "to the store\n")
        let wrong = try rsakit(["decrypt", "--tag", "k", "--in", path("c"), "--store-passin", "pass:store-secreT"])
        assertFailure(wrong, status: 65, contains: "wrong passphrase for the key store at \(storeDirectory.path)")
        XCTAssertEqual(wrong.stdout, [])
        // store change-passphrase and unprotect read the old one from --store-passin too.
        try rsakitOK([
            "store", "change-passphrase", "--store-passin", "pass:store-secret", "--new-passin", "pass:second"
        ])
        assertFailure(
            try rsakit(["store", "unprotect", "--store-passin", "pass:store-secret"]), status: 65,
            contains: "wrong passphrase for the key store at")
        try rsakitOK(["store", "unprotect", "--store-passin", "pass:second"])
        XCTAssertTrue(try rsakitOK(["store", "info"]).stdoutText.contains("protected: no"))
    }

    func testMalformedSpec_IsRefusedWithoutShowingItsValue() throws {
        try protectedStore()
        for (option, environment) in [("--passin", [String: String?]()), ("--store-passin", [:])] {
            let result = try rsakit(
                ["export", "--tag", "k", "--private", option, "correct-horse-battery-staple"], environment: environment)
            assertFailure(
                result, status: 64, contains: "\(option) must be pass:TEXT, env:VAR, file:PATH, fd:N or stdin")
            XCTAssertFalse(result.stderr.contains("correct"), result.stderr)
            XCTAssertEqual(result.stdout, [])
        }
        let fromVariable = try rsakit(
            ["export", "--tag", "k", "--private"], environment: ["RSAKIT_STORE_PASSIN": "hunter2hunter2"])
        assertFailure(fromVariable, status: 64, contains: "RSAKIT_STORE_PASSIN must be pass:TEXT")
        XCTAssertFalse(fromVariable.stderr.contains("hunter2"), fromVariable.stderr)
    }

    func testEmptyNewPassphrase_IsAUsageError() throws {
        try rsakitOK(["genpair", "--tag", "k", "--bits", "1024"])
        assertFailure(
            try rsakit(["store", "protect", "--store-passin", "pass:"]), status: 64,
            contains: "the new passphrase for the key store at \(storeDirectory.path) is empty")
        XCTAssertTrue(try rsakitOK(["store", "info"]).stdoutText.contains("protected: no"))
        try rsakitOK(["store", "protect", "--kdf", "interactive", "--store-passin", "pass:a"])
        assertFailure(
            try rsakit(["store", "change-passphrase", "--store-passin", "pass:a", "--new-passin", "pass:"]), status: 64,
            contains: "is empty")
        try rsakitOK(["export", "--tag", "k", "--private", "--store-passin", "pass:a"])
    }

    func testReadOnlyCommands_ReportAMissingStore_AndCreateNothing() throws {
        for command in [
            ["password", "list"], ["password", "find", "--service", "s"],
            ["password", "delete", "--service", "s", "--account", "a"],
            ["cert", "list"], ["cert", "find", "--label", "x"], ["identity", "list"],
            ["identity", "show", "--label", "x"],
            ["store", "info"], ["store", "protect", "--store-passin", "pass:x"], ["list"], ["show", "--tag", "x"]
        ] {
            let result = try rsakit(command)
            assertFailure(result, status: 66, contains: "no key store at \(storeDirectory.path): it does not exist")
            XCTAssertFalse(exists(storeDirectory.path), "\(command) created the store")
        }
        // A mistyped RSAKIT_STORE beside a real store is an error, not an empty listing.
        try rsakitOK(["genpair", "--tag", "k", "--bits", "1024"])
        let typo = workDirectory.appendingPathComponent("stroe").path
        assertFailure(
            try rsakit(["list"], environment: ["RSAKIT_STORE": typo]), status: 66, contains: "no key store at \(typo)")
        XCTAssertFalse(exists(typo))
        // Trust evaluation never creates one either.
        _ = try openssl()
        _ = try OpenSSL.run([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("r.key"), "-out", path("r.pem"),
            "-subj", "/CN=r", "-days", "3"
        ])
        let trust = try rsakit(
            ["trust", "evaluate", path("r.pem"), "--anchor", path("r.pem")], environment: ["RSAKIT_STORE": typo])
        XCTAssertEqual(trust.status, 0, trust.stderr)
        XCTAssertFalse(exists(typo))
    }

    func testAddingCommands_CreateTheStoreOnlyAfterTheirInputIsRead() throws {
        let p12 = try makePKCS12()
        // identity import: missing file, truncated file, wrong passphrase.
        assertFailure(
            try rsakit(["identity", "import", path("missing.p12"), "--passin", "pass:p12-secret"]), status: 66,
            contains: "missing.p12")
        let truncated = try write(Array(try read(p12).prefix(200)), to: "truncated.p12")
        XCTAssertEqual(try rsakit(["identity", "import", truncated, "--passin", "pass:p12-secret"]).status, 65)
        assertFailure(
            try rsakit(["identity", "import", p12, "--passin", "pass:wrong"]), status: 65,
            contains: "wrong passphrase for the PKCS#12 file")
        // cert add of a file that is not a certificate; import of a file that is not a key.
        let junk = try write(Array("not a certificate\n".utf8), to: "junk.pem")
        XCTAssertEqual(try rsakit(["cert", "add", junk]).status, 65)
        XCTAssertEqual(try rsakit(["import", "--tag", "t", junk]).status, 65)
        // password add whose value cannot be read (over the size limit).
        XCTAssertEqual(
            try rsakit(
                ["password", "add", "--service", "s", "--account", "a"],
                stdin: [UInt8](repeating: 0x61, count: 20 * 1024)
            ).status, 65)
        XCTAssertFalse(exists(storeDirectory.path), "a failed command created the store")
        // The same commands with good input create it.
        try rsakitOK(["identity", "import", p12, "--passin", "pass:p12-secret"])
        XCTAssertTrue(exists(storeDirectory.appendingPathComponent("VERSION").path))
    }

    func testPasswordAdd_WithProtect_OnAMissingStore_ReadsPassphraseThenValueFromStdin() throws {
        let added = try rsakitOK(
            [
                "password", "add", "--service", "s", "--account", "a", "--protect", "--kdf", "interactive",
                "--store-passin", "stdin"
            ], stdin: Array("store-secret\nthe value".utf8))
        XCTAssertTrue(added.stdoutText.hasPrefix("added generic password: service: s, account: a"), added.stdoutText)
        XCTAssertTrue(try rsakitOK(["store", "info"]).stdoutText.contains("protected: yes"))
        let value = try rsakitOK([
            "password", "find", "--service", "s", "--account", "a", "--value", "--store-passin", "pass:store-secret"
        ])
        XCTAssertEqual(value.stdoutText, "the value")
    }

    func testGenpair_EscapesTheTagItPrints() throws {
        let generated = try rsakitOK(["genpair", "--tag", "evil\nfingerprint: forged", "--bits", "1024"])
        XCTAssertTrue(
            generated.stdoutText.hasPrefix("tag: evil\\nfingerprint: forged\nbits: 1024\n"), generated.stdoutText)
        XCTAssertEqual(generated.stdoutText.components(separatedBy: "\nfingerprint: ").count, 2, generated.stdoutText)
    }
}
