#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// `rsakit tls connect HOST:PORT`: a TLS client in the manner of `openssl s_client -quiet`
/// and `gnutls-cli`, authenticating with an identity from the store whose private key never
/// leaves rsakit's engine, and trusting the server by rsakit's trust evaluation.
struct TLSCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "tls",
        overview: "Connect to a TLS server with a stored identity (mutual TLS); relay standard input and output.",
        usage:
            "rsakit tls connect <HOST:PORT> [--identity <LABEL> | --tag <TAG>] [--access-group <GROUP>]... "
            + "[--servername <NAME>] [--anchor <FILE>]... [--anchors-only] [--crl <FILE>]... "
            + "\(RevocationOptions.usage) [--tls1.2 | --tls1.3] [--alpn <LIST>] [--timeout <S>] [-v] [--passin "
            + "<SPEC>] [--token-pin <SPEC>] [--store <DIR> | --system]",
        options: [
            identityOptions[0], identityOptions[1], identityGroupOption,
            .value(
                "servername", "NAME", "The name the server certificate must match and the SNI sent (default: HOST)."),
            anchorOptions[0], anchorOptions[1],
            .repeated(
                "crl", "FILE",
                "Check the server's chain against this CRL (PEM or DER); repeatable. A revoked certificate fails the "
                    + "handshake."
            ),
            .flag("tls1.2", "Negotiate TLS 1.2 only."),
            .flag("tls1.3", "Negotiate TLS 1.3 only."),
            .value(
                "alpn", "LIST",
                "Offer these application protocols by ALPN, most preferred first, comma-separated (h2,http/1.1); -v "
                    + "prints the one the server selected."
            ),
            .value(
                "timeout", "S",
                "Seconds allowed to connect, for the handshake, and to wait for the server once the input ended "
                    + "(default 30)."
            ),
            .flag(
                "verbose",
                "(-v) Print the protocol, cipher suite, ALPN protocol, server subject, trust result, revocation and "
                    + "the client identity used to standard error."
            ),
            tokenPINOption,
            .flag(
                "system",
                "Take the --identity or --tag identity from the system keychain, through its agent (socket: "
                    + "$RSAKIT_SYSTEM_SOCKET, else /run/rsakit/system.sock): only the access groups its rules allow "
                    + "this user; the agent signs, the private key never enters rsakit. At most one --access-group."
            )
        ] + RevocationOptions.specs,
        positionals: ["SUBCOMMAND", "HOST:PORT"],
        subcommands: ["connect"],
        discussion: """
            After the handshake, standard input goes to the server and the server's bytes to
            standard output, until the server closes the connection (the end of standard input
            is not sent: the answer is still read, as with s_client -quiet):
              printf 'GET / HTTP/1.0\\r\\n\\r\\n' | rsakit tls connect 127.0.0.1:8443 --identity alice --anchor ca.pem
            The server's chain is evaluated under the SSL server policy for the server name
            (rsakit trust evaluate): the system's CAs, certificates marked trusted in the store
            (cert add --trust) and --anchor files. If it is not trusted, the handshake stops
            before the client certificate, any signature or any byte of input is sent.
            Revocation as in trust evaluate (--crl files and the store's CRLs by default); with
            --revocation ocsp or any the server is also asked to staple an OCSP response
            (status_request), which is checked like a fetched one.
            The client's signatures (PKCS#1 v1.5 in TLS 1.2, RSA-PSS in TLS 1.3) are made by
            rsakit; a protected store asks for its passphrase once, before connecting.
            When the identity's private key is on a PKCS#11 token (genpair --token), the
            signature is made on the token: rsakit logs in with the token PIN (--token-pin,
            else $RSAKIT_TOKEN_PIN, else a prompt) before the handshake.
            With --system the identity comes from the system keychain (rsakit agent serve
            --system): a certificate and private key of an access group the agent's rules allow
            this Unix user; the agent makes the signature, and a user it allows no such group is
            refused (77) before anything is sent. The store's trust settings are not read then.
            Exit status: 0 when the server closed the connection cleanly; 65 trust or handshake
            failure (the reason is printed; also when the server rejects the client
            certificate; also a wrong token PIN); 66 unknown identity or token unavailable;
            77 the system keychain refuses this user; 1 network errors (refused, timeout, reset).
            """)

    let arguments: ParsedArguments
    let host: String
    let port: Int
    let timeout: Double
    let revocationPolicy: RSARevocationPolicy
    let applicationProtocols: [String]

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        let name = Self.spec.name
        _ = try parseSubcommand(arguments, spec: Self.spec)
        guard arguments.positionals.count == 2 else {
            throw UsageError(message: "missing server address <HOST:PORT>", command: name)
        }
        (host, port) = try Self.parseAddress(arguments.positionals[1], command: name)
        guard arguments.value("identity") == nil || arguments.value("tag") == nil else {
            throw UsageError(message: "give either --identity or --tag, not both", command: name)
        }
        guard !(arguments.flag("tls1.2") && arguments.flag("tls1.3")) else {
            throw UsageError(message: "give --tls1.2 or --tls1.3, not both", command: name)
        }
        revocationPolicy = try RevocationOptions.policy(arguments, command: name)
        timeout = try Self.timeout(arguments, command: name)
        if let list = arguments.value("alpn") {
            let names = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard names.allSatisfy({ (1...255).contains($0.utf8.count) }) else {
                throw UsageError(
                    message:
                        "--alpn expects comma-separated protocol names of 1 to 255 bytes (h2,http/1.1), got "
                        + "'\(terminalSafe(list))'",
                    command: name)
            }
            applicationProtocols = names
        } else {
            applicationProtocols = []
        }
        // Standard input carries the data for the server, so it cannot carry the passphrase too.
        let environment = ProcessInfo.processInfo.environment
        for (option, variable) in [
            ("store-passin", "RSAKIT_STORE_PASSIN"), ("passin", "RSAKIT_PASSIN"), ("token-pin", "RSAKIT_TOKEN_PIN")
        ]
        where (arguments.value(option) ?? environment[variable]) == "stdin" {
            throw UsageError(
                message:
                    "--\(option) stdin cannot be used here: standard input goes to the server; use fd:N, file:PATH, "
                    + "env:VAR or the terminal prompt",
                command: name)
        }
        if arguments.flag("anchors-only") && arguments.values("anchor").isEmpty {
            printWarning("--anchors-only without --anchor: only certificates marked trusted in the store are anchors")
        }
    }

    /// `--access-group` where a command only reads an identity (`tls connect`, `fetch`): the
    /// identity is looked for in these groups only, in order.
    static let identityGroupOption = OptionSpec.repeated(
        "access-group", "GROUP",
        "Look for the --identity or --tag identity in these access groups only (repeatable; the first group holding "
            + "the name wins). Default: every group."
    )

    /// `--identity` and `--tag`, shared with `fetch`.
    static let identityOptions: [OptionSpec] = [
        .value("identity", "LABEL", "Authenticate with the identity whose certificate has this label."),
        .value("tag", "TAG", "Authenticate with the identity of the private key stored under this application tag.")
    ]

    /// `--anchor` and `--anchors-only`, shared with `fetch`.
    static let anchorOptions: [OptionSpec] = [
        .repeated("anchor", "FILE", "Trust this CA certificate (PEM, DER or a bundle) as an anchor; may be repeated."),
        .flag(
            "anchors-only",
            "Trust only --anchor files and certificates marked trusted in the store, not the system's CAs.")
    ]

    /// `--timeout S` (default 30). - Throws: `UsageError` for a value that is not 0 < S <= 86400.
    static func timeout(_ arguments: ParsedArguments, command: String) throws -> Double {
        guard let text = arguments.value("timeout") else { return 30 }
        guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
            throw UsageError(
                message: "--timeout expects seconds (a number above 0, at most 86400), got '\(text)'", command: command)
        }
        return seconds
    }

    /// The store's part of a TLS client's settings: its trust settings added to
    /// `configuration` when the store exists (or an identity is asked for), and the identity
    /// `--identity` or `--tag` names, unlocked as the command's options say.
    /// - Throws: `CLIFailure` (66) for a missing identity; the store's and the identity's errors.
    static func storedIdentity(
        _ arguments: ParsedArguments, addingTrustTo configuration: inout RSATLSClientConfiguration,
        command: String
    ) throws -> RSATLSClientIdentity? {
        let label = arguments.value("identity"), tag = arguments.value("tag")
        let storePath = arguments.value("store") ?? (try? RSAKeyStore.defaultLocation())
        let storeExists = storePath.map { FileManager.default.fileExists(atPath: $0) } ?? false
        guard label != nil || tag != nil || storeExists else { return nil }
        let store = try openStore(arguments)
        try configuration.addTrustSettings(from: store)
        guard label != nil || tag != nil else { return nil }
        return try withUnlockedStore(store, arguments, command: command) {
            try identity(store, label: label, tag: tag) { [arguments] reference in
                try readTokenPIN(arguments, command: command, reference: reference)
            }
        }
    }

    /// `--system`: the identity `--identity` or `--tag` names among what the system agent
    /// allows this user (in the one `--access-group` when given).
    /// - Throws: `UsageError` without --identity or --tag, or with --store; `CLIFailure` (66)
    ///   for a missing identity; `RSAError.storeAccessDenied` (77) when the agent refuses.
    static func systemIdentity(_ arguments: ParsedArguments, command: String) throws -> RSATLSClientIdentity {
        let client = try systemKeychainClient(arguments, command: command)
        let label = arguments.value("identity"), tag = arguments.value("tag")
        guard label != nil || tag != nil else {
            throw UsageError(message: "with --system, give --identity or --tag", command: command)
        }
        let group = try systemAccessGroup(arguments, command: command)
        do {
            return try askingSystemAgent(client) {
                try RSATLSClientIdentity(systemKeychain: client, label: label, tag: tag, accessGroup: group)
            }
        } catch let RSAError.itemNotFound(query) where query.itemClass == .identity {
            throw CLIFailure(
                "no identity "
                    + (label.map { "with label \"\(terminalSafe($0))\"" }
                        ?? "for the private key with tag \"\(terminalSafe(tag ?? ""))\"")
                    + " in the system keychain's groups open to you", .notFound)
        }
    }

    /// "host:port", "[v6]:port".
    static func parseAddress(_ text: String, command: String) throws -> (String, Int) {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else {
                throw UsageError(message: "expected HOST:PORT, got '\(text)'", command: command)
            }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw UsageError(message: "expected HOST:PORT, got '\(text)'", command: command)
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (1...65_535).contains(port) else {
            throw UsageError(message: "expected HOST:PORT with a port from 1 to 65535, got '\(text)'", command: command)
        }
        return (String(host), port)
    }

    func run() throws {
        var configuration = RSATLSClientConfiguration(serverName: arguments.value("servername") ?? host)
        configuration.timeout = timeout
        configuration.protocolVersion = arguments.flag("tls1.2") ? .tls12 : arguments.flag("tls1.3") ? .tls13 : nil
        configuration.anchorCertificatesOnly = arguments.flag("anchors-only")
        configuration.revocationPolicy = revocationPolicy
        configuration.applicationProtocols = applicationProtocols
        for path in arguments.values("anchor") {
            configuration.anchorCertificates += try readCertificateFile(path, what: "anchor file")
        }
        for path in arguments.values("crl") {
            do { configuration.crls += try X509CRL.crls(from: try readWholeFile(path, what: "CRL file")) } catch let
                error as RSAError
            {
                throw CLIFailure(
                    "cannot read the CRL file '\(terminalSafe(path))': \(CLIFailure.message(for: error))", .dataError)
            }
        }

        let identity =
            try arguments.flag("system")
            ? Self.systemIdentity(arguments, command: Self.spec.name)
            : Self.storedIdentity(arguments, addingTrustTo: &configuration, command: Self.spec.name)

        let connection = try RSATLSConnection.connect(
            host: host, port: port, configuration: configuration, identity: identity)
        if arguments.flag("verbose") { printError(summary(connection)) }
        for warning in connection.trustEvaluation.warnings where warning.hasPrefix("revocation of certificate") {
            printWarning(warning)
        }
        // A closed standard output must give an error, not kill the process mid-record.
        signal(SIGPIPE, SIG_IGN)
        let counts = try connection.relay(from: STDIN_FILENO, to: STDOUT_FILENO, idleTimeout: timeout)
        if arguments.flag("verbose") {
            printError(
                "rsakit: connection closed by the server (\(counts.sent) bytes sent, \(counts.received) received)\n")
        }
    }

    /// The identity `--identity LABEL` (else `--tag TAG`) names. When there is none, the
    /// message says what the store holds instead (the certificate without its private key,
    /// the key without a certificate) and the command that makes the identity.
    /// - Throws: `CLIFailure` (66) for a missing identity; the store's and the identity's errors.
    static func identity(
        _ store: RSAKeyStore, label: String?, tag: String?,
        tokenPIN: @escaping (RSATokenReference) throws -> RSASecretBytes
    ) throws -> RSATLSClientIdentity {
        do {
            if let label { return try RSATLSClientIdentity(store: store, label: label, tokenPIN: tokenPIN) }
            return try RSATLSClientIdentity(store: store, tag: tag ?? "", tokenPIN: tokenPIN)
        } catch let RSAError.itemNotFound(query) where query.itemClass == .identity {
            if let label {
                let certificateStored = !((try? store.certificates(label: label)) ?? []).isEmpty
                throw CLIFailure(
                    "no identity with label \"\(terminalSafe(label))\" found"
                        + (certificateStored ? " (the certificate is stored, but no private key for it)" : ""),
                    .notFound)
            }
            let tag = tag ?? ""
            guard (try? store.keyItem(tag: tag, keyClass: .private)) != nil else { throw tagNotFound(store, tag: tag) }
            throw CLIFailure(
                "no certificate for the private key with tag \"\(terminalSafe(tag))\" (an identity needs one: rsakit "
                    + "cert add)",
                .notFound)
        }
    }

    private func summary(_ connection: RSATLSConnection) -> String {
        let evaluation = connection.trustEvaluation
        var text =
            "rsakit: connected to \(RSATLSConnection.endpointText(host: host, port: port)): "
            + "\(connection.protocolVersion), \(connection.cipherSuite)\n"
        if !applicationProtocols.isEmpty {
            text +=
                "rsakit: ALPN: "
                + (connection.negotiatedApplicationProtocol.map {
                    "\(terminalSafe($0)) (offered \(applicationProtocols.map(terminalSafe).joined(separator: ",")))"
                }
                    ?? "none selected by the server (offered "
                    + "\(applicationProtocols.map(terminalSafe).joined(separator: ",")))")
                + "\n"
        }
        if let leaf = connection.serverCertificates.first {
            text += "rsakit: server: \(terminalSafe(leaf.subject)) (issuer: \(terminalSafe(leaf.issuer)))\n"
        }
        text +=
            "rsakit: server trust: \(evaluation.result) for \"\(connection.configuration.serverName)\" (ssl-server "
            + "policy)"
        if let anchor = evaluation.anchor { text += ", anchor: \(terminalSafe(anchor.subjectSummary))" }
        text += "\n"
        text +=
            evaluation.revocation.isEmpty
            ? "rsakit: revocation: not checked (--revocation \(revocationPolicy.method.rawValue))\n"
            : evaluation.revocation.map {
                "rsakit: revocation: certificate \($0.chainIndex): \($0.status.rawValue) (\(terminalSafe($0.source)))\n"
            }.joined()
        if let identity = connection.identity {
            let sent = connection.clientCertificateSent ? "sent" : "not sent"
            text +=
                "rsakit: client identity: \(terminalSafe(identity.name)) "
                + "(\(terminalSafe(identity.certificate.subject))), \(sent)"
            if !connection.clientCertificateRequested { text += ", the server did not ask for one" }
            text += "\n"
        } else {
            text +=
                "rsakit: client identity: none"
                + (connection.clientCertificateRequested ? " (the server asked for one)" : "") + "\n"
        }
        let operations = connection.privateKeyOperations
        if !operations.isEmpty {
            var signer = "rsakit's engine"
            if case let .token(key, _)? = connection.identity?.key {
                signer = key.reference.isTPM ? "the TPM" : "token \(terminalSafe(key.reference.tokenLabel))"
            }
            if case .system? = connection.identity?.key { signer = "the system keychain agent" }
            text +=
                "rsakit: client signature: \(connection.clientSignatureAlgorithm ?? "?"), by \(signer) ("
                + operations.map(\.scheme).joined(separator: ", ") + ")\n"
        }
        return text
    }
}
