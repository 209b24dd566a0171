import Foundation
import XCTest
import RSAKit
@testable import RSAKitCore

/// RSAOutputFile: a temporary moved into place for regular files (unnamed with O_TMPFILE on
/// this file system, named where tests turn O_TMPFILE off), in place for everything else,
/// symbolic links followed, the modes of a careful Unix tool. Real files, FIFOs and devices.
final class OutputFileTests: XCTestCase {
    var folder: String!

    override func tearDown() {
        RSAOutputFile.unnamedTemporariesDisabled = false
        super.tearDown()
    }

    /// Where the temporary is while it is written: its name, or for an unnamed one the
    /// "/folder/#inode (deleted)" that /proc shows for its descriptor.
    func temporaryLocation(_ out: RSAOutputFile) throws -> String {
        if let name = out.temporaryPath { return name }
        return try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(out.fileDescriptor)")
    }

    override func setUpWithError() throws {
        folder =
            FileManager.default.temporaryDirectory.appendingPathComponent("rsakit-out-\(getpid())-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func write(_ file: RSAOutputFile, _ bytes: [UInt8]) throws {
        var sink = RSAFileDescriptorSink(fileDescriptor: file.fileDescriptor)
        try sink.write(bytes)
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0, path)
        return info.st_mode & 0o7777
    }

    func fileType(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0, path)
        return info.st_mode & S_IFMT
    }

    func temporaries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".rsakit-tmp-") }
    }

    func testNewFile_AppearsOnlyOnCommit_WithUmaskMode() throws {
        let old = umask(0o027)
        defer { umask(old) }
        for named in [false, true] {
            RSAOutputFile.unnamedTemporariesDisabled = named
            let target = folder + "/new-\(named).bin"
            let before = RSAOutputFile.registeredTemporaryCount
            let out = try RSAOutputFile(path: target)
            XCTAssertEqual(out.method, .temporaryAndRename)
            XCTAssertEqual(out.isUnnamed, !named, "this file system has O_TMPFILE")
            try write(out, [1, 2, 3])
            XCTAssertFalse(FileManager.default.fileExists(atPath: target), "nothing at the path before commit")
            var info = stat()
            XCTAssertEqual(fstat(out.fileDescriptor, &info), 0)
            XCTAssertEqual(info.st_mode & 0o7777, 0o600, "the temporary is private while written")
            if named {
                XCTAssertEqual(mode(try XCTUnwrap(out.temporaryPath)), 0o600)
                XCTAssertEqual(RSAOutputFile.registeredTemporaryCount, before + 1)
            } else {
                XCTAssertNil(out.temporaryPath)
                XCTAssertEqual(try temporaries(), [], "an unnamed temporary has no name to leave behind")
                XCTAssertEqual(RSAOutputFile.registeredTemporaryCount, before, "nothing to remove on a signal")
                XCTAssertEqual(info.st_nlink, 0)
            }
            try out.commit()
            XCTAssertEqual(RSAOutputFile.registeredTemporaryCount, before)
            XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: target))), [1, 2, 3])
            XCTAssertEqual(mode(target), 0o640, "0666 less the umask 027")
            XCTAssertEqual(try temporaries(), [])
        }
    }

    /// A killed process (SIGKILL: no handler runs) leaves its named temporary; the next output
    /// opened in that folder removes it once its PID is gone and nobody wrote it for a minute.
    /// Live writers' files, fresh ones and other users' stay.
    func testStaleNamedTemporaries_OfDeadProcessesAreRemovedOnTheNextRun() throws {
        let pidMax = Int32(
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: "/proc/sys/kernel/pid_max")), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines))!
        let dead = pidMax - 1
        guard kill(dead, 0) != 0 && errno == ESRCH else { throw XCTSkip("PID \(dead) exists") }
        let old = Date(timeIntervalSinceNow: -120)
        func plant(_ name: String, modified: Date = old, owner: uid_t? = nil) throws {
            XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/" + name, contents: Data("plaintext".utf8)))
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: folder + "/" + name)
            if let owner { XCTAssertEqual(chown(folder + "/" + name, owner, owner), 0) }
        }
        try plant(".a.bin.rsakit-tmp-\(dead)-12345")
        try plant(".b.bin.rsakit-tmp-\(getpid())-1")
        try plant(".c.bin.rsakit-tmp-\(dead)-2", modified: Date())
        try plant(".d.rsakit-tmp-x.rsakit-tmp-\(dead)-3")
        try plant("e.bin.rsakit-tmp-\(dead)-4")
        var expected = [".b.bin.rsakit-tmp-\(getpid())-1", ".c.bin.rsakit-tmp-\(dead)-2", "e.bin.rsakit-tmp-\(dead)-4"]
        if geteuid() == 0 {
            try plant(".f.bin.rsakit-tmp-\(dead)-5", owner: 65534)
            expected.append(".f.bin.rsakit-tmp-\(dead)-5")
        }
        let out = try RSAOutputFile(path: folder + "/next.bin")
        out.discard()
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: folder)), Set(expected))
    }

    func testReplacedFile_KeepsItsBits_PrivateKeyIsAlways0600() throws {
        let target = folder + "/old.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: target, contents: Data([9, 9])))
        XCTAssertEqual(chmod(target, 0o604), 0)
        let out = try RSAOutputFile(path: target)
        try write(out, [7])
        try out.commit()
        XCTAssertEqual(mode(target), 0o604)
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: target))), [7])
        let key = try RSAOutputFile(path: target, permissions: .privateKey)
        try write(key, [8])
        try key.commit()
        XCTAssertEqual(mode(target), 0o600)
    }

    func testDiscard_LeavesTheOldContents() throws {
        let target = folder + "/keep.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: target, contents: Data([1])))
        let out = try RSAOutputFile(path: target)
        try write(out, [2, 2, 2])
        out.discard()
        out.discard()
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: target))), [1])
        XCTAssertEqual(try temporaries(), [])
        do {
            let dropped = try RSAOutputFile(path: folder + "/never.bin")
            try write(dropped, [5])
        }  // deinit discards
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/never.bin"))
        XCTAssertEqual(try temporaries(), [])
    }

    func testSymbolicLink_TargetIsWritten_LinkKept() throws {
        let sub = folder + "/real"
        try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
        let target = sub + "/target.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: target, contents: Data([0])))
        XCTAssertEqual(symlink("real/target.bin", folder + "/link"), 0)
        XCTAssertEqual(symlink("link", folder + "/link2"), 0)
        let out = try RSAOutputFile(path: folder + "/link2")
        XCTAssertEqual(out.destinationPath, folder + "/real/target.bin")
        XCTAssertTrue(try temporaryLocation(out).hasPrefix(sub + "/"), "temporary beside the target")
        try write(out, [4, 5])
        try out.commit()
        XCTAssertEqual(fileType(folder + "/link"), S_IFLNK)
        XCTAssertEqual(fileType(folder + "/link2"), S_IFLNK)
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: target))), [4, 5])
        // A dangling link: the file it names is created, as `> link` would.
        XCTAssertEqual(symlink("real/created.bin", folder + "/dangling"), 0)
        let created = try RSAOutputFile(path: folder + "/dangling")
        try write(created, [6])
        try created.commit()
        XCTAssertEqual(fileType(folder + "/dangling"), S_IFLNK)
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: sub + "/created.bin"))), [6])
        // A loop is an error, and nothing is created.
        XCTAssertEqual(symlink("loop-b", folder + "/loop-a"), 0)
        XCTAssertEqual(symlink("loop-a", folder + "/loop-b"), 0)
        XCTAssertThrowsError(try RSAOutputFile(path: folder + "/loop-a")) { error in
            XCTAssertEqual(
                error as? RSAError,
                .outputFileFailed(path: folder + "/loop-a", reason: "too many levels of symbolic links"))
        }
    }

    func testDevNull_IsWrittenInPlace() throws {
        let out = try RSAOutputFile(path: "/dev/null")
        XCTAssertEqual(out.method, .inPlace)
        XCTAssertNil(out.temporaryPath)
        try write(out, [1, 2, 3])
        try out.commit()
        XCTAssertEqual(fileType("/dev/null"), S_IFCHR)
    }

    func testFIFO_IsWrittenInPlace() throws {
        let fifo = folder + "/fifo"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        // Our read end, opened read-write so that neither open blocks.
        let reader = open(fifo, O_RDWR | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        let out = try RSAOutputFile(path: fifo)
        XCTAssertEqual(out.method, .inPlace)
        try write(out, [10, 20, 30])
        try out.commit()
        var buffer = [UInt8](repeating: 0, count: 16)
        XCTAssertEqual(read(reader, &buffer, 16), 3)
        XCTAssertEqual(Array(buffer[0..<3]), [10, 20, 30])
        XCTAssertEqual(fileType(fifo), S_IFIFO)
        XCTAssertEqual(try temporaries(), [])
    }

    func testInheritedDescriptor_DevFdIsDuplicated() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        let out = try RSAOutputFile(path: "/dev/fd/\(fds[1])")
        XCTAssertEqual(out.method, .inPlace)
        XCTAssertNotEqual(out.fileDescriptor, fds[1])
        close(fds[1])
        try write(out, [42, 43])
        try out.commit()
        var buffer = [UInt8](repeating: 0, count: 8)
        XCTAssertEqual(read(fds[0], &buffer, 8), 2)
        XCTAssertEqual(Array(buffer[0..<2]), [42, 43])
    }

    func testRefusals_DirectoryInputAndMissingFolder() throws {
        XCTAssertThrowsError(try RSAOutputFile(path: folder)) { error in
            XCTAssertEqual(error as? RSAError, .outputFileFailed(path: folder, reason: "is a directory"))
        }
        let input = folder + "/in.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: input, contents: Data([1, 2])))
        let fd = open(input, O_RDONLY)
        defer { close(fd) }
        XCTAssertThrowsError(try RSAOutputFile(path: input, input: fd)) { error in
            XCTAssertEqual(error as? RSAError, .outputFileIsInput(path: input))
        }
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: input))), [1, 2])
        XCTAssertThrowsError(try RSAOutputFile(path: folder + "/no/such/out.bin")) { error in
            XCTAssertEqual(
                error as? RSAError,
                .outputFileFailed(path: folder + "/no/such/out.bin", reason: "no such file or directory"))
        }
    }

    func testReadOnlyFile_IsRefusedForAnOrdinaryUser() throws {
        let target = folder + "/readonly.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: target, contents: Data([3])))
        XCTAssertEqual(chmod(target, 0o444), 0)
        if geteuid() == 0 {
            // Root may write it, as the shell lets root: the bits are kept.
            let out = try RSAOutputFile(path: target)
            try write(out, [4])
            try out.commit()
            XCTAssertEqual(mode(target), 0o444)
            XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: target))), [4])
            throw XCTSkip(
                "running as root: the 'permission denied' refusal is tested through the CLI as user nobody "
                    + "(CLIOutputFileTests)"
            )
        }
        XCTAssertThrowsError(try RSAOutputFile(path: target)) { error in
            XCTAssertEqual(error as? RSAError, .outputFileFailed(path: target, reason: "permission denied"))
        }
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: target))), [3])
    }
}
