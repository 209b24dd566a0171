import Foundation
import XCTest

/// What a new user ran into: armor after text, half-pairs, combined flags, edge arguments.
final class CLIUsabilityTests: CLITestCase {
    func testArmor_AfterLeadingTextIsFound() throws {
        try rsakitOK(["genpair", "--tag", "mail", "--bits", "1024"])
        let armored = try rsakitOK(["encrypt", "--tag", "mail", "--armor"], stdin: [1, 2, 3, 0, 4]).stdout
        let pasted = Array("Hi,\nhere is the file you asked for:\n\n".utf8) + armored + Array("\nBest regards\n".utf8)
        XCTAssertEqual(try rsakitOK(["decrypt"], stdin: pasted).stdout, [1, 2, 3, 0, 4])
        XCTAssertEqual(try rsakitOK(["decrypt", "--tag", "mail"], stdin: pasted).stdout, [1, 2, 3, 0, 4])
    }

    func testHalfPairs_ExportAndDeleteSayWhatIsMissing() throws {
        try rsakitOK(["genpair", "--tag", "pub-half", "--private-tag", "priv-half", "--bits", "1024"])
        // The private-only tag still exports its public key, in every public format.
        let fromPrivateTag = try rsakitOK(["export", "--tag", "priv-half"]).stdoutText
        XCTAssertEqual(fromPrivateTag, try rsakitOK(["export", "--tag", "pub-half"]).stdoutText)
        assertFailure(
            try rsakit(["export", "--tag", "pub-half", "--private"]), status: 66,
            contains: "the store holds only the public key for tag 'pub-half'")
        assertFailure(
            try rsakit(["delete", "--tag", "priv-half", "--public-only"]), status: 66,
            contains: "no public key with tag \"priv-half\"")
    }

    func testArgumentEdges() throws {
        // No arguments: the usage summary on stderr, exit 64, nothing on stdout.
        let none = try rsakit([])
        XCTAssertEqual(none.status, 64)
        XCTAssertEqual(none.stdout, [])
        XCTAssertTrue(none.stderr.hasPrefix("OVERVIEW: "), none.stderr)
        XCTAssertTrue(none.stderr.contains("SUBCOMMANDS:") && none.stderr.contains("  encrypt "), none.stderr)
        XCTAssertTrue(none.stderr.hasSuffix("rsakit: error: missing command\n"), none.stderr)
        XCTAssertTrue(try rsakitOK(["help", "help"]).stdoutText.contains("SUBCOMMANDS:"))
        assertFailure(try rsakit(["genpair", "--tag", ""]), status: 64, contains: "tag")
        assertFailure(
            try rsakit(["encrypt", "--tag", "x", "--raw", "--armor"]), status: 64,
            contains: "cannot be combined with --raw")
        // Options before the command name: the command line in the right order.
        assertFailure(
            try rsakit(["--store", "/tmp/s", "list"]), status: 64,
            contains: "options come after the command name: rsakit list --store /tmp/s")
        // Both key-size warnings when both apply; genpair names both block payloads.
        let odd = try rsakitOK(["genpair", "--tag", "odd", "--bits", "1028"])
        XCTAssertTrue(odd.stderr.contains("weaker than today's minimum of 2048 bits"), odd.stderr)
        XCTAssertTrue(odd.stderr.contains("1028 bits is not a multiple of 8"), odd.stderr)
        XCTAssertTrue(
            odd.stdoutText.contains(
                "block size: 129 bytes (at most 118 plaintext bytes per raw block, 61 per container block)"),
            odd.stdoutText)
        try rsakitOK(["genpair", "--tag", "dup", "--bits", "1024"])
        assertFailure(try rsakit(["genpair", "--tag", "dup", "--bits", "1024"]), status: 73, contains: "use --replace")
    }

    func testDamagedContainerHeader_IsNotMistakenSilently() throws {
        try rsakitOK(["genpair", "--tag", "hdr", "--bits", "1024"])
        var sealed = try rsakitOK(["encrypt", "--tag", "hdr"], stdin: Array("short note".utf8)).stdout
        sealed[1] ^= 0xFF  // the magic
        assertFailure(
            try rsakit(["decrypt", "--tag", "hdr"], stdin: sealed), status: 65,
            contains: "neither an rsakit container (no magic) nor whole raw blocks")
        // An Apple RSA-OAEP + AES-GCM blob has no magic either: the message names --format.
        let blob = try rsakitOK(
            ["encrypt", "--tag", "hdr", "--format", "apple-aesgcm"], stdin: Array("short note".utf8)
        ).stdout
        let refused = try rsakit(["decrypt", "--tag", "hdr"], stdin: blob)
        assertFailure(refused, status: 65, contains: "nor whole raw blocks")
        XCTAssertTrue(
            refused.stderr.hasSuffix("(an Apple RSA-OAEP + AES-GCM blob needs --format apple-aesgcm)\n"), refused.stderr
        )
        XCTAssertEqual(
            try rsakitOK(["decrypt", "--tag", "hdr", "--format", "apple-aesgcm"], stdin: blob).stdoutText, "short note")
    }

    func testList_ColumnsLineUp() throws {
        try rsakitOK(["genpair", "--tag", "columns", "--bits", "1024"])
        let lines = try rsakitOK(["list"]).stdoutText.split(separator: "\n").map(String.init)
        let header = lines[0]
        let tagColumn = header.distance(from: header.startIndex, to: header.range(of: "TAG")!.lowerBound)
        let fingerprintColumn = header.distance(
            from: header.startIndex, to: header.range(of: "FINGERPRINT")!.lowerBound)
        for row in lines.dropFirst() {
            XCTAssertEqual(row.distance(from: row.startIndex, to: row.range(of: "columns")!.lowerBound), tagColumn, row)
            XCTAssertEqual(
                row.distance(from: row.startIndex, to: row.range(of: "SHA256:")!.lowerBound), fingerprintColumn, row)
        }
    }
}
