// The OCSP response check (Revocation/OCSPCheck.swift), for Fuzz/Sources/FuzzOCSP:
// a response is untrusted input from the network or from a TLS server's stapled status.

import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
import RSAKitTLS
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@_spi(Fuzzing)
extension RSAKitFuzzing {
    /// What ``ocspJudge(_:certificate:issuer:now:)`` concluded about one response.
    public struct OCSPVerdict: Sendable, Equatable {
        /// "good", "revoked", "unknown" or "not-checked" (``RSARevocationCheck/Status``'s raw value).
        public let status: String
        /// Where the status came from, or why none could be established.
        public let source: String
        /// For "revoked": when (never nil then).
        public let revocationDate: Date?
        /// For "revoked": the CRLReason code, when the response gives one.
        public let revocationReason: Int?
        /// True when GnuTLS parses `body` and its signature verifies for `issuer` (directly or
        /// by a delegated responder with id-kp-OCSPSigning); computed apart from the verdict.
        public let signatureVerifies: Bool
    }

    /// Judge `body` as the OCSP response (RFC 6960 §4.2.1) about `certificate`, issued by
    /// `issuer`, at `now`, exactly as trust evaluation does for a fetched or stapled response
    /// (no nonce expected, the default clock skew). Never throws.
    public static func ocspJudge(_ body: [UInt8], certificate: X509Certificate, issuer: X509Certificate, now: Date)
        -> OCSPVerdict
    {
        guard let leaf = parsedFixedCertificate(certificate), let ca = parsedFixedCertificate(issuer) else {
            return OCSPVerdict(
                status: "not-checked", source: "the fixed certificates do not parse", revocationDate: nil,
                revocationReason: nil, signatureVerifies: false)
        }
        let answer = OCSPCheck.judge(
            body, origin: "fuzz input", certificate: leaf, issuer: ca, nonce: nil,
            policy: RSARevocationPolicy(method: .ocsp), now: now)
        let verifies = (try? GnuTLSOCSPResponse(der: body)).map { $0.signatureProblem(issuer: ca) == nil } ?? false
        return OCSPVerdict(
            status: answer.status.rawValue, source: answer.source, revocationDate: answer.revocationDate,
            revocationReason: answer.revocationReason, signatureVerifies: verifies)
    }

    /// The harness's fixed certificates as GnuTLS imported them, by DER: imported once per
    /// process, not at every judgement (libtasn1's parse was most of the harness's time).
    private static let fixedCertificates = RSAPThreadMutex<[[UInt8]: GnuTLSCertificate]>([:])

    private static func parsedFixedCertificate(_ certificate: X509Certificate) -> GnuTLSCertificate? {
        let der = certificate.derRepresentation
        if let parsed = fixedCertificates.withLock({ $0[der] }) { return parsed }
        guard let parsed = try? GnuTLSCertificate(der: der) else { return nil }
        fixedCertificates.withLock { $0[der] = parsed }
        return parsed
    }

    /// An OCSPResponse (RFC 6960 §4.2.1) of status successful around a BasicOCSPResponse whose
    /// tbsResponseData is `tbsResponseData` unchanged (any bytes, not checked), signed
    /// sha256WithRSAEncryption (RSASSA-PKCS1-v1_5, RFC 8017 §8.2) by `key` over exactly those
    /// bytes, with `certificates` in `certs` when not empty. For FuzzOCSP's re-signed mode: a
    /// mutated response body still carries a valid signature, so the checks after the
    /// signature's are reached.
    /// - Throws: what ``RSAPrivateKey/signature(for:hash:padding:random:)-([UInt8],_,_,_)`` throws.
    public static func ocspResponse(
        signing tbsResponseData: [UInt8], with key: RSAPrivateKey,
        certificates: [X509Certificate]
    ) throws -> [UInt8] {
        let signature = try key.signature(for: tbsResponseData, hash: .sha256, padding: .pkcs1v15)
        let sha256WithRSAEncryption: [UInt8] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b]
        let idPkixOCSPBasic: [UInt8] = [0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x30, 0x01, 0x01]
        var basic: [DERValue] = [
            .encoded(tbsResponseData),
            .sequence([.objectIdentifier(sha256WithRSAEncryption), .null]),
            .bitStringWrapping(.encoded(signature))  // BIT STRING, 0 unused bits, then S
        ]
        if !certificates.isEmpty {
            basic.append(.explicit(0, .sequence(certificates.map { .encoded($0.derRepresentation) })))
        }
        let responseBytes = DERValue.sequence([
            .objectIdentifier(idPkixOCSPBasic), .octetStringWrapping(.sequence(basic))
        ])
        let successful: [UInt8] = [0x0a, 0x01, 0x00]  // OCSPResponseStatus ENUMERATED 0
        return DERValue.sequence([.encoded(successful), .explicit(0, responseBytes)]).encoded()
    }
}
