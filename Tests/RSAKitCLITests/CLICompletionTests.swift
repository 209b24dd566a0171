import Foundation
import XCTest
import RSAKitTestSupport

/// `rsakit completion bash|zsh|fish` and the hidden `rsakit list --names KIND` they read,
/// run in the real shells: bash's completion function driven through COMP_WORDS, fish's
/// `complete -C`, zsh's parser.
final class CLICompletionTests: CLITestCase {
    /// PATH with the built rsakit first: the scripts run `command rsakit`.
    private var shellEnvironment: [String: String?] {
        ["PATH": Self.productsDirectory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
    }

    /// Run bash's completion function for `words` (the last one is being completed).
    private func bashComplete(_ words: [String]) throws -> [String] {
        let script = try write(Array(try rsakitOK(["completion", "bash"]).stdout), to: "rsakit.bash")
        let array = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let program =
            "source \(script); COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); _rsakit; printf '%s\\n' "
            + "\"${COMPREPLY[@]}\""
        let result = try runProcess(
            try shell("bash"), ["--noprofile", "--norc", "-c", program], environment: shellEnvironment)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        return result.stdoutText.split(separator: "\n").map(String.init)
    }

    private func shell(_ name: String) throws -> String {
        guard let path = TestTools.path(of: name) else {
            throw XCTSkip("\(name) is not installed (scripts/install-deps.sh installs it)")
        }
        return path
    }

    func testBashCompletesCommandsOptionsValuesAndSubcommands() throws {
        XCTAssertEqual(try bashComplete(["rsakit", "enc"]), ["encrypt"])
        XCTAssertEqual(try bashComplete(["rsakit", "help", "g"]), ["genpair", "git-credential"])
        XCTAssertEqual(try bashComplete(["rsakit", "decrypt", "--padding", ""]), ["pkcs1", "oaep"])
        XCTAssertEqual(try bashComplete(["rsakit", "decrypt", "--format", "r"]), ["raw"])
        XCTAssertEqual(try bashComplete(["rsakit", "decrypt", "--implicit-r"]), ["--implicit-rejection"])
        XCTAssertEqual(try bashComplete(["rsakit", "sign", "--hash", "sha51"]), ["sha512", "sha512-224", "sha512-256"])
        XCTAssertEqual(
            try bashComplete(["rsakit", "trust", "evaluate", "--policy", "ssl-"]), ["ssl-server", "ssl-client"])
        XCTAssertEqual(try bashComplete(["rsakit", "cert", "e"]), ["export"])
        XCTAssertEqual(
            try bashComplete(["rsakit", "agent", ""]), ["start", "status", "lock", "unlock", "stop"], "serve is hidden")
        XCTAssertEqual(try bashComplete(["rsakit", "list", "--na"]), [], "--names is hidden")
        // Files for file options: this test's folder holds rsakit.bash.
        XCTAssertEqual(try bashComplete(["rsakit", "encrypt", "--in", path("rsakit.b")]), [path("rsakit.bash")])
    }

    func testBashCompletesTagsServicesAndLabelsFromTheStore() throws {
        try rsakitOK(["genpair", "--tag", "com.example.alpha", "--bits", "1024"])
        _ = try runProcess(
            try openssl(),
            [
                "req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", path("c.key"), "-out", path("c.pem"),
                "-subj", "/CN=alpha", "-days", "2"
            ])
        try rsakitOK(["cert", "add", path("c.pem"), "--label", "Alpha cert"])
        try rsakitOK(["genpair", "--tag", "com.example.beta", "--bits", "1024"])
        try rsakitOK(["password", "add", "--service", "mail.example", "--account", "ann"], stdin: Array("pw".utf8))
        let environment = shellEnvironment.merging(["RSAKIT_STORE": storeDirectory.path]) { $1 }
        XCTAssertEqual(try rsakitOK(["list", "--names", "tag"]).stdoutText, "com.example.alpha\ncom.example.beta\n")
        XCTAssertEqual(try rsakitOK(["list", "--names", "service"]).stdoutText, "mail.example\n")
        XCTAssertEqual(try rsakitOK(["list", "--names", "label"]).stdoutText, "Alpha cert\n")

        func complete(_ words: [String]) throws -> [String] {
            let script = try write(Array(try rsakitOK(["completion", "bash"]).stdout), to: "rsakit.bash")
            let array = words.map { "'\($0)'" }.joined(separator: " ")
            let program =
                "source \(script); COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); _rsakit; printf '%s\\n' "
                + "\"${COMPREPLY[@]}\""
            let result = try runProcess(
                try shell("bash"), ["--noprofile", "--norc", "-c", program], environment: environment,
                useDefaultStore: false)
            XCTAssertEqual(result.status, 0, result.stderr)
            return result.stdoutText.split(separator: "\n").map(String.init)
        }
        XCTAssertEqual(try complete(["rsakit", "encrypt", "--tag", "com.example.a"]), ["com.example.alpha"])
        XCTAssertEqual(try complete(["rsakit", "encrypt", "-t", "com."]), ["com.example.alpha", "com.example.beta"])
        XCTAssertEqual(try complete(["rsakit", "password", "find", "--service", "m"]), ["mail.example"])
        // Quoted as it goes on the command line.
        XCTAssertEqual(try complete(["rsakit", "cert", "find", "--label", "Al"]), ["Alpha\\ cert"])
        XCTAssertEqual(try complete(["rsakit", "encrypt", "--cert-label", "Al"]), ["Alpha\\ cert"])
        // Identities are certificates with their private key: "Alpha cert" has none.
        XCTAssertEqual(try complete(["rsakit", "tls", "connect", "--identity", "Al"]), [])
        XCTAssertEqual(try complete(["rsakit", "identity", "show", "--label", "Al"]), [])
        let other = try runProcess(
            try openssl(),
            [
                "req", "-x509", "-newkey", "rsa:1024", "-nodes", "-keyout", path("o.key"),
                "-out", path("o.pem"), "-subj", "/CN=other", "-days", "2"
            ])
        XCTAssertEqual(other.status, 0, other.stderr)
        let p12 = try runProcess(
            try openssl(),
            [
                "pkcs12", "-export", "-inkey", path("o.key"), "-in", path("o.pem"),
                "-passout", "pass:x", "-out", path("id.p12")
            ])
        XCTAssertEqual(p12.status, 0, p12.stderr)
        try rsakitOK(["identity", "import", path("id.p12"), "--passin", "pass:x", "--label", "Alpha id"])
        XCTAssertEqual(try rsakitOK(["list", "--names", "identity"]).stdoutText, "Alpha id\n")
        XCTAssertEqual(try complete(["rsakit", "tls", "connect", "--identity", "Al"]), ["Alpha\\ id"])
        XCTAssertEqual(try complete(["rsakit", "identity", "export", "--label", "Al"]), ["Alpha\\ id"])
        // A --label that names a new item, or the OAEP label, is free text.
        XCTAssertEqual(try complete(["rsakit", "encrypt", "--label", "Al"]), [])
        XCTAssertEqual(try complete(["rsakit", "genpair", "--label", "Al"]), [])
        // --store on the line wins over RSAKIT_STORE: an empty folder gives nothing.
        let empty = path("no-store-here")
        XCTAssertEqual(try complete(["rsakit", "encrypt", "--store", empty, "--tag", "com."]), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: empty), "completion must not create a store")
    }

    func testNamesListingNeverCreatesOrUnlocksAStore() throws {
        // No store: nothing, status 0, and still no store.
        let listing = try rsakitOK(["list", "--names", "tag"])
        XCTAssertEqual(listing.stdoutText, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: storeDirectory.path))
        assertFailure(
            try rsakit(["list", "--names", "tags"]), status: 64,
            contains: "--names must be one of tag, label, identity, service, account, server")
        // A protected store: names without any passphrase source (none in the environment).
        try rsakitOK(["genpair", "--tag", "locked.key", "--bits", "1024"])
        try rsakitOK(["store", "protect", "--kdf", "interactive", "--passin", "pass:correct horse"])
        let protected = try rsakit(
            ["list", "--names", "tag"], environment: ["RSAKIT_PASSIN": nil, "RSAKIT_STORE_PASSIN": nil])
        XCTAssertEqual(protected.status, 0, protected.stderr)
        XCTAssertEqual(protected.stdoutText, "locked.key\n")
    }

    func testFishCompletesThroughItsOwnEngine() throws {
        let fish = try shell("fish")
        let script = try write(Array(try rsakitOK(["completion", "fish"]).stdout), to: "rsakit.fish")
        try rsakitOK(["genpair", "--tag", "com.example.fish", "--bits", "1024"])
        let environment = shellEnvironment.merging(["RSAKIT_STORE": storeDirectory.path]) { $1 }
        func complete(_ line: String) throws -> [String] {
            let result = try runProcess(
                fish, ["--no-config", "-c", "source \(script); complete -C '\(line)'"], environment: environment,
                useDefaultStore: false)
            XCTAssertEqual(result.status, 0, result.stderr)
            // Each line is "candidate<TAB>description".
            return result.stdoutText.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        XCTAssertTrue(try complete("rsakit enc").contains("encrypt"))
        XCTAssertEqual(try complete("rsakit decrypt --padding "), ["oaep", "pkcs1"])
        XCTAssertEqual(try complete("rsakit encrypt --tag com.example.f"), ["com.example.fish"])
        XCTAssertTrue(try complete("rsakit cert ex").contains("export"))
    }

    func testZshScriptParsesAndDefinesTheFunction() throws {
        let zsh = try shell("zsh")
        let script = try write(Array(try rsakitOK(["completion", "zsh"]).stdout), to: "_rsakit")
        let parse = try runProcess(zsh, ["-n", script])
        XCTAssertEqual(parse.status, 0, parse.stderr)
        // Loaded through compinit from a folder on fpath, the function exists and completes
        // `rsakit` (compdef registered it).
        let folder = path("")
        let program =
            "fpath=(\(folder) $fpath); autoload -Uz compinit; compinit -u -d \(path("zcompdump")); print -r -- "
            + "${_comps[rsakit]}"
        let loaded = try runProcess(zsh, ["-f", "-c", program], environment: shellEnvironment)
        XCTAssertEqual(loaded.status, 0, loaded.stderr)
        XCTAssertEqual(loaded.stdoutText, "_rsakit\n")
    }
}
