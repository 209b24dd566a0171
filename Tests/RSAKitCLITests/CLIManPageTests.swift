import Foundation
import XCTest
import RSAKitTestSupport

/// The manual pages (`rsakit help --man-pages DIR`): one per command plus rsakit(1), the same
/// options as `rsakit help COMMAND` (they are rendered from the same specs; this catches a
/// renderer that drops or mangles one), and clean under `groff -ww`.
final class CLIManPageTests: CLITestCase {
    /// The command names `rsakit help` lists.
    private func commandNames() throws -> [String] {
        let help = try rsakitOK(["help"]).stdoutText
        let section = help.components(separatedBy: "SUBCOMMANDS:\n")[1]
        return section.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("  "), let name = line.split(separator: " ").first, name != "help" else { return nil }
            return String(name)
        }
    }

    func testEveryCommandHasAPageWithEveryOptionOfItsHelp() throws {
        let folder = path("man")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try rsakitOK(["help", "--man-pages", folder])
        let names = try commandNames()
        XCTAssertGreaterThanOrEqual(names.count, 20)
        let pages = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        XCTAssertEqual(pages, (["rsakit.1"] + names.map { "rsakit-\($0).1" }).sorted())
        let overview = try String(contentsOfFile: folder + "/rsakit.1", encoding: .utf8)
        for name in names {
            let page = try String(contentsOfFile: folder + "/rsakit-\(name).1", encoding: .utf8)
            let help = try rsakitOK(["help", name]).stdoutText
            // Every option row of the help ("  --name" or "  -x, --name") is in the page.
            let options = help.components(separatedBy: "OPTIONS:\n")[1].split(separator: "\n")
                .filter { $0.hasPrefix("  --") || ($0.hasPrefix("  -") && $0.dropFirst(4).hasPrefix(", --")) }
                .compactMap { line in
                    line.range(of: "--[a-z0-9.-]+", options: .regularExpression).map { String(line[$0]) }
                }
            XCTAssertFalse(options.isEmpty, name)
            for option in options {
                XCTAssertTrue(
                    page.contains("\\fB" + option.replacingOccurrences(of: "-", with: "\\-") + "\\fR"),
                    "\(name): \(option) missing from the page")
            }
            let usage = help.components(separatedBy: "USAGE: ")[1].components(separatedBy: "\n")[0]
            XCTAssertTrue(
                page.contains(usage.replacingOccurrences(of: "-", with: "\\-")),
                "\(name): the synopsis is not the help's usage")
            XCTAssertTrue(
                overview.contains(".BR rsakit\\-\(name.replacingOccurrences(of: "-", with: "\\-")) (1)"), name)
        }
        XCTAssertFalse(try rsakitOK(["help", "list"]).stdoutText.contains("--names"), "hidden options stay out of help")
        for section in ["ENVIRONMENT", "FILES", "EXIT STATUS", "SECURITY NOTES", "EXAMPLES"] {
            XCTAssertTrue(overview.contains(".SH \(section)\n"), section)
        }
        XCTAssertTrue(overview.contains("RSAKIT_STORE"))

        // groff in warning-everything mode: no output at all.
        guard let groff = TestTools.path(of: "groff") else {
            throw XCTSkip("groff is not installed (scripts/install-deps.sh installs groff-base)")
        }
        for page in pages {
            let check = try runProcess(groff, ["-man", "-ww", "-z", folder + "/" + page])
            XCTAssertEqual(check.status, 0, page)
            XCTAssertEqual(check.stderr, "", page)
        }
        // And man renders the overview with its sections.
        if let man = TestTools.path(of: "man") {
            let rendered = try runProcess(
                man, ["-l", folder + "/rsakit.1"], environment: ["MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80"])
            XCTAssertEqual(rendered.status, 0, rendered.stderr)
            XCTAssertTrue(rendered.stdoutText.contains("EXIT STATUS"))
        }
    }

    /// The version is defined once (RSAKitCommandLine.version): --version, the man pages'
    /// footer and CHANGELOG.md's newest release section must all say it.
    func testVersionIsTheSameInTheBinaryTheManualAndTheChangelog() throws {
        let version = try XCTUnwrap(
            try rsakitOK(["--version"]).stdoutText.split(separator: "\n").first?
                .split(separator: " ").last.map(String.init))
        XCTAssertNotNil(version.range(of: #"^[0-9]+\.[0-9]+\.[0-9]+$"#, options: .regularExpression), version)
        let changelogPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("CHANGELOG.md").path
        let changelog = try String(contentsOfFile: changelogPath, encoding: .utf8)
        let releases = changelog.split(separator: "\n").filter {
            $0.hasPrefix("## [") && !$0.hasPrefix("## [Unreleased]")
        }
        XCTAssertTrue(
            releases.first?.hasPrefix("## [\(version)] - ") ?? false,
            "newest release in CHANGELOG.md: \(releases.first ?? "none")")
        let folder = path("man")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try rsakitOK(["help", "--man-pages", folder])
        XCTAssertTrue(
            try String(contentsOfFile: folder + "/rsakit.1", encoding: .utf8).contains("\"rsakit \(version)\""))
        // Every `from: "X.Y.Z"` a reader copies (README.md, docs/library.md, the DocC catalog) names this version,
        // and Examples/ is built by scripts/examples.sh against a clone tagged with it.
        let root = URL(fileURLWithPath: changelogPath).deletingLastPathComponent()
        for file in ["README.md", "docs/library.md", "Sources/RSAKit/RSAKit.docc/GettingStarted.md"] {
            let text = try String(contentsOfFile: root.appendingPathComponent(file).path, encoding: .utf8)
            let pinned = text.split(separator: "\n").filter { $0.contains("upToNextMinor(from: \"") }
            XCTAssertFalse(pinned.isEmpty, "\(file) shows no dependency line")
            for line in pinned {
                XCTAssertTrue(line.contains("from: \"\(version)\""), "\(file): \(line)")
            }
        }
        let examples = try String(
            contentsOfFile: root.appendingPathComponent("scripts/examples.sh").path, encoding: .utf8)
        XCTAssertTrue(
            examples.contains("RSAKitCommandLine.swift)"),
            "examples.sh no longer reads the version from RSAKitCommandLine")
    }
}
