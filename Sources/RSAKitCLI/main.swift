#if canImport(Glibc)
import Glibc
#endif
import RSAKit

// rsakit: RSA encryption with a tagged key store. Data on stdout, diagnostics on stderr,
// exit statuses as documented in README.md (see ExitStatus).

// SIGPIPE keeps its default action: `rsakit decrypt | head` ends quietly, as cat does.
let status = RSAKitCommandLine.run(Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
