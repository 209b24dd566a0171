import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
import RSAKitTestSupport
#endif

/// The keychain through the built binary: --passin, store protection, passwords, certificates,
/// list/show/delete of any class.
final class CLIKeychainTests: CLITestCase {
    private func protectedStoreWithPair() throws {
        try rsakitOK(["genpair", "--tag", "com.example.pub", "--bits", "1024"])
        let protect = try rsakit(["store", "protect", "--kdf", "interactive", "--passin", "pass:hunter2"])
        XCTAssertEqual(protect.status, 0, protect.stderr)
    }

    func testProtectedStore_SecretsNeedThePassphraseFromEachSourceAndWrongIsExit65() throws {
        try protectedStoreWithPair()
        let info = try rsakitOK(["store", "info"]).stdoutText
        XCTAssertTrue(info.contains("protected: yes"), info)
        XCTAssertTrue(info.contains("kdf: argon2id (opslimit 2, memlimit 67108864 bytes)"), info)
        // list and encrypting to the public key need no passphrase (no prompt, no source given).
        XCTAssertTrue(try rsakitOK(["list"]).stdoutText.contains("com.example.pub"))
        _ = try write(Array("attack at dawn\n".utf8), to: "m")
        try rsakitOK(["encrypt", "--tag", "com.example.pub", "--in", path("m"), "--out", path("c")])
        // Every passphrase source opens it.
        let passFile = try write(Array("hunter2\nsecond line ignored\n".utf8), to: "passfile")
        for (arguments, environment, stdin) in [
            (["--passin", "pass:hunter2"], [String: String?](), [UInt8]?.none),
            (["--passin", "env:MY_PASS"], ["MY_PASS": "hunter2"], nil),
            (["--passin", "file:" + passFile], [:], nil),
            (["--passin", "stdin"], [:], Array("hunter2\n".utf8)),
            ([], ["RSAKIT_PASSIN": "pass:hunter2"], nil)
        ] {
            let result = try rsakit(
                ["decrypt", "--tag", "com.example.pub", "--in", path("c")] + arguments,
                stdin: stdin, environment: environment)
            XCTAssertEqual(result.status, 0, "\(arguments) \(environment): \(result.stderr)")
            XCTAssertEqual(result.stdoutText, "attack at dawn\n")
        }
        let wrong = try rsakit(["decrypt", "--tag", "com.example.pub", "--in", path("c"), "--passin", "pass:hunter3"])
        assertFailure(wrong, status: 65, contains: "wrong passphrase")
        XCTAssertEqual(wrong.stdout, [])
        assertFailure(
            try rsakit(["decrypt", "--tag", "com.example.pub", "--in", path("c"), "--passin", "bogus"]),
            status: 64, contains: "--passin must be pass:TEXT, env:VAR, file:PATH, fd:N or stdin")
        assertFailure(
            try rsakit(["decrypt", "--tag", "com.example.pub", "--in", path("c"), "--passin", "env:UNSET_VAR_RSAKIT"]),
            status: 64, contains: "UNSET_VAR_RSAKIT is not set")
        // Without any source and without a terminal: a clear error (only checkable when this
        // process has no controlling terminal either, as under CI).
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY)
        if tty < 0 {
            assertFailure(
                try rsakit(["decrypt", "--tag", "com.example.pub", "--in", path("c")]),
                status: 64, contains: "no terminal to ask on")
        } else {
            close(tty)
        }
        // change-passphrase, then unprotect.
        try rsakitOK(["store", "change-passphrase", "--passin", "pass:hunter2", "--new-passin", "pass:n3w"])
        assertFailure(
            try rsakit(["export", "--tag", "com.example.pub", "--private", "--passin", "pass:hunter2"]),
            status: 65, contains: "wrong passphrase")
        try rsakitOK(["store", "unprotect", "--passin", "pass:n3w"])
        XCTAssertTrue(try rsakitOK(["store", "info"]).stdoutText.contains("protected: no"))
        XCTAssertEqual(
            try rsakitOK(["decrypt", "--tag", "com.example.pub", "--in", path("c")]).stdoutText, "attack at dawn\n")
    }

    func testProtectFlag_OnlyOnTheFirstWriteOfANewStore() throws {
        try rsakitOK([
            "genpair", "--tag", "first", "--bits", "1024", "--protect", "--kdf", "interactive", "--passin", "pass:pw"
        ])
        XCTAssertTrue(try rsakitOK(["store", "info"]).stdoutText.contains("protected: yes"))
        let pem = try rsakitOK(["export", "--tag", "first", "--private", "--passin", "pass:pw"]).stdoutText
        XCTAssertTrue(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        // An unprotected store with items is converted with `store protect`, not --protect.
        let other = ["RSAKIT_STORE": path("other")]
        XCTAssertEqual(try rsakit(["genpair", "--tag", "a", "--bits", "1024"], environment: other).status, 0)
        assertFailure(
            try rsakit(
                ["genpair", "--tag", "b", "--bits", "1024", "--protect", "--passin", "pass:x"], environment: other),
            status: 64, contains: "run 'rsakit store protect'")
    }

    func testPassword_AddFindUpdateDeleteWithExactBytesAndExitCodes() throws {
        let value: [UInt8] = Array("s3cr3t".utf8) + [0, 0x0A, 0xFF]
        let added = try rsakitOK(
            ["password", "add", "--service", "com.example.mail", "--account", "romeo", "--label", "Mail"], stdin: value)
        XCTAssertTrue(
            added.stdoutText.hasPrefix("added generic password: service: com.example.mail, account: romeo"),
            added.stdoutText)
        assertFailure(
            try rsakit(["password", "add", "--service", "com.example.mail", "--account", "romeo"], stdin: [1, 2]),
            status: 73, contains: "already exists (use --update to change its value)")
        XCTAssertEqual(
            try rsakitOK(["password", "find", "--service", "com.example.mail", "--account", "romeo", "--value"]).stdout,
            value)
        let found = try rsakitOK(["password", "find", "--service", "com.example.mail"]).stdoutText
        XCTAssertTrue(found.contains("account: romeo\nlabel: Mail\n"), found)
        XCTAssertFalse(found.contains("s3cr3t"), "the value only with --value")
        try rsakitOK(
            ["password", "add", "--service", "com.example.mail", "--account", "romeo", "--update"],
            stdin: Array("new".utf8))
        XCTAssertEqual(
            try rsakitOK(["password", "find", "--service", "com.example.mail", "--account", "romeo", "--value"])
                .stdoutText, "new")
        let list =
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["password", "list", "--json"]).stdout))
            as! [[String: Any]]
        XCTAssertEqual(list.map { $0["account"] as? String }, ["romeo"])
        XCTAssertEqual(list.first?["valueBytes"] as? Int, 3)
        XCTAssertNil(list.first?["value"])
        try rsakitOK(["password", "delete", "--service", "com.example.mail", "--account", "romeo"])
        assertFailure(
            try rsakit(["password", "find", "--service", "com.example.mail", "--account", "romeo"]),
            status: 66, contains: "no generic password for service \"com.example.mail\" and account \"romeo\" found")
        assertFailure(
            try rsakit(["password", "delete", "--service", "com.example.mail", "--account", "romeo"]), status: 66,
            contains: "found")
    }

    /// An empty standard input (a failed command upstream) neither stores nor changes a value,
    /// for both password classes: exit 65, the store as it was, and no store created where
    /// there was none. --allow-empty stores an empty value when asked.
    /// Two tags that differ only in Unicode form (NFC "Café", NFD "Cafe" + U+0301) are two keys,
    /// byte for byte: `list` tells them apart with \u{...} escapes and says why, `list --names`
    /// gives both (for completion), and each is reached by its own bytes.
    func testNFCAndNFDTags_AreShownApart_AndListedByTheirBytes() throws {
        let nfc = "Caf\u{E9}", nfd = "Cafe\u{301}"
        XCTAssertEqual(nfc, nfd, "Swift compares the two forms as equal")
        try rsakitOK(["genpair", "--tag", nfc, "--bits", "2048"])
        try rsakitOK(["genpair", "--tag", nfd, "--bits", "2048"])
        let listing = try rsakitOK(["list"])
        XCTAssertTrue(listing.stdoutText.contains("Caf\\u{E9}\n"), listing.stdoutText)
        XCTAssertTrue(listing.stdoutText.contains("Cafe\\u{301}\n"), listing.stdoutText)
        XCTAssertTrue(listing.stderr.contains("differ only in their Unicode form"), listing.stderr)
        let names = try rsakitOK(["list", "--names", "tag"]).stdout
        XCTAssertEqual(names, Array("Cafe\u{301}\nCaf\u{E9}\n".utf8))
        let nfcKey = try rsakitOK(["export", "--tag", nfc]).stdout
        let nfdKey = try rsakitOK(["export", "--tag", nfd]).stdout
        XCTAssertNotEqual(nfcKey, nfdKey, "each form reaches its own key")
        // Without a look-alike, a non-ASCII tag shows as itself.
        try rsakitOK(["delete", "--tag", nfd])
        let single = try rsakitOK(["list"])
        XCTAssertTrue(single.stdoutText.contains("Caf\u{E9}\n"), single.stdoutText)
        XCTAssertFalse(single.stderr.contains("Unicode form"), single.stderr)
    }

    func testPasswordAdd_EmptyValueIsRefusedUnlessAllowedAndChangesNothing() throws {
        let cases: [(add: [String], find: [String])] = [
            (
                ["password", "add", "--service", "s", "--account", "a"],
                ["password", "find", "--service", "s", "--account", "a", "--value"]
            ),
            (
                ["internet-password", "add", "--url", "https://a@example.com/r"],
                ["internet-password", "find", "--url", "https://a@example.com/r", "--value"]
            )
        ]
        for (add, _) in cases {
            assertFailure(
                try rsakit(add, stdin: []), status: 65,
                contains:
                    "the value on standard input is empty; nothing was stored (give --allow-empty to store an empty "
                    + "value)"
            )
            XCTAssertFalse(FileManager.default.fileExists(atPath: storeDirectory.path), "no store for a refused value")
        }
        for (add, find) in cases {
            try rsakitOK(add, stdin: Array("good".utf8))
            let before = try storeSnapshot()
            assertFailure(try rsakit(add + ["--update"], stdin: []), status: 65, contains: "nothing was stored")
            XCTAssertEqual(try storeSnapshot(), before, "a refused empty value changes nothing")
            XCTAssertEqual(try rsakitOK(find).stdoutText, "good")
            try rsakitOK(add + ["--update", "--allow-empty"], stdin: [])
            XCTAssertEqual(try rsakitOK(find).stdout, [])
        }
    }

    func testPassword_OnAProtectedStoreThePassphraseAndTheValueShareStandardInput() throws {
        try protectedStoreWithPair()
        try rsakitOK(
            ["password", "add", "--service", "svc", "--account", "a", "--passin", "stdin"],
            stdin: Array("hunter2\nthe value".utf8))
        let value = try rsakit([
            "password", "find", "--service", "svc", "--account", "a", "--value", "--passin", "pass:hunter2"
        ])
        XCTAssertEqual(value.stdoutText, "the value", value.stderr)
        // Attributes need no passphrase.
        XCTAssertTrue(
            try rsakitOK(["password", "find", "--service", "svc", "--account", "a"]).stdoutText.contains(
                "value: 9 bytes"))
        let files = FileManager.default.enumerator(atPath: storeDirectory.path)!.allObjects as! [String]
        for name in files {
            let data = FileManager.default.contents(atPath: storeDirectory.path + "/" + name) ?? Data()
            XCTAssertNil(data.range(of: Data("the value".utf8)), name)
            XCTAssertNil(data.range(of: Data("dGhlIHZhbHVl".utf8)), name)  // base64("the value")
        }
    }

    func testCert_AddFindExportDeleteAndItemsOfAnyClassByID() throws {
        // openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -subj "/CN=Romeo Montegue/O=Verona" -days 30 -out
        // cert.pem
        let openssl = OpenSSL.path
        guard let openssl else { throw XCTSkip("openssl CLI not found: certificate CLI test skipped") }
        let made = try runProcess(
            openssl,
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("key.pem"),
                "-subj", "/CN=Romeo Montegue/O=Verona", "-days", "30", "-out", path("cert.pem")
            ])
        XCTAssertEqual(made.status, 0, made.stderr)
        try rsakitOK(["import", "--tag", "com.example.romeo", path("key.pem")])
        let added = try rsakitOK(["cert", "add", path("cert.pem"), "--trust"]).stdoutText
        XCTAssertTrue(added.contains("label: Romeo Montegue"), added)
        XCTAssertTrue(added.contains("identity: private key tag com.example.romeo"), added)
        assertFailure(
            try rsakit(["cert", "add", path("cert.pem")]), status: 73,
            contains: "already exists (use --replace to overwrite it)")
        let der = try runProcess(openssl, ["x509", "-in", path("cert.pem"), "-outform", "DER"]).stdout
        XCTAssertEqual(try rsakitOK(["cert", "export", "--label", "Romeo Montegue", "--der"]).stdout, der)
        let fingerprint = try runProcess(
            openssl, ["x509", "-in", path("cert.pem"), "-noout", "-fingerprint", "-sha256"]
        ).stdoutText
            .split(separator: "=").last!.trimmingCharacters(in: .whitespacesAndNewlines)
        let found = try rsakitOK(["cert", "find", "--fingerprint", fingerprint, "--json"])
        let object = (try JSONSerialization.jsonObject(with: Data(found.stdout)) as! [[String: Any]])[0]
        XCTAssertEqual(object["trust"] as? String, "trusted")
        XCTAssertEqual(object["subject"] as? String, "O=Verona,CN=Romeo Montegue")
        let id = object["itemID"] as! String
        XCTAssertTrue(
            try rsakitOK(["show", "--id", id]).stdoutText.contains("class: certificate\nlabel: Romeo Montegue\n"))
        let all = try rsakitOK(["list"]).stdoutText
        XCTAssertTrue(all.contains("com.example.romeo") && all.contains("trusted"), all)
        XCTAssertEqual(try rsakitOK(["list", "--class", "certificate", "--json"]).stdout.isEmpty, false)
        try rsakitOK(["delete", "--id", id])
        XCTAssertEqual(try rsakitOK(["cert", "list"]).stdoutText, "no certificates in the store\n")
        assertFailure(try rsakit(["show", "--id", id]), status: 66, contains: "no key store item with id")
        assertFailure(
            try rsakit(["cert", "find", "--label", "Romeo Montegue"]), status: 66,
            contains: "no certificate with label \"Romeo Montegue\" found")
        // Passwords have ids too.
        try rsakitOK(["password", "add", "--service", "s", "--account", "a"], stdin: [1])
        let passwordID =
            ((try JSONSerialization.jsonObject(
                with: Data(try rsakitOK(["list", "--class", "password", "--json"]).stdout))
            as! [[String: Any]])[0]["itemID"]) as! String
        XCTAssertTrue(try rsakitOK(["show", "--id", passwordID]).stdoutText.contains("class: generic password"))
        try rsakitOK(["delete", "--id", passwordID])
        XCTAssertEqual(try rsakitOK(["list", "--class", "password"]).stdoutText, "no generic passwords in the store\n")
    }
}
