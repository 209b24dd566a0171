// Which revocation reasons one CRL covers for one certificate: RFC 5280 §6.3.3 (b)(2), the
// CRL's issuingDistributionPoint against the certificate's cRLDistributionPoints, and (d),
// the interim reasons mask. RevocationChecker combines the masks of several CRLs.

/// The part of a certificate's revocation status one CRL can answer.
import RSAKitCore

internal enum CRLScope: Equatable {
    /// The CRL covers the certificate for these reasons (RFC 5280 §6.3.3 (d): the interim
    /// reasons mask, never empty).
    case reasons(X509ReasonFlags)
    /// The CRL does not cover the certificate: why, a phrase ("it covers CA certificates
    /// only (onlyContainsCACerts)").
    case excluded(String)

    /// The scope of `crl` for `certificate`, whose cRLDistributionPoints are `points` (nil or
    /// empty: it has none).
    ///
    /// RFC 5280 §6.3.3 (b): a CRL whose issuer is the certificate's issuer (`direct`) answers
    /// through the certificate's distribution points without a cRLIssuer; any other CRL
    /// only through the points whose cRLIssuer names its issuer, and only when it says it is
    /// indirect (issuingDistributionPoint's indirectCRL). With a distribution point name in
    /// its issuingDistributionPoint, a point answers when one of its names (fullName, or
    /// nameRelativeToCRLIssuer appended to the issuer's name; with neither, its cRLIssuer
    /// names) matches one of the CRL's (``X509GeneralName/matches(_:)``). The reasons
    /// covered are those of the answering points (all when a point gives none) within the
    /// CRL's onlySomeReasons (all when absent): §6.3.3 (d).
    /// - Parameters:
    ///   - crlIssuer: the DER of the CRL's issuer Name, nil if unread.
    ///   - direct: whether the CRL's issuer is the certificate's issuer.
    ///   - certificateIssuer: the DER of the certificate's issuer Name, nil if unread.
    /// - Returns: `.excluded` also when a name cannot be decoded (the CRL is then not used).
    static func of(
        _ crl: X509CRL, crlIssuer: [UInt8]?, direct: Bool, for certificate: X509Certificate,
        certificateIssuer: [UInt8]?, points: [CRLDistributionPoint]?
    ) -> CRLScope {
        let idp = crl.issuingDistributionPoint
        if let why = idp?.exclusion(of: certificate) { return .excluded(why) }
        let onlySome = idp?.onlySomeReasons ?? .all
        var covered: X509ReasonFlags = []
        if let points, !points.isEmpty {
            let crlNames: [X509GeneralName]?
            do {
                crlNames = try idp?.distributionPoint?.names(crlIssuer: crlIssuer)
            } catch {
                return .excluded("its distribution point name cannot be read (\(error))")
            }
            let issuerName = crlIssuer.flatMap { try? X509Name(der: $0) }
            for point in points {
                if let named = point.crlIssuer {
                    // An indirect CRL's point: its cRLIssuer names this CRL's issuer.
                    guard !direct, idp?.indirectCRL == true, let issuerName,
                        named.contains(where: { $0.matches(.directoryName(issuerName)) })
                    else { continue }
                } else if !direct {
                    continue
                }
                if let crlNames {
                    let pointNames: [X509GeneralName]
                    if let name = point.name {
                        guard
                            let names = try? name.names(
                                crlIssuer: point.crlIssuer == nil ? certificateIssuer : crlIssuer)
                        else { continue }
                        pointNames = names
                    } else {
                        pointNames = point.crlIssuer ?? []
                    }
                    guard crlNames.contains(where: { name in pointNames.contains { name.matches($0) } }) else {
                        continue
                    }
                }
                covered.formUnion(point.reasons ?? .all)
            }
            if covered.isEmpty {
                return .excluded(
                    crlNames == nil || !direct
                        ? "no distribution point of the certificate (cRLDistributionPoints) names this CRL's issuer"
                        : "its distribution point is none of the certificate's (cRLDistributionPoints)")
            }
        } else {
            guard direct else { return .excluded("the certificate names no other CRL issuer (cRLDistributionPoints)") }
            guard idp?.distributionPoint == nil else {
                return .excluded(
                    "it is the CRL of a distribution point and the certificate names none (cRLDistributionPoints)")
            }
            covered = .all
        }
        let interim = covered.intersection(onlySome)
        guard !interim.isEmpty else {
            return .excluded(
                "it covers only \(onlySome.names) (onlySomeReasons), none of the reasons of the certificate's "
                    + "distribution points"
            )
        }
        return .reasons(interim)
    }
}

extension X509Certificate {
    /// The cRLDistributionPoints extension (RFC 5280 §4.2.1.13), nil when absent.
    /// - Throws: `RSAError.malformedDER` when it cannot be read.
    func crlDistributionPoints() throws -> [CRLDistributionPoint]? {
        guard let value = try gnutlsCertificate().extensionValue(oid: "2.5.29.31") else { return nil }
        return try CRLDistributionPoint.list(extensionValue: value)
    }
}
