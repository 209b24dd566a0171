// A PKCS#12 file fetched over HTTPS and imported without touching the disk: the way an iOS
// app receives its client identity (downloaded with URLSession, then SecPKCS12Import). The
// body stays in memory, under a limit, and is wiped once read; RSAHTTPSClient's rules apply
// (the server trusted by RSATrust, redirects https to https only).
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAPKCS12 {
    /// Download a PKCS#12 file with `client` and read it (`URLSession.data(from:)` then
    /// `SecPKCS12Import`), never writing it to disk.
    ///
    /// The server is trusted as `client`'s configuration says (its anchors, or the system
    /// roots); redirects are followed https to https only. The body is read into memory up to
    /// `maximumByteCount` bytes and wiped after parsing; the MAC is verified before anything
    /// else is read, as in `init(derRepresentation:passphrase:)`.
    /// - Parameters:
    ///   - url: an `https://` URL.
    ///   - client: the client to download with (its trust settings, identity and timeouts).
    ///   - passphrase: the file's passphrase, as UTF-8 bytes.
    ///   - maximumByteCount: the largest body accepted (default and at most ``maximumByteCount``).
    /// - Throws: ``RSAHTTPSError`` (`.unsupportedURL`, `.insecureRedirect`, `.responseTooLarge`,
    ///   `.unsuccessfulStatus` for a status other than 2xx, `.timedOut`, `.transferFailed`);
    ///   ``RSATLSError`` for the connection (`.serverNotTrusted`, ...); `RSAError.pkcs12Unusable`
    ///   or `.wrongPassphrase` for the file; `CancellationError`.
    public init(
        contentsOf url: URL, client: RSAHTTPSClient, passphrase: [UInt8],
        maximumByteCount: Int = RSAPKCS12.maximumByteCount
    ) async throws {
        var configuration = client.configuration
        configuration.maximumResponseByteCount = min(
            max(0, maximumByteCount), RSAPKCS12.maximumByteCount,
            configuration.maximumResponseByteCount)
        let (body, response) = try await RSAHTTPSClient(configuration: configuration).data(
            for: RSAHTTPSRequest(url: url))
        guard response.isSuccess else {
            throw RSAHTTPSError.unsuccessfulStatus(statusCode: response.statusCode, url: response.url.absoluteString)
        }
        // NOTE: the `Data` the client returns cannot be wiped; the copy parsed here is.
        let bytes = RSAHandOver([UInt8](body))
        // The key derivation and MAC check run in the bounded pool, not on this task's thread.
        self = try await RSABlockingWork.run { _ in
            defer { wipe(&bytes.value) }
            return try RSAPKCS12(derRepresentation: bytes.value, passphrase: passphrase)
        }
    }
}

extension RSAKeyStore {
    /// Download a PKCS#12 file over HTTPS and import it as an identity, nothing written to
    /// disk but the store's items: `RSAPKCS12/init(contentsOf:client:passphrase:maximumByteCount:)`
    /// then ``addIdentity(privateKey:certificate:chain:tag:label:replace:)`` in one write
    /// (the async, downloading form of `importIdentity(pkcs12:passphrase:tag:label:replace:)`).
    ///
    /// - Parameters:
    ///   - url: an `https://` URL; `client` downloads it (trust, redirects, timeouts).
    ///   - passphrase: the file's passphrase, as UTF-8 bytes.
    ///   - tag: the key pair's application tag (default: the label).
    ///   - label: the certificate's label (default: the file's friendly name, else the subject summary).
    ///   - replace: replace items with the same tag or issuer + serial; without it an
    ///     identity already stored is refused (`RSAError.duplicateItem`), its label unchanged.
    /// - Returns: the identity as stored, and the file's contents.
    /// - Throws: every error of the download (see the initialiser) and of
    ///   ``addIdentity(privateKey:certificate:chain:tag:label:replace:)``.
    @discardableResult
    public func importIdentityAsync(
        contentsOf url: URL, client: RSAHTTPSClient, passphrase: [UInt8],
        tag: String? = nil, label: String? = nil,
        replace: Bool = false
    ) async throws -> (identity: RSAIdentityItem, contents: RSAPKCS12) {
        let contents = try await RSAPKCS12(contentsOf: url, client: client, passphrase: passphrase)
        let label = label ?? contents.friendlyName ?? contents.certificate.subjectSummary
        let identity = try await RSABlockingWork.run { [self] _ in
            try addIdentity(
                privateKey: contents.privateKey, certificate: contents.certificate, chain: contents.chain,
                tag: tag ?? label, label: label, replace: replace)
        }
        return (identity, contents)
    }
}

// The passphrase in `Data` (as a UI or a keychain hands it over); RSAKit's copy is wiped.
extension RSAPKCS12 {
    /// `init(contentsOf:client:passphrase:maximumByteCount:)` with the passphrase held in `Data`.
    /// - Throws: every error of the `[UInt8]` form.
    public init(
        contentsOf url: URL, client: RSAHTTPSClient, passphrase: Data,
        maximumByteCount: Int = RSAPKCS12.maximumByteCount
    ) async throws {
        var secret = [UInt8](passphrase)
        defer { wipe(&secret) }
        try await self.init(contentsOf: url, client: client, passphrase: secret, maximumByteCount: maximumByteCount)
    }
}

extension RSAKeyStore {
    /// `importIdentityAsync(contentsOf:client:passphrase:tag:label:replace:)` with the
    /// passphrase held in `Data`.
    /// - Returns: the identity as stored, and the file's contents.
    /// - Throws: every error of the `[UInt8]` form.
    @discardableResult
    public func importIdentityAsync(
        contentsOf url: URL, client: RSAHTTPSClient, passphrase: Data,
        tag: String? = nil, label: String? = nil,
        replace: Bool = false
    ) async throws -> (identity: RSAIdentityItem, contents: RSAPKCS12) {
        var secret = [UInt8](passphrase)
        defer { wipe(&secret) }
        return try await importIdentityAsync(
            contentsOf: url, client: client, passphrase: secret, tag: tag, label: label,
            replace: replace)
    }
}
