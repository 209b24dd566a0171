#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAError: LocalizedError {
    /// The same lower-case sentence as ``description`` (never secret bytes), so that
    /// `localizedDescription` in an app reads "decryption failed" rather than
    /// "The operation could not be completed. (RSAKit.RSAError error 10.)".
    public var errorDescription: String? { description }
}
