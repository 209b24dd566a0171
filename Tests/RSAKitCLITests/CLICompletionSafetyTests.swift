import Foundation
import XCTest
import RSAKitTestSupport

/// Stored names are data chosen by whoever made a key file, certificate or PKCS#12 file the
/// user imported. These tests store hostile names and drive the real completion of bash
/// (`_rsakit` through COMP_WORDS), zsh (an interactive zsh on a pseudo-terminal, through
/// zsh's own zpty module, pressing TAB) and fish (`complete -C`). Each checks that nothing a
/// name holds ran (no marker file appeared), and that the word the shell inserts, read back
/// by the shell, is the name itself.
final class CLICompletionSafetyTests: CLITestCase {
    /// Where a name's command substitution would leave a file if anything ran it.
    private var markers: String { path("markers") }

    /// A name for each hazard, with what a user types before pressing TAB to reach it alone.
    private var hostileNames: [(name: String, typed: String)] {
        [
            ("$(touch \(markers)/dollar-paren)", #"\$\("#),
            ("`touch \(markers)/backtick`", #"\`"#),
            ("${HOME:+$(touch \(markers)/brace)}", #"\$\{"#),
            (#"$'\x41' ansi"#, #"\$\'"#),
            ("star*", "star"),
            ("q?", "q"),
            ("[ab]", #"\["#),
            ("it's", "it"),
            ("end'", "end"),
            ("say \"hi\"", "say"),
            ("-leading-dash", "-"),
            ("my key ü 🔑", "my"),
            ("tab\there", "tab"),
            ("ключ", "кл"),
            ("~root", #"\~"#)
        ]
    }

    /// Left out of completion, with what a user types to reach each: a newline would split a
    /// name in two, and an escape sequence would drive the terminal that lists it.
    private let leftOutNames: [(name: String, typed: String)] = [
        ("line1\nline2", "line"), ("esc\u{1B}]0;title\u{7}", "esc")
    ]

    /// Stores every hostile name as a password's service and account, and makes the folder
    /// the shells run in hold files that an unquoted glob would match.
    private func storeHostileNames() throws -> String {
        for name in (hostileNames + leftOutNames).map(\.name) {
            try rsakitOK(["password", "add", "--service", name, "--account", name], stdin: Array("pw".utf8))
        }
        try FileManager.default.createDirectory(atPath: markers, withIntermediateDirectories: true)
        let bait = path("bait")
        try FileManager.default.createDirectory(atPath: bait, withIntermediateDirectories: true)
        for file in ["star-bait", "qX", "a", "b", "it"] {
            _ = FileManager.default.createFile(atPath: bait + "/" + file, contents: nil)
        }
        return bait
    }

    private func assertNothingRan(file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: markers), [], "a stored name ran as a command",
            file: file, line: line)
    }

    private var shellEnvironment: [String: String?] {
        [
            "PATH": Self.productsDirectory.path + ":"
                + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "RSAKIT_STORE": storeDirectory.path, "HOME": path("")
        ]
    }

    private func shell(_ name: String) throws -> String {
        guard let path = TestTools.path(of: name) else {
            throw XCTSkip("\(name) is not installed (scripts/install-deps.sh installs it)")
        }
        return path
    }

    // MARK: bash

    /// Completes `rsakit password find --OPTION TYPED` with bash's `_rsakit` and returns each
    /// reply as the shell reads it back from the command line: readline puts the reply in
    /// place of the word (after an opening quote the user typed, which it then closes unless
    /// the reply ends with that quote character), and
    /// `eval "set -- WORD"` is the shell parsing that line. A reply quoted wrongly would run
    /// its command there, or read back as other words.
    private func bashComplete(option: String = "--service", _ typed: String, in folder: String) throws -> [[String]] {
        let script = try write(Array(try rsakitOK(["completion", "bash"]).stdout), to: "rsakit.bash")
        let program = #"""
            source "$1"; typed=$2; option=$3; cd "$4" || exit 1
            COMP_WORDS=(rsakit password find "$option" "$typed"); COMP_CWORD=4; _rsakit
            for reply in "${COMPREPLY[@]}"; do
                word=$reply
                case $typed in
                "'"*|'"'*) q=${typed:0:1}; word=$q$reply; [[ $reply == *"$q" ]] || word+=$q ;;
                esac
                eval "set -- $word"
                printf '%s\0' "$#" "$@"
                printf '\n'
            done
            """#
        let result = try runProcess(
            try shell("bash"), ["--noprofile", "--norc", "-c", program, "bash", script, typed, option, folder],
            environment: shellEnvironment, useDefaultStore: false)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        // One line per reply: the word count, then the words, each ended by NUL.
        return result.stdoutText.split(separator: "\0\n", omittingEmptySubsequences: true).map { line in
            let fields = line.split(separator: "\0", omittingEmptySubsequences: false).map(String.init)
            XCTAssertEqual(Int(fields[0]), fields.count - 1)
            return Array(fields.dropFirst())
        }
    }

    func testBash_NamesAreNeverExpandedAndReadBackAsStored() throws {
        let bait = try storeHostileNames()
        let expected = hostileNames.map(\.name)
        // Every name at once (nothing typed), for services and for accounts.
        for option in ["--service", "--account"] {
            let all = try bashComplete(option: option, "", in: bait)
            XCTAssertEqual(Set(all.map { $0.joined(separator: "|") }), Set(expected), option)
            XCTAssertTrue(all.allSatisfy { $0.count == 1 }, "each reply reads back as one word: \(all)")
        }
        // Each name alone from what a user types, and from an opened quote.
        for (name, typed) in hostileNames {
            XCTAssertEqual(try bashComplete(typed, in: bait), [[name]], "typed \(typed)")
        }
        XCTAssertEqual(try bashComplete("'my k", in: bait), [["my key ü 🔑"]])
        XCTAssertEqual(try bashComplete("'it", in: bait), [["it's"]])
        XCTAssertEqual(try bashComplete("\"say \\\"h", in: bait), [["say \"hi\""]])
        XCTAssertEqual(try bashComplete("'en", in: bait), [["end'"]])
        XCTAssertEqual(try bashComplete("\"\\$(", in: bait), [["$(touch \(markers)/dollar-paren)"]])
        for (name, typed) in leftOutNames {
            XCTAssertEqual(
                try bashComplete(typed, in: bait), [], "\(name.debugDescription) is left out, not split or printed")
        }
        try assertNothingRan()
    }

    func testBash_KeyTagsAndLabelsFromAHostilePKCS12() throws {
        // The attack as a user meets it: a PKCS#12 whose friendly name is a command.
        let openssl = try openssl()
        let evil = "$(touch \(markers)/p12)"
        try FileManager.default.createDirectory(atPath: markers, withIntermediateDirectories: true)
        _ = try runProcess(
            openssl,
            [
                "req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", path("k.pem"), "-out", path("c.pem"),
                "-subj", "/CN=evil", "-days", "2"
            ])
        let export = try runProcess(
            openssl,
            [
                "pkcs12", "-export", "-inkey", path("k.pem"), "-in", path("c.pem"), "-name", evil,
                "-passout", "pass:x", "-out", path("evil.p12")
            ])
        XCTAssertEqual(export.status, 0, export.stderr)
        try rsakitOK(["identity", "import", path("evil.p12"), "--passin", "pass:x"])
        XCTAssertEqual(try rsakitOK(["list", "--names", "tag"]).stdoutText, evil + "\n")
        XCTAssertEqual(try rsakitOK(["list", "--names", "label"]).stdoutText, evil + "\n")
        let script = try write(Array(try rsakitOK(["completion", "bash"]).stdout), to: "rsakit.bash")
        for words in [["rsakit", "encrypt", "--tag", ""], ["rsakit", "cert", "find", "--label", "\\$"]] {
            let program = #"""
                source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _rsakit
                eval "set -- ${COMPREPLY[0]}"; printf '%s' "$*"
                """#
            let result = try runProcess(
                try shell("bash"), ["--noprofile", "--norc", "-c", program, "bash", script] + words,
                environment: shellEnvironment, useDefaultStore: false)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(result.stdoutText, evil, words.joined(separator: " "))
        }
        try assertNothingRan()
    }

    // MARK: zsh

    /// Types `rsakit password find --service TYPED` in an interactive zsh for each of `typed`,
    /// presses TAB, and runs the completed line with `printf '%s\0'` in place of rsakit: the
    /// words zsh read back from the line the completion left.
    private func zshComplete(_ typed: [String], in folder: String) throws -> [[String]] {
        let zsh = try shell("zsh")
        let functions = path("zfunc")
        try FileManager.default.createDirectory(atPath: functions, withIntermediateDirectories: true)
        _ = try write(Array(try rsakitOK(["completion", "zsh"]).stdout), to: "zfunc/_rsakit")
        let out = path("zsh-out")
        let driver = #"""
            zmodload zsh/zpty || exit 1
            fdir=$1 out=$2 folder=$3; shift 3
            zpty -b z zsh -f -i || exit 1
            zpty -w z "bindkey -e; PS1=''; cd ${(q)folder}; fpath=(${(q)fdir} \$fpath)"
            zpty -w z "autoload -Uz compinit; compinit -u -D"
            n=0
            for typed in "$@"; do
                (( ++n ))
                zpty -w -n z "rsakit password find --service $typed"$'\t'
                zpty -w -n z $'\C-a'"printf '%s\\0' "$'\C-e'" > ${(q)out}.$n"$'\n'
                # Read what the shell echoes as it goes: unread, it fills the terminal and stops it.
                for i in {1..200}; do
                    while zpty -rt z echoed; do :; done
                    [[ -s $out.$n ]] && break
                    sleep 0.05
                done
            done
            zpty -d z
            """#
        let result = try runProcess(
            zsh, ["-f", "-c", driver, "zsh", functions, out, folder] + typed,
            environment: shellEnvironment, useDefaultStore: false)
        XCTAssertEqual(result.status, 0, result.stderr)
        return try typed.indices.map { index in
            let words = String(decoding: try read("\(out).\(index + 1)"), as: UTF8.self)
                .split(separator: "\0", omittingEmptySubsequences: false).dropLast().map(String.init)
            XCTAssertEqual(Array(words.prefix(4)), ["rsakit", "password", "find", "--service"], typed[index])
            return Array(words.dropFirst(4))
        }
    }

    func testZsh_NamesAreNeverExpandedAndReadBackAsStored() throws {
        let bait = try storeHostileNames()
        let typed = (hostileNames + leftOutNames).map(\.typed)
        let completed = try zshComplete(typed, in: bait)
        for ((name, typed), words) in zip(hostileNames, completed) {
            XCTAssertEqual(words, [name], "typed \(typed)")
        }
        XCTAssertEqual(
            Array(completed.suffix(leftOutNames.count)), leftOutNames.map { [$0.typed] },
            "names holding a newline or an escape are left out: what was typed stays")
        try assertNothingRan()
    }

    // MARK: fish

    func testFish_NamesAreNeverExpandedAndOfferedAsStored() throws {
        let fish = try shell("fish")
        let bait = try storeHostileNames()
        let script = try write(Array(try rsakitOK(["completion", "fish"]).stdout), to: "rsakit.fish")
        // fish escapes each candidate itself when it inserts one; what it must be given is the
        // name, unexpanded. A tab ends a fish candidate (the description follows it), so a
        // name holding one is left out, as are those holding a newline or an escape.
        let result = try runProcess(
            fish,
            [
                "--no-config", "-c", "cd $argv[1]; source $argv[2]; complete -C 'rsakit password find --service '",
                bait, script
            ], environment: shellEnvironment, useDefaultStore: false)
        XCTAssertEqual(result.status, 0, result.stderr)
        let candidates = result.stdoutText.split(separator: "\n").map {
            String($0.split(separator: "\t", omittingEmptySubsequences: false)[0])
        }
        XCTAssertEqual(Set(candidates), Set(hostileNames.map(\.name).filter { !$0.contains("\t") }))
        XCTAssertEqual(candidates.count, hostileNames.count - 1)
        try assertNothingRan()
    }
}
