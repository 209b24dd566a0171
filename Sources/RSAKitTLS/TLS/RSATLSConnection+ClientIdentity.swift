// The client's side of client authentication: the identity given up front, or the one a
// handler chooses when, and only when, the server sends a CertificateRequest (URLSession's
// client-certificate challenge). The handler runs inside the handshake, on its thread, from
// GnuTLS's certificate-retrieve callback; an async handler is awaited from that thread as
// the async server-trust handler is (RSATLSHandlerBridge.swift says why that is sound).
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A server's request for a client certificate, as a ``RSATLSClientConfiguration/clientIdentityHandler``
/// sees it (the client-certificate challenge's `URLProtectionSpace`, whose
/// `distinguishedNames` are ``acceptableIssuerNames``).
///
/// When it comes depends on the TLS version: in TLS 1.2 the server sends its certificates
/// before its request, so they were already evaluated and trusted; in TLS 1.3 the request
/// (CertificateRequest) comes before the server's Certificate, so ``serverCertificates`` is
/// empty. Either way the identity chosen is sent only after the server was trusted: the
/// client's Certificate and signature follow the server's Finished, and an untrusted server
/// ends the handshake first.
public struct RSATLSClientCertificateRequest: Sendable {
    /// The server's name (``RSATLSClientConfiguration/serverName``).
    public let serverName: String
    /// The DER-encoded distinguished names of the CAs whose certificates the server accepts
    /// (TLS 1.2 certificate_authorities, TLS 1.3's extension of that name, RFC 8446 §4.2.4);
    /// empty when the server named none.
    public let acceptableIssuerNames: [[UInt8]]
    /// The server's certificates, leaf first, when they came before the request (TLS 1.2;
    /// trusted by then); empty in TLS 1.3.
    public let serverCertificates: [X509Certificate]
}

extension RSATLSConnection {
    /// The external key GnuTLS signs with for `identity`: rsakit's engine, or the token,
    /// logged in now (the session is recorded in `state`, logged out when the handshake ends).
    static func externalKey(for identity: RSATLSClientIdentity, state: HandshakeState) throws -> GnuTLSExternalKey {
        // The two signatures GnuTLS asks for: PKCS#1 v1.5 over its DigestInfo, and PSS
        // over a digest with salt = hash length (RFC 8446 §4.2.3).
        let signDigestInfo: ([UInt8]) throws -> [UInt8]
        let signPSS: ([UInt8], RSAHashAlgorithm) throws -> [UInt8]
        let pssRestriction: RSAPSSKeyRestriction?
        switch identity.key {
        case let .stored(key):
            signDigestInfo = { try key.signature(forDigestInfo: $0) }
            signPSS = { try key.signature(forDigest: $0, hash: $1, padding: .pss(saltLength: .digestLength)) }
            pssRestriction = key.pssRestriction
        case let .token(key, pin):
            let signer = try TokenSigner(key: key, pin: pin)
            state.tokenSigners.append(signer)
            signDigestInfo = { try signer.signature(forDigestInfo: $0) }
            signPSS = { try signer.signature(forDigest: $0, hash: $1, padding: .pss(saltLength: .digestLength)) }
            // NOTE: an rsaEncryption key only (a PSS-restricted key cannot be put on a token).
            pssRestriction = nil
        case let .system(client, tag, accessGroup, _):
            // Each signature is one request to the system agent, which checks this process's
            // uid against its rules then (a rule removed refuses the next handshake).
            signDigestInfo = { try client.signature(forDigestInfo: $0, tag: tag, accessGroup: accessGroup) }
            signPSS = { try client.signature(forDigest: $0, hash: $1, pss: true, tag: tag, accessGroup: accessGroup) }
            pssRestriction = nil
        }
        return GnuTLSExternalKey(
            modulusBitCount: identity.key.publicKey.modulusBitCount, pssRestriction: pssRestriction
        ) { [state] request in
            let signature: [UInt8]
            switch request {
            case let .pkcs1v15DigestInfo(digestInfo):
                signature = try signDigestInfo(digestInfo)
            case let .pssRSAE(hash, digest), let .pssPSS(hash, digest):
                signature = try signPSS(digest, hash)
            }
            state.operations.append(
                RSATLSPrivateKeyOperation(scheme: request.schemeName, signatureByteCount: signature.count))
            return signature
        }
    }

    /// The retrieve callback's answer when no identity was given: the configured handler's
    /// identity, asked once the server requested a certificate. Nil without a handler.
    static func certificateProvider(configuration: RSATLSClientConfiguration, state: HandshakeState)
        -> GnuTLSClientCertificateProvider?
    {
        guard configuration.clientIdentityHandler != nil || configuration.clientIdentityHandlerAsync != nil else {
            return nil
        }
        return { [state] issuerNames in
            let request = RSATLSClientCertificateRequest(
                serverName: configuration.serverName, acceptableIssuerNames: issuerNames,
                serverCertificates: state.evaluation == nil ? [] : state.serverCertificates)
            let chosen: RSATLSClientIdentity?
            if let handler = configuration.clientIdentityHandler {
                chosen = try handler(request)
            } else if let handler = configuration.clientIdentityHandlerAsync {
                let seconds = configuration.timeout
                // Unanswered within the handshake's timeout: the handshake is refused, as an
                // async trust handler that does not answer refuses the server.
                let timedOut = Result<RSATLSClientIdentity?, any Error>.failure(
                    RSATLSError.timedOut(
                        operation: "the client identity handler for \(configuration.serverName)", seconds: seconds))
                chosen = try RSATLSHandlerBridge.wait(seconds: seconds, orElse: timedOut) {
                    do { return .success(try await handler(request)) } catch { return .failure(error) }
                }.get()
            } else {
                chosen = nil
            }
            guard let chosen else { return nil }
            let key = try externalKey(for: chosen, state: state)
            state.providedIdentity = chosen
            return ([chosen.certificate.derRepresentation] + chosen.chain.map(\.derRepresentation), key)
        }
    }
}
