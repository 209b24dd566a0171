import Foundation
import XCTest
import RSAKitTestSupport

/// `--out` with the built binary: it never damages what is at the path, and no temporary file
/// (which may hold plaintext) survives a failure, a terminating signal or SIGKILL.
final class CLIOutputFileTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try rsakitOK(["genpair", "--tag", "k", "--bits", "1024"])
    }

    func fileType(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0, path)
        return info.st_mode & S_IFMT
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0, path)
        return info.st_mode & 0o7777
    }

    func temporaries(in folder: String? = nil) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder ?? workDirectory.path).filter {
            $0.contains(".rsakit-tmp-")
        }
    }

    /// The unnamed (O_TMPFILE) temporary that process `pid` is writing in this test's folder,
    /// with at least one byte in it: what /proc shows for the descriptor ("/folder/#inode
    /// (deleted)"), or nil.
    func unnamedTemporary(of pid: pid_t) -> String? {
        let fds = "/proc/\(pid)/fd"
        for fd in (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? [] {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + fd),
                target.hasPrefix(workDirectory.path + "/#"), target.hasSuffix(" (deleted)")
            else { continue }
            var info = stat()
            if stat(fds + "/" + fd, &info) == 0, info.st_size > 0, info.st_mode & 0o7777 == 0o600 { return target }
        }
        return nil
    }

    func testDevNull_StaysACharacterDevice() throws {
        let plain = try write(testBytes(300), to: "plain.bin")
        try rsakitOK(["encrypt", "--tag", "k", "--in", plain, "--out", "/dev/null"])
        XCTAssertEqual(fileType("/dev/null"), S_IFCHR)
        XCTAssertEqual(try temporaries(in: "/dev"), [])
    }

    func testDeviceNode_MadeByRoot_IsWrittenInPlace() throws {
        guard geteuid() == 0 else {
            throw XCTSkip("needs root to make a device node with mknod (the /dev/null replacement was seen as root)")
        }
        let device = path("null-device")
        XCTAssertEqual(mknod(device, S_IFCHR | 0o666, dev_t((1 << 8) | 3)), 0, "mknod c 1 3")
        let plain = try write([1, 2, 3], to: "plain.bin")
        try rsakitOK(["encrypt", "--tag", "k", "--in", plain, "--out", device])
        XCTAssertEqual(fileType(device), S_IFCHR, "still the device, not a regular file")
        XCTAssertEqual(try temporaries(), [])
    }

    func testDevStdout_WritesToStandardOutput() throws {
        let sealed = try rsakitOK(["encrypt", "--tag", "k", "--out", "/dev/stdout"], stdin: [5, 6, 7]).stdout
        XCTAssertFalse(sealed.isEmpty, "the container went to standard output")
        XCTAssertEqual(try rsakitOK(["decrypt", "--out", "-"], stdin: sealed).stdout, [5, 6, 7])
        XCTAssertEqual(try rsakitOK(["decrypt", "--out", "/dev/fd/1"], stdin: sealed).stdout, [5, 6, 7])
        XCTAssertEqual(fileType("/dev/stdout"), S_IFLNK)
    }

    func testFIFO_IsWrittenInPlaceAndKept() throws {
        let fifo = path("out.fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let reader = open(fifo, O_RDWR | O_NONBLOCK)  // never blocks, keeps a reader present
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        try rsakitOK(["encrypt", "--tag", "k", "--raw", "--out", fifo], stdin: [1, 2, 3])
        var buffer = [UInt8](repeating: 0, count: 4096)
        XCTAssertEqual(Glibc.read(reader, &buffer, buffer.count), 128, "one 1024-bit raw block came through the FIFO")
        XCTAssertEqual(fileType(fifo), S_IFIFO)
        XCTAssertEqual(try temporaries(), [])
        let block = try write(Array(buffer[0..<128]), to: "block.bin")
        XCTAssertEqual(try rsakitOK(["decrypt", "--tag", "k", "--raw", "--in", block]).stdout, [1, 2, 3])
    }

    func testSocket_IsNotReplaced() throws {
        let socketPath = path("s.sock")
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(socketPath.utf8)
            raw.copyBytes(from: bytes.prefix(raw.count - 1))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        XCTAssertEqual(bound, 0)
        let result = try rsakit(["encrypt", "--tag", "k", "--out", socketPath], stdin: [1])
        assertFailure(result, status: 1, contains: "cannot write output file '\(socketPath)'")
        XCTAssertEqual(fileType(socketPath), S_IFSOCK, "the socket is still there, as with `> socket`")
    }

    func testSymlink_TargetIsWrittenAndTheLinkKept() throws {
        try FileManager.default.createDirectory(atPath: path("real"), withIntermediateDirectories: true)
        let target = try write([0], to: "real/target.bin")
        XCTAssertEqual(chmod(target, 0o640), 0)
        XCTAssertEqual(symlink("real/target.bin", path("link.bin")), 0)
        try rsakitOK(["encrypt", "--tag", "k", "--out", path("link.bin")], stdin: Array("via a link".utf8))
        XCTAssertEqual(fileType(path("link.bin")), S_IFLNK)
        XCTAssertEqual(mode(target), 0o640, "the replaced file's bits")
        XCTAssertEqual(try rsakitOK(["decrypt", "--in", target]).stdoutText, "via a link")
        XCTAssertEqual(try temporaries(in: path("real")), [])
    }

    func testModes_NewFileUmask_ReplacedFileBits_PrivateExport0600() throws {
        let old = umask(0o027)
        defer { umask(old) }
        try rsakitOK(["encrypt", "--tag", "k", "--out", path("new.rsa")], stdin: [1])
        XCTAssertEqual(mode(path("new.rsa")), 0o640, "0666 less the umask 027")
        let existing = try write([0], to: "existing.rsa")
        XCTAssertEqual(chmod(existing, 0o604), 0)
        try rsakitOK(["encrypt", "--tag", "k", "--out", existing], stdin: [1])
        XCTAssertEqual(mode(existing), 0o604)
        let exported = try write([0], to: "key.pem")
        XCTAssertEqual(chmod(exported, 0o644), 0)
        try rsakitOK(["export", "--tag", "k", "--private", "--out", exported])
        XCTAssertEqual(mode(exported), 0o600, "private-key exports are 0600 even over a 0644 file")
        XCTAssertTrue(String(decoding: try read(exported), as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"))
    }

    func testReadOnlyFile_IsRefusedWithPermissionDenied() throws {
        // The user must not be able to write the file but able to write its folder (where the
        // old code put its temporary and renamed it over the file).
        let folder = path("user")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let target = folder + "/readonly.rsa"
        XCTAssertTrue(FileManager.default.createFile(atPath: target, contents: Data("keep me".utf8)))
        XCTAssertEqual(chmod(target, 0o444), 0)
        let pub = path("pub.pem")
        try rsakitOK(["export", "--tag", "k", "--out", pub])
        var prefix: [String] = []
        if geteuid() == 0 {
            // Root may write any file (as the shell lets it); test as user nobody instead.
            guard
                let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(
                    where: FileManager.default.isExecutableFile(atPath:))
            else {
                throw XCTSkip("running as root without setpriv: cannot test the refusal as an ordinary user")
            }
            XCTAssertEqual(chown(folder, 65534, 65534), 0)
            XCTAssertEqual(chown(target, 65534, 65534), 0)
            XCTAssertEqual(chmod(pub, 0o644), 0)
            XCTAssertEqual(chmod(workDirectory.path, 0o755), 0)
            prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", Self.binary.path]
        }
        let arguments = ["encrypt", "--key", pub, "--out", target]
        let result =
            prefix.isEmpty
            ? try rsakit(arguments, stdin: [1])
            : try runProcess(prefix[0], Array(prefix.dropFirst()) + arguments, stdin: [1])
        assertFailure(result, status: 1, contains: "cannot write output file '\(target)': permission denied")
        XCTAssertEqual(String(decoding: try read(target), as: UTF8.self), "keep me")
        XCTAssertEqual(mode(target), 0o444)
        XCTAssertEqual(try temporaries(in: folder), [])
    }

    /// Decrypt from a FIFO fed half the ciphertext, wait for the temporary file, send the
    /// signal: the process dies of it and neither the temporary nor the output remains.
    func testSignalDuringDecrypt_RemovesTheTemporary() throws {
        let plain = try write(testBytes(600_000), to: "big.bin")
        let sealed = try rsakitOK(["encrypt", "--tag", "k", "--in", plain]).stdout
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] {
            let fifo = path("in-\(signal).fifo"), out = path("out-\(signal).bin")
            XCTAssertEqual(mkfifo(fifo, 0o600), 0)
            let writer = open(fifo, O_RDWR)  // holds the FIFO open: the reader never sees its end
            XCTAssertGreaterThanOrEqual(writer, 0)
            defer { close(writer) }
            let process = try ChildProcess(
                [Self.binary.path, "decrypt", "--in", fifo, "--out", out],
                environment: childEnvironment())
            let half = Array(sealed[0..<(sealed.count / 2)])
            XCTAssertEqual(half.withUnsafeBytes { Glibc.write(writer, $0.baseAddress!, $0.count) }, half.count)
            var temporary: String?
            for _ in 0..<400 {
                temporary = unnamedTemporary(of: process.pid)
                if temporary != nil { break }
                usleep(25_000)
            }
            XCTAssertNotNil(temporary, "signal \(signal): a private unnamed temporary with partial plaintext appeared")
            XCTAssertEqual(try temporaries(), [], "no name points at partial plaintext")
            process.send(signal)
            XCTAssertEqual(try process.wait(), .signaled(signal), "killed by the signal itself (re-raised)")
            XCTAssertEqual(try temporaries(), [], "signal \(signal): no temporary left")
            XCTAssertFalse(exists(out), "signal \(signal): nothing at --out")
        }
    }

    /// SIGKILL (no handler runs; an OOM kill or a power loss is the same) at random points of
    /// a decrypt, 50 times: no file with partial plaintext is ever left, under any name.
    func testSIGKILLDuringDecrypt_NeverLeavesPlaintext() throws {
        let plaintext = testBytes(300_000)
        let sealed = try write(try rsakitOK(["encrypt", "--tag", "k"], stdin: plaintext).stdout, to: "big.rsa")
        // One whole decrypt, timed, so that the kills land all through one.
        var begin = timespec(), end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &begin)
        try rsakitOK(["decrypt", "--in", sealed, "--out", path("whole.bin")])
        clock_gettime(CLOCK_MONOTONIC, &end)
        XCTAssertEqual(try read("whole.bin"), plaintext)
        let microseconds = max(1, (end.tv_sec - begin.tv_sec) * 1_000_000 + (end.tv_nsec - begin.tv_nsec) / 1000)
        var killedWhileWriting = 0
        for round in 0..<50 {
            let out = path("out-\(round).bin")
            let process = try ChildProcess(
                [Self.binary.path, "decrypt", "--in", sealed, "--out", out], environment: childEnvironment())
            usleep(UInt32.random(in: 0...UInt32(microseconds)))
            if unnamedTemporary(of: process.pid) != nil { killedWhileWriting += 1 }
            process.send(SIGKILL)
            _ = try process.wait()
            XCTAssertEqual(try temporaries(), [], "round \(round): no named temporary")
            // Only the complete file can have a name: a kill after the link finds it whole.
            if exists(out) { XCTAssertEqual(try read(out), plaintext, "round \(round)") }
        }
        XCTAssertGreaterThanOrEqual(killedWhileWriting, 10, "the kills landed while plaintext was being written")
        print(
            "SIGKILL test: \(killedWhileWriting) of 50 kills landed while the unnamed file held plaintext; one "
                + "decrypt took \(microseconds) us"
        )
    }

    /// Linking the unnamed file into place (through /proc/self/fd, with no capability) works
    /// for an ordinary user, for a new file and for one it replaces.
    func testUnnamedTemporary_IsLinkedIntoPlaceByAnOrdinaryUser() throws {
        guard geteuid() == 0 else { return try assertEncryptsTo(path("plain.rsa"), as: [], into: workDirectory.path) }
        guard
            let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(
                where: FileManager.default.isExecutableFile(atPath:))
        else {
            throw XCTSkip("running as root without setpriv: cannot run as an ordinary user")
        }
        let folder = path("nobody")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        XCTAssertEqual(chown(folder, 65534, 65534), 0)
        XCTAssertEqual(chmod(workDirectory.path, 0o755), 0)
        try assertEncryptsTo(
            folder + "/new.rsa", as: [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"], into: folder)
    }

    /// `encrypt --key` (as `prefix` runs it) writes `target` twice, new and replaced, and
    /// leaves no temporary in `folder`; the second result decrypts.
    private func assertEncryptsTo(_ target: String, as prefix: [String], into folder: String) throws {
        let pub = path("pub.pem")
        try rsakitOK(["export", "--tag", "k", "--out", pub])
        XCTAssertEqual(chmod(pub, 0o644), 0)
        for round in 0..<2 {
            let command = prefix + [Self.binary.path, "encrypt", "--key", pub, "--out", target]
            let result = try runProcess(command[0], Array(command.dropFirst()), stdin: Array("round \(round)".utf8))
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try temporaries(in: folder), [])
        }
        XCTAssertEqual(try rsakitOK(["decrypt", "--in", target]).stdoutText, "round 1")
    }

    func testFailedDecrypt_LeavesNothingAndKeepsTheOldFile() throws {
        var sealed = try rsakitOK(["encrypt", "--tag", "k"], stdin: testBytes(5000)).stdout
        sealed[sealed.count - 3] ^= 1
        let out = try write(Array("old contents".utf8), to: "out.txt")
        assertFailure(try rsakit(["decrypt", "--out", out], stdin: sealed), status: 65, contains: "decryption failed")
        XCTAssertEqual(String(decoding: try read(out), as: UTF8.self), "old contents")
        XCTAssertEqual(try temporaries(), [])
    }
}
