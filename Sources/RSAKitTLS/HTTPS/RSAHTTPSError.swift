// The HTTPS client's own failures. TLS failures (an untrusted server, a refused client
// certificate) stay RSATLSError and keychain failures RSAError, as they are on a bare TLS
// connection, so a caller handles them in one place whichever API met them.
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The failures of ``RSAHTTPSClient`` that are about HTTP, not TLS: ``RSATLSError`` reports
/// the TLS connection's (trust, client certificate, handshake, connect), ``RSAError`` the
/// keychain's and the output file's; a cancelled task throws `CancellationError`.
/// Apple's counterpart: `URLError` (`.unsupportedURL`, `.timedOut`, `.httpTooManyRedirects`,
/// `.appTransportSecurityRequiresSecureConnection`, `.dataLengthExceedsMaximum`).
public enum RSAHTTPSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The URL is not an `https://` URL with a host (`URLError.unsupportedURL`).
    case unsupportedURL(String)
    /// A redirect (status 3xx) pointed from `from` to `to`, which is not `https://`: it was
    /// not followed, and nothing was sent to `to` (`URLError.appTransportSecurityRequiresSecureConnection`).
    case insecureRedirect(from: String, to: String)
    /// More than `limit` redirects in a row (`URLError.httpTooManyRedirects`).
    case tooManyRedirects(limit: Int)
    /// Nothing moved for `seconds` (``RSAHTTPSRequest/timeoutInterval``), or the whole
    /// transfer passed ``RSAHTTPSClientConfiguration/timeoutIntervalForResource`` (`URLError.timedOut`).
    case timedOut(seconds: Double)
    /// The response body passed `limit` bytes (``RSAHTTPSClientConfiguration/maximumResponseByteCount``;
    /// `URLError.dataLengthExceedsMaximum`). What was received is dropped.
    case responseTooLarge(limit: Int)
    /// The HTTP exchange failed: `reason` is libcurl's sentence (a malformed response, a body
    /// shorter than its Content-Length), or says that libcurl is not installed.
    case transferFailed(reason: String)
    /// A call that needs the body of a successful response
    /// (`RSAPKCS12/init(contentsOf:client:passphrase:maximumByteCount:)`)
    /// got `statusCode`, not 2xx, from `url` (`URLError.badServerResponse`); the body was dropped.
    case unsuccessfulStatus(statusCode: Int, url: String)

    /// A lower-case sentence.
    public var description: String {
        switch self {
        case let .unsupportedURL(url):
            return "only https URLs with a host are fetched, not \"\(url)\""
        case let .insecureRedirect(from, to):
            return "refused a redirect from \(from) to \(to), which is not https"
        case let .tooManyRedirects(limit):
            return "more than \(limit) redirects"
        case let .timedOut(seconds):
            return
                "timed out after \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s without "
                + "progress"
        case let .responseTooLarge(limit):
            return "the response is over \(limit) bytes"
        case let .transferFailed(reason):
            return "HTTP transfer failed: \(reason)"
        case let .unsuccessfulStatus(statusCode, url):
            return "HTTP status \(statusCode) from \(url)"
        }
    }
}

extension RSAHTTPSError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}
