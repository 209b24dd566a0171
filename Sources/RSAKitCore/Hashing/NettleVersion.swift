internal import CNettle

extension RSAKitLibraryVersions {
    /// Nettle's run-time version, "MAJOR.MINOR" (`nettle_version_major()`,
    /// `nettle_version_minor()`), for example "3.10".
    public static var nettle: String { "\(nettle_version_major()).\(nettle_version_minor())" }
}
