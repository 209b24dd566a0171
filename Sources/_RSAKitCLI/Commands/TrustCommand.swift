#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// `rsakit trust evaluate`: evaluate a certificate chain under a policy (Apple's
/// SecTrustEvaluate; macOS `security verify-cert`). A thin layer over `RSATrust`.
struct TrustCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "trust",
        overview: "Evaluate a certificate chain (trust evaluate), with Apple's trust results.",
        usage:
            "rsakit trust evaluate <CERT> [--chain <FILE>]... [--policy basic|ssl-server|ssl-client] [--hostname "
            + "<H>] [--anchor <FILE>]... [--anchors-only] [--crl <FILE>]... \(RevocationOptions.usage) "
            + "[--verify-date <DATE>] [--json] [--store <DIR>]",
        options: [
            .repeated(
                "chain", "FILE",
                "Intermediate (or other) certificates to build the chain from; DER, PEM or a bundle; repeatable."),
            .value(
                "policy", "POLICY",
                "basic (default: chain, signatures, validity, CA rights), ssl-server (adds serverAuth and "
                    + "--hostname), ssl-client (adds clientAuth)."
            ).choices(["basic", "ssl-server", "ssl-client"]),
            .value("hostname", "H", "ssl-server: the name (or IP address) the leaf must be valid for."),
            .repeated("anchor", "FILE", "Extra trust anchors; repeatable."),
            .repeated(
                "crl", "FILE",
                "Check revocation against this CRL (PEM or DER, as openssl ca -gencrl writes it); repeatable. A "
                    + "revoked certificate is a fatal failure."
            ),
            .flag(
                "anchors-only",
                "Use only --anchor files and the store's trusted certificates, not the system's "
                    + "(/etc/ssl/certs/ca-certificates.crt)."
            ),
            .value(
                "verify-date", "DATE",
                "Check validity at DATE instead of now: RFC 3339 (2020-06-15T12:00:00Z) or YYYY-MM-DD (midnight UTC)."),
            .flag("json", "Print the result as JSON.")
        ] + RevocationOptions.specs,
        positionals: ["SUBCOMMAND", "CERT"],
        subcommands: ["evaluate"],
        discussion: """
            Anchors: the system's, the store's certificates added with 'cert add --trust', and --anchor files.
            Chains are built from CERT, --chain files and every certificate in the store (stored certificates
            are candidates, not anchors); when several paths exist (cross-signed or expired alternatives), each
            is tried and the first that validates is reported.
            Results: proceed (chains to a certificate you marked trusted), unspecified (chains to a system or
            given anchor), recoverable-trust-failure, deny (a certificate you marked distrusted),
            fatal-trust-failure, invalid. Every reason is printed with its certificate; an expired one with
            the --verify-date that would evaluate it.
            Revocation: a revoked certificate is a fatal failure with its revocation date (and reason, from
            OCSP); a status that cannot be established (no CRL, no OCSP answer, a refused response, unknown)
            is a warning, or a recoverable failure under --require-revocation. OCSP requests carry a nonce,
            wait at most 5 s, read at most 64 KiB, and the response's signature (by the issuer or a
            responder certificate it issued for OCSP signing), certificate, nonce and dates are checked.
            Exit status: 0 for proceed and unspecified, 65 for every failure.
            """,
        passphrases: .none)

    let arguments: ParsedArguments
    let certificatePath: String
    let policy: RSATrustPolicy
    let policyName: String
    let verifyDate: Date?
    let revocationPolicy: RSARevocationPolicy

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        _ = try parseSubcommand(arguments, spec: Self.spec)
        guard arguments.positionals.count == 2 else {
            throw UsageError(message: "missing certificate file argument <CERT>", command: Self.spec.name)
        }
        certificatePath = arguments.positionals[1]
        policyName = arguments.value("policy") ?? "basic"
        let hostname = arguments.value("hostname")
        switch policyName {
        case "basic": policy = .basicX509
        case "ssl-server": policy = .sslServer(hostname: hostname)
        case "ssl-client": policy = .sslClient
        default:
            throw UsageError(
                message: "--policy must be basic, ssl-server or ssl-client, got '\(policyName)'",
                command: Self.spec.name)
        }
        if hostname != nil && policyName != "ssl-server" {
            throw UsageError(message: "--hostname needs --policy ssl-server", command: Self.spec.name)
        }
        revocationPolicy = try RevocationOptions.policy(arguments, command: Self.spec.name)
        if let text = arguments.value("verify-date") {
            guard let date = TrustCommand.parseDate(text) else {
                throw UsageError(
                    message: "--verify-date expects RFC 3339 (2020-06-15T12:00:00Z) or YYYY-MM-DD, got '\(text)'",
                    command: Self.spec.name)
            }
            verifyDate = date
        } else {
            verifyDate = nil
        }
    }

    /// RFC 3339 date-time (with Z or an offset, optional fractional seconds) or a full date (midnight UTC).
    static func parseDate(_ text: String) -> Date? {
        parseRFC3339(text) ?? (text.count == 10 ? parseRFC3339(text + "T00:00:00Z") : nil)
    }

    func run() throws {
        let given = try readCertificateFile(certificatePath)
        var trust = RSATrust(
            certificates: given + (try arguments.values("chain").flatMap { try readCertificateFile($0) }),
            policy: policy)
        trust.anchorCertificates = try arguments.values("anchor").flatMap { try readCertificateFile($0) }
        trust.anchorCertificatesOnly = arguments.flag("anchors-only")
        trust.crls = try arguments.values("crl").flatMap { path in
            do { return try X509CRL.crls(from: try readWholeFile(path, what: "CRL file")) } catch let error as RSAError
            {
                throw CLIFailure(
                    "cannot read the CRL file '\(terminalSafe(path))': \(CLIFailure.message(for: error))", .dataError)
            }
        }
        if let verifyDate { trust.verifyDate = verifyDate }
        trust.revocationPolicy = revocationPolicy
        // The store, when one exists (evaluating never creates one): its certificates are
        // candidates for the chain (intermediates stored by `cert add` or `identity import`),
        // its trust settings (cert add --trust / --distrust) anchor or deny.
        if (try? storeExists(arguments)) == true {
            try trust.addKeychain(try openStore(arguments))
        }
        let evaluation = trust.evaluate()
        for warning in evaluation.warnings { printWarning(warning) }
        try printOutput(
            arguments.flag("json")
                ? try jsonText(json(evaluation)) : text(evaluation, userTrusted: trust.userTrustedFingerprints))
        guard evaluation.result.isTrusted else {
            throw CLIFailure("trust evaluation failed: \(evaluation.result.rawValue)", .dataError)
        }
    }

    private var policyDescription: String {
        if case let .sslServer(hostname?) = policy { return "\(policyName) (hostname \(hostname))" }
        return policyName
    }

    private func text(_ evaluation: RSATrustEvaluation, userTrusted: Set<[UInt8]>) -> String {
        var text =
            "result: \(evaluation.result.rawValue)\npolicy: \(policyDescription)\nverify date: "
            + "\(iso8601(evaluation.verifyDate))\nchain:\n"
        for (index, certificate) in evaluation.chain.enumerated() {
            var notes: [String] = []
            if certificate == evaluation.anchor { notes.append("anchor") }
            if userTrusted.contains(certificate.fingerprint) { notes.append("trusted by the user") }
            text +=
                "  \(index): \(terminalSafe(certificate.subjectSummary)) (not after "
                + "\(iso8601(certificate.notValidAfter)))"
                + (notes.isEmpty ? "" : " [\(notes.joined(separator: ", "))]") + "\n"
        }
        if !evaluation.revocation.isEmpty {
            text += "revocation:\n"
            for check in evaluation.revocation {
                text += "  \(check.chainIndex): \(check.status.rawValue) (\(terminalSafe(check.source)))"
                if let date = check.revocationDate { text += ", revoked \(iso8601(date))" }
                if let reason = check.revocationReasonName { text += ", reason \(reason)" }
                text += "\n"
            }
        }
        if !evaluation.failures.isEmpty {
            text += "failures:\n"
            for failure in evaluation.failures {
                text += "  \(terminalSafe(failure.description))"
                if let date = failure.suggestedVerifyDate { text += " (--verify-date \(iso8601(date)))" }
                text += "\n"
            }
        }
        return text
    }

    private func json(_ evaluation: RSATrustEvaluation) -> [String: Any] {
        var value: [String: Any] = [
            "result": evaluation.result.rawValue,
            "trusted": evaluation.result.isTrusted,
            "policy": policyName,
            "verifyDate": rfc3339(evaluation.verifyDate),
            "userTrusted": evaluation.isUserTrusted,
            "warnings": evaluation.warnings
        ]
        if case let .sslServer(hostname?) = policy { value["hostname"] = hostname }
        value["chain"] = evaluation.chain.enumerated().map { index, certificate -> [String: Any] in
            [
                "index": index, "subject": certificate.subject, "issuer": certificate.issuer,
                "subjectSummary": certificate.subjectSummary, "serialNumber": certificate.serialNumberHex,
                "notValidBefore": rfc3339(certificate.notValidBefore),
                "notValidAfter": rfc3339(certificate.notValidAfter),
                "fingerprint": certificate.fingerprintHex, "anchor": certificate == evaluation.anchor
            ]
        }
        value["revocation"] = evaluation.revocation.map { check -> [String: Any] in
            var entry: [String: Any] = [
                "index": check.chainIndex, "status": check.status.rawValue, "source": check.source
            ]
            if let date = check.revocationDate { entry["revocationDate"] = rfc3339(date) }
            if let reason = check.revocationReason {
                entry["revocationReason"] = reason; entry["revocationReasonName"] = check.revocationReasonName
            }
            return entry
        }
        value["failures"] = evaluation.failures.map { failure -> [String: Any] in
            var entry: [String: Any] = [
                "reason": failure.kind.code, "result": failure.kind.result.rawValue,
                "certificateIndex": failure.chainIndex,
                "subjectSummary": failure.certificate.subjectSummary, "message": failure.message
            ]
            if case let .expired(notAfter) = failure.kind { entry["notValidAfter"] = rfc3339(notAfter) }
            if case let .notYetValid(notBefore) = failure.kind { entry["notValidBefore"] = rfc3339(notBefore) }
            if let date = failure.suggestedVerifyDate { entry["suggestedVerifyDate"] = rfc3339(date) }
            return entry
        }
        return value
    }
}
