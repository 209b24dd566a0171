import Foundation
import RSAKit
#if canImport(Glibc)
import Glibc
#endif

/// The `tpm` case (only when asked for: `--cases tpm`): on swtpm, A SOFTWARE TPM started for
/// the run, RSA-2048 OAEP (SHA-256) decryption and PKCS#1 v1.5 (SHA-256) signing by rsakit's
/// TPM path against the same operations by tpm2-tools (`tpm2_rsadecrypt`, `tpm2_sign`), with
/// the same keys loaded under the same SRK, run alternately (rsakit, tpm2-tools, ...) so that
/// each pair of samples is taken within milliseconds. Each sample is the wall time of one whole
/// process, as in the `cli` case.
///
/// The two sides do not do the same TPM work, and the figures say what it costs: rsakit makes
/// its parent key (the ECC P-256 SRK) on each command and runs the operation in a salted HMAC
/// session with parameter encryption, while tpm2-tools loads saved contexts (`tpm2_load`'s)
/// and authorises with a plain password session. A real TPM chip is 3 to 30 times slower than
/// swtpm in both.
///
/// Needs swtpm, tpm2-tools and the rsakit binary (as the `cli` case finds it); skipped with a
/// note otherwise.
struct TPMBenchmark {
    let rsakit: String
    let reporter: Reporter
    /// Process pairs per operation.
    let pairs: Int

    static let toolNames = [
        "swtpm", "tpm2_createprimary", "tpm2_load", "tpm2_rsadecrypt", "tpm2_sign", "tpm2_flushcontext"
    ]

    /// The tools the case needs, by name; nil when one is missing.
    static func findTools() -> [String: String]? {
        var found: [String: String] = [:]
        for name in toolNames {
            guard let path = findOnPath(name) else { return nil }
            found[name] = path
        }
        return found
    }

    /// Start swtpm, make the keys, check both sides give the same results, then time them.
    /// - Throws: `BenchmarkFailure` when a step fails or the two sides disagree.
    func run(tools: [String: String]) throws {
        let folder = NSTemporaryDirectory() + "rsakit-bench-tpm-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder + "/state", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (swtpm, port) = try startSoftwareTPM(tools["swtpm"]!, stateDirectory: folder + "/state")
        defer {
            kill(swtpm, SIGKILL)
            var status: Int32 = 0
            waitpid(swtpm, &status, 0)
        }
        let tcti = "swtpm:host=127.0.0.1,port=\(port)"
        // The children inherit these: both sides reach the same swtpm, quietly.
        setenv("RSAKIT_TPM_TCTI", tcti, 1)
        setenv("TPM2TOOLS_TCTI", tcti, 1)
        setenv("RSAKIT_STORE", folder + "/store", 1)
        setenv("TSS2_LOG", "all+none", 1)
        let flush = tools["tpm2_flushcontext"]!
        // swtpm has no resource manager: what a tool leaves loaded is flushed (not timed).
        func tool(_ name: String, _ arguments: [String]) throws {
            let result = try runProcess(tools[name]!, arguments)
            _ = try runProcess(flush, ["-t"])
            guard result.status == 0 else {
                throw BenchmarkFailure(description: "tpm: \(name) failed: \(result.stderr.prefix(300))")
            }
        }
        func rsakitOK(_ arguments: [String]) throws {
            let result = try runProcess(rsakit, arguments)
            guard result.status == 0 else {
                throw BenchmarkFailure(
                    description: "tpm: rsakit \(arguments.joined(separator: " ")) failed: \(result.stderr.prefix(300))")
            }
        }
        // One key per usage, made by rsakit; their blobs loaded by tpm2-tools under the same SRK.
        try rsakitOK(["genpair", "--tag", "d", "--tpm"])
        try rsakitOK(["genpair", "--tag", "s", "--tpm", "--usage", "sign"])
        for tag in ["d", "s"] {
            try rsakitOK(["show", "--tag", tag, "--tpm-blobs", "\(folder)/\(tag)"])
            try rsakitOK(["export", "--tag", tag, "--out", "\(folder)/\(tag).pub"])
        }
        try tool(
            "tpm2_createprimary",
            [
                "-Q", "-C", "o", "-g", "sha256", "-G", "ecc256:aes128cfb", "-a",
                "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt", "-c",
                folder + "/srk.ctx"
            ])
        for tag in ["d", "s"] {
            try tool(
                "tpm2_load",
                [
                    "-Q", "-C", folder + "/srk.ctx", "-u", "\(folder)/\(tag)/key.pub", "-r",
                    "\(folder)/\(tag)/key.priv",
                    "-c", "\(folder)/\(tag).ctx"
                ])
        }
        // The inputs: an OAEP-SHA-256 block of a 32-byte message, and a message and its digest.
        let decryptKey = try RSAPublicKey(
            pemRepresentation: String(contentsOfFile: folder + "/d.pub", encoding: .utf8))
        let secret = (0..<32).map { UInt8(0x41 + $0 % 26) }
        let block = try decryptKey.encrypt(secret, padding: .oaep(RSAOAEPParameters(hash: .sha256)))
        try Data(block).write(to: URL(fileURLWithPath: folder + "/block"))
        let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        try Data(message).write(to: URL(fileURLWithPath: folder + "/message"))
        try Data(RSAHashAlgorithm.sha256.hash(message)).write(to: URL(fileURLWithPath: folder + "/digest"))

        let operations: [(name: String, rsakit: [String], peer: String, peerArguments: [String], output: String)] = [
            (
                "decrypt-oaep",
                [
                    "decrypt", "--tag", "d", "--raw", "--padding", "oaep", "--in", folder + "/block", "--out",
                    folder + "/r.out"
                ],
                "tpm2_rsadecrypt",
                ["-c", folder + "/d.ctx", "-s", "oaep", "-o", folder + "/p.out", folder + "/block"], "out"
            ),
            (
                "sign-pkcs1",
                ["sign", "--tag", "s", "--in", folder + "/message", "--out", folder + "/r.sig"],
                "tpm2_sign",
                [
                    "-c", folder + "/s.ctx", "-g", "sha256", "-s", "rsassa", "-f", "plain", "-d", "-o",
                    folder + "/p.sig", folder + "/digest"
                ], "sig"
            )
        ]
        for operation in operations {
            // Both sides must do the work, and agree, before anything is timed (PKCS#1 v1.5
            // signatures are deterministic: the two must be the same bytes).
            try rsakitOK(operation.rsakit)
            try tool(operation.peer, operation.peerArguments)
            let ours = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/r.\(operation.output)"))
            let theirs = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/p.\(operation.output)"))
            guard ours == theirs, operation.output == "sig" || [UInt8](ours) == secret else {
                throw BenchmarkFailure(description: "tpm: rsakit and \(operation.peer) disagree on \(operation.name)")
            }
            var rsakitSamples: [Double] = [], peerSamples: [Double] = []
            func timeRsakit() throws { rsakitSamples.append(try seconds(rsakit, operation.rsakit) * 1000) }
            func timePeer() throws {
                peerSamples.append(try seconds(tools[operation.peer]!, operation.peerArguments) * 1000)
                _ = try runProcess(flush, ["-t"])
            }
            for _ in 0..<2 {  // warm the page cache and the dynamic loader
                _ = try seconds(rsakit, operation.rsakit)
                _ = try seconds(tools[operation.peer]!, operation.peerArguments)
                _ = try runProcess(flush, ["-t"])
            }
            for index in 0..<pairs {
                // Alternate which goes first, so that neither always follows the other.
                if index % 2 == 0 {
                    try timeRsakit()
                    try timePeer()
                } else {
                    try timePeer()
                    try timeRsakit()
                }
            }
            let label = "swtpm, a software TPM"
            reporter.record(
                CaseResult(
                    name: "tpm-rsakit-\(operation.name)", bits: 2048, unit: "ms/process", samples: rsakitSamples,
                    pairedGroup: "tpm-\(operation.name)",
                    what: "\(label): whole process rsakit \(operation.rsakit.prefix(3).joined(separator: " ")) ..."
                        + " (SRK, salted session with parameter encryption, TPM2_Load, one operation)"))
            reporter.record(
                CaseResult(
                    name: "tpm-tpm2tools-\(operation.name)", bits: 2048, unit: "ms/process", samples: peerSamples,
                    pairedGroup: "tpm-\(operation.name)",
                    what: "\(label): whole process \(operation.peer) on a saved context (password session)"))
            reporter.ratio("tpm-rsakit-\(operation.name)", versus: "tpm-tpm2tools-\(operation.name)", bits: 2048)
        }
    }

    /// Wall seconds of one process (output to /dev/null).
    /// - Throws: `BenchmarkFailure` when it exits non-zero.
    private func seconds(_ executable: String, _ arguments: [String]) throws -> Double {
        let start = now()
        let status = try spawnAndWait(executable, arguments, stdout: "/dev/null", stderr: "/dev/null")
        let elapsed = now() - start
        guard status == 0 else {
            throw BenchmarkFailure(
                description: "tpm: \(executable) \(arguments.joined(separator: " ")) failed (status \(status))")
        }
        return elapsed
    }

    /// `swtpm socket --tpm2` on a free port and the next (tpm2-tss's swtpm TCTI takes the
    /// control channel there), its state in `stateDirectory`; returns once it accepts.
    /// - Throws: `BenchmarkFailure` when it does not start within 10 s.
    private func startSoftwareTPM(_ swtpm: String, stateDirectory: String) throws -> (pid_t, Int) {
        for _ in 0..<5 {
            guard let port = Self.freePortPair() else { continue }
            let arguments = [
                swtpm, "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory)",
                "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
                "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1", "--flags", "not-need-init,startup-clear"
            ]
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            for fd: Int32 in [0, 1, 2] {
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            }
            let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid = pid_t()
            guard posix_spawn(&pid, swtpm, &actions, nil, argv, environ) == 0 else { continue }
            let deadline = now() + 10
            while now() < deadline {
                if Self.accepts(port: port) { return (pid, port) }
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { break }  // it exited: try other ports
                usleep(20_000)
            }
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        throw BenchmarkFailure(description: "tpm: swtpm did not start")
    }

    /// A free TCP port of 127.0.0.1 whose successor is free too.
    private static func freePortPair() -> Int? {
        func bound(_ port: Int) -> Int32? {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return nil }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let ok = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            if !ok { close(fd); return nil }
            return fd
        }
        for _ in 0..<50 {
            guard let first = bound(0) else { return nil }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(first, $0, &length) }
            }
            let port = Int(UInt16(bigEndian: address.sin_port))
            defer { close(first) }
            if port < 65535, let second = bound(port + 1) {
                close(second)
                return port
            }
        }
        return nil
    }

    private static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
