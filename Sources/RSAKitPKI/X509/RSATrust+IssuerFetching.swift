// Missing issuers fetched from the caIssuers URL of the authorityInfoAccess extension
// (RFC 5280 §4.2.2.1), as browsers and Apple's trust services do when a server sends an
// incomplete chain. The HTTP exchange is libcurl's (HTTP/); the certificates are read by
// GnuTLS; what is fetched is a candidate like a given certificate, never an anchor.

import RSAKitCore

extension RSATrust {
    /// The most certificates fetched in one evaluation: one per level of the chain.
    static let maximumFetchedIssuers = 4

    /// The certificates fetched for the chain above `leaf`: while the current top has no
    /// issuer among `known` (given and stored certificates) or `anchors`, each of its
    /// caIssuers URLs (http or https) is fetched in turn until one yields a certificate that
    /// names the top's issuer as its subject (RFC 5280 §7.1), which becomes the new top.
    /// Failures are warnings ("issuer of certificate 1 not fetched from URL: reason").
    /// - Returns: the fetched certificates, nearest the leaf first; empty when
    ///   ``RSARevocationPolicy/fetchIssuers`` is off or the network is disabled.
    func fetchedIssuers(
        leaf: X509Certificate, known: [X509Certificate], anchors: GnuTLSTrustList, warnings: inout [String]
    ) -> [X509Certificate] {
        let policy = revocationPolicy
        guard policy.fetchIssuers, !policy.networkAccessDisabled else { return [] }
        var fetched: [X509Certificate] = []
        var top = leaf
        for level in 0..<Self.maximumFetchedIssuers {
            guard !top.isSelfIssued, let native = try? top.gnutlsCertificate(),
                (try? anchors.anchorDER(issuing: native)) == nil
            else { break }
            let issuerName = native.issuerName()
            func issues(_ candidate: X509Certificate) -> Bool {
                guard let subject = (try? candidate.gnutlsCertificate())?.subjectName(), let issuerName else {
                    return candidate.subject == top.issuer
                }
                return subject.matches(issuerName)
            }
            if let present = (known + fetched).first(where: { $0 != top && issues($0) }) {
                top = present
                continue
            }
            var next: X509Certificate?
            for url in native.caIssuersURLs() {
                guard url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://") else { continue }
                do {
                    let bytes = try HTTPClient.get(
                        url: url, timeout: policy.ocspTimeout,
                        maximumResponseByteCount: policy.maximumFetchedIssuerByteCount)
                    next = try Self.certificates(fetched: bytes).first(where: issues)
                    if next == nil {
                        warnings.append(
                            "issuer of certificate \(level) not fetched from \(url): no certificate there names "
                                + "\(top.issuer)"
                        )
                    }
                } catch {
                    warnings.append("issuer of certificate \(level) not fetched from \(url): \(error)")
                }
                if next != nil { break }
            }
            guard let next else { break }
            fetched.append(next)
            top = next
        }
        return fetched
    }

    /// The certificates of a caIssuers response: one DER certificate or PEM certificates
    /// (``X509Certificate/certificates(from:)``), else a certs-only PKCS#7 (DER or PEM).
    /// - Throws: `RSAError.malformedCertificate` when it is none of those.
    static func certificates(fetched bytes: [UInt8]) throws -> [X509Certificate] {
        if let certificates = try? X509Certificate.certificates(from: bytes) { return certificates }
        do {
            return try GnuTLSCertificate.certificatesDER(pkcs7: bytes).map {
                try X509Certificate(derRepresentation: $0)
            }
        } catch {
            throw RSAError.malformedCertificate(
                reason:
                    "the response (\(bytes.count) bytes) is neither a certificate nor a PKCS#7 bundle of certificates")
        }
    }
}
