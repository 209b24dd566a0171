#if canImport(Glibc)
import Glibc
#endif
import RSAKit

// rsakit: RSA encryption with a tagged key store. Data on stdout, diagnostics on stderr,
// exit statuses as documented in README.md (see ExitStatus).

signal(SIGPIPE, SIG_IGN)
let status = RSAKitCommandLine.run(Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
