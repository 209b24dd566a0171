import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
import RSAKitTestSupport

/// A throw-away `sshd -D` on 127.0.0.1, for the tests that log in with ssh (through the
/// PKCS#11 module, through the agent's ssh-agent socket).
extension CLITestCase {
    /// The path of `name`, or a failure naming the package that brings it.
    func requiredTool(_ name: String, package: String) throws -> String {
        let candidates = [TestTools.path(of: name), "/usr/sbin/\(name)", "/usr/bin/\(name)"].compactMap { $0 }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            XCTFail("\(name) not found: scripts/install-deps.sh installs it (apt package \(package))")
            throw CocoaError(.executableNotLoadable)
        }
        return found
    }

    /// Start sshd on a free port of 127.0.0.1 for this user, with `authorizedKeys` as its
    /// authorized_keys and a fresh ed25519 host key, logging to the returned file; returns
    /// once it listens. `configuration`: more sshd_config lines. The caller stops the returned process.
    func startThrowAwaySSHD(authorizedKeys: String, configuration: String = "") throws -> (
        server: ChildProcess, port: Int, user: String, log: String
    ) {
        let sshd = try requiredTool("sshd", package: "openssh-server")
        let sshKeygen = try requiredTool("ssh-keygen", package: "openssh-client")
        try Data(authorizedKeys.utf8).write(to: URL(fileURLWithPath: path("authorized_keys")))
        let hostKey = try runProcess(sshKeygen, ["-q", "-t", "ed25519", "-N", "", "-f", path("host_key")])
        XCTAssertEqual(hostKey.status, 0, hostKey.stderr)
        // sshd as root needs its privilege separation folder (the package makes it at boot).
        if getuid() == 0 {
            try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        }
        let port = try TLSTestServer.freePort()
        let user = String(cString: getpwuid(getuid()).pointee.pw_name)
        let config = """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(path("host_key"))
            AuthorizedKeysFile \(path("authorized_keys"))
            StrictModes no
            UsePAM no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PubkeyAuthentication yes
            PermitRootLogin prohibit-password
            PidFile \(path("sshd.pid"))
            \(configuration)
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: path("sshd_config")))
        let log = path("sshd.log")
        let server = try ChildProcess(
            [sshd, "-D", "-e", "-f", path("sshd_config")], stdout: .appending(log), stderr: .appending(log))
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, server.isRunning,
            !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("Server listening")
        { usleep(20_000) }
        return (server, port, user, log)
    }
}
