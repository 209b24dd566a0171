import RSAKitCore
internal import CGnuTLS

extension RSAKitLibraryVersions {
    /// GnuTLS's run-time version (`gnutls_check_version(NULL)`), for example "3.7.9".
    public static var gnutls: String { gnutls_check_version(nil).map { String(cString: $0) } ?? "unknown" }
}
