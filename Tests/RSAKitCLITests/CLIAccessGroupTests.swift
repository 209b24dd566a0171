import Foundation
import XCTest

/// `--access-group` through the built binary: adding, finding, listing and deleting per group,
/// the refusal (exit 77), mistyped names (exit 64), the group in list, show and JSON.
final class CLIAccessGroupTests: CLITestCase {
    func testKeysAndPasswords_PerGroupWithRefusalAndJSON() throws {
        try rsakitOK(["genpair", "--tag", "k.mail", "--bits", "1024", "--access-group", "com.example.mail"])
        try rsakitOK(["genpair", "--tag", "k.plain", "--bits", "1024"])
        try rsakitOK(
            ["password", "add", "--service", "imap", "--account", "romeo", "--access-group", "com.example.mail"],
            stdin: Array("pw".utf8))
        // Listing with a group shows only its items; without, every item, grouped ones marked.
        let mailOnly = try rsakitOK(["list", "--access-group", "com.example.mail"]).stdoutText
        XCTAssertTrue(mailOnly.contains("k.mail  [group: com.example.mail]"), mailOnly)
        XCTAssertFalse(mailOnly.contains("k.plain"), mailOnly)
        let all = try rsakitOK(["list"]).stdoutText
        XCTAssertTrue(all.contains("k.plain\n"), all)
        XCTAssertTrue(all.contains("password imap / romeo  [group: com.example.mail]"), all)
        // Repeatable: two groups see both.
        let both = try rsakitOK([
            "list", "--class", "key", "--access-group", "default", "--access-group", "com.example.mail"
        ]).stdoutText
        XCTAssertTrue(both.contains("k.plain") && both.contains("k.mail"), both)
        // JSON carries the group of every item, "default" for items added without one.
        let json = Data(try rsakitOK(["list", "--json"]).stdoutText.utf8)
        let items = try XCTUnwrap(try JSONSerialization.jsonObject(with: json) as? [[String: Any]])
        var groups: [String: String] = [:]
        for item in items {
            let name = (item["applicationTag"] as? String) ?? (item["service"] as? String) ?? ""
            groups[name] = item["accessGroup"] as? String
        }
        XCTAssertEqual(groups["k.mail"], "com.example.mail")
        XCTAssertEqual(groups["k.plain"], "default")
        XCTAssertEqual(groups["imap"], "com.example.mail")
        XCTAssertTrue(try rsakitOK(["show", "--tag", "k.mail"]).stdoutText.contains("access group: com.example.mail"))
        // Another group does not find it by name (66: the name in that group is another item)
        // and may not delete it by id (77); nothing changes.
        let before = try storeSnapshot()
        assertFailure(
            try rsakit(["show", "--tag", "k.mail", "--access-group", "com.example.web"]), status: 66, contains: "k.mail"
        )
        assertFailure(
            try rsakit(["delete", "--tag", "k.mail", "--access-group", "com.example.web"]), status: 66,
            contains: "k.mail")
        let id = try XCTUnwrap(items.first { ($0["applicationTag"] as? String) == "k.mail" }?["itemID"] as? String)
        assertFailure(
            try rsakit(["delete", "--id", id, "--access-group", "com.example.web"]), status: 77,
            contains: "access group \"com.example.mail\" is not one this store was opened with (\"com.example.web\")")
        assertFailure(
            try rsakit(["password", "delete", "--service", "imap", "--account", "romeo", "--access-group", "default"]),
            status: 66, contains: "imap")
        XCTAssertEqual(try storeSnapshot(), before)
        // Its own group deletes it.
        try rsakitOK(["delete", "--tag", "k.mail", "--access-group", "com.example.mail"])
        XCTAssertFalse(try rsakitOK(["list"]).stdoutText.contains("k.mail"))
    }

    func testSameNamesInTwoGroups_AmbiguousWithoutAGroup_ListedWithTheirGroups() throws {
        for group in ["com.example.mail", "default"] {
            try rsakitOK(["genpair", "--tag", "k", "--bits", "1024", "--access-group", group])
            try rsakitOK(
                ["password", "add", "--service", "imap", "--account", "romeo", "--access-group", group],
                stdin: Array("pw-\(group)".utf8))
        }
        assertFailure(
            try rsakit(["genpair", "--tag", "k", "--bits", "1024", "--access-group", "com.example.mail"]), status: 73,
            contains: "k")
        let listed = try rsakitOK(["list", "--class", "key"]).stdoutText
        XCTAssertEqual(listed.components(separatedBy: "k  [group: com.example.mail]").count - 1, 2, listed)
        XCTAssertEqual(listed.components(separatedBy: "k\n").count - 1, 2, listed)
        // Without a group the name is ambiguous (64), naming the groups and the way out.
        let before = try storeSnapshot()
        assertFailure(
            try rsakit(["delete", "--tag", "k"]), status: 64,
            contains:
                "exists in several access groups (\"com.example.mail\", \"default\"); name the group with "
                + "--access-group"
        )
        assertFailure(
            try rsakit(["password", "find", "--service", "imap", "--account", "romeo", "--value"]), status: 64,
            contains: "several access groups")
        XCTAssertEqual(try storeSnapshot(), before)
        // With a group, that group's copy; groups in order, the first holding the name wins.
        XCTAssertEqual(
            try rsakitOK([
                "password", "find", "--service", "imap", "--account", "romeo", "--value",
                "--access-group", "com.example.mail", "--access-group", "default"
            ]).stdoutText, "pw-com.example.mail")
        XCTAssertEqual(
            try rsakitOK([
                "password", "find", "--service", "imap", "--account", "romeo", "--value",
                "--access-group", "default", "--access-group", "com.example.mail"
            ]).stdoutText, "pw-default")
        try rsakitOK(["delete", "--tag", "k", "--access-group", "com.example.mail"])
        XCTAssertTrue(try rsakitOK(["show", "--tag", "k"]).stdoutText.contains("access group: default"))
    }

    func testMistypedOrPathLikeGroupIsAUsageErrorAndCreatesNothing() throws {
        for bad in ["../etc", "a/b", "com..example", ""] {
            let result = try rsakit(["genpair", "--tag", "k", "--bits", "1024", "--access-group", bad])
            XCTAssertEqual(result.status, 64, "\(bad): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("access group"), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: storeDirectory.path + "/VERSION"))
    }
}
