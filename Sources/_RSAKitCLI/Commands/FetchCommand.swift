#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import RSAKit

/// `rsakit fetch URL`: an HTTPS GET in the manner of `curl -f`, on RSAHTTPSClient: the
/// server trusted by rsakit's trust evaluation, the client certificate answered with a stored
/// identity whose key never leaves rsakit's engine, the body to standard output or a file.
struct FetchCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "fetch",
        overview: "Fetch an https URL with a stored identity (mutual TLS); the body to standard output or a file.",
        usage:
            "rsakit fetch <URL> [--identity <LABEL> | --tag <TAG>] [--access-group <GROUP>]... [--out <FILE>] "
            + "[--anchor <FILE>]... [--anchors-only] [--max-redirects <N>] [--timeout <S>] [--http1.1] [-v] "
            + "[--passin <SPEC>] [--token-pin <SPEC>] [--store <DIR>]",
        options: [
            TLSCommand.identityOptions[0], TLSCommand.identityOptions[1], TLSCommand.identityGroupOption,
            .value(
                "out", "FILE",
                "Write the body to FILE, which appears only once the body is complete (default: standard output)."),
            TLSCommand.anchorOptions[0], TLSCommand.anchorOptions[1],
            .value("max-redirects", "N", "Follow at most N redirects, https to https only (default 10)."),
            .value(
                "timeout", "S",
                "Seconds without progress (connecting, the handshake, the transfer) before giving up (default 30)."),
            .flag("http1.1", "Speak HTTP/1.1 even when the server offers HTTP/2 (ALPN offers http/1.1 only)."),
            .flag("verbose", "(-v) Print the HTTP version, the status and the final URL to standard error."),
            tokenPINOption
        ],
        positionals: ["URL"],
        discussion: """
            Fetches URL with GET, as curl -f does: the body of a 2xx answer goes to
            standard output, or to --out FILE (written through a temporary file and moved into
            place when complete: an interrupted or failed transfer leaves nothing at FILE):
              rsakit fetch https://127.0.0.1:8443/report.pdf --identity alice --anchor ca.pem --out report.pdf
            The server's chain is evaluated as by rsakit tls connect (the system's CAs,
            certificates marked trusted in the store, --anchor files); if it is not trusted,
            nothing is sent. The identity is sent only if the server asks for a client
            certificate; its signature is made by rsakit (or on the token for a token key).
            Redirects are followed to https URLs only; a redirect to http is refused.
            HTTP/2 is used when the server selects it by ALPN (h2), else HTTP/1.1; --http1.1
            keeps to HTTP/1.1. HTTP itself is libcurl's (libcurl3-gnutls); TLS is rsakit's, never
            libcurl's.
            Exit status: 0 for a 2xx answer; 1 for any other HTTP status (a 404, a 500: the
            message names it, and nothing is written, neither to standard output nor to --out),
            network errors and timeouts; 65 trust or handshake failure, a client
            certificate the server refused, a redirect to http or too many redirects; 66 unknown
            identity.
            """)

    let arguments: ParsedArguments
    let url: URL
    let timeout: Double
    let maximumRedirects: Int

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        let name = Self.spec.name
        guard arguments.positionals.count == 1 else {
            throw UsageError(message: arguments.positionals.isEmpty ? "missing <URL>" : "give one URL", command: name)
        }
        let text = arguments.positionals[0]
        guard let url = URL(string: text), url.scheme?.lowercased() == "https",
            url.host(percentEncoded: false)?.isEmpty == false
        else {
            throw UsageError(message: "expected an https:// URL, got '\(terminalSafe(text))'", command: name)
        }
        self.url = url
        guard arguments.value("identity") == nil || arguments.value("tag") == nil else {
            throw UsageError(message: "give either --identity or --tag, not both", command: name)
        }
        timeout = try TLSCommand.timeout(arguments, command: name)
        if let text = arguments.value("max-redirects") {
            guard let count = Int(text), (0...100).contains(count) else {
                throw UsageError(
                    message: "--max-redirects expects a number from 0 to 100, got '\(text)'", command: name)
            }
            maximumRedirects = count
        } else {
            maximumRedirects = 10
        }
    }

    func run() throws {
        var configuration = RSAHTTPSClientConfiguration()
        configuration.maximumRedirectCount = maximumRedirects
        configuration.tlsConfiguration.anchorCertificatesOnly = arguments.flag("anchors-only")
        for path in arguments.values("anchor") {
            configuration.tlsConfiguration.anchorCertificates += try readCertificateFile(path, what: "anchor file")
        }
        configuration.identity = try TLSCommand.storedIdentity(
            arguments, addingTrustTo: &configuration.tlsConfiguration,
            command: Self.spec.name)
        let client = RSAHTTPSClient(configuration: configuration)
        var options = RSAHTTPSRequest(url: url, timeoutInterval: timeout)
        options.allowsHTTP2 = !arguments.flag("http1.1")
        let request = options
        let out = arguments.value("out")
        let response = try Self.wait {
            if let out {
                return try await client.download(for: request, toPath: out)
            }
            return try await client.download(for: request, to: RSAOutputFile.standardOutput())
        }
        if arguments.flag("verbose") {
            printError(
                "rsakit: \(response.httpVersion) \(response.statusCode) from "
                    + "\(terminalSafe(response.url.absoluteString))\n"
            )
        }
        guard response.isSuccess else {
            throw CLIFailure(
                "HTTP status \(response.statusCode) from \(terminalSafe(response.url.absoluteString)) (nothing was "
                    + "written)",
                .failure)
        }
    }

    /// Run `body` on a task and block this (main) thread until it ends; the command line is
    /// synchronous, and the client's work runs on threads of its own, not on this one.
    static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = RSAHandOver<Result<T, any Error>?>(nil)
        Task {
            do { result.value = .success(try await body()) } catch { result.value = .failure(error) }
            done.signal()
        }
        done.wait()
        return try result.value!.get()
    }
}
