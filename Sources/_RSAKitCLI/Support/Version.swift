import RSAKit

/// What `rsakit --version` prints: rsakit's version, then one line per C library it runs with
/// (the run-time versions the loaded libraries report), then how the private-key
/// exponentiation is done.
enum VersionInfo {
    static var text: String {
        var lines = ["rsakit \(RSAKitCommandLine.version)"]
        lines.append("GMP \(RSAKitLibraryVersions.gmp)")
        lines.append("Nettle \(RSAKitLibraryVersions.nettle)")
        lines.append("GnuTLS \(RSAKitLibraryVersions.gnutls)")
        lines.append("libsodium \(RSAKitLibraryVersions.sodium)")
        lines.append("private-key path: \(RSAKitEngine.privateKeyPathDescription)")
        return lines.joined(separator: "\n") + "\n"
    }
}
