// The process-level target: a whole `rsakit decrypt --raw --key KEY --in FILE` per
// measurement (exec, loader, key parsing, blinding, decryption, exit), valid raw blocks
// against random ones, exit status ignored by the statistics. A process takes 20-30 ms, so
// this target gets far fewer measurements than the library targets.

import Foundation
import Glibc
import RSAKit

/// Prepared input files per class of the process target.
let processPoolSize = 16

/// Spawns one argument vector again and again, output to /dev/null.
final class Spawner {
    private let argvs: [[UnsafeMutablePointer<CChar>?]]
    private var actions = posix_spawn_file_actions_t()

    /// - Parameter commands: argument vectors, the first element of each an absolute path.
    init(commands: [[String]]) {
        argvs = commands.map { $0.map { strdup($0) } + [nil] }
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }

    deinit {
        posix_spawn_file_actions_destroy(&actions)
        for argv in argvs { for argument in argv { free(argument) } }
    }

    /// Run command `index` to its end. - Returns: true for exit status 0.
    func run(_ index: Int) -> Bool {
        var pid: pid_t = 0
        let spawned = argvs[index].withUnsafeBufferPointer { argv in
            posix_spawn(&pid, argv[0]!, &actions, nil, argv.baseAddress!, environ)
        }
        guard spawned == 0 else { return false }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS: exited normally with status 0.
        return status & 0x7F == 0 && (status >> 8) & 0xFF == 0
    }
}

/// `rsakit decrypt --raw` of one valid block (M=48) against one random block, key and
/// blocks written to `directory`.
func processTarget(key: RSAPrivateKey, rsakit: String, directory: URL) throws -> TimingTarget {
    let keyFile = directory.appendingPathComponent("timing-key.pem")
    try Data(key.pkcs8PEMRepresentation.utf8).write(to: keyFile)
    var commands: [[String]] = []
    for kind in [MarvinClass.valid48, .random] {
        for i in 0..<processPoolSize {
            let block = pkcs1Ciphertext(kind, key: key.publicKey)
            let file = directory.appendingPathComponent("\(kind == .random ? "random" : "valid")-\(i).bin")
            try Data(block).write(to: file)
            commands.append([rsakit, "decrypt", "--raw", "--key", keyFile.path, "--in", file.path])
        }
    }
    let spawner = Spawner(commands: commands)
    var target = TimingTarget(
        name: "process-decrypt-raw", classes: (MarvinClass.valid48.rawValue, MarvinClass.random.rawValue),
        prepare: nil, poolSize: processPoolSize, run: { cls, item in spawner.run(cls * processPoolSize + item) },
        expected: (true, false))
    target.isProcess = true
    return target
}
