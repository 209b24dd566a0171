import RSAKit

/// The documented exit statuses (sysexits.h values where one fits). docs/scripting.md and the man page list them.
@_spi(Fuzzing) public enum ExitStatus: Int32, Sendable {
    case success = 0
    /// Any failure not listed below (I/O errors, unwritable output, internal errors).
    case failure = 1
    /// Bad command line (EX_USAGE), including a name that several access groups hold given
    /// without `--access-group`.
    case usage = 64
    /// Input data is wrong: decryption failure, corrupt or truncated file, wrong key (EX_DATAERR).
    case dataError = 65
    /// A store item (key, certificate, identity, password) or an input file was not found (EX_NOINPUT).
    case notFound = 66
    /// An item with the same unique attributes (a key's tag) already exists in the store (EX_CANTCREAT).
    case alreadyExists = 73
    /// The store was opened with access groups and the command named, or touched an item of,
    /// another group; or the user may not use the store at all: a store shared with a Unix
    /// group the user is not in, or a system keychain whose rules do not allow the user
    /// (EX_NOPERM).
    case notPermitted = 77
}

/// A failure the CLI reports as one line `rsakit: error: MESSAGE` and an exit status.
@_spi(Fuzzing) public struct CLIFailure: Error, CustomStringConvertible {
    let message: String
    @_spi(Fuzzing) public let status: ExitStatus
    public var description: String { message }

    init(_ message: String, _ status: ExitStatus) {
        self.message = message
        self.status = status
    }

    /// Runs `body` and turns `RSAError.duplicateItem` into the same message with the option
    /// that overrides it (`--replace`, `--update`), as genpair's "use --replace" does.
    static func hintingDuplicates<T>(option: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let RSAError.duplicateItem(query) {
            throw CLIFailure(
                RSAError.duplicateItem(query).description + " (use \(option) to overwrite it)", .alreadyExists)
        }
    }

    /// Map any error to its message and exit status.
    @_spi(Fuzzing) public static func from(_ error: Error) -> CLIFailure {
        switch error {
        case let failure as CLIFailure:
            return failure
        case let usage as UsageError:
            return CLIFailure(usage.message, .usage)
        case let rsa as RSAError:
            return CLIFailure(message(for: rsa), status(for: rsa))
        case let tls as RSATLSError:
            return CLIFailure(message(for: tls), status(for: tls))
        case let https as RSAHTTPSError:
            return CLIFailure(https.description, status(for: https))
        case let io as RSAFileDescriptorError:
            return CLIFailure(io.description, .failure)
        default:
            return CLIFailure("\(error)", .failure)
        }
    }

    /// The library's sentence for `error`, with the command-line advice the library leaves
    /// out (its messages name no command or option): the rsakit commands for a certificate or
    /// PKCS#12 file given as a key, the options that choose a TLS client identity, `--replace`
    /// for a key tag that is taken.
    static func message(for error: RSAError) -> String {
        switch error {
        case RSAError.unsupportedKeyFormat(RSAKeyFile.certificateReason):
            return
                "unsupported key format: this is an X.509 certificate, not a key file: encrypt to it with `rsakit "
                + "encrypt --cert FILE`, keep it with `rsakit cert add FILE`, or extract its public key with "
                + "`openssl x509 -pubkey -noout -in CERT`"
        case RSAError.unsupportedKeyFormat(RSAKeyFile.pkcs12Reason):
            return
                "unsupported key format: this is a PKCS#12 file (.p12, .pfx), not a key file: import its identity "
                + "(key, certificate and chain) with `rsakit identity import FILE`, or extract the private key "
                + "with `openssl pkcs12 -in FILE -nodes -nocerts -out key.pem`"
        case RSAError.ambiguousItem:
            return error.description + " with --access-group, or use the item id (rsakit list --json gives it)"
        case let RSAError.duplicateItem(query) where query.itemClass == .key:
            return error.description + " (use --replace to overwrite it)"
        case RSAError.tpmLockedOut:
            return error.description
                + " (tpm2_getcap properties-variable shows the counter and interval; the owner clears it with "
                + "tpm2_dictionarylockout --clear-lockout)"
        case let RSAError.keyOnToken(tag):
            // Only sign and decrypt with --tag reach a token key; export, identities, TLS and
            // a container's recipient lookup without --tag do not.
            return error.description
                + "; sign and decrypt reach it with --tag \(shellQuoted(terminalSafe(tag))), and it cannot be exported"
        default:
            return error.description
        }
    }

    /// The TLS client's sentence, with the options that choose a client identity when the
    /// server wanted one and none was sent.
    static func message(for error: RSATLSError) -> String {
        if case .clientCertificateRejected(_, certificateSent: false) = error {
            return error.description + "; use --identity or --tag"
        }
        return error.description
    }

    static func status(for error: RSAError) -> ExitStatus {
        switch error {
        case .decryptionFailed, .ciphertextLengthInvalid, .containerInvalid, .malformedKey,
            .messageTooLong, .integerTooLarge, .messageRepresentativeOutOfRange, .invalidKey,
            .malformedDER, .malformedPEM, .unsupportedKeyFormat, .keyTypeMismatch, .damagedItem,
            .encryptedForAnotherKey, .messageInvalid,
            .wrongPassphrase, .tokenPINIncorrect,
            .malformedCertificate, .crlRefused, .passphraseIncorrect, .pkcs12IntegrityCheckFailed, .pkcs12Unusable:
            return .dataError
        case let .inputFileFailed(_, reason):
            return reason == "no such file or directory" ? .notFound : .failure
        case .messageFormatUnsupported, .messageNamesNoRecipient,
            .passphraseNeeded, .passphraseUnusable:
            return .usage
        case .itemNotFound, .tokenUnavailable, .keyOnToken, .tpmUnavailable, .tpmKeyLost:
            return .notFound
        case .invalidTag, .invalidLabel, .invalidAttribute, .invalidKDFParameters,
            .invalidDistinguishedName, .invalidSubjectAlternativeName:
            return .usage
        case .duplicateItem, .keyStoredUnderAnotherTag:
            return .alreadyExists
        case .accessGroupNotAllowed, .storeAccessDenied:
            return .notPermitted
        case .ambiguousItem:
            return .usage
        case .keySizeUnsupported, .publicExponentUnsupported:
            return .usage
        case .keyTooSmallForPadding, .saltLengthInvalid, .keyRestricted:
            return .usage
        case .digestLengthMismatch:
            return .dataError
        case .outputFileIsInput:
            return .usage
        default:
            return .failure
        }
    }

    /// The exit status of a TLS failure: the peer's data or certificates (data error), or the
    /// network (failure).
    static func status(for error: RSATLSError) -> ExitStatus {
        switch error {
        case .serverNotTrusted, .clientCertificateRejected, .handshakeFailed, .identityUnusable:
            return .dataError
        case .connectFailed, .timedOut, .connectionFailed:
            return .failure
        }
    }

    /// The exit status of an HTTPS failure: the server's redirects (data error, like an
    /// untrusted server), or the network and the transfer (failure).
    static func status(for error: RSAHTTPSError) -> ExitStatus {
        switch error {
        case .insecureRedirect, .tooManyRedirects:
            return .dataError
        case .unsupportedURL, .timedOut, .responseTooLarge, .transferFailed, .unsuccessfulStatus:
            return .failure
        }
    }
}
