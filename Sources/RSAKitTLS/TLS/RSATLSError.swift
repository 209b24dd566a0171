import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The failures of a TLS client connection (``RSATLSConnection``, ``RSAAsyncTLSConnection``),
/// apart from ``RSAError``: what TLS reports carries the TLS and PKI layers' own types (the
/// trust evaluation, the server's certificates), which the engine's error type does not know.
/// Keychain failures met on the way (an identity not found, a locked store) are still
/// ``RSAError``s.
///
/// ``description`` (and `localizedDescription`) is the sentence for people; `String(reflecting:)`
/// (``debugDescription``) shows the case and its values for debugging.
public enum RSATLSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The TCP connection to `host`:`port` could not be made: `reason` is the `errno` text
    /// ("connection refused", "network is unreachable") or the resolver's ("name or service
    /// not known"). Nothing was sent.
    case connectFailed(host: String, port: Int, reason: String)
    /// `operation` ("connecting to 127.0.0.1:8443", "the TLS handshake", "waiting for the
    /// server") did not finish within `seconds`.
    case timedOut(operation: String, seconds: Double)
    /// The server's certificate chain failed trust evaluation under the SSL server policy
    /// (``RSATrust``), or ``RSATLSClientConfiguration/serverTrustHandler`` refused it
    /// (`refusedByHandler`). `evaluation` carries the result, every typed
    /// ``RSATrustFailure`` (kind, certificate index, dates) and the chain built;
    /// `serverCertificates` are the certificates the server sent, leaf first (empty when
    /// they could not be read: `evaluation.warnings` then says why). A caller can tell an
    /// expired certificate from a wrong host and connect again with an override (a verify
    /// date, an anchor, the leaf pinned in ``RSATLSClientConfiguration/userTrustedFingerprints``),
    /// as `SecTrust` allows. The handshake was stopped there: no client certificate,
    /// signature or application byte was sent.
    case serverNotTrusted(evaluation: RSATrustEvaluation, serverCertificates: [X509Certificate], refusedByHandler: Bool)
    /// The server refused the client's authentication: it sent the fatal alert `alert`
    /// (GnuTLS's name, "Unknown CA", "Certificate is required") after asking for a client
    /// certificate; `certificateSent` says whether one was sent. In TLS 1.3 this is only
    /// seen on the first read after the handshake.
    case clientCertificateRejected(alert: String, certificateSent: Bool)
    /// The TLS handshake failed for another reason: `reason` (an alert the server sent, a
    /// protocol version or cipher suite mismatch, the server closing the connection).
    case handshakeFailed(reason: String)
    /// The connection failed after the handshake (a fatal alert, a reset, a closed socket
    /// without close_notify, a record that does not decrypt): `reason` says which.
    case connectionFailed(reason: String)
    /// The identity cannot authenticate a TLS client: `reason` (the certificate's public key
    /// is not the private key's, the certificate has no RSA key).
    case identityUnusable(reason: String)

    /// A lower-case sentence, without secret bytes.
    public var description: String {
        switch self {
        case let .connectFailed(host, port, reason):
            return "cannot connect to \(RSATLSConnection.endpointText(host: host, port: port)): \(reason)"
        case let .timedOut(operation, seconds):
            return
                "timed out after \(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s: "
                + "\(operation)"
        case let .serverNotTrusted(evaluation, _, refusedByHandler):
            let reasons = evaluation.reasons
            if refusedByHandler {
                return "the server trust handler refused the server (evaluation: \(evaluation.result))"
                    + (reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; "))
            }
            return "the server's certificate is not trusted (\(evaluation.result)): "
                + (reasons.isEmpty ? "no reason given" : reasons.joined(separator: "; "))
        case let .clientCertificateRejected(alert, certificateSent):
            return certificateSent
                ? "the server rejected the client certificate (alert: \(alert))"
                : "the server requires a client certificate and none was given (alert: \(alert))"
        case let .handshakeFailed(reason):
            return "TLS handshake failed: \(reason)"
        case let .connectionFailed(reason):
            return "TLS connection failed: \(reason)"
        case let .identityUnusable(reason):
            return "the identity cannot be used for TLS: \(reason)"
        }
    }
}

extension RSATLSError: CustomDebugStringConvertible {
    /// The case and its values in Swift syntax, for debugging:
    /// `RSATLSError.handshakeFailed(reason: "...")`; a trust evaluation shows as its result
    /// and reasons, certificates by subject.
    public var debugDescription: String {
        switch self {
        case let .connectFailed(host, port, reason):
            return
                "RSATLSError.connectFailed(host: \(String(reflecting: host)), port: \(port), reason: "
                + "\(String(reflecting: reason)))"
        case let .timedOut(operation, seconds):
            return "RSATLSError.timedOut(operation: \(String(reflecting: operation)), seconds: \(seconds))"
        case let .serverNotTrusted(evaluation, certificates, refusedByHandler):
            return "RSATLSError.serverNotTrusted(evaluation: \(String(reflecting: evaluation.result.rawValue)), "
                + "reasons: \(evaluation.reasons), serverCertificates: \(certificates.map(\.subject)), "
                + "refusedByHandler: \(refusedByHandler))"
        case let .clientCertificateRejected(alert, certificateSent):
            return
                "RSATLSError.clientCertificateRejected(alert: \(String(reflecting: alert)), certificateSent: "
                + "\(certificateSent))"
        case let .handshakeFailed(reason):
            return "RSATLSError.handshakeFailed(reason: \(String(reflecting: reason)))"
        case let .connectionFailed(reason):
            return "RSATLSError.connectionFailed(reason: \(String(reflecting: reason)))"
        case let .identityUnusable(reason):
            return "RSATLSError.identityUnusable(reason: \(String(reflecting: reason)))"
        }
    }
}

extension RSATLSError: LocalizedError {
    /// The same sentence as ``description``.
    public var errorDescription: String? { description }
}
