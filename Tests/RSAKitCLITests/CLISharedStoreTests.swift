import Foundation
import XCTest
import RSAKitTestSupport

/// `rsakit store init --shared-with GROUP` with real Unix users (root only): two service users
/// of the group add and read each other's items under umask 077, a third user is refused with
/// a readable error (exit 77), a loose file is refused, and kill -9 during adds loses nothing.
final class CLISharedStoreTests: CLITestCase {
    private var fixture: UnixUsersFixture?

    override func tearDownWithError() throws {
        fixture?.remove()
        try super.tearDownWithError()
    }

    private func run(
        _ fx: UnixUsersFixture, as user: String, _ arguments: [String], store: String,
        stdin: [UInt8]? = nil
    ) throws -> ChildProcessResult {
        try ChildProcess.run(
            fx.asUser(user, [fx.binary] + arguments + ["--store", store]), stdin: stdin,
            environment: ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent"])
    }

    func testTwoMembersShareAThirdUserIsRefusedAndLooseFilesAreRefused() throws {
        let fx = try UnixUsersFixture(binary: Self.binary)
        fixture = fx
        let group = try fx.group("rkg")
        let alice = try fx.user("rka", groups: [group])
        let bob = try fx.user("rkb", groups: [group])
        let carol = try fx.user("rkc")
        // The parent belongs to alice, who makes the store under umask 077.
        let parent = fx.folder + "/stores"
        mkdir(parent, 0o755)
        chown(parent, fx.uid(alice), gid_t.max)
        let store = parent + "/shared"
        let made = try run(fx, as: alice, ["store", "init", "--shared-with", group], store: store)
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertEqual(made.stdoutText, "store: \(store)\nshared with Unix group: \(group)\n")

        XCTAssertEqual(
            try run(
                fx, as: alice, ["password", "add", "--service", "imap", "--account", "a"], store: store,
                stdin: Array("alice-secret".utf8)
            ).status, 0)
        XCTAssertEqual(
            try run(fx, as: alice, ["genpair", "--tag", "svc.key", "--bits", "1024"], store: store).status, 0)
        let bobAdd = try run(
            fx, as: bob, ["password", "add", "--service", "smtp", "--account", "b"], store: store,
            stdin: Array("bob-secret".utf8))
        XCTAssertEqual(bobAdd.status, 0, bobAdd.stderr)
        // Each reads the other's items, private key included.
        XCTAssertEqual(
            try run(
                fx, as: bob, ["password", "find", "--service", "imap", "--account", "a", "--value"],
                store: store
            ).stdoutText, "alice-secret")
        XCTAssertEqual(
            try run(
                fx, as: alice, ["password", "find", "--service", "smtp", "--account", "b", "--value"],
                store: store
            ).stdoutText, "bob-secret")
        let message = try write(Array("to sign".utf8), to: "m")
        chmod(workDirectory.path, 0o755)
        chmod(message, 0o644)
        let signature = try run(fx, as: bob, ["sign", "--tag", "svc.key", "--in", message], store: store)
        XCTAssertEqual(signature.status, 0, signature.stderr)
        XCTAssertEqual(signature.stdout.count, 128)

        // Every folder is setgid, group-owned and shut to others; every file 0660 of the group,
        // whatever the umask; items are owned by whoever wrote them.
        let gid = getgrnam(group)!.pointee.gr_gid
        var owners = Set<uid_t>()
        let enumerator = FileManager.default.enumerator(atPath: store)!
        var count = 0
        for case let relative as String in enumerator {
            var st = stat()
            XCTAssertEqual(lstat(store + "/" + relative, &st), 0)
            XCTAssertEqual(st.st_gid, gid, relative)
            if st.st_mode & S_IFMT == S_IFDIR {
                XCTAssertEqual(st.st_mode & 0o7777, 0o2770, relative)
            } else {
                XCTAssertEqual(st.st_mode & 0o7777, 0o660, relative)
                if relative.hasSuffix(".item") || relative.hasSuffix(".pem") { owners.insert(st.st_uid) }
            }
            count += 1
        }
        XCTAssertGreaterThan(count, 10)
        XCTAssertEqual(owners, [fx.uid(alice), fx.uid(bob)])
        var root = stat()
        stat(store, &root)
        XCTAssertEqual(root.st_mode & 0o7777, 0o2770)

        // A user outside the group is refused, with who owns the store and why.
        let refused = try run(
            fx, as: carol, ["password", "find", "--service", "imap", "--account", "a", "--value"], store: store)
        XCTAssertEqual(refused.status, 77, refused.stderr)
        XCTAssertEqual(refused.stdout, [])
        XCTAssertEqual(
            refused.stderr,
            "rsakit: error: access to the key store at \(store) denied: the folder belongs to user \(alice) and "
                + "group \(group) "
                + "(mode 02770); user \(carol) is not a member of group \(group)\n")
        XCTAssertEqual(try run(fx, as: carol, ["list"], store: store).status, 77)

        // A loose file (open to others) and a file of another group are refused as in ssh.
        let item = try XCTUnwrap(
            FileManager.default.subpathsOfDirectory(atPath: store + "/passwords")
                .first { $0.hasSuffix(".item") }
        ).description
        let itemPath = store + "/passwords/" + item
        chmod(itemPath, 0o664)
        let loose = try run(fx, as: bob, ["list"], store: store)
        XCTAssertEqual(loose.status, 1)
        XCTAssertTrue(
            loose.stderr.contains(
                "unsafe shared key store: \(itemPath): mode 0664 lets users outside group \(group) in"),
            loose.stderr)
        chmod(itemPath, 0o660)
        chown(itemPath, uid_t.max, getgrnam(bob)!.pointee.gr_gid)
        let wrongGroup = try run(fx, as: alice, ["list"], store: store)
        XCTAssertEqual(wrongGroup.status, 1)
        XCTAssertTrue(
            wrongGroup.stderr.contains("it belongs to group \(bob), not to the store's group \(group)"),
            wrongGroup.stderr)
        chown(itemPath, uid_t.max, gid)
        XCTAssertEqual(try run(fx, as: alice, ["list"], store: store).status, 0)

        // A mistyped Unix group makes nothing.
        let typo = try run(fx, as: alice, ["store", "init", "--shared-with", group + "x"], store: parent + "/other")
        XCTAssertEqual(typo.status, 64, typo.stderr)
        XCTAssertTrue(typo.stderr.contains("no Unix group is named \"\(group)x\""), typo.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: parent + "/other"))
        // A private store keeps refusing group bits.
        let privateStore = parent + "/private"
        XCTAssertEqual(try run(fx, as: alice, ["store", "init"], store: privateStore).status, 0)
        chmod(privateStore, 0o770)
        let privateLoose = try run(fx, as: alice, ["list"], store: privateStore)
        XCTAssertEqual(privateLoose.status, 1)
        XCTAssertTrue(privateLoose.stderr.contains("unprotected key store"), privateLoose.stderr)
    }

    /// Adds by one member killed with SIGKILL at spread-out moments: afterwards another member
    /// reads the store (recovering any journal left), the earlier items intact.
    func testKill9DuringAddsToASharedStoreLosesNothing() throws {
        let fx = try UnixUsersFixture(binary: Self.binary)
        fixture = fx
        let group = try fx.group("rkg")
        let alice = try fx.user("rka", groups: [group])
        let bob = try fx.user("rkb", groups: [group])
        let store = fx.folder + "/shared"
        XCTAssertEqual(
            try ChildProcess.run([fx.binary, "store", "init", "--shared-with", group, "--store", store]).status, 0)
        XCTAssertEqual(
            try run(
                fx, as: bob, ["password", "add", "--service", "old", "--account", "b"], store: store,
                stdin: Array("kept".utf8)
            ).status, 0)
        let value = [UInt8](repeating: 0x61, count: 30_000)
        let input = try write(value, to: "value")
        chmod(workDirectory.path, 0o755)
        chmod(input, 0o644)
        var killed = 0
        var completed: [Int] = []
        for round in 0..<12 {
            let child = try ChildProcess(
                fx.asUser(
                    alice,
                    [fx.binary, "password", "add", "--service", "new\(round)", "--account", "a", "--store", store]),
                environment: ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent"], stdin: .file(input))
            usleep(UInt32(2_000 + round * 5_000))
            if child.isRunning {
                child.kill9()
                killed += 1
            } else if try child.wait() == .exited(0) {
                completed.append(round)
            }
        }
        let listing = try run(fx, as: bob, ["password", "list"], store: store)
        XCTAssertEqual(listing.status, 0, listing.stderr)
        XCTAssertTrue(listing.stdoutText.contains("old"), listing.stdoutText)
        XCTAssertEqual(
            try run(
                fx, as: bob, ["password", "find", "--service", "old", "--account", "b", "--value"],
                store: store
            ).stdoutText, "kept")
        // Every add that finished is there, and every item that made it is whole; no journal
        // is left.
        for round in completed {
            XCTAssertTrue(listing.stdoutText.contains("new\(round)"), "new\(round) finished but is not listed")
        }
        for round in 0..<12
        where listing.stdoutText.contains("new\(round) ") || listing.stdoutText.contains("new\(round)\n") {
            let found = try run(
                fx, as: bob, ["password", "find", "--service", "new\(round)", "--account", "a", "--value"], store: store
            )
            XCTAssertEqual(found.stdout, value, "new\(round): \(found.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: store + "/journal"))
        print("kill -9 during adds to a shared store: \(killed) of 12 adds killed")
        XCTAssertGreaterThan(killed, 0)
    }
}
