// The request and response of the HTTPS client, shaped like Foundation's URLRequest and
// HTTPURLResponse: those live in FoundationNetworking, which RSAKit does not use (it builds
// on FoundationEssentials alone), so the client has its own two value types.
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTPS request for ``RSAHTTPSClient``, in the shape of Foundation's `URLRequest`:
/// the URL, the method, header fields, a body and a timeout.
public struct RSAHTTPSRequest: Sendable, Hashable {
    /// The `https://` URL (`URLRequest.url`). Other schemes are refused when the request is
    /// sent (``RSAHTTPSError/unsupportedURL(_:)``).
    public var url: URL
    /// The method ("GET", "POST", "PUT", ...; `URLRequest.httpMethod`). Default "GET".
    public var httpMethod: String = "GET"
    /// Header fields sent as given (`URLRequest.allHTTPHeaderFields`). Names compare without
    /// regard to case in ``setValue(_:forHTTPHeaderField:)``. `Host` defaults to the URL's
    /// authority; `Content-Length` is computed from ``httpBody``.
    public var allHTTPHeaderFields: [String: String] = [:]
    /// The body sent with the request (`URLRequest.httpBody`); nil sends none.
    public var httpBody: Data?
    /// Seconds the exchange may stay idle, connecting and the TLS handshake included, before
    /// it fails with ``RSAHTTPSError/timedOut(seconds:)`` (`URLRequest.timeoutInterval`:
    /// an idle limit, not a limit on the whole transfer). Default 60.
    public var timeoutInterval: Double = 60
    /// Whether HTTP/2 may be used (default true): ALPN offers "h2" then "http/1.1", and the
    /// exchange is HTTP/2 when the server selects h2. False offers "http/1.1" only and
    /// speaks HTTP/1.1 whatever the server supports (``RSAHTTPSResponse/httpVersion`` tells
    /// which was used). Kept for every redirect of the request.
    public var allowsHTTP2 = true

    /// A GET request for `url` with a `timeoutInterval`-second idle limit (`URLRequest(url:timeoutInterval:)`).
    public init(url: URL, timeoutInterval: Double = 60) {
        self.url = url
        self.timeoutInterval = timeoutInterval
    }

    /// The value of header field `field` (any case), or nil (`URLRequest.value(forHTTPHeaderField:)`).
    public func value(forHTTPHeaderField field: String) -> String? {
        allHTTPHeaderFields.first { $0.key.lowercased() == field.lowercased() }?.value
    }

    /// Set header field `field` to `value`, replacing it in any case; nil removes it
    /// (`URLRequest.setValue(_:forHTTPHeaderField:)`).
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {
        for key in allHTTPHeaderFields.keys where key.lowercased() == field.lowercased() {
            allHTTPHeaderFields[key] = nil
        }
        if let value { allHTTPHeaderFields[field] = value }
    }
}

/// The response to an ``RSAHTTPSRequest``, in the shape of Foundation's `HTTPURLResponse`:
/// the final URL (after redirects), the status code and the header fields.
public struct RSAHTTPSResponse: Sendable, Hashable {
    /// The URL that answered: the request's, or the last one redirected to (`URLResponse.url`).
    public let url: URL
    /// The HTTP status code (200, 404, ...; `HTTPURLResponse.statusCode`).
    public let statusCode: Int
    /// The header fields as received (`HTTPURLResponse.allHeaderFields`); a field sent more
    /// than once has its values joined by ", " (RFC 9110 §5.3).
    public let allHeaderFields: [String: String]
    /// The HTTP version the response came in: "HTTP/2" when the server selected h2 by ALPN,
    /// else its status line's ("HTTP/1.1", "HTTP/1.0").
    public let httpVersion: String

    /// The value of header field `field` (any case), or nil (`HTTPURLResponse.value(forHTTPHeaderField:)`).
    public func value(forHTTPHeaderField field: String) -> String? {
        allHeaderFields.first { $0.key.lowercased() == field.lowercased() }?.value
    }

    /// The body's length as the server announced it (`Content-Length`), or nil
    /// (`URLResponse.expectedContentLength`, which says -1).
    public var expectedContentLength: Int? {
        value(forHTTPHeaderField: "Content-Length").flatMap { Int($0.trimmingHTTPWhitespace()) }
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200...299).contains(statusCode) }

    package init(url: URL, statusCode: Int, allHeaderFields: [String: String], httpVersion: String) {
        self.url = url
        self.statusCode = statusCode
        self.allHeaderFields = allHeaderFields
        self.httpVersion = httpVersion
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs, CR and LF (RFC 9110 §5.6.3's OWS, and line
    /// ends); FoundationEssentials has no `trimmingCharacters(in:)`.
    func trimmingHTTPWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
