import RSAKit

/// The revocation options of `trust evaluate` and `tls connect`: `--revocation`,
/// `--require-revocation`, `--no-network`, `--ocsp-url`, mapped to an `RSARevocationPolicy`.
enum RevocationOptions {
    static let specs: [OptionSpec] = [
        .value(
            "revocation", "METHOD",
            "How revocation is checked: crl (default: --crl files and the store's CRLs), ocsp (ask each "
                + "certificate's OCSP responder), any (a current CRL, else OCSP), off."
        ).choices(["ocsp", "crl", "any", "off"]),
        .flag(
            "require-revocation",
            "Fail (recoverable-trust-failure) when a certificate's revocation status cannot be established, instead "
                + "of warning."
        ),
        .flag("no-network", "Send no OCSP request (Apple's NetworkAccessDisabled): OCSP cannot answer."),
        .flag(
            "fetch-crls",
            "With --revocation crl or any: fetch the CRL named by a certificate's CRL distribution points when no "
                + "current CRL of its issuer is at hand."
        ),
        .flag(
            "fetch-issuers",
            "Fetch a missing intermediate from the caIssuers URL of a certificate's authorityInfoAccess (http or "
                + "https; never with --no-network)."
        ),
        .value(
            "ocsp-url", "URL",
            "Ask this OCSP responder (http or https) instead of the URL in each certificate (authorityInfoAccess).")
    ]

    /// The usage fragment.
    static let usage =
        "[--revocation ocsp|crl|any|off] [--require-revocation] [--no-network] [--fetch-crls] [--fetch-issuers] "
        + "[--ocsp-url <URL>]"

    /// The policy the options ask for.
    /// - Throws: `UsageError` for an unknown method or a URL that is not http(s).
    static func policy(_ arguments: ParsedArguments, command: String) throws -> RSARevocationPolicy {
        let name = arguments.value("revocation") ?? "crl"
        guard let method = RSARevocationPolicy.Method(rawValue: name) else {
            throw UsageError(message: "--revocation must be ocsp, crl, any or off, got '\(name)'", command: command)
        }
        var policy = RSARevocationPolicy(
            method: method, requirePositiveResponse: arguments.flag("require-revocation"),
            networkAccessDisabled: arguments.flag("no-network"))
        policy.fetchCRLs = arguments.flag("fetch-crls")
        policy.fetchIssuers = arguments.flag("fetch-issuers")
        if let url = arguments.value("ocsp-url") {
            guard url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://") else {
                throw UsageError(message: "--ocsp-url must be an http or https URL, got '\(url)'", command: command)
            }
            policy.ocspURL = url
        }
        return policy
    }
}
