#if canImport(Glibc)
import Glibc
#endif
import RSAKit
import _RSAKitCLI

// rsakit: RSA encryption with a tagged key store. Data on stdout, diagnostics on stderr,
// exit statuses as documented in docs/scripting.md (see ExitStatus).

// No core dumps, no same-user ptrace or /proc/PID/mem, from the first instruction on:
// every command may hold a private key or passphrase (decrypt, genpair, import, export,
// and encrypt or show given a private key file), so the simplest correct moment is
// before anything is parsed. docs/security.md.
do {
    try RSAKitProcessHardening.disableCoreDumps()
} catch {
    var line = Array("rsakit: error: \(error)\n".utf8)
    _ = write(STDERR_FILENO, &line, line.count)
    exit(RSAKitCommandLineEntry.failureStatus)
}

// SIGPIPE keeps its default action: `rsakit decrypt | head` ends quietly, as cat does.
// Run as git-credential-rsakit (a link installed by scripts/install.sh), rsakit is git's
// credential helper: `git-credential-rsakit get` is `rsakit git-credential get`.
var arguments = Array(CommandLine.arguments.dropFirst())
if CommandLine.arguments.first.map({ $0.split(separator: "/").last == "git-credential-rsakit" }) == true {
    arguments.insert("git-credential", at: 0)
}
exit(RSAKitCommandLineEntry.run(arguments))
