import RSAKitCore
import RSAKitPKI
internal import CSodium

extension RSAKitLibraryVersions {
    /// libsodium's run-time version (`sodium_version_string()`), for example "1.0.18".
    public static var sodium: String { String(cString: sodium_version_string()) }
}
