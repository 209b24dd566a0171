// HTTP through libcurl (libcurl3-gnutls, loaded on first use), never a client of our own: one POST (OCSP,
// RFC 6960 Appendix A.1) or GET (a CRL from a distribution point) with a timeout and a
// response size limit. The only Swift file that imports CCurl.
import RSAKitCore
internal import CCurl
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A blocking HTTP client for small exchanges (OCSP): http and https only, no redirects, no
/// cookies; the proxy libcurl reads from the environment (`http_proxy`...), except for loopback.
internal enum HTTPClient {
    /// What went wrong, as a lower-case phrase ("timed out after 5 s", "HTTP status 500").
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The body of one response, collected up to a limit by libcurl's write callback.
    private final class Sink {
        var bytes: [UInt8] = []
        let limit: Int
        var overLimit = false
        init(limit: Int) { self.limit = limit }
    }

    /// POST `body` to `url` and return the response body of a 200 answer.
    ///
    /// - Parameters:
    ///   - url: an `http://` or `https://` URL.
    ///   - body: the request body (an OCSPRequest DER, RFC 6960 §4.1.1).
    ///   - contentType: the request's Content-Type (`application/ocsp-request`).
    ///   - accept: the Accept header (`application/ocsp-response`).
    ///   - timeout: seconds for the whole exchange, connecting included.
    ///   - maximumResponseByteCount: a longer response is abandoned.
    /// - Returns: the response body.
    /// - Throws: ``Failure`` naming the cause: a URL of another scheme, libcurl not installed
    ///   (libcurl3-gnutls, loaded on first use), a connection or
    ///   transfer error (libcurl's sentence), the timeout, a response over the limit, a status
    ///   other than 200.
    static func post(
        url: String, body: [UInt8], contentType: String, accept: String,
        timeout: Double, maximumResponseByteCount: Int
    ) throws -> [UInt8] {
        try perform(
            url: url, body: body, headers: ["Content-Type: \(contentType)", "Accept: \(accept)"],
            timeout: timeout, maximumResponseByteCount: maximumResponseByteCount)
    }

    /// GET `url` (a CRL from a cRLDistributionPoints URL, RFC 5280 §4.2.1.13) and return the
    /// response body of a 200 answer.
    /// - Parameters: as ``post(url:body:contentType:accept:timeout:maximumResponseByteCount:)``.
    /// - Throws: ``Failure``, as `post`.
    static func get(url: String, timeout: Double, maximumResponseByteCount: Int) throws -> [UInt8] {
        try perform(
            url: url, body: nil, headers: [], timeout: timeout, maximumResponseByteCount: maximumResponseByteCount)
    }

    /// One exchange: a POST of `body`, or a GET when it is nil.
    private static func perform(
        url: String, body: [UInt8]?, headers headerLines: [String],
        timeout: Double, maximumResponseByteCount: Int
    ) throws -> [UInt8] {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            throw Failure(description: "only http and https URLs are fetched, not \"\(url)\"")
        }
        // libcurl is loaded (dlopen) and set up on the first exchange of the process.
        if let problem = rsakit_curl_load() { throw Failure(description: String(cString: problem)) }
        guard let handle = rsakit_curl_easy_init() else { throw Failure(description: "curl_easy_init failed") }
        defer { rsakit_curl_easy_cleanup(handle) }
        let sink = Sink(limit: maximumResponseByteCount)
        var headers: UnsafeMutablePointer<curl_slist>?
        for line in headerLines { headers = rsakit_curl_slist_append(headers, line) }
        defer { rsakit_curl_slist_free_all(headers) }
        let milliseconds = max(1, Int(timeout * 1000))
        let code: CURLcode = (body ?? []).withUnsafeBufferPointer { bodyBytes in
            withExtendedLifetime(sink) {
                let context = Unmanaged.passUnretained(sink).toOpaque()
                var setup = rsakit_curl_setopt_string(handle, CURLOPT_URL, url)
                func set(_ result: CURLcode) { if setup == CURLE_OK { setup = result } }
                set(rsakit_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
                set(rsakit_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
                // A proxy cannot reach this machine's loopback: never send those through one.
                set(rsakit_curl_setopt_string(handle, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1"))
                set(rsakit_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds))
                set(rsakit_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds))
                set(rsakit_curl_setopt_long(handle, CURLOPT_MAXFILESIZE, maximumResponseByteCount))
                if body != nil {
                    set(rsakit_curl_setopt_long(handle, CURLOPT_POST, 1))
                    set(
                        rsakit_curl_setopt_pointer(
                            handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bodyBytes.baseAddress)))
                    set(rsakit_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, bodyBytes.count))
                }
                if headers != nil { set(rsakit_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)) }
                set(rsakit_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
                set(
                    rsakit_curl_setopt_write_function(handle) { data, size, count, context in
                        guard let data, let context else { return 0 }
                        let sink = Unmanaged<Sink>.fromOpaque(context).takeUnretainedValue()
                        let n = size * count
                        guard sink.bytes.count + n <= sink.limit else {
                            sink.overLimit = true
                            return 0  // libcurl stops with CURLE_WRITE_ERROR
                        }
                        sink.bytes += UnsafeRawBufferPointer(start: data, count: n)
                        return n
                    })
                guard setup == CURLE_OK else { return setup }
                return rsakit_curl_easy_perform(handle)
            }
        }
        if sink.overLimit || code == CURLE_FILESIZE_EXCEEDED {
            throw Failure(description: "the response is over \(maximumResponseByteCount) bytes")
        }
        if code == CURLE_OPERATION_TIMEDOUT {
            throw Failure(description: "no answer within \(timeout) s (timed out)")
        }
        guard code == CURLE_OK else {
            throw Failure(description: String(cString: rsakit_curl_easy_strerror(code)).lowercased())
        }
        var status = 0
        _ = rsakit_curl_response_code(handle, &status)
        guard status == 200 else { throw Failure(description: "HTTP status \(status)") }
        return sink.bytes
    }
}
