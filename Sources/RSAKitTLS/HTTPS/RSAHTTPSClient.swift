// The URLSession role on Linux with keychain identities: HTTP/1.1 or HTTP/2 from libcurl, TLS from
// RSAKit's own client (RSATLSConnection), so the client key stays in RSAKit's engine and the
// server is trusted by RSATrust. ARCHITECTURE.md ("The HTTPS client") says why libcurl does
// no TLS here. This file holds the public surface and the redirect loop; HTTPSExchange.swift
// one libcurl exchange, HTTPSRelay.swift the relay between libcurl's socket and TLS.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The server that asked for a client certificate, as an ``RSAHTTPSClientConfiguration/clientIdentityHandler``
/// sees it (URLSession's `NSURLAuthenticationMethodClientCertificate` challenge).
public struct RSAHTTPSClientCertificateChallenge: Sendable {
    /// The host of the URL being fetched.
    public let host: String
    /// Its port.
    public let port: Int
    /// The certificates the server sent, leaf first (already trusted).
    public let serverCertificates: [X509Certificate]
}

/// Settings of an ``RSAHTTPSClient`` (Apple's `URLSessionConfiguration` plus the answers its
/// delegate gives to the two authentication challenges).
public struct RSAHTTPSClientConfiguration: Sendable {
    /// How servers are trusted (anchors, system roots, the store's trust settings,
    /// revocation, ``RSATLSClientConfiguration/serverTrustHandler``) and the TLS versions:
    /// URLSession's server-trust challenge. Its ``RSATLSClientConfiguration/serverName`` is
    /// replaced by each URL's host and its ``RSATLSClientConfiguration/timeout`` by the
    /// request's ``RSAHTTPSRequest/timeoutInterval``.
    public var tlsConfiguration = RSATLSClientConfiguration(serverName: "")
    /// The identity sent to every server that asks for a client certificate
    /// (`URLCredential(identity:certificates:persistence:)` given up front).
    public var identity: RSATLSClientIdentity?
    /// Called when a server asks for a client certificate and ``identity`` is nil (URLSession's
    /// client-certificate challenge): it returns the identity to send (for example
    /// `RSATLSClientIdentity(store:label:)`), or nil to send none. The connection is then
    /// made again with the identity, so the handler runs after the server's trust was
    /// evaluated and accepted. It runs on the transfer's own thread (never the cooperative
    /// pool) and may block; what it throws ends the request.
    public var clientIdentityHandler: (@Sendable (RSAHTTPSClientCertificateChallenge) throws -> RSATLSClientIdentity?)?
    /// The async form of ``clientIdentityHandler`` (URLSession's async delegate answering the
    /// client-certificate challenge), for a choice that awaits: an actor holding the identity,
    /// a store read. Asked at the same point, with the same challenge, when
    /// ``clientIdentityHandler`` is nil (that one wins when both are set): the transfer's own
    /// thread waits while it runs as a task on the cooperative pool, for at most the request's
    /// ``RSAHTTPSRequest/timeoutInterval``; unanswered by then, the request fails with
    /// `RSATLSError.timedOut`. What it throws ends the request.
    public var clientIdentityHandlerAsync:
        (@Sendable (RSAHTTPSClientCertificateChallenge) async throws -> RSATLSClientIdentity?)?
    /// Redirects followed per request (https to https only); more throw
    /// ``RSAHTTPSError/tooManyRedirects(limit:)``. 0 returns the 3xx response. Default 10.
    public var maximumRedirectCount = 10
    /// The largest body ``RSAHTTPSClient/data(for:)`` collects in memory; a longer one throws
    /// ``RSAHTTPSError/responseTooLarge(limit:)``. Downloads to a file have no limit unless
    /// they pass one. Default 64 MiB.
    public var maximumResponseByteCount = 64 << 20
    /// Seconds a whole request may take, redirects included (`URLSessionConfiguration.timeoutIntervalForResource`);
    /// nil: no limit beyond the request's idle ``RSAHTTPSRequest/timeoutInterval``.
    public var timeoutIntervalForResource: Double?

    /// Settings with the system anchors, no client identity, 10 redirects.
    public init(identity: RSATLSClientIdentity? = nil) {
        self.identity = identity
    }
}

/// An HTTPS client whose TLS is RSAKit's: servers trusted by ``RSATrust`` and client
/// certificates answered with a keychain identity whose private key stays in RSAKit's
/// engine (Apple's `URLSession` with a delegate that answers the server-trust and
/// client-certificate challenges).
///
/// HTTP comes from libcurl (libcurl3-gnutls, loaded on first use), which speaks plain HTTP
/// over a local socket that an ``RSATLSConnection`` relays to the server: libcurl never does
/// TLS and never sees a key. HTTP/2 is used when the server selects "h2" by ALPN (unless the
/// request sets ``RSAHTTPSRequest/allowsHTTP2`` to false), else HTTP/1.1. One connection per request (no reuse between
/// requests);
/// redirects are followed by this client, https to https only. Proxies from the environment
/// are not used.
///
/// Each request runs on a thread of its own (a serial Dispatch queue), never on the
/// cooperative pool, and its relay on another. Cancelling the awaiting task stops the
/// transfer within about a second and throws `CancellationError`. Sendable.
public final class RSAHTTPSClient: Sendable {
    /// The settings it was made with.
    public let configuration: RSAHTTPSClientConfiguration

    /// A client with `configuration` (`URLSession(configuration:delegate:delegateQueue:)`).
    public init(configuration: RSAHTTPSClientConfiguration = RSAHTTPSClientConfiguration()) {
        self.configuration = configuration
    }

    /// Send `request` and collect the response body in memory (`URLSession.data(for:)`).
    ///
    /// - Returns: the body (any status: a 404's page too) and the response of the last URL
    ///   after redirects.
    /// - Throws: ``RSAHTTPSError`` (a URL that is not https, an http redirect, too many
    ///   redirects, a timeout, a body over ``RSAHTTPSClientConfiguration/maximumResponseByteCount``,
    ///   libcurl's failures); ``RSATLSError`` for the connection (`serverNotTrusted`,
    ///   `clientCertificateRejected`, `connectFailed`, `handshakeFailed`, ...); what
    ///   ``RSAHTTPSClientConfiguration/clientIdentityHandler`` or its async form throws;
    ///   `CancellationError`. A status that is not 2xx is not an error here: the response
    ///   carries it (``RSAHTTPSResponse/isSuccess``) and the body is the server's page.
    public func data(for request: RSAHTTPSRequest) async throws -> (Data, RSAHTTPSResponse) {
        let limit = configuration.maximumResponseByteCount
        let (response, body) = try await RSABlockingWork.runOnOwnThread { [configuration] flag in
            let sink = HTTPSMemorySink(limit: limit)
            let response = try HTTPSRedirects.perform(
                request, configuration: configuration, sink: sink, cancellation: flag)
            return (response, sink.bytes)
        }
        return (Data(body), response)
    }

    /// Send `request` and stream the body of a 2xx response into `output`, committing it
    /// when the body is complete (`URLSession.download(for:)`, without its temporary file).
    /// Any other status returns its response without an error and leaves nothing at the
    /// output's path.
    ///
    /// Memory stays bounded whatever the body's size: about 16 KiB at a time pass from the
    /// server through the relay and libcurl to the file, and a slow disk slows the server.
    /// `output` follows ``RSAOutputFile``'s rules: nothing appears at its path until the body
    /// is complete, and on any failure, a non-2xx status or cancellation it is discarded.
    ///
    /// - Parameters:
    ///   - request: the request.
    ///   - output: an open output (``RSAOutputFile/init(path:permissions:input:)`` or
    ///     ``RSAOutputFile/standardOutput()``), handed over: do not use it while this runs.
    ///   - maximumByteCount: a longer body throws ``RSAHTTPSError/responseTooLarge(limit:)``; nil: no limit.
    /// - Returns: the response of the last URL; the body was written only if ``RSAHTTPSResponse/isSuccess``.
    /// - Throws: as ``data(for:)``, and `RSAError.outputFileFailed` when the file cannot be
    ///   written or committed.
    public func download(for request: RSAHTTPSRequest, to output: RSAOutputFile, maximumByteCount: Int? = nil)
        async throws -> RSAHTTPSResponse
    {
        let handOver = RSAHandOver(output)
        return try await RSABlockingWork.runOnOwnThread { [configuration] flag in
            let output = handOver.value
            let sink = HTTPSFileSink(output: output, limit: maximumByteCount)
            do {
                let response = try HTTPSRedirects.perform(
                    request, configuration: configuration, sink: sink, cancellation: flag)
                if response.isSuccess { try output.commit() } else { output.discard() }
                return response
            } catch {
                output.discard()
                throw error
            }
        }
    }

    /// Send `request` and write the body of a 2xx response to the file at `path`, which
    /// appears only once it is complete; see ``download(for:to:maximumByteCount:)``.
    ///
    /// - Parameter permissions: the finished file's bits (``RSAOutputFile/Permissions``).
    /// - Throws: as ``download(for:to:maximumByteCount:)``, and what
    ///   ``RSAOutputFile/init(path:permissions:input:)`` throws for `path`.
    public func download(
        for request: RSAHTTPSRequest, toPath path: String, permissions: RSAOutputFile.Permissions = .standard,
        maximumByteCount: Int? = nil
    ) async throws -> RSAHTTPSResponse {
        try await download(
            for: request, to: try RSAOutputFile(path: path, permissions: permissions),
            maximumByteCount: maximumByteCount)
    }
}

/// The redirect loop: libcurl never follows a Location itself (it would then make the next
/// connection, and for https do TLS, on its own).
enum HTTPSRedirects {
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    static func perform(
        _ original: RSAHTTPSRequest, configuration: RSAHTTPSClientConfiguration,
        sink: HTTPSBodySink, cancellation: RSACancellationFlag
    ) throws -> RSAHTTPSResponse {
        var request = original
        var redirects = 0
        let deadline = configuration.timeoutIntervalForResource.map { RSATLSSocket.monotonicSeconds() + $0 }
        while true {
            try cancellation.check()
            let remaining = deadline.map { $0 - RSATLSSocket.monotonicSeconds() }
            if let remaining, remaining <= 0, let total = configuration.timeoutIntervalForResource {
                throw RSAHTTPSError.timedOut(seconds: total)
            }
            let follow = redirects < configuration.maximumRedirectCount
            let exchange = try HTTPSExchange(
                request: request, configuration: configuration, sink: sink,
                cancellation: cancellation, followsRedirects: follow, resourceTimeout: remaining)
            let response = try exchange.run()
            guard redirectStatuses.contains(response.statusCode),
                let location = response.value(forHTTPHeaderField: "Location")
            else { return response }
            guard follow else {
                if configuration.maximumRedirectCount == 0 { return response }
                throw RSAHTTPSError.tooManyRedirects(limit: configuration.maximumRedirectCount)
            }
            guard let next = URL(string: location, relativeTo: request.url)?.absoluteURL else {
                throw RSAHTTPSError.transferFailed(reason: "the redirect's Location is not a URL: \"\(location)\"")
            }
            guard next.scheme?.lowercased() == "https" else {
                throw RSAHTTPSError.insecureRedirect(from: request.url.absoluteString, to: next.absoluteString)
            }
            // As browsers and curl do: 303 always, and 301/302 after a POST, become a GET
            // without a body; credentials are not carried to another host.
            if response.statusCode == 303
                || (response.statusCode != 307 && response.statusCode != 308 && request.httpMethod == "POST")
            {
                request.httpMethod = "GET"
                request.httpBody = nil
                request.setValue(nil, forHTTPHeaderField: "Content-Type")
            }
            if next.host()?.lowercased() != request.url.host()?.lowercased() {
                request.setValue(nil, forHTTPHeaderField: "Authorization")
                request.setValue(nil, forHTTPHeaderField: "Cookie")
            }
            request.url = next
            redirects += 1
        }
    }
}
