import Foundation
import XCTest
import RSAKitTestSupport

/// Real Unix users and groups for the tests of shared and system stores, made with
/// groupadd/useradd (root only; the caller skips otherwise) under unique names and removed by
/// ``remove()``, and a copy of the built `rsakit` in a 0755 folder that those users can run.
final class UnixUsersFixture {
    /// The unique part of every name made here (the first letters of the names stay short:
    /// user names are at most 32 bytes).
    let suffix = String(UUID().uuidString.prefix(8)).lowercased()
    private(set) var users: [String] = []
    private(set) var groups: [String] = []
    /// A 0755 folder holding the binary copy; the tests put their stores beside it.
    let folder: String
    /// The copy of `rsakit` the made users run.
    let binary: String

    /// Skip unless root with groupadd, useradd and setpriv; copy `rsakit` to a 0755 folder.
    init(binary built: URL) throws {
        guard getuid() == 0 else { throw XCTSkip("not root: cannot make the Unix users and groups this test needs") }
        for tool in ["/usr/sbin/groupadd", "/usr/sbin/useradd", "/usr/bin/setpriv"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            throw XCTSkip("\(tool) is missing")
        }
        var template = Array("/tmp/rsakit-users-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw XCTSkip("mkdtemp failed") }
        folder = String(cString: made)
        chmod(folder, 0o755)
        binary = folder + "/rsakit"
        try FileManager.default.copyItem(atPath: built.path, toPath: binary)
        chmod(binary, 0o755)
    }

    /// A new Unix group `prefix` + suffix; returns its name.
    func group(_ prefix: String) throws -> String {
        let name = prefix + suffix
        try Self.tool(["/usr/sbin/groupadd", name])
        groups.append(name)
        return name
    }

    /// A new system user `prefix` + suffix with a group of its own and the supplementary
    /// `groups`, no home and no login shell; returns its name.
    func user(_ prefix: String, groups supplementary: [String] = []) throws -> String {
        let name = prefix + suffix
        var command = [
            "/usr/sbin/useradd", "--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin"
        ]
        if !supplementary.isEmpty { command += ["--groups", supplementary.joined(separator: ",")] }
        try Self.tool(command + [name])
        users.append(name)
        return name
    }

    /// The uid of `user`.
    func uid(_ user: String) -> uid_t { getpwnam(user)!.pointee.pw_uid }

    /// `command` run as `user` (with its own group and its supplementary groups) through
    /// setpriv, under umask `umask`: what a service of that user would run.
    func asUser(_ user: String, umask: String = "077", _ command: [String]) -> [String] {
        [
            "/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--init-groups", "--",
            "/bin/sh", "-c", "umask \(umask); exec \"$@\"", "sh"
        ] + command
    }

    /// Remove the users, groups and folder made (idempotent).
    func remove() {
        for user in users { _ = try? Self.tool(["/usr/sbin/userdel", user]) }
        for group in groups { _ = try? Self.tool(["/usr/sbin/groupdel", group]) }
        users = []
        groups = []
        try? FileManager.default.removeItem(atPath: folder)
    }

    @discardableResult
    static func tool(_ command: [String]) throws -> String {
        let result = try ChildProcess.run(command)
        guard result.termination == .exited(0) else {
            throw XCTSkip("\(command.joined(separator: " ")) failed: \(result.stderr)")
        }
        return result.stdoutText
    }
}
