// Certificate requests (PKCS#10) and self-signed certificates for a key wherever it lives:
// the key signs through RSACertificateSigner, so a token or TPM key gets a certificate
// without ever leaving its hardware.
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A PKCS#10 certification request (RFC 2986), what `openssl req -new` writes and a CA
/// (`openssl x509 -req`, `openssl ca`) turns into a certificate.
public struct RSACertificateRequest: Sendable {
    /// The DER CertificationRequest.
    public let derRepresentation: [UInt8]
    /// The subject as given (RFC 4514).
    public let subject: String
    /// The subjectAltNames requested (in an extensionRequest attribute, RFC 2985 §5.4.2).
    public let alternativeNames: [X509Certificate.SubjectAlternativeName]
    /// The public key requested for.
    public let publicKey: RSAPublicKey
    /// The signature the request carries.
    public let scheme: RSACertificateSignatureScheme

    /// Make and sign a request (CertificationRequestInfo version 0, RFC 2986 §4.1). The
    /// signature is checked against the signer's public key before it is returned.
    ///
    /// - Parameters:
    ///   - subject: an RFC 4514 string, most specific attribute first ("CN=host,O=Example,C=GB"
    ///     is encoded C, O, CN, the order `openssl -subj /C=GB/O=Example/CN=host` gives); GnuTLS
    ///     parses it (`gnutls_x509_crq_set_dn`): known attribute names (CN, O, OU, C, L, ST,
    ///     DC, emailAddress, serialNumber, ...) or dotted OIDs, values escaped as RFC 4514 says.
    ///   - alternativeNames: DNS, IP, email and URI names, in order
    ///     (``X509Certificate/SubjectAlternativeName/init(parsing:)``
    ///     reads them from text); none means no extensionRequest.
    ///   - signer: the key (``RSACertificateSigner/init(privateKey:)``, or one that signs on a token).
    ///   - scheme: the signature, SHA-256/384/512 with PKCS#1 v1.5 (default SHA-256) or PSS.
    /// - Throws: `RSAError.invalidDistinguishedName` for a subject GnuTLS cannot parse or an
    ///   empty one; `RSAError.invalidSubjectAlternativeName`; `RSAError.keyRestricted` for
    ///   another hash or an id-RSASSA-PSS key; what the signer throws (a token's
    ///   `RSAError.tokenPINIncorrect`, ...); `RSAError.internalError` when the signature does
    ///   not verify with the signer's public key.
    public init(
        subject: String, alternativeNames: [X509Certificate.SubjectAlternativeName] = [],
        signer: RSACertificateSigner, scheme: RSACertificateSignatureScheme = .default
    ) throws {
        let contents = GnuTLSCertificateBuilder.Contents(
            subject: subject, alternativeNames: alternativeNames, signer: signer, scheme: scheme)
        derRepresentation = try RSACertificateRequest.building { try GnuTLSCertificateBuilder.request(contents) }
        self.subject = subject
        self.alternativeNames = alternativeNames
        self.publicKey = signer.publicKey
        self.scheme = scheme
    }

    /// PEM text, "-----BEGIN CERTIFICATE REQUEST-----" as `openssl req` writes it.
    public var pemRepresentation: String {
        PEMDocument.encode(derRepresentation, label: "CERTIFICATE REQUEST")
    }

    /// Run a GnuTLS build, turning a bare GnuTLS failure into `RSAError.internalError`.
    static func building(_ body: () throws -> [UInt8]) throws -> [UInt8] {
        do {
            return try body()
        } catch let failure as GnuTLSFailure {
            throw RSAError.internalError("GnuTLS could not build the document: \(failure)")
        }
    }
}

extension X509Certificate {
    /// The longest validity
    /// ``selfSigned(subject:alternativeNames:validityDays:notValidBefore:isCertificateAuthority:signer:scheme:)``
    /// accepts, in days (100 years).
    public static let maximumValidityDays = 36_500

    /// Make a self-signed certificate (`openssl req -x509`): v3, issuer = subject, a serial
    /// of 20 random bytes from the OS generator (getrandom) with the top bit cleared so it
    /// is positive (RFC 5280 §4.1.2.2), signed by the subject's own key.
    ///
    /// Extensions, as openssl.cnf's v3_req (or v3_ca for a CA) give them: subjectKeyIdentifier
    /// (SHA-1 of the subjectPublicKey, RFC 5280 §4.2.1.2 method 1) and an authorityKeyIdentifier
    /// with the same keyIdentifier; basicConstraints, critical, cA true only when
    /// `isCertificateAuthority`; keyUsage, critical: digitalSignature, nonRepudiation and
    /// keyEncipherment, or for a CA digitalSignature, keyCertSign and cRLSign; the
    /// subjectAltNames when given.
    ///
    /// - Parameters:
    ///   - subject, alternativeNames, signer, scheme: as
    ///     ``RSACertificateRequest/init(subject:alternativeNames:signer:scheme:)``.
    ///   - validityDays: 1 to ``maximumValidityDays``; notAfter = notBefore + days × 86,400 s.
    ///   - notValidBefore: notBefore (default now), whole seconds.
    ///   - isCertificateAuthority: cA true (a private CA that signs other certificates).
    /// - Returns: the certificate, parsed back.
    /// - Throws: `RSAError.invalidAttribute` for a validity outside 1 to ``maximumValidityDays``
    ///   days; as ``RSACertificateRequest/init(subject:alternativeNames:signer:scheme:)``.
    public static func selfSigned(
        subject: String, alternativeNames: [SubjectAlternativeName] = [], validityDays: Int,
        notValidBefore: Date = Date(), isCertificateAuthority: Bool = false,
        signer: RSACertificateSigner, scheme: RSACertificateSignatureScheme = .default
    ) throws -> X509Certificate {
        guard (1...maximumValidityDays).contains(validityDays) else {
            throw RSAError.invalidAttribute(
                reason: "the validity must be 1 to \(maximumValidityDays) days, not \(validityDays)")
        }
        var serial = SystemRandomSource().bytes(20)
        // Positive and exactly 20 bytes in DER: top bit clear, first byte not zero.
        serial[0] &= 0x7f
        if serial[0] == 0 { serial[0] = 0x01 }
        let notBefore = Int(notValidBefore.timeIntervalSince1970.rounded(.down))
        let validity = GnuTLSCertificateBuilder.Validity(
            serial: serial, notBefore: notBefore, notAfter: notBefore + validityDays * 86_400,
            isCertificateAuthority: isCertificateAuthority)
        let contents = GnuTLSCertificateBuilder.Contents(
            subject: subject, alternativeNames: alternativeNames, signer: signer, scheme: scheme)
        let der = try RSACertificateRequest.building { try GnuTLSCertificateBuilder.selfSigned(contents, validity) }
        return try X509Certificate(derRepresentation: der)
    }
}

extension X509Certificate.SubjectAlternativeName {
    /// Read a name from `openssl req -addext`'s notation: "DNS:host.example.com",
    /// "IP:192.0.2.1" or "IP:2001:db8::1", "email:user@example.com", "URI:https://example.com/"
    /// (the prefix in any case).
    ///
    /// Checks: a DNS name is ASCII letters, digits, '-' and '.', with an optional leading "*."
    /// label, no empty label, at most 253 characters; an IP address is what `inet_pton` reads
    /// (IPv4 dotted quad or IPv6); an e-mail address is ASCII with one '@' and text on both
    /// sides; a URI has a scheme (RFC 3986 §3.1) and no spaces or control characters.
    ///
    /// - Throws: `RSAError.invalidSubjectAlternativeName` naming the text and the rule broken.
    public init(parsing text: String) throws {
        guard let colon = text.firstIndex(of: ":") else {
            throw RSAError.invalidSubjectAlternativeName(
                text, reason: "expected TYPE:VALUE with TYPE one of DNS, IP, email, URI")
        }
        let type = text[..<colon].lowercased()
        let value = String(text[text.index(after: colon)...])
        func invalid(_ reason: String) -> RSAError { .invalidSubjectAlternativeName(text, reason: reason) }
        guard !value.isEmpty else { throw invalid("the value after \"\(text[..<colon]):\" is empty") }
        let printableASCII = value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
        switch type {
        case "dns":
            var labels = value.split(separator: ".", omittingEmptySubsequences: false)
            if labels.first == "*" && labels.count > 1 { labels.removeFirst() }
            let allowed = { (byte: UInt8) in
                (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x30 && byte <= 0x39)
                    || byte == 0x2d
            }
            guard value.utf8.count <= 253,
                labels.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 63 && $0.utf8.allSatisfy(allowed) })
            else {
                throw invalid(
                    "a DNS name is labels of letters, digits and '-' joined by '.' (a leading \"*.\" allowed), at "
                        + "most 253 characters"
                )
            }
            self = .dnsName(value)
        case "ip":
            var v4 = in_addr()
            var v6 = in6_addr()
            if inet_pton(AF_INET, value, &v4) == 1 {
                self = .ipAddress(withUnsafeBytes(of: &v4) { Array($0) })
            } else if inet_pton(AF_INET6, value, &v6) == 1 {
                self = .ipAddress(withUnsafeBytes(of: &v6) { Array($0) })
            } else {
                throw invalid("not an IPv4 or IPv6 address")
            }
        case "email":
            let parts = value.split(separator: "@", omittingEmptySubsequences: false)
            guard printableASCII, parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw invalid("an e-mail address is ASCII LOCAL@DOMAIN without spaces")
            }
            self = .emailAddress(value)
        case "uri":
            let scheme = value.prefix { $0 != ":" }
            let schemeValid =
                scheme.utf8.first.map { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7a } == true
                && scheme.utf8.allSatisfy {
                    ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7a || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2b || $0 == 0x2d
                        || $0 == 0x2e
                }
            guard printableASCII, scheme.count < value.count, schemeValid else {
                throw invalid("a URI is SCHEME:REST (as https://host/path), ASCII without spaces")
            }
            self = .uri(value)
        default:
            throw invalid("unknown type \"\(text[..<colon])\"; use DNS, IP, email or URI")
        }
    }
}
