import RSAKit

/// What `rsakit --version` prints: rsakit's version, then one line per C library it runs with
/// (the run-time versions the loaded libraries report), then how the private-key
/// exponentiation is done.
enum VersionInfo {
    static var text: String {
        var lines = ["rsakit \(RSAKitCommandLine.version)"]
        lines.append("GMP \(RSAKitLibraryVersions.gmp)")
        lines.append("Nettle \(RSAKitLibraryVersions.nettle)")
        // GnuTLS: add "GnuTLS \(RSAKitLibraryVersions.gnutls)" here when Sources/RSAKit/GnuTLS lands.
        // libsodium: likewise, "libsodium \(RSAKitLibraryVersions.sodium)".
        // Exponentiation path: add "exponentiation: \(...)" here when the library exposes which
        // modular-exponentiation kernel it picked at run time (GMP mpn_sec_powm, IFMA...).
        return lines.joined(separator: "\n") + "\n"
    }
}
