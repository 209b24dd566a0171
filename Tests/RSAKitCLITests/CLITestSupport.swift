import Foundation
import XCTest
import RSAKitTestSupport

/// Runs the built `rsakit` binary with real files and a temporary store per test.
class CLITestCase: XCTestCase {
    struct Result {
        let status: Int32
        let stdout: [UInt8]
        let stderr: String
        var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The folder holding the built products (rsakit sits beside the test bundle).
    static let productsDirectory: URL = {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        #endif
        return Bundle.main.bundleURL
    }()

    static var binary: URL { productsDirectory.appendingPathComponent("rsakit") }

    /// A fresh folder per test, removed afterwards.
    var workDirectory: URL!
    /// The store folder for this test (not created until rsakit creates it).
    var storeDirectory: URL { workDirectory.appendingPathComponent("store") }

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw XCTSkip("rsakit binary not built at \(Self.binary.path); run `swift build` first")
        }
        workDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("rsakit-cli-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let workDirectory { try? FileManager.default.removeItem(at: workDirectory) }
    }

    func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    func write(_ bytes: [UInt8], to name: String) throws -> String {
        let p = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        return p
    }

    func read(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: name.hasPrefix("/") ? name : path(name))))
    }

    func exists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: name.hasPrefix("/") ? name : path(name))
    }

    /// Run an executable with `arguments` to its end (``ChildProcess/run``, bounded by
    /// ``ChildProcess/defaultTimeout``); stdin from `stdinFile` or the given bytes.
    /// `environment` replaces variables (nil removes one); `RSAKIT_STORE` points at this
    /// test's store unless `useDefaultStore` is false. `status` is the exit status, or
    /// 128 + the signal number for a child killed by a signal.
    func runProcess(
        _ executable: String, _ arguments: [String], stdin: [UInt8]? = nil, stdinFile: String? = nil,
        environment: [String: String?] = [:], useDefaultStore: Bool = true
    ) throws -> Result {
        let run = try ChildProcess.run(
            [executable] + arguments, stdin: stdin ?? (stdinFile == nil ? [] : nil),
            stdinFile: stdinFile, environment: childEnvironment(environment, useDefaultStore: useDefaultStore))
        return Result(status: run.status, stdout: run.stdout, stderr: run.stderr)
    }

    /// The parent's environment with `RSAKIT_STORE` set to this test's store (unless
    /// `useDefaultStore` is false) and `changes` applied (nil removes a variable).
    func childEnvironment(_ changes: [String: String?] = [:], useDefaultStore: Bool = true) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        if useDefaultStore { env["RSAKIT_STORE"] = storeDirectory.path }
        for (name, value) in changes { env[name] = value }
        return env
    }

    /// Run rsakit.
    @discardableResult
    func rsakit(
        _ arguments: [String], stdin: [UInt8]? = nil, stdinFile: String? = nil,
        environment: [String: String?] = [:], useDefaultStore: Bool = true
    ) throws -> Result {
        try runProcess(
            Self.binary.path, arguments, stdin: stdin, stdinFile: stdinFile,
            environment: environment, useDefaultStore: useDefaultStore)
    }

    /// Run rsakit and require success.
    @discardableResult
    func rsakitOK(
        _ arguments: [String], stdin: [UInt8]? = nil, stdinFile: String? = nil, environment: [String: String?] = [:],
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> Result {
        let result = try rsakit(arguments, stdin: stdin, stdinFile: stdinFile, environment: environment)
        XCTAssertEqual(
            result.status, 0, "rsakit \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    /// The contents of every file under this test's store, by relative path: compared
    /// before and after a command that must fail without changing the store.
    func storeSnapshot() throws -> [String: Data] {
        var snapshot: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: storeDirectory.path)
        while let relative = enumerator?.nextObject() as? String {
            let full = storeDirectory.appendingPathComponent(relative).path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                snapshot[relative] = try Data(contentsOf: URL(fileURLWithPath: full))
            }
        }
        return snapshot
    }

    /// Assert a failure: exit status, exactly one stderr line starting `rsakit: error: `
    /// and containing `message`, and nothing at `absentPath` if given.
    func assertFailure(
        _ result: Result, status: Int32, contains message: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(result.status, status, "stderr: \(result.stderr)", file: file, line: line)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: true)
        XCTAssertEqual(lines.count, 1, "one stderr line expected: \(result.stderr)", file: file, line: line)
        XCTAssertTrue(result.stderr.hasPrefix("rsakit: error: "), result.stderr, file: file, line: line)
        XCTAssertTrue(
            result.stderr.contains(message), "expected '\(message)' in: \(result.stderr)", file: file, line: line)
    }

    /// The folder of Wycheproof's JSON files (`testvectors_v1` under `RSAKIT_VECTORS`, or
    /// `../shared/vectors/wycheproof` beside the project) holding `file`, or a visible skip
    /// naming the `cases` that are not run.
    func wycheproofFolder(holding file: String, skipping cases: String) throws -> String {
        var folders: [String] = []
        if let env = ProcessInfo.processInfo.environment["RSAKIT_VECTORS"], !env.isEmpty {
            folders = [env + "/testvectors_v1", env]
        } else {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            folders = [
                root.deletingLastPathComponent().appendingPathComponent("shared/vectors/wycheproof/testvectors_v1").path
            ]
        }
        guard let folder = folders.first(where: { FileManager.default.fileExists(atPath: $0 + "/" + file) }) else {
            throw XCTSkip("WYCHEPROOF VECTORS NOT FOUND: set RSAKIT_VECTORS; \(cases) NOT RUN")
        }
        return folder
    }

    /// The bytes of lower-case or upper-case hex text (Wycheproof's fields).
    func hexBytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    /// `openssl` path, or a visible skip.
    func openssl() throws -> String { try OpenSSL.require() }

    /// Deterministic pseudo-random bytes with NULs (not secret; file contents for tests).
    func testBytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 32) & (state & 7 == 0 ? 0 : 0xFF)
        }
    }
}

// MARK: Mutual TLS against openssl s_server

extension CLITestCase {
    /// `openssl s_server -Verify 1 -verify_return_error -CAfile ca.pem ... -www` on
    /// 127.0.0.1, run in this test's folder: a client certificate from the test CA is required.
    /// `extra` follows the other arguments. The caller stops the server (in its tearDown).
    func startMutualTLSServer(_ pki: TLSTestPKI, openssl: String, extra: [String] = []) throws -> TLSTestServer {
        try TLSTestServer(
            openssl: openssl,
            arguments: [
                "-Verify", "1", "-verify_return_error", "-CAfile", pki.path("ca.pem"),
                "-cert", pki.path("srv.pem"), "-cert_chain", pki.path("int.pem"), "-key", pki.path("srv.key"), "-www"
            ] + extra,
            directory: workDirectory.path)
    }

    /// `rsakit tls connect 127.0.0.1:PORT --timeout 20 OPTIONS` under `timeout -k 5 60`,
    /// sending an HTTP/1.0 request; `environment` as ``runProcess(_:_:stdin:stdinFile:environment:useDefaultStore:)``.
    func connectTLS(_ server: TLSTestServer, _ options: [String], environment: [String: String?]) throws -> Result {
        try runProcess(
            "/usr/bin/timeout",
            [
                "-k", "5", "60", Self.binary.path, "tls", "connect", "127.0.0.1:\(server.port)",
                "--timeout", "20"
            ] + options,
            stdin: Array("GET / HTTP/1.0\r\n\r\n".utf8), environment: environment)
    }
}

// MARK: The system keychain with real Unix users

/// A system keychain served by a real agent, for the tests with real Unix users (root only;
/// ``UnixUsersFixture`` skips otherwise): the agent's user (`rks` + suffix), the store and the
/// socket in folders that user owns, as systemd's StateDirectory= and RuntimeDirectory= make
/// them, and `rsakit` run as any made user, or root, against that socket.
final class SystemKeychainFixture {
    /// The Unix users and groups, and the copy of `rsakit` they run.
    let users: UnixUsersFixture
    /// The user the agent runs as, who owns the store.
    let owner: String
    /// The store (`state/system`), made by the agent.
    let store: String
    /// The agent's socket (`run/system.sock`).
    let socket: String
    /// What every child gets: a plain PATH, no home, and RSAKIT_SYSTEM_SOCKET naming ``socket``.
    let environment: [String: String]
    /// The agent, once ``startAgent(file:line:)`` started it.
    private(set) var agent: ChildProcess.Captured?

    /// Make the users fixture, the agent's user and the two 0755 folders it owns.
    /// - Throws: `XCTSkip` when not root or a user tool is missing or fails (nothing is left).
    init(binary: URL) throws {
        users = try UnixUsersFixture(binary: binary)
        do {
            owner = try users.user("rks")
        } catch {
            users.remove()
            throw error
        }
        let state = users.folder + "/state", run = users.folder + "/run"
        for folder in [state, run] {
            mkdir(folder, 0o755)
            chown(folder, users.uid(owner), gid_t.max)
        }
        store = state + "/system"
        socket = run + "/system.sock"
        environment = ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "RSAKIT_SYSTEM_SOCKET": socket]
    }

    /// Start `rsakit agent serve --system` as ``owner`` and wait (at most 30 s) for its
    /// `listening: SOCKET` line; false, with a test failure showing its stderr, if it does not come.
    func startAgent(file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        let started = try ChildProcess.start(
            users.asUser(owner, [users.binary, "agent", "serve", "--system", "--store", store, "--socket", socket]),
            environment: environment)
        agent = started
        guard started.waitForStdout(startingWith: "listening: \(socket)\n", timeout: 30) else {
            XCTFail("the agent did not start: \(try started.finish(timeout: 5).stderr)", file: file, line: line)
            return false
        }
        return true
    }

    /// Run the `rsakit` copy as `user` (root when nil) with ``environment``, under
    /// `timeout -k 5 SECONDS` when `timeoutSeconds` is given.
    func rsakit(
        _ user: String?, _ arguments: [String], stdin: [UInt8]? = nil, timeoutSeconds: Int? = nil
    ) throws -> ChildProcessResult {
        let timeout = timeoutSeconds.map { ["/usr/bin/timeout", "-k", "5", String($0)] } ?? []
        let command = timeout + [users.binary] + arguments
        return try ChildProcess.run(
            user.map { users.asUser($0, command) } ?? command, stdin: stdin, environment: environment)
    }

    /// `genpair --tag TAG --bits 1024 --access-group GROUP --store STORE`, run as ``owner``.
    func genpair(tag: String, accessGroup: String) throws -> ChildProcessResult {
        try rsakit(
            owner, ["genpair", "--tag", tag, "--bits", "1024", "--access-group", accessGroup, "--store", store])
    }

    /// Kill the agent if it still runs; remove the users, groups and folder (idempotent).
    func remove() {
        if let agent, agent.process.isRunning { agent.process.kill9() }
        users.remove()
    }
}
