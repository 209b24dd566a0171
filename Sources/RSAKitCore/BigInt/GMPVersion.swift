internal import CGMP

/// The versions of the C libraries RSAKit runs with, as the loaded libraries report them
/// (not the headers it was built against), for `rsakit --version` and bug reports.
///
/// Each library's version is read in the one folder that wraps it: GMP here, Nettle in
/// `Hashing/`. Libraries added later (GnuTLS, libsodium) add a property in their folder.
public enum RSAKitLibraryVersions {
    /// GMP's `gmp_version` string, for example "6.3.0".
    public static var gmp: String { String(cString: __gmp_version) }
}
