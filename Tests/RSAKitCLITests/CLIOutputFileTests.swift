import Foundation
import XCTest
import RSAKitTestSupport

/// Issue 9 §1 with the built binary: `--out` never damages what is at the path, and no
/// temporary file (which may hold plaintext) survives a failure or a terminating signal.
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
        try FileManager.default.contentsOfDirectory(atPath: folder ?? workDirectory.path).filter { $0.contains(".rsakit-tmp-") }
    }

    func testDevNull_StaysACharacterDevice() throws {
        let plain = try write(testBytes(300), to: "plain.bin")
        try rsakitOK(["encrypt", "--tag", "k", "--in", plain, "--out", "/dev/null"])
        XCTAssertEqual(fileType("/dev/null"), S_IFCHR)
        XCTAssertEqual(try temporaries(in: "/dev"), [])
    }

    func testDeviceNode_MadeByRoot_IsWrittenInPlace() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to make a device node with mknod (the /dev/null replacement was seen as root)") }
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
        let reader = open(fifo, O_RDWR | O_NONBLOCK) // never blocks, keeps a reader present
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
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
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
            guard let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
                throw XCTSkip("running as root without setpriv: cannot test the refusal as an ordinary user")
            }
            XCTAssertEqual(chown(folder, 65534, 65534), 0)
            XCTAssertEqual(chown(target, 65534, 65534), 0)
            XCTAssertEqual(chmod(pub, 0o644), 0)
            XCTAssertEqual(chmod(workDirectory.path, 0o755), 0)
            prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", Self.binary.path]
        }
        let arguments = ["encrypt", "--key", pub, "--out", target]
        let result = prefix.isEmpty
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
            let writer = open(fifo, O_RDWR) // holds the FIFO open: the reader never sees its end
            XCTAssertGreaterThanOrEqual(writer, 0)
            defer { close(writer) }
            let process = try ChildProcess([Self.binary.path, "decrypt", "--in", fifo, "--out", out],
                                           environment: childEnvironment())
            let half = Array(sealed[0..<(sealed.count / 2)])
            XCTAssertEqual(half.withUnsafeBytes { Glibc.write(writer, $0.baseAddress!, $0.count) }, half.count)
            var temporary: String?
            for _ in 0..<400 {
                if let name = try temporaries().first, let size = try? FileManager.default.attributesOfItem(atPath: path(name))[.size] as? Int, size > 0 {
                    temporary = name
                    break
                }
                usleep(25_000)
            }
            let name = try XCTUnwrap(temporary, "signal \(signal): a temporary with partial plaintext appeared")
            XCTAssertEqual(mode(path(name)), 0o600, "the temporary holding plaintext is private")
            XCTAssertTrue(name.hasPrefix(".out-\(signal).bin.rsakit-tmp-"), name)
            process.send(signal)
            XCTAssertEqual(try process.wait(), .signaled(signal), "killed by the signal itself (re-raised)")
            XCTAssertEqual(try temporaries(), [], "signal \(signal): no temporary left")
            XCTAssertFalse(exists(out), "signal \(signal): nothing at --out")
        }
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
