// A GnuTLS TLS 1.2/1.3 client session over a connected socket (RFC 5246, RFC 8446), for
// RSAKit's TLS layer (Sources/RSAKit/TLS/). GnuTLS does the protocol; RSAKit keeps two
// decisions: the client key signs through GnuTLSExternalKey (the key never enters GnuTLS),
// and the server's certificates go to a verifier closure (RSATrust) from GnuTLS's verify
// callback, during the handshake, before the client sends its certificate or Finished.
import RSAKitCore
internal import CGnuTLS
#if canImport(Glibc)
import Glibc
#endif
// This target also depends on CCurl, whose header includes <sys/socket.h>: clang may file the
// socket declarations under CCurl's module instead of Glibc's, depending on which it built
// first, so a file that uses them imports both (a clean release build lost SOCK_STREAM here).
internal import CCurl

/// What the verifier decided about the server's certificates.
package enum GnuTLSPeerVerdict {
    /// Go on with the handshake.
    case accept
    /// Stop the handshake and send this fatal alert.
    case reject(GnuTLSRejectAlert)
}

/// The fatal alert a rejected server certificate gets (RFC 8446 §6.2).
package enum GnuTLSRejectAlert {
    case badCertificate, unknownCA, certificateExpired

    fileprivate var description: gnutls_alert_description_t {
        switch self {
        case .badCertificate: return GNUTLS_A_BAD_CERTIFICATE
        case .unknownCA: return GNUTLS_A_UNKNOWN_CA
        case .certificateExpired: return GNUTLS_A_CERTIFICATE_EXPIRED
        }
    }
}

/// A failed session call, sorted for the TLS layer.
package enum GnuTLSSessionError: Error {
    /// The peer sent a fatal alert (`code` as in RFC 8446 §6, `name` GnuTLS's sentence).
    case alertReceived(code: Int, name: String)
    /// The verifier rejected the server's certificates.
    case peerRejected
    /// The handshake did not finish within its timeout.
    case timedOut
    /// The peer closed the connection without close_notify (or in the middle of the handshake).
    case closedByPeer
    /// The peer's bytes are not TLS records (a plain HTTP or other clear-text server).
    case notTLS
    /// A socket error (`gnutls_strerror` text; errno is lost inside GnuTLS).
    case transport(String)
    /// The private-key callback failed; `underlying` is what RSAKit threw.
    case signingFailed(underlying: Error?)
    /// The client-certificate provider (asked when the server sent a CertificateRequest)
    /// threw `underlying`.
    case clientCertificateUnavailable(underlying: Error)
    /// Any other GnuTLS failure: its sentence.
    case failed(String)
}

/// One outcome of ``GnuTLSClientSession/receive(maximumByteCount:)``.
package enum GnuTLSReceived {
    /// Application data.
    case data([UInt8])
    /// The peer sent close_notify.
    case closed
    /// Nothing for the caller yet (a TLS 1.3 post-handshake message was handled, a
    /// warning alert, or GNUTLS_E_AGAIN); poll and call again.
    case nothing
}

/// The protocol versions a session may negotiate.
package enum GnuTLSVersions {
    case tls12AndTLS13, tls12Only, tls13Only

    /// The GnuTLS priority string.
    var priority: String {
        switch self {
        case .tls12AndTLS13: return "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
        case .tls12Only: return "NORMAL:-VERS-ALL:+VERS-TLS1.2"
        case .tls13Only: return "NORMAL:-VERS-ALL:+VERS-TLS1.3"
        }
    }
}

/// Asked inside the handshake when the server requests a client certificate: gets the DER
/// distinguished names of the CAs the server accepts (possibly none) and returns the chain
/// (DER, the certificate first) and its external key, or nil to send no certificate.
package typealias GnuTLSClientCertificateProvider = ([[UInt8]]) throws -> (chain: [[UInt8]], key: GnuTLSExternalKey)?

/// An owning wrapper over `gnutls_session_t` and its certificate credentials. Not
/// thread-safe; used by one connection on one thread. Does not own the socket.
package final class GnuTLSClientSession {
    private let session: gnutls_session_t
    private let credentials: gnutls_certificate_credentials_t
    private let verifier: ([[UInt8]]) -> GnuTLSPeerVerdict
    /// The OCSP response the server stapled (RFC 6066 §8 status_request, RFC 8446 §4.4.2.1),
    /// read when the verify callback runs; nil when none came or none was asked for.
    package private(set) var stapledOCSPResponse: [UInt8]?
    private var externalKey: GnuTLSExternalKey?
    private var rejection: GnuTLSRejectAlert?
    /// Asked for the client certificate when the server requests one (the retrieve callback).
    private let certificateProvider: GnuTLSClientCertificateProvider?
    /// What the provider threw, reported instead of GnuTLS's code.
    private var providerError: Error?
    /// The chain and key handed to GnuTLS by the retrieve callback: GnuTLS borrows them
    /// (gnutls_certificate_set_retrieve_function2 frees nothing), so they live until deinit.
    private var providedCertificates: (pcerts: UnsafeMutablePointer<gnutls_pcert_st>, count: Int)?
    private var providedKey: gnutls_privkey_t?

    /// Set up a client session on `fileDescriptor` (a connected, blocking TCP socket).
    ///
    /// - Parameters:
    ///   - serverName: sent as SNI (RFC 6066 §3) unless it is an IP address literal.
    ///   - versions: TLS 1.2 and/or 1.3.
    ///   - clientChain: the client certificate (DER) then its issuers, or empty for none.
    ///   - clientKey: the external key for `clientChain[0]` (nil when the chain is empty).
    ///   - certificateProvider: when `clientChain` is empty, asked for the chain and key
    ///     only if the server sends a CertificateRequest (nil answer: send no certificate).
    ///   - applicationProtocols: ALPN names offered, most preferred first (RFC 7301); empty: none.
    ///   - verifier: decides on the server's certificates (DER, leaf first).
    package init(
        fileDescriptor: Int32, serverName: String, versions: GnuTLSVersions, clientChain: [[UInt8]],
        clientKey: GnuTLSExternalKey?, certificateProvider: GnuTLSClientCertificateProvider? = nil,
        applicationProtocols: [String] = [], verifier: @escaping ([[UInt8]]) -> GnuTLSPeerVerdict
    ) throws {
        self.verifier = verifier
        self.externalKey = clientKey
        self.certificateProvider = clientChain.isEmpty ? certificateProvider : nil
        var credentials: gnutls_certificate_credentials_t?
        try gnutlsCheck(
            gnutls_certificate_allocate_credentials(&credentials), "gnutls_certificate_allocate_credentials")
        guard let credentials else {
            throw GnuTLSFailure(code: GNUTLS_E_MEMORY_ERROR, function: "gnutls_certificate_allocate_credentials")
        }
        var session: gnutls_session_t?
        // GNUTLS_NO_SIGNAL: send with MSG_NOSIGNAL, so that writing to a socket the peer closed
        // (or a cancelled async call shut down) is an error, not a SIGPIPE that kills the host.
        let initCode = gnutls_init(
            &session, UInt32(GNUTLS_CLIENT) | UInt32(GNUTLS_FORCE_CLIENT_CERT) | UInt32(GNUTLS_NO_SIGNAL.rawValue))
        guard initCode >= 0, let session else {
            gnutls_certificate_free_credentials(credentials)
            throw GnuTLSFailure(code: initCode, function: "gnutls_init")
        }
        self.credentials = credentials
        self.session = session

        // Without SKIP_KEY_CERT_MATCH, set_key would sign a test message with the key to
        // compare it with the certificate; RSAKit checks the match itself (by the public key).
        gnutls_certificate_set_flags(credentials, UInt32(GNUTLS_CERTIFICATE_SKIP_KEY_CERT_MATCH.rawValue))
        gnutls_certificate_set_verify_function(credentials) { session -> Int32 in
            guard let session, let pointer = gnutls_session_get_ptr(session) else { return GNUTLS_E_CERTIFICATE_ERROR }
            let me = Unmanaged<GnuTLSClientSession>.fromOpaque(pointer).takeUnretainedValue()
            return me.verifyPeer()
        }
        if let clientKey, !clientChain.isEmpty {
            try installClientCertificate(chain: clientChain, key: clientKey)
        } else if self.certificateProvider != nil {
            gnutls_certificate_set_retrieve_function2(credentials) {
                session, issuers, issuerCount, _, _, pcerts, pcertCount, key -> Int32 in
                guard let session, let pointer = gnutls_session_get_ptr(session), let pcerts, let pcertCount, let key
                else { return -1 }
                let me = Unmanaged<GnuTLSClientSession>.fromOpaque(pointer).takeUnretainedValue()
                let names = (0..<Int(max(0, issuerCount))).map { index -> [UInt8] in
                    guard let datum = issuers?[index], let data = datum.data else { return [] }
                    return Array(UnsafeBufferPointer(start: data, count: Int(datum.size)))
                }
                return me.provideClientCertificate(
                    acceptableIssuers: names, pcerts: pcerts, count: pcertCount, key: key)
            }
        }

        gnutls_session_set_ptr(session, Unmanaged.passUnretained(self).toOpaque())
        var errorPosition: UnsafePointer<CChar>?
        try gnutlsCheck(
            gnutls_priority_set_direct(session, versions.priority, &errorPosition), "gnutls_priority_set_direct")
        if !serverName.isEmpty && !GnuTLSClientSession.isIPAddress(serverName) {
            try gnutlsCheck(
                gnutls_server_name_set(session, GNUTLS_NAME_DNS, serverName, serverName.utf8.count),
                "gnutls_server_name_set")
        }
        try gnutlsCheck(
            gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials)),
            "gnutls_credentials_set")
        if !applicationProtocols.isEmpty { try setApplicationProtocols(applicationProtocols) }
        rsakit_gnutls_transport_set_fd(session, fileDescriptor)
    }

    deinit {
        gnutls_deinit(session)
        // After the session, which borrowed them.
        if let providedCertificates {
            for index in 0..<providedCertificates.count { gnutls_pcert_deinit(providedCertificates.pcerts + index) }
            providedCertificates.pcerts.deallocate()
        }
        if let providedKey { gnutls_privkey_deinit(providedKey) }
        // Frees the pcerts and the external privkey handed over by set_key, which calls the
        // key's deinit callback (releasing GnuTLSExternalKey).
        gnutls_certificate_free_credentials(credentials)
    }

    /// Hand the chain and the external key to the credentials. `gnutls_certificate_set_key`
    /// copies the pcert array but takes ownership of every pcert's contents and of the
    /// privkey; on failure they stay the caller's, and are freed here.
    private func installClientCertificate(chain: [[UInt8]], key: GnuTLSExternalKey) throws {
        let pcerts = UnsafeMutablePointer<gnutls_pcert_st>.allocate(capacity: chain.count)
        defer { pcerts.deallocate() }
        var imported = 0
        do {
            for der in chain {
                try withDatum(der) { datum in
                    try gnutlsCheck(
                        gnutls_pcert_import_x509_raw(pcerts + imported, datum, GNUTLS_X509_FMT_DER, 0),
                        "gnutls_pcert_import_x509_raw")
                }
                imported += 1
            }
        } catch {
            for index in 0..<imported { gnutls_pcert_deinit(pcerts + index) }
            throw error
        }
        let privateKey: gnutls_privkey_t
        do {
            privateKey = try key.makePrivateKey()
        } catch {
            for index in 0..<imported { gnutls_pcert_deinit(pcerts + index) }
            throw error
        }
        let code = gnutls_certificate_set_key(credentials, nil, 0, pcerts, Int32(chain.count), privateKey)
        if code < 0 {
            for index in 0..<imported { gnutls_pcert_deinit(pcerts + index) }
            gnutls_privkey_deinit(privateKey)
            throw GnuTLSFailure(code: code, function: "gnutls_certificate_set_key")
        }
    }

    /// The retrieve callback's body: ask the provider, import what it gives, lend it to GnuTLS.
    /// 0 with an empty list sends no certificate; -1 (the provider threw) ends the handshake.
    private func provideClientCertificate(
        acceptableIssuers: [[UInt8]], pcerts: UnsafeMutablePointer<UnsafeMutablePointer<gnutls_pcert_st>?>,
        count: UnsafeMutablePointer<UInt32>, key: UnsafeMutablePointer<gnutls_privkey_t?>
    ) -> Int32 {
        pcerts.pointee = nil
        count.pointee = 0
        key.pointee = nil
        guard let certificateProvider, providedCertificates == nil else { return 0 }
        do {
            guard let (chain, externalKey) = try certificateProvider(acceptableIssuers), !chain.isEmpty else {
                return 0
            }
            let list = UnsafeMutablePointer<gnutls_pcert_st>.allocate(capacity: chain.count)
            var imported = 0
            do {
                for der in chain {
                    try withDatum(der) { datum in
                        try gnutlsCheck(
                            gnutls_pcert_import_x509_raw(list + imported, datum, GNUTLS_X509_FMT_DER, 0),
                            "gnutls_pcert_import_x509_raw")
                    }
                    imported += 1
                }
                let privateKey = try externalKey.makePrivateKey()
                providedCertificates = (list, imported)
                providedKey = privateKey
                self.externalKey = externalKey
            } catch {
                for index in 0..<imported { gnutls_pcert_deinit(list + index) }
                list.deallocate()
                throw error
            }
            pcerts.pointee = providedCertificates!.pcerts
            count.pointee = UInt32(imported)
            key.pointee = providedKey
            return 0
        } catch {
            providerError = error
            return -1
        }
    }

    /// Offer `names` in ALPN (RFC 7301 §3.1), most preferred first. - Throws: `GnuTLSFailure`
    /// (a name empty or over 255 bytes is GNUTLS_E_INVALID_REQUEST).
    private func setApplicationProtocols(_ names: [String]) throws {
        let bytes = names.map { Array($0.utf8) }
        let datums = UnsafeMutablePointer<gnutls_datum_t>.allocate(capacity: bytes.count)
        let storage = bytes.map { name -> UnsafeMutablePointer<UInt8> in
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, name.count))
            copy.initialize(from: name, count: name.count)
            return copy
        }
        defer {
            datums.deallocate()
            storage.forEach { $0.deallocate() }
        }
        for index in bytes.indices {
            guard (1...255).contains(bytes[index].count) else {
                throw GnuTLSFailure(code: GNUTLS_E_INVALID_REQUEST, function: "gnutls_alpn_set_protocols")
            }
            datums[index] = gnutls_datum_t(data: storage[index], size: UInt32(bytes[index].count))
        }
        // GnuTLS copies the names into the session.
        try gnutlsCheck(gnutls_alpn_set_protocols(session, datums, UInt32(bytes.count), 0), "gnutls_alpn_set_protocols")
    }

    /// The protocol the server selected in ALPN ("h2", "http/1.1"), nil when it selected none.
    package var selectedApplicationProtocol: String? {
        var selected = gnutls_datum_t()
        guard gnutls_alpn_get_selected_protocol(session, &selected) == 0, let data = selected.data, selected.size > 0
        else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(selected.size)), as: UTF8.self)
    }

    /// Ask the server to staple an OCSP response (status_request without responder ids or
    /// extensions, `gnutls_ocsp_status_request_enable_client`). Call before ``handshake(timeoutMilliseconds:)``.
    /// - Throws: `GnuTLSFailure`.
    package func requestOCSPStatus() throws {
        try gnutlsCheck(
            gnutls_ocsp_status_request_enable_client(session, nil, 0, nil), "gnutls_ocsp_status_request_enable_client")
    }

    /// The verify callback's body: the peer's DER certificates to the verifier.
    private func verifyPeer() -> Int32 {
        // The stapled response of the leaf (owned by the session: copied, not freed).
        var stapled = gnutls_datum_t()
        if gnutls_ocsp_status_request_get(session, &stapled) == 0, let data = stapled.data, stapled.size > 0 {
            stapledOCSPResponse = Array(UnsafeBufferPointer(start: data, count: Int(stapled.size)))
        }
        var count: UInt32 = 0
        let list = gnutls_certificate_get_peers(session, &count)
        // No certificate at all goes to the verifier too (as an empty list), which rejects it.
        let ders =
            list.map { list in
                (0..<Int(count)).map { index -> [UInt8] in
                    let datum = list[index]
                    return datum.data.map { Array(UnsafeBufferPointer(start: $0, count: Int(datum.size))) } ?? []
                }
            } ?? []
        switch verifier(ders) {
        case .accept:
            return 0
        case let .reject(alert):
            rejection = alert
            return GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR
        }
    }

    /// Run the handshake, at most `timeoutMilliseconds` (GnuTLS polls the socket itself).
    /// - Throws: ``GnuTLSSessionError``.
    package func handshake(timeoutMilliseconds: UInt32) throws {
        gnutls_handshake_set_timeout(session, timeoutMilliseconds)
        while true {
            let code = gnutls_handshake(session)
            if code >= 0 { return }
            if code == GNUTLS_E_AGAIN || code == GNUTLS_E_INTERRUPTED { continue }
            if code == GNUTLS_E_WARNING_ALERT_RECEIVED { continue }
            if let rejection {
                // Tell the server why (the callback's failure sends nothing by itself).
                _ = gnutls_alert_send(session, GNUTLS_AL_FATAL, rejection.description)
                throw GnuTLSSessionError.peerRejected
            }
            throw error(for: code)
        }
    }

    /// Send all of `bytes` as application data.
    /// - Throws: ``GnuTLSSessionError``.
    package func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBufferPointer { buffer in
                gnutls_record_send(session, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if sent >= 0 { offset += sent; continue }
            let code = Int32(sent)
            if code == GNUTLS_E_AGAIN || code == GNUTLS_E_INTERRUPTED { continue }
            throw error(for: code)
        }
    }

    /// Receive one record's worth of application data (at most `maximumByteCount`).
    /// Blocks on the socket unless ``pendingByteCount`` > 0 or the caller polled it.
    /// - Throws: ``GnuTLSSessionError`` (a fatal alert, a reset...).
    package func receive(maximumByteCount: Int) throws -> GnuTLSReceived {
        var buffer = [UInt8](repeating: 0, count: max(1, maximumByteCount))
        let count = buffer.withUnsafeMutableBufferPointer { gnutls_record_recv(session, $0.baseAddress, $0.count) }
        if count > 0 { return .data(Array(buffer[0..<count])) }
        if count == 0 { return .closed }
        let code = Int32(count)
        switch code {
        case GNUTLS_E_AGAIN, GNUTLS_E_INTERRUPTED, GNUTLS_E_WARNING_ALERT_RECEIVED:
            // GNUTLS_E_AGAIN also comes on a blocking socket in TLS 1.3, after a
            // NewSessionTicket or KeyUpdate was processed: no data yet, not an error.
            return .nothing
        case GNUTLS_E_REHANDSHAKE:
            // A TLS 1.2 HelloRequest: decline (RFC 5246 §7.2.2, no_renegotiation is a warning).
            _ = gnutls_alert_send(session, GNUTLS_AL_WARNING, GNUTLS_A_NO_RENEGOTIATION)
            return .nothing
        default:
            throw error(for: code)
        }
    }

    /// Decrypted bytes GnuTLS holds that a poll on the socket would not show.
    package var pendingByteCount: Int { gnutls_record_check_pending(session) }

    /// Send close_notify (our direction only); errors are ignored (the peer may be gone).
    package func bye() {
        for _ in 0..<4 {
            let code = gnutls_bye(session, GNUTLS_SHUT_WR)
            if code != GNUTLS_E_AGAIN && code != GNUTLS_E_INTERRUPTED { return }
        }
    }

    // MARK: What was negotiated

    /// "TLS1.3", "TLS1.2".
    package var protocolName: String {
        gnutls_protocol_get_name(gnutls_protocol_get_version(session)).map { String(cString: $0) } ?? "unknown"
    }

    /// The cipher suite's IANA name ("TLS_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_AES_256_GCM_SHA384").
    package var cipherSuiteName: String {
        gnutls_ciphersuite_get(session).map { String(cString: $0) } ?? "unknown"
    }

    /// GnuTLS's one-line description: "(TLS1.3)-(ECDHE-X25519)-(RSA-PSS-RSAE-SHA256)-(AES-256-GCM)".
    package var sessionDescription: String {
        guard let text = gnutls_session_get_desc(session) else { return "" }
        defer { rsakit_gnutls_free(text) }
        return String(cString: text)
    }

    /// The signature scheme the client used in CertificateVerify ("RSA-PSS-RSAE-SHA256"), if any.
    package var clientSignatureAlgorithmName: String? {
        let algorithm = gnutls_sign_algorithm_get_client(session)
        guard algorithm > 0 else { return nil }
        return gnutls_sign_get_name(gnutls_sign_algorithm_t(rawValue: UInt32(algorithm))).map { String(cString: $0) }
    }

    /// Whether the server sent a CertificateRequest.
    package var clientCertificateRequested: Bool { gnutls_certificate_client_get_request_status(session) != 0 }

    /// Whether this side sent a certificate.
    package var clientCertificateSent: Bool { gnutls_certificate_get_ours(session) != nil }

    // MARK: Errors

    private func error(for code: Int32) -> GnuTLSSessionError {
        // The provider's failure explains whatever code GnuTLS returned after it (a failed
        // callback, or its own timer when the provider used up the handshake's time).
        if let providerError { return .clientCertificateUnavailable(underlying: providerError) }
        switch code {
        case GNUTLS_E_FATAL_ALERT_RECEIVED:
            let alert = gnutls_alert_get(session)
            let name = gnutls_alert_get_name(alert).map { String(cString: $0) } ?? "alert \(alert.rawValue)"
            return .alertReceived(code: Int(alert.rawValue), name: name)
        case GNUTLS_E_TIMEDOUT:
            return .timedOut
        case GNUTLS_E_PREMATURE_TERMINATION, GNUTLS_E_UNEXPECTED_PACKET_LENGTH:
            return .closedByPeer
        case GNUTLS_E_UNEXPECTED_PACKET, GNUTLS_E_UNSUPPORTED_VERSION_PACKET:
            return .notTLS
        case GNUTLS_E_PULL_ERROR, GNUTLS_E_PUSH_ERROR:
            return .transport(String(cString: gnutls_strerror(code)))
        case GNUTLS_E_PK_SIGN_FAILED where externalKey?.lastError != nil:
            return .signingFailed(underlying: externalKey?.lastError)
        default:
            if let underlying = externalKey?.lastError { return .signingFailed(underlying: underlying) }
            return .failed(String(cString: gnutls_strerror(code)).lowercased())
        }
    }

    /// Whether `name` is an IPv4 or IPv6 literal (SNI carries host names only, RFC 6066 §3).
    static func isIPAddress(_ name: String) -> Bool {
        var ipv4 = in_addr(), ipv6 = in6_addr()
        return inet_pton(AF_INET, name, &ipv4) == 1 || inet_pton(AF_INET6, name, &ipv6) == 1
    }
}
