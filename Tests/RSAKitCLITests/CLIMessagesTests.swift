import Foundation
import XCTest
import RSAKitTestSupport

/// With the built binary: messages that find the way, exit codes, safe
/// printing, short options, raw empty input, --version.
final class CLIMessagesTests: CLITestCase {
    func testDidYouMean_CommandsOptionsAndTags() throws {
        assertFailure(
            try rsakit(["encrpyt"]), status: 64, contains: "unknown command 'encrpyt'; did you mean 'encrypt'?")
        assertFailure(try rsakit(["help", "lsit"]), status: 64, contains: "did you mean 'list'?")
        assertFailure(
            try rsakit(["encrypt", "--tga", "x"]), status: 64, contains: "unknown option '--tga'; did you mean '--tag'?"
        )
        assertFailure(try rsakit(["decrypt", "--outt", "x"]), status: 64, contains: "did you mean '--out'?")
        // Nothing near: no suggestion.
        let far = try rsakit(["frobnicate"])
        assertFailure(far, status: 64, contains: "unknown command 'frobnicate'")
        XCTAssertFalse(far.stderr.contains("did you mean"), far.stderr)
        try rsakitOK(["genpair", "--tag", "alice", "--bits", "1024"])
        try rsakitOK(["genpair", "--tag", "alicia", "--bits", "1024"])
        assertFailure(
            try rsakit(["encrypt", "--tag", "alcie"], stdin: [1]), status: 66,
            contains: "no key with tag \"alcie\"; did you mean 'alice'?")
        assertFailure(try rsakit(["show", "--tag", "alic"]), status: 66, contains: "did you mean 'alice' or 'alicia'?")
        assertFailure(try rsakit(["delete", "--tag", "bob"]), status: 66, contains: "no key with tag \"bob\"")
    }

    func testShortOptions() throws {
        try rsakitOK(["genpair", "-t", "short", "--bits", "1024"])
        let plain = try write(Array("short options".utf8), to: "plain.txt")
        try rsakitOK(["encrypt", "-t", "short", "-i", plain, "-o", path("sealed.asc"), "-a"])
        XCTAssertTrue(
            String(decoding: try read("sealed.asc"), as: UTF8.self).hasPrefix("-----BEGIN RSAKIT MESSAGE-----"))
        try rsakitOK(["export", "-t", "short", "--private", "-o", path("key.pem")])
        XCTAssertEqual(
            try rsakitOK(["decrypt", "-k", path("key.pem"), "-i", path("sealed.asc")]).stdoutText, "short options")
        XCTAssertEqual(try rsakitOK(["decrypt", "-tshort", "-i", path("sealed.asc")]).stdoutText, "short options")
        let help = try rsakitOK(["encrypt", "--help"]).stdoutText
        for row in ["-o, --out <FILE>", "-i, --in <FILE>", "-a, --armor", "-t, --tag <TAG>", "-k, --key <FILE>"] {
            XCTAssertTrue(help.contains(row), "help shows '\(row)': \(help)")
        }
        // A short option the command does not have is unknown there.
        assertFailure(try rsakit(["list", "-a"]), status: 64, contains: "unknown option '-a'")
    }

    func testImport_ReadsStandardInputWithoutAFile() throws {
        let openssl = try openssl()
        let key = path("k.pem")
        let made = try runProcess(
            openssl, ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", key])
        XCTAssertEqual(made.status, 0, made.stderr)
        let imported = try rsakitOK(["import", "--tag", "from-stdin"], stdin: try read(key))
        XCTAssertTrue(
            imported.stdoutText.hasPrefix("imported key pair: tag: from-stdin, bits: 1024"), imported.stdoutText)
        let viaDash = try rsakitOK(["import", "--tag", "from-dash", "-"], stdin: try read(key))
        XCTAssertTrue(viaDash.stdoutText.contains("fingerprint: "), viaDash.stdoutText)
        assertFailure(
            try rsakit(["import", "--tag", "nothing"], stdin: []), status: 65,
            contains: "cannot load key file 'standard input'")
    }

    func testKeyFilesRsakitCannotUse_SayWhatToDo() throws {
        let openssl = try openssl()
        let key = path("k.pem"), cert = path("cert.pem"), p12 = path("id.p12"), encrypted = path("enc.pem"),
            legacy = path("legacy.pem")
        let steps: [[String]] = [
            ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", key],
            ["req", "-x509", "-new", "-key", key, "-subj", "/CN=rsakit test", "-days", "1", "-out", cert],
            ["pkcs12", "-export", "-in", cert, "-inkey", key, "-passout", "pass:secret", "-out", p12],
            ["pkey", "-in", key, "-aes256", "-passout", "pass:secret", "-out", encrypted],
            ["rsa", "-in", key, "-aes128", "-traditional", "-passout", "pass:secret", "-out", legacy]
        ]
        for step in steps {
            let result = try runProcess(openssl, step)
            XCTAssertEqual(result.status, 0, "openssl \(step.joined(separator: " ")): \(result.stderr)")
        }
        assertFailure(
            try rsakit(["encrypt", "--key", cert], stdin: [1]), status: 65,
            contains: "openssl x509 -pubkey -noout -in CERT")
        let der = path("cert.der")
        XCTAssertEqual(try runProcess(openssl, ["x509", "-in", cert, "-outform", "DER", "-out", der]).status, 0)
        assertFailure(try rsakit(["import", "--tag", "c", der]), status: 65, contains: "this is an X.509 certificate")
        let pkcs12 = try rsakit(["import", "--tag", "p", p12])
        assertFailure(
            pkcs12, status: 65,
            contains:
                "this is a PKCS#12 file (.p12, .pfx), not a key file: import its identity (key, certificate and "
                + "chain) with `rsakit identity import FILE`"
        )
        XCTAssertFalse(pkcs12.stderr.contains("unrecognised structure"), pkcs12.stderr)
        // Encrypted keys are read with --passin; without one (and no terminal) the message
        // names the format and says how to give the passphrase.
        assertFailure(
            try rsakit(["decrypt", "--key", encrypted], stdin: [1]), status: 64,
            contains:
                "key file '\(encrypted)' is encrypted (PKCS#8 EncryptedPrivateKeyInfo); give its passphrase with "
                + "--passin SPEC or RSAKIT_PASSIN"
        )
        assertFailure(
            try rsakit(["decrypt", "--key", legacy], stdin: [1]), status: 64,
            contains:
                "key file '\(legacy)' is encrypted (OpenSSL encrypted PEM key); give its passphrase with --passin "
                + "SPEC or RSAKIT_PASSIN"
        )
        // A source that gives nothing is named, not reported as missing.
        assertFailure(
            try rsakit(
                ["decrypt", "--key", encrypted, "--passin", "env:RSAKIT_TEST_UNSET"], stdin: [1],
                environment: ["RSAKIT_TEST_UNSET": nil]),
            status: 64,
            contains:
                "key file '\(encrypted)' is encrypted (PKCS#8 EncryptedPrivateKeyInfo); passphrase variable "
                + "RSAKIT_TEST_UNSET is not set"
        )
        assertFailure(
            try rsakit(["encrypt", "--key", path("absent.pem")], stdin: [1]), status: 66,
            contains: "cannot read key file '\(path("absent.pem"))': no such file or directory")
    }

    func testPublicTagOfASplitPair_NamesThePrivateTag() throws {
        try rsakitOK(["genpair", "--tag", "pub-t", "--private-tag", "priv-t", "--bits", "1024"])
        let sealed = try rsakitOK(["encrypt", "--tag", "pub-t"], stdin: [1, 2]).stdout
        assertFailure(
            try rsakit(["decrypt", "--tag", "pub-t"], stdin: sealed), status: 66,
            contains: "its private key is stored under tag 'priv-t' (use --tag priv-t)")
    }

    func testReadOnlyCommands_NeverCreateAStore() throws {
        let missing = path("no-store")
        let key = path("k.pem")
        let openssl = try openssl()
        XCTAssertEqual(
            try runProcess(openssl, ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", key])
                .status, 0)
        let sealed = try rsakitOK(["encrypt", "--key", key, "--store", missing], stdin: [3]).stdout
        for arguments in [
            ["encrypt", "--tag", "x"], ["decrypt"], ["decrypt", "--tag", "x"], ["show", "--tag", "x"],
            ["list"], ["list", "--json"], ["export", "--tag", "x"], ["delete", "--tag", "x"]
        ] {
            let result = try rsakit(arguments + ["--store", missing], stdin: sealed)
            assertFailure(result, status: 66, contains: "no key store at \(missing): it does not exist")
            XCTAssertFalse(exists(missing), "\(arguments.joined(separator: " ")) created the store")
        }
        // --key needs no store at all.
        XCTAssertEqual(try rsakitOK(["decrypt", "--key", key, "--store", missing], stdin: sealed).stdout, [3])
        XCTAssertFalse(exists(missing))
    }

    func testUnprotectedStore_ListsEveryPathAndOneChmod() throws {
        try rsakitOK(["genpair", "--tag", "a", "--bits", "1024"])
        try rsakitOK(["genpair", "--tag", "b", "--bits", "1024"])
        let privateFolder = storeDirectory.appendingPathComponent("private").path
        let files = try FileManager.default.subpathsOfDirectory(atPath: privateFolder).filter { $0.hasSuffix(".pem") }
            .map { privateFolder + "/" + $0 }.sorted()
        XCTAssertEqual(files.count, 2)
        for file in files { XCTAssertEqual(chmod(file, 0o644), 0) }
        XCTAssertEqual(chmod(storeDirectory.path, 0o755), 0)
        let result = try rsakit(["list"])
        assertFailure(result, status: 1, contains: "unprotected key store: these 3 paths let group or others read it")
        for p in files + [storeDirectory.path] {
            XCTAssertTrue(result.stderr.contains(p), "names \(p): \(result.stderr)")
        }
        let command = "chmod go-rwx " + ([storeDirectory.path] + files).joined(separator: " ")
        XCTAssertTrue(result.stderr.contains("run '\(command)'"), result.stderr)
        // The one command fixes it.
        XCTAssertEqual(try runProcess("/bin/sh", ["-c", command]).status, 0)
        XCTAssertEqual(try rsakitOK(["list"]).status, 0)
    }

    func testTagsAndLabels_ArePrintedSafely_JSONIsExact() throws {
        let evilTag = "evil\nprivate  2048   SHA256:forged  root\u{1B}[2J"
        let evilLabel = "label\u{1B}]0;pwned\u{07}\r"
        try rsakitOK(["genpair", "--tag", evilTag, "--label", evilLabel, "--bits", "1024"])
        let list = try rsakitOK(["list"]).stdoutText
        XCTAssertFalse(list.contains("\u{1B}") || list.contains("\u{07}") || list.contains("\r"), list)
        XCTAssertEqual(list.split(separator: "\n").count, 3, "header and two rows, no forged row: \(list)")
        XCTAssertTrue(list.contains("evil\\nprivate  2048   SHA256:forged  root\\e[2J"), list)
        XCTAssertTrue(list.contains("(label\\e]0;pwned\\x07\\r)"), list)
        let show = try rsakitOK(["show", "--tag", evilTag]).stdoutText
        XCTAssertFalse(show.contains("\u{1B}"), show)
        XCTAssertTrue(show.contains("tag: evil\\nprivate"), show)
        let json =
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["list", "--json"]).stdout)) as! [[String: Any]]
        XCTAssertEqual(json.map { $0["applicationTag"] as? String }, [evilTag, evilTag])
        XCTAssertEqual(json.map { $0["label"] as? String }, [evilLabel, evilLabel])
    }

    /// Names that come from files (a certificate's subject, a PKCS#12 friendly name) and from
    /// password items reach the terminal escaped in every human-readable output: identity
    /// import, list and show; cert list and show; list; trust evaluate; password add and list.
    func testCertificateIdentityAndPasswordNames_ArePrintedSafely() throws {
        let evilName = "evil\u{1B}]0;pwned\u{07}\nforged row\u{1B}[2J"
        let key = path("evil.key")
        _ = try OpenSSL.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", key])
        let certificate = path("evil.pem")
        _ = try OpenSSL.run([
            "req", "-x509", "-key", key, "-utf8", "-subj", "/CN=cn\u{1B}[31mred\nrow", "-days", "2", "-out", certificate
        ])
        let p12 = path("evil.p12")
        _ = try OpenSSL.run([
            "pkcs12", "-export", "-inkey", key, "-in", certificate, "-name", evilName,
            "-passout", "pass:evil", "-out", p12
        ])
        let outputs = [
            try rsakitOK(["identity", "import", p12, "--tag", "evil.tag", "--passin", "pass:evil"]),
            try rsakitOK(["identity", "list"]),
            try rsakitOK(["identity", "show", "--label", evilName]),
            try rsakitOK(["cert", "list"]),
            try rsakitOK(["cert", "show", certificate]),
            try rsakitOK(["cert", "find", "--label", evilName]),
            try rsakitOK(["list"]),
            try rsakit(["trust", "evaluate", certificate]),
            try rsakitOK(
                ["password", "add", "--service", "svc\u{1B}[2J", "--account", "acct\nrow", "--label", evilName],
                stdin: [1]),
            try rsakitOK(["password", "list"])
        ]
        for output in outputs {
            let text = output.stdoutText + output.stderr
            XCTAssertFalse(
                text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" },
                "a raw control character: \(text.debugDescription)")
            XCTAssertFalse(text.contains("forged row") && !text.contains("\\nforged row"), text)
        }
        let identities = outputs[1].stdoutText
        XCTAssertEqual(identities.split(separator: "\n").count, 1, identities)
        XCTAssertTrue(identities.hasPrefix("evil\\e]0;pwned\\x07\\nforged row\\e[2J  tag: evil.tag"), identities)
        XCTAssertTrue(outputs[0].stdoutText.contains("subject summary: cn\\e[31mred\\nrow\n"), outputs[0].stdoutText)
        XCTAssertEqual(
            outputs[3].stdoutText.split(separator: "\n").count, 2, "header and one row: \(outputs[3].stdoutText)")
        XCTAssertTrue(outputs[4].stdoutText.contains("subject: CN=cn\\e[31mred\\nrow\n"), outputs[4].stdoutText)
        XCTAssertTrue(outputs[7].stdoutText.contains("  0: cn\\e[31mred\\nrow (not after"), outputs[7].stdoutText)
        XCTAssertTrue(outputs[8].stdoutText.contains("service: svc\\e[2J, account: acct\\nrow"), outputs[8].stdoutText)
        // JSON keeps the exact names.
        let json =
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["identity", "list", "--json"]).stdout))
            as! [[String: Any]]
        XCTAssertEqual(json.map { $0["label"] as? String }, [evilName])
        // An error that quotes a name escapes it too.
        let missing = try rsakit(["identity", "show", "--label", "no\u{1B}[2Jsuch"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertFalse(missing.stderr.contains("\u{1B}"), missing.stderr)
        XCTAssertTrue(
            missing.stderr.contains("no\\e[2Jsuch") || missing.stderr.contains("no\\\\e[2Jsuch"), missing.stderr)
    }

    func testListJSON_EmptyStoreIsEmptyArray_ShowGivesBothMaxima() throws {
        try rsakitOK(["genpair", "--tag", "only", "--bits", "1024"])
        let show = try rsakitOK(["show", "--tag", "only"]).stdoutText
        XCTAssertTrue(show.contains("maximum raw block payload: 117 bytes"), show)
        XCTAssertTrue(show.contains("maximum container block payload: 60 bytes"), show)
        let created =
            show.split(separator: "\n").first { $0.hasPrefix("created: ") }.map { String($0.dropFirst(9)) } ?? ""
        let rfc3339 = ISO8601DateFormatter()
        rfc3339.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        XCTAssertNotNil(rfc3339.date(from: created), created)
        try rsakitOK(["delete", "--tag", "only"])
        XCTAssertEqual(try rsakitOK(["list", "--json"]).stdoutText, "[]\n")
        XCTAssertEqual(try rsakitOK(["list"]).stdoutText, "no items in the store\n")
    }

    func testVersion_NamesTheLibraries() throws {
        let lines = try rsakitOK(["--version"]).stdoutText.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines[0].hasPrefix("rsakit "), lines[0])
        guard
            let pkgConfig = ["/usr/bin/pkg-config", "/bin/pkg-config"].first(
                where: FileManager.default.isExecutableFile(atPath:))
        else {
            throw XCTSkip("pkg-config not found: library versions not compared")
        }
        let gmp = try runProcess(pkgConfig, ["--modversion", "gmp"]).stdoutText.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let nettle = try runProcess(pkgConfig, ["--modversion", "nettle"]).stdoutText.trimmingCharacters(
            in: .whitespacesAndNewlines)
        XCTAssertEqual(lines.first { $0.hasPrefix("GMP ") }, "GMP \(gmp)")
        let nettleLine = try XCTUnwrap(lines.first { $0.hasPrefix("Nettle ") })
        XCTAssertTrue(nettle.hasPrefix(String(nettleLine.dropFirst(7))), "\(nettleLine) vs pkg-config \(nettle)")
        let gnutls = try runProcess(pkgConfig, ["--modversion", "gnutls"]).stdoutText.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let sodium = try runProcess(pkgConfig, ["--modversion", "libsodium"]).stdoutText.trimmingCharacters(
            in: .whitespacesAndNewlines)
        XCTAssertEqual(lines.first { $0.hasPrefix("GnuTLS ") }, "GnuTLS \(gnutls)")
        XCTAssertEqual(lines.first { $0.hasPrefix("libsodium ") }, "libsodium \(sodium)")
        let path = try XCTUnwrap(lines.first { $0.hasPrefix("private-key path: ") })
        XCTAssertTrue(path.hasPrefix("private-key path: gmp") || path.hasPrefix("private-key path: ifma"), path)
        XCTAssertEqual(try rsakitOK(["version"]).stdoutText, lines.joined(separator: "\n") + "\n")
    }

    func testKeyGeneration_WarnsBelow2048AndOffByteSizes() throws {
        let small = try rsakitOK(["genpair", "--tag", "small", "--bits", "1024"])
        XCTAssertEqual(small.stderr.split(separator: "\n").count, 1, small.stderr)
        XCTAssertTrue(
            small.stderr.hasPrefix("rsakit: warning: a 1024-bit key is weaker than today's minimum of 2048 bits"),
            small.stderr)
        let odd = try rsakitOK(["genpair", "--tag", "odd", "--bits", "2052"])
        XCTAssertTrue(odd.stderr.hasPrefix("rsakit: warning: 2052 bits is not a multiple of 8"), odd.stderr)
        XCTAssertTrue(odd.stdoutText.contains("bits: 2052"), odd.stdoutText)
        XCTAssertEqual(try rsakitOK(["genpair", "--tag", "fine", "--bits", "2048"]).stderr, "")
    }

    /// Wycheproof rsa_pkcs1_2048_test.json through the CLI: tcId 1 (empty message, valid)
    /// and tcId 32 ("ciphertext is empty", invalid).
    func testRawEmpty_WycheproofCasesThroughTheCLI() throws {
        struct File: Decodable {
            struct Group: Decodable { let privateKeyPem: String; let tests: [Case] }
            struct Case: Decodable {
                let tcId: Int; let comment: String; let msg: String; let ct: String; let result: String
            }
            let testGroups: [Group]
        }
        let folder = try wycheproofFolder(holding: "rsa_pkcs1_2048_test.json", skipping: "raw empty-input cases")
        let file = try JSONDecoder().decode(
            File.self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/rsa_pkcs1_2048_test.json")))
        let group = file.testGroups[0]
        let key = try write(Array(group.privateKeyPem.utf8), to: "wycheproof.pem")
        let emptyMessage = try XCTUnwrap(group.tests.first { $0.msg.isEmpty && $0.result == "valid" })
        let block = try write(hexBytes(emptyMessage.ct), to: "block.bin")
        XCTAssertEqual(
            try rsakitOK(["decrypt", "--raw", "--key", key, "--in", block]).stdout, [], "tcId \(emptyMessage.tcId)")
        let emptyCiphertext = try XCTUnwrap(group.tests.first { $0.comment == "ciphertext is empty" })
        XCTAssertEqual(emptyCiphertext.result, "invalid")
        let empty = try write(hexBytes(emptyCiphertext.ct), to: "empty.bin")
        assertFailure(
            try rsakit(["decrypt", "--raw", "--key", key, "--in", empty]), status: 65, contains: "no ciphertext blocks")
        // And rsakit's own raw encryption of nothing is one block openssl decrypts to nothing.
        let openssl = try openssl()
        let ours = try rsakitOK(["encrypt", "--raw", "--key", key, "--out", path("ours.bin")], stdin: [])
        XCTAssertEqual(ours.stdout, [])
        XCTAssertEqual(try read("ours.bin").count, 256)
        let opened = try runProcess(openssl, ["pkeyutl", "-decrypt", "-inkey", key, "-in", path("ours.bin")])
        XCTAssertEqual(opened.status, 0, opened.stderr)
        XCTAssertEqual(opened.stdout, [])
    }
}
