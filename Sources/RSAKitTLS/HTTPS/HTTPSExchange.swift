// One HTTP exchange (HTTP/1.1, or HTTP/2 when the server selects h2 by ALPN) through libcurl
// over a socket that rsakit's TLS relays: the TLS connection is made first (trust, client
// identity, ALPN), then libcurl is given a plain http:// URL, and its open-socket callback
// starts the relay and redirects libcurl's connect to the relay's loopback end. libcurl's
// HTTPS support is never reached: its protocols are limited to http.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
internal import CCurl
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Where a response body goes. Called on the transfer's thread only.
protocol HTTPSBodySink: AnyObject {
    /// A response's headers are complete (before its first body byte; again after a redirect).
    func begin(statusCode: Int)
    /// The next body bytes. - Throws: to stop the transfer (the error is the request's).
    func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// The body in memory, up to a limit.
final class HTTPSMemorySink: HTTPSBodySink {
    private(set) var bytes: [UInt8] = []
    let limit: Int
    init(limit: Int) { self.limit = limit }
    func begin(statusCode: Int) { bytes = [] }
    func write(_ chunk: UnsafeRawBufferPointer) throws {
        guard bytes.count + chunk.count <= limit else { throw RSAHTTPSError.responseTooLarge(limit: limit) }
        bytes += chunk
    }
}

/// The body of a 2xx response into an output file; other bodies are dropped.
final class HTTPSFileSink: HTTPSBodySink {
    let output: RSAOutputFile
    let limit: Int?
    private var writing = false
    private var count = 0
    init(output: RSAOutputFile, limit: Int?) { self.output = output; self.limit = limit }
    func begin(statusCode: Int) { writing = (200...299).contains(statusCode); count = 0 }
    func write(_ chunk: UnsafeRawBufferPointer) throws {
        guard writing else { return }
        count += chunk.count
        if let limit, count > limit { throw RSAHTTPSError.responseTooLarge(limit: limit) }
        var offset = 0
        while offset < chunk.count {
            let written = Glibc.write(output.fileDescriptor, chunk.baseAddress! + offset, chunk.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw RSAError.outputFileFailed(
                    path: output.path ?? "standard output", reason: RSATLSSocket.errnoText())
            }
            offset += written
        }
    }
}

/// One request to one URL: the libcurl handle, its callbacks' state, and the relay.
final class HTTPSExchange {
    let request: RSAHTTPSRequest
    let configuration: RSAHTTPSClientConfiguration
    let sink: HTTPSBodySink
    let cancellation: RSACancellationFlag
    let followsRedirects: Bool
    let resourceTimeout: Double?
    let host: String
    let port: Int
    let curlURL: String

    // What the callbacks record (on libcurl's thread, which is this exchange's thread).
    private var statusCode = 0
    private var httpVersion = ""
    private var headers: [String: String] = [:]
    private var headersDone = false
    private var discardingBody = false
    /// The first failure a callback met, reported instead of libcurl's code for it.
    private var failure: (any Error)?
    private var relay: HTTPSRelay?
    /// The TLS connection made before libcurl starts, until its open-socket callback takes it.
    private var pendingConnection: RSATLSConnection?

    init(
        request: RSAHTTPSRequest, configuration: RSAHTTPSClientConfiguration, sink: HTTPSBodySink,
        cancellation: RSACancellationFlag, followsRedirects: Bool, resourceTimeout: Double?
    ) throws {
        let url = request.url
        guard url.scheme?.lowercased() == "https", let host = url.host(percentEncoded: false), !host.isEmpty,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else {
            throw RSAHTTPSError.unsupportedURL(url.absoluteString)
        }
        self.request = request
        self.configuration = configuration
        self.sink = sink
        self.cancellation = cancellation
        self.followsRedirects = followsRedirects
        self.resourceTimeout = resourceTimeout
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = url.port ?? 443
        // libcurl sees http:// with the port spelt out (its default for http would be 80);
        // the Host header below restores the https authority the server expects.
        components.scheme = "http"
        components.port = port
        components.fragment = nil
        guard let text = components.string else { throw RSAHTTPSError.unsupportedURL(url.absoluteString) }
        curlURL = text
    }

    /// Run the exchange. - Returns: the response (the body went to the sink).
    func run() throws -> RSAHTTPSResponse {
        if let problem = rsakit_curl_load() { throw RSAHTTPSError.transferFailed(reason: String(cString: problem)) }
        try cancellation.check()
        // TLS first: the protocol the server selects by ALPN decides how libcurl must speak,
        // which is set before libcurl starts. A connection libcurl never asked for is closed.
        let connection = try connect()
        pendingConnection = connection
        defer { pendingConnection?.close() }
        let http2 = connection.negotiatedApplicationProtocol == "h2"
        guard let handle = rsakit_curl_easy_init() else {
            throw RSAHTTPSError.transferFailed(reason: "curl_easy_init failed")
        }
        defer { rsakit_curl_easy_cleanup(handle) }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { rsakit_curl_slist_free_all(headerList) }
        if request.value(forHTTPHeaderField: "Host") == nil {
            let authority =
                port == 443
                ? (host.contains(":") ? "[\(host)]" : host) : RSATLSConnection.endpointText(host: host, port: port)
            headerList = rsakit_curl_slist_append(headerList, "Host: \(authority)")
        }
        for (name, value) in request.allHTTPHeaderFields.sorted(by: { $0.key < $1.key }) {
            // "Name;" is libcurl's spelling of a header sent with an empty value.
            headerList = rsakit_curl_slist_append(headerList, value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        let body = request.httpBody.map { [UInt8]($0) }
        let idle = max(1, Int(request.timeoutInterval.rounded(.up)))
        let code: CURLcode = (body ?? []).withUnsafeBufferPointer { bodyBytes in
            withExtendedLifetime(self) {
                let context = Unmanaged.passUnretained(self).toOpaque()
                var setup = rsakit_curl_setopt_string(handle, CURLOPT_URL, curlURL)
                func set(_ result: CURLcode) { if setup == CURLE_OK { setup = result } }
                // Plain HTTP only: TLS is rsakit's, never libcurl's.
                set(rsakit_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http"))
                // HTTP/2 when the server chose h2 by ALPN: "prior knowledge", since the bytes are
                // already inside TLS and libcurl must neither upgrade nor wait for a 101
                // (RFC 9113 §3.3); else HTTP/1.1.
                set(
                    rsakit_curl_setopt_long(
                        handle, CURLOPT_HTTP_VERSION,
                        http2 ? Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE) : Int(CURL_HTTP_VERSION_1_1)))
                set(rsakit_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
                // The relay connects to the URL's host itself; a proxy would get the origin's bytes.
                set(rsakit_curl_setopt_string(handle, CURLOPT_PROXY, ""))
                set(rsakit_curl_setopt_long(handle, CURLOPT_FORBID_REUSE, 1))
                set(rsakit_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
                set(rsakit_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.httpMethod))
                if request.httpMethod == "HEAD" { set(rsakit_curl_setopt_long(handle, CURLOPT_NOBODY, 1)) }
                // The idle limit: less than one byte a second for `idle` seconds.
                set(rsakit_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1))
                set(rsakit_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, idle))
                if let resourceTimeout {
                    set(rsakit_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, Int(resourceTimeout * 1000))))
                }
                if body != nil {
                    set(
                        rsakit_curl_setopt_pointer(
                            handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bodyBytes.baseAddress)))
                    set(rsakit_curl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bodyBytes.count)))
                }
                if headerList != nil { set(rsakit_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)) }
                set(rsakit_curl_setopt_pointer(handle, CURLOPT_OPENSOCKETDATA, context))
                set(
                    rsakit_curl_setopt_opensocket_function(handle) { context, _, address in
                        Unmanaged<HTTPSExchange>.fromOpaque(context!).takeUnretainedValue().openSocket(address!)
                    })
                set(rsakit_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context))
                set(
                    rsakit_curl_setopt_header_function(handle) { data, size, count, context in
                        let exchange = Unmanaged<HTTPSExchange>.fromOpaque(context!).takeUnretainedValue()
                        exchange.header(UnsafeRawBufferPointer(start: data, count: size * count))
                        return size * count
                    })
                set(rsakit_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
                set(
                    rsakit_curl_setopt_write_function(handle) { data, size, count, context in
                        let exchange = Unmanaged<HTTPSExchange>.fromOpaque(context!).takeUnretainedValue()
                        return exchange.body(UnsafeRawBufferPointer(start: data, count: size * count))
                            ? size * count : 0
                    })
                // The progress callback runs about once a second even when nothing moves, and
                // after every chunk: the point where a cancelled task stops the transfer.
                set(rsakit_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0))
                set(rsakit_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context))
                set(
                    rsakit_curl_setopt_xferinfo_function(handle) { context, _, _, _, _ in
                        let exchange = Unmanaged<HTTPSExchange>.fromOpaque(context!).takeUnretainedValue()
                        return (try? exchange.cancellation.check()) == nil ? 1 : 0
                    })
                guard setup == CURLE_OK else { return setup }
                return rsakit_curl_easy_perform(handle)
            }
        }
        // The relay's failure (a TLS alert after the handshake) explains libcurl's "empty
        // reply" or "recv failure"; it is recorded before the relay closes its end.
        let relayFailure = relay?.failure
        if let failure { throw failure }
        if code == CURLE_ABORTED_BY_CALLBACK || (try? cancellation.check()) == nil { throw CancellationError() }
        if code == CURLE_OPERATION_TIMEDOUT {
            let seconds = resourceTimeout.map { min($0, request.timeoutInterval) } ?? request.timeoutInterval
            throw RSAHTTPSError.timedOut(seconds: seconds)
        }
        if code != CURLE_OK, let relayFailure { throw relayFailure }
        guard code == CURLE_OK else {
            throw RSAHTTPSError.transferFailed(reason: String(cString: rsakit_curl_easy_strerror(code)).lowercased())
        }
        return RSAHTTPSResponse(
            url: request.url, statusCode: statusCode, allHeaderFields: headers, httpVersion: httpVersion)
    }

    /// libcurl wants a socket: take the TLS connection made before it started, give libcurl a TCP socket and
    /// point its address at a one-connection loopback listener whose accepted end the relay
    /// copies to and from TLS. CURL_SOCKET_BAD on failure, with the failure recorded (libcurl
    /// itself would only say "couldn't connect").
    ///
    /// NOTE: a socketpair handed over with CURL_SOCKOPT_ALREADY_CONNECTED would save the
    /// listener, but libcurl 7.88 (Debian 12) still calls connect() on it ("Immediate connect
    /// fail"); a loopback TCP pair works with every libcurl. The listener accepts only the
    /// socket made here (its local address is checked), so no other local process can take
    /// over the authenticated connection.
    private func openSocket(_ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        do {
            try cancellation.check()
            guard let connection = pendingConnection else {
                throw RSATLSError.connectionFailed(reason: "libcurl asked for a second connection in one exchange")
            }
            pendingConnection = nil
            let pair: (client: Int32, listener: Int32, clientAddress: sockaddr_in, listenerAddress: sockaddr_in)
            do { pair = try HTTPSLoopback.make() } catch { connection.close(); throw error }
            address.pointee.family = AF_INET
            address.pointee.socktype = Int32(SOCK_STREAM.rawValue)
            address.pointee.protocol = Int32(IPPROTO_TCP)
            address.pointee.addrlen = UInt32(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &address.pointee.addr) { target in
                withUnsafeBytes(of: pair.listenerAddress) { target.copyMemory(from: $0) }
            }
            relay = HTTPSRelay(
                connection: connection, listener: pair.listener, expectedPeer: pair.clientAddress,
                acceptTimeout: request.timeoutInterval)
            return pair.client
        } catch {
            if failure == nil { failure = error }
            return CURL_SOCKET_BAD
        }
    }

    /// The TLS connection, with the client-certificate challenge answered: the configured
    /// identity up front, else the handler's (sync, else async), asked only when the server
    /// wanted one and after it was trusted. ALPN offers h2 unless the request forbids it.
    private func connect() throws -> RSATLSConnection {
        var tls = configuration.tlsConfiguration
        tls.serverName = host
        tls.timeout = request.timeoutInterval
        tls.applicationProtocols = request.allowsHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
        let first = try RSATLSConnection.connect(
            host: host, port: port, configuration: tls, identity: configuration.identity)
        guard configuration.identity == nil, first.identity == nil, first.clientCertificateRequested,
            configuration.clientIdentityHandler != nil || configuration.clientIdentityHandlerAsync != nil
        else {
            return first
        }
        let challenge = RSAHTTPSClientCertificateChallenge(
            host: host, port: port, serverCertificates: first.serverCertificates)
        first.close()
        let chosen: RSATLSClientIdentity?
        if let handler = configuration.clientIdentityHandler {
            chosen = try handler(challenge)
        } else if let handler = configuration.clientIdentityHandlerAsync {
            // Awaited from this transfer's own thread (never a cooperative-pool thread), for at
            // most the request's idle limit: unanswered by then, the request fails.
            let seconds = request.timeoutInterval
            let timedOut = Result<RSATLSClientIdentity?, any Error>.failure(
                RSATLSError.timedOut(operation: "the client identity handler for \(host)", seconds: seconds))
            chosen = try RSATLSHandlerBridge.wait(seconds: seconds, orElse: timedOut) {
                do { return .success(try await handler(challenge)) } catch { return .failure(error) }
            }.get()
        } else {
            chosen = nil
        }
        try cancellation.check()
        guard let identity = chosen else {
            return try RSATLSConnection.connect(host: host, port: port, configuration: tls, identity: nil)
        }
        try cancellation.check()
        return try RSATLSConnection.connect(host: host, port: port, configuration: tls, identity: identity)
    }

    /// One header line: a status line starts a response (a 100 Continue, the final one).
    private func header(_ bytes: UnsafeRawBufferPointer) {
        let line = String(decoding: bytes, as: UTF8.self).trimmingHTTPWhitespace()
        if line.hasPrefix("HTTP/") {
            let fields = line.split(separator: " ", maxSplits: 2)
            httpVersion = String(fields[0])
            statusCode = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
            headers = [:]
            headersDone = false
        } else if line.isEmpty {
            guard statusCode >= 200 || statusCode < 100 else { return }  // an interim 1xx
            headersDone = true
            discardingBody =
                followsRedirects && HTTPSRedirects.redirectStatuses.contains(statusCode)
                && headers.keys.contains { $0.lowercased() == "location" }
            if !discardingBody { sink.begin(statusCode: statusCode) }
        } else if let colon = line.firstIndex(of: ":") {
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingHTTPWhitespace()
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
    }

    /// Body bytes: to the sink. - Returns: false to stop libcurl (the failure is recorded).
    private func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if discardingBody { return true }
        do {
            try sink.write(bytes)
            return true
        } catch {
            if failure == nil { failure = error }
            return false
        }
    }
}
