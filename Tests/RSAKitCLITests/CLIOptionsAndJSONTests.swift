import Foundation
import XCTest
import RSAKitTestSupport

/// Each subcommand takes only its options, `--json` works
/// where an item is printed, and did-you-mean reaches subcommands and labels.
final class CLISubcommandOptionTests: CLITestCase {
    func testOptionsOfOtherSubcommands_AreUsageErrorsNamingOptionAndCommand() throws {
        for (arguments, option, command) in [
            (["password", "find", "--service", "s", "--update"], "--update", "password find"),
            (["password", "find", "--service", "s", "--label", "X"], "--label", "password find"),
            (["password", "add", "--service", "s", "--account", "a", "--value"], "--value", "password add"),
            (["password", "list", "--protect"], "--protect", "password list"),
            (["cert", "list", "--der"], "--der", "cert list"),
            (["cert", "find", "--label", "x", "--trust"], "--trust", "cert find"),
            (["identity", "list", "--tag", "t"], "--tag", "identity list"),
            (["identity", "delete", "--label", "x", "--json"], "--json", "identity delete"),
            (["store", "info", "--kdf", "moderate"], "--kdf", "store info"),
            (["store", "protect", "--json"], "--json", "store protect"),
            // Passphrase sources only where a passphrase is read.
            (["password", "list", "--passin", "pass:x"], "--passin", "password list"),
            (["identity", "list", "--store-passin", "pass:x"], "--store-passin", "identity list"),
            (["store", "info", "--passin", "pass:x"], "--passin", "store info"),
            (["cert", "list", "--passin", "pass:x"], "--passin", "cert list")
        ] {
            let result = try rsakit(arguments, stdin: [])
            assertFailure(result, status: 64, contains: "option '\(option)' does not apply to '\(command)'")
            XCTAssertFalse(exists(storeDirectory.path), "\(arguments) created the store")
        }
        for (arguments, option) in [
            (["list", "--passin", "pass:x"], "--passin"),
            (["show", "--tag", "t", "--store-passin", "pass:x"], "--store-passin"),
            (["trust", "evaluate", "x.pem", "--passin", "pass:x"], "--passin")
        ] {
            assertFailure(try rsakit(arguments), status: 64, contains: "unknown option '\(option)'")
        }
        assertFailure(
            try rsakit(["password", "find", "--service", "s", "--value", "--json"]), status: 64,
            contains: "give --value (the raw value) or --json (the attributes), not both")
    }

    func testUnknownSubcommand_AndLabels_SuggestTheNearestName() throws {
        assertFailure(
            try rsakit(["trust", "evalute", "x.pem"]), status: 64,
            contains: "unknown subcommand 'evalute'; did you mean 'evaluate'?")
        assertFailure(try rsakit(["identity", "lst"]), status: 64, contains: "did you mean 'list'?")
        _ = try openssl()
        _ = try OpenSSL.run([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("alice.key"), "-out", path("alice.pem"),
            "-subj", "/CN=alice", "-days", "30"
        ])
        try rsakitOK(["import", "--tag", "alice", path("alice.key")])
        try rsakitOK(["cert", "add", path("alice.pem"), "--label", "alice"])
        assertFailure(
            try rsakit(["identity", "show", "--label", "alce"]), status: 66,
            contains: "no identity with label \"alce\" found; did you mean 'alice'?")
        assertFailure(
            try rsakit(["cert", "find", "--label", "alcie"]), status: 66,
            contains: "no certificate with label \"alcie\" found; did you mean 'alice'?")
        assertFailure(try rsakit(["show", "--tag", "alce"]), status: 66, contains: "did you mean 'alice'?")
        // identity show --json: the same object identity list --json prints.
        let shown =
            try JSONSerialization.jsonObject(
                with: Data(try rsakitOK(["identity", "show", "--label", "alice", "--json"]).stdout)) as! [String: Any]
        let listed =
            try JSONSerialization.jsonObject(with: Data(try rsakitOK(["identity", "list", "--json"]).stdout))
            as! [[String: Any]]
        XCTAssertEqual(shown["label"] as? String, "alice")
        XCTAssertEqual(shown["privateKeyTag"] as? String, "alice")
        XCTAssertEqual(NSDictionary(dictionary: shown), NSDictionary(dictionary: listed[0]))
        // password add --json: the stored item's attributes, never the value.
        let added = try rsakitOK(
            ["password", "add", "--service", "svc", "--account", "acct", "--json"], stdin: Array("s3cret".utf8))
        let object = try JSONSerialization.jsonObject(with: Data(added.stdout)) as! [String: Any]
        XCTAssertEqual(object["service"] as? String, "svc")
        XCTAssertEqual(object["valueBytes"] as? Int, 6)
        XCTAssertFalse(added.stdoutText.contains("s3cret"))
    }
}

/// Key, certificate, identity and password items, and a
/// certificate file, name the same things the same way (the JSON table of docs/scripting.md), and every
/// fingerprint is 64 lower-case hex digits, every date RFC 3339 with milliseconds.
final class CLIJSONVocabularyTests: CLITestCase {
    private static let hex64 = try! NSRegularExpression(pattern: "^[0-9a-f]{64}$")
    private static let date = try! NSRegularExpression(pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$")

    private func matches(_ pattern: NSRegularExpression, _ value: Any?) -> Bool {
        guard let text = value as? String else { return false }
        return pattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    private func json(_ arguments: [String], stdin: [UInt8]? = nil) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(try rsakitOK(arguments + ["--json"], stdin: stdin).stdout))
    }

    func testEveryCommand_UsesTheSameNamesAndEncodings() throws {
        _ = try openssl()
        _ = try OpenSSL.run([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("alice.key"), "-out", path("alice.pem"),
            "-subj", "/CN=alice", "-days", "30"
        ])
        try rsakitOK(["import", "--tag", "alice", path("alice.key")])
        try rsakitOK(["cert", "add", path("alice.pem"), "--label", "alice"])
        try rsakitOK(["password", "add", "--service", "svc", "--account", "acct"], stdin: [1, 2, 3])
        let keys = try json(["show", "--tag", "alice"]) as! [[String: Any]]
        XCTAssertEqual(Set(keys.compactMap { $0["keyClass"] as? String }), ["public", "private"])
        let key = keys[0]
        let certificateItem = (try json(["cert", "find", "--label", "alice"]) as! [[String: Any]])[0]
        let certificateFile = (try json(["cert", "show", path("alice.pem")]) as! [[String: Any]])[0]
        let identity = try json(["identity", "show", "--label", "alice"]) as! [String: Any]
        let password = (try json(["password", "list"]) as! [[String: Any]])[0]

        XCTAssertEqual(key["class"] as? String, "key")
        XCTAssertEqual(certificateItem["class"] as? String, "certificate")
        XCTAssertEqual(identity["class"] as? String, "identity")
        XCTAssertEqual(password["class"] as? String, "genericPassword")
        XCTAssertEqual(key["applicationTag"] as? String, "alice")
        XCTAssertEqual(password["service"] as? String, "svc")
        XCTAssertEqual(password["account"] as? String, "acct")
        // The same certificate: same names, same values, file and item alike.
        for name in [
            "subject", "issuer", "serialNumber", "notValidBefore", "notValidAfter", "fingerprint",
            "publicKeyFingerprint"
        ] {
            XCTAssertNotNil(certificateItem[name], name)
            XCTAssertEqual(certificateItem[name] as? String, certificateFile[name] as? String, name)
            XCTAssertEqual(certificateItem[name] as? String, identity[name] as? String, name)
        }
        // The key's fingerprint is the certificate's public key fingerprint (SHA-256 of the SPKI).
        XCTAssertEqual(key["fingerprint"] as? String, certificateItem["publicKeyFingerprint"] as? String)
        for (object, name) in [
            (key, "fingerprint"), (certificateItem, "fingerprint"), (certificateItem, "publicKeyFingerprint"),
            (certificateFile, "fingerprint"), (identity, "publicKeyFingerprint")
        ] {
            XCTAssertTrue(matches(Self.hex64, object[name]), "\(name): \(String(describing: object[name]))")
        }
        for (object, name) in [
            (key, "creationDate"), (certificateItem, "creationDate"), (certificateItem, "notValidAfter"),
            (certificateFile, "notValidBefore"), (password, "creationDate"), (password, "modificationDate")
        ] {
            XCTAssertTrue(matches(Self.date, object[name]), "\(name): \(String(describing: object[name]))")
        }
        // The names replaced by the vocabulary are gone.
        for old in [
            "created", "modified", "notAfter", "notBefore", "serial", "fingerprintHex", "fingerprintBase64",
            "publicKeyBits"
        ] {
            for object in [key, certificateItem, certificateFile, identity, password] { XCTAssertNil(object[old], old) }
        }
        XCTAssertEqual(certificateFile["keySizeInBits"] as? Int, 2048)
    }
}
