#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// `rsakit cert show FILE`: every field of the certificates in a file, like
/// `openssl x509 -text` in fewer lines. Reads DER, PEM or a bundle; needs no store.
enum CertShow {
    static func run(path: String, json: Bool) throws {
        let certificates = try readCertificateFile(path)
        if json {
            try printOutput(try jsonText(certificates.map(jsonObject)))
        } else {
            try printOutput(certificates.map(text).joined(separator: "\n"))
        }
    }

    static func keyDescription(_ certificate: X509Certificate) -> String {
        "\(certificate.publicKeyAlgorithmName) \(certificate.publicKeyBitCount) bits"
            + (certificate.publicKey == nil ? " (not usable by rsakit)" : "")
    }

    static func text(_ certificate: X509Certificate) -> String {
        let now = Date()
        let state =
            now > certificate.notValidAfter ? " (expired)" : now < certificate.notValidBefore ? " (not yet valid)" : ""
        let extendedKeyUsage =
            certificate.extendedKeyUsage.map { $0.map(\.description).joined(separator: ", ") } ?? "(none: any)"
        let alternativeNames =
            certificate.subjectAlternativeNames.isEmpty
            ? "(none)"
            : certificate.subjectAlternativeNames.map { terminalSafe($0.description) }.joined(separator: ", ")
        var lines = [
            "subject: \(terminalSafe(certificate.subject))",
            "subject summary: \(terminalSafe(certificate.subjectSummary))",
            "issuer: \(terminalSafe(certificate.issuer))",
            "serial: \(certificate.serialNumberHex)",
            "version: \(certificate.version)",
            "not valid before: \(iso8601(certificate.notValidBefore))",
            "not valid after: \(iso8601(certificate.notValidAfter))\(state)",
            "public key: \(keyDescription(certificate))",
            "signature algorithm: \(certificate.signatureAlgorithmName)",
            "key usage: \(certificate.keyUsage.map { $0.description } ?? "(none: any)")",
            "extended key usage: " + extendedKeyUsage,
            "subject alternative names: " + alternativeNames
        ]
        if let constraints = certificate.basicConstraints {
            lines.append(
                "basic constraints: CA:\(constraints.isCertificateAuthority ? "TRUE" : "FALSE")"
                    + (constraints.pathLengthConstraint.map { ", pathlen:\($0)" } ?? "")
                    + (constraints.isCritical ? " (critical)" : ""))
        }
        lines.append("fingerprint (SHA-256): \(certificate.fingerprintHex)")
        if let spki = certificate.publicKeyFingerprint {
            lines.append("public key fingerprint (SHA-256 of the SPKI): \(spki.base64String)")
            lines.append("public key fingerprint (hex): \(spki.hexString)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func jsonObject(_ certificate: X509Certificate) -> [String: Any] {
        var value: [String: Any] = [
            "subject": certificate.subject, "subjectSummary": certificate.subjectSummary, "issuer": certificate.issuer,
            "serialNumber": certificate.serialNumberHex, "version": certificate.version,
            "notValidBefore": rfc3339(certificate.notValidBefore), "notValidAfter": rfc3339(certificate.notValidAfter),
            "publicKeyAlgorithm": certificate.publicKeyAlgorithmName, "keySizeInBits": certificate.publicKeyBitCount,
            "signatureAlgorithm": certificate.signatureAlgorithmName, "fingerprint": certificate.fingerprintHex,
            "subjectAlternativeNames": certificate.subjectAlternativeNames.map(\.description)
        ]
        if let usage = certificate.keyUsage {
            value["keyUsage"] = usage.description.split(separator: ", ", omittingEmptySubsequences: false).map(
                String.init)
        }
        if let purposes = certificate.extendedKeyUsage { value["extendedKeyUsage"] = purposes.map(\.oid) }
        if let constraints = certificate.basicConstraints {
            var entry: [String: Any] = ["ca": constraints.isCertificateAuthority, "critical": constraints.isCritical]
            if let length = constraints.pathLengthConstraint { entry["pathLength"] = length }
            value["basicConstraints"] = entry
        }
        if let spki = certificate.publicKeyFingerprint { value["publicKeyFingerprint"] = spki.hexString }
        return value
    }
}
