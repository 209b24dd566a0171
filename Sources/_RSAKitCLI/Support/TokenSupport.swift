import RSAKit

// Keys on a PKCS#11 token (docs/tokens.md): the --token and --token-pin options,
// and the token key behind a tag.

/// `--token URI` of genpair and import.
let tokenOption: OptionSpec = .value("token", "URI", "Create the private key on this PKCS#11 token (RFC 7512 'pkcs11:token=LABEL?module-path=/path/module.so'); the store keeps a reference.")

/// `--token-pin SPEC`, for commands that may use a token key.
let tokenPINOption: OptionSpec = .value("token-pin", "SPEC", "The token's user PIN, same syntax as --passin (default: $RSAKIT_TOKEN_PIN, else a prompt).")

/// The token URI given with --token, parsed; nil when the option is absent.
/// - Throws: `UsageError` for a URI rsakit cannot use.
func tokenURI(_ arguments: ParsedArguments, command: String) throws -> RSATokenURI? {
    guard let text = arguments.value("token") else { return nil }
    do {
        return try RSATokenURI(text)
    } catch let RSAError.invalidAttribute(reason) {
        throw UsageError(message: "--token: \(reason)", command: command)
    }
}

/// The user PIN of the token labelled `token`: --token-pin, else RSAKIT_TOKEN_PIN, else a
/// prompt on the terminal (the passphrase sources of --passin).
func readTokenPIN(_ arguments: ParsedArguments, command: String, token: String?) throws -> RSASecretBytes {
    try Passphrase.read(arguments, command: command, option: "token-pin", variable: "RSAKIT_TOKEN_PIN",
                        prompt: "PIN for token\(token.map { " '\(terminalSafe($0))'" } ?? ""): ")
}

/// The token key stored under `tag`, or nil when its private key is in the store (or the
/// tag has no private item: the caller's usual lookup then reports that).
func storeTokenKey(_ store: RSAKeyStore, tag: String) -> RSATokenKey? {
    (try? store.tokenKey(tag: tag)) ?? nil
}
