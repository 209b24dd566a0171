internal import CRSAKitShims
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide protections for programs that hold private keys or passphrases in memory
/// (the `rsakit` CLI calls ``disableCoreDumps()`` first thing, before it parses anything).
///
/// A core dump writes the whole address space to disk, private keys and passphrases
/// included, and a dumpable process can be read by any other process of the same user
/// (`/proc/PID/mem`, ptrace). Zeroing buffers after use narrows the window; forbidding
/// dumps closes this channel while the secret is live. Linux only (prctl(2), setrlimit(2)).
public enum RSAKitProcessHardening {
    /// Forbid core dumps for the rest of the process: `prctl(PR_SET_DUMPABLE, 0)` and
    /// `RLIMIT_CORE` set to 0 bytes, soft and hard (so it cannot be raised again). Not
    /// dumpable also means: no ptrace attach and no `/proc/PID/mem` for other processes of
    /// the same user, and `/proc/PID/*` owned by root. Idempotent; cheap (two system calls).
    /// - Throws: `RSAError.internalError` naming the errno when the kernel refuses (it does
    ///   not, for lowering one's own limits).
    public static func disableCoreDumps() throws {
        let error = rsakit_disable_core_dumps()
        guard error == 0 else {
            throw RSAError.internalError("cannot disable core dumps: \(String(cString: strerror(error)))")
        }
    }

    /// Keep every page of the process, now and later, out of swap (`mlockall(MCL_CURRENT |
    /// MCL_FUTURE)`), for a long-lived holder of a key such as the agent. Best effort: a
    /// `RLIMIT_MEMLOCK` too small for the process makes the kernel refuse.
    /// - Returns: true when the memory is locked.
    @discardableResult
    public static func lockMemory() -> Bool {
        rsakit_lock_all_memory() == 0
    }

    /// Whether the process may dump core: `prctl(PR_GET_DUMPABLE)` is not 0 and the soft
    /// `RLIMIT_CORE` is not 0.
    public static var coreDumpsAllowed: Bool {
        var limit = rlimit()
        let limited = getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0 && limit.rlim_cur == 0
        return rsakit_get_dumpable() != 0 && !limited
    }

    /// Overwrite `bytes` with zeros in a way the optimiser may not remove (`explicit_bzero`),
    /// keeping its count. For buffers that held key files, passphrases or plaintext; copies
    /// Swift made earlier (array growth, copy-on-write) are not reached, so build secret
    /// arrays at their final capacity where possible.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { rsakit_secure_zero(base, buffer.count) }
        }
    }
}
