import RSAKit

// Keys on a PKCS#11 token (docs/tokens.md): the --token and --token-pin options,
// and the token key behind a tag.

/// `--token URI` of genpair and import.
let tokenOption: OptionSpec = .value(
    "token", "URI",
    "Create the private key on this PKCS#11 token (RFC 7512 'pkcs11:token=LABEL?module-path=/path/module.so'); the "
        + "store keeps a reference."
)

/// `--token-pin SPEC`, for commands that may use a token key.
let tokenPINOption: OptionSpec = .value(
    "token-pin", "SPEC", "The token's user PIN, same syntax as --passin (default: $RSAKIT_TOKEN_PIN, else a prompt).")

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
    try Passphrase.read(
        arguments, command: command, option: "token-pin", variable: "RSAKIT_TOKEN_PIN",
        prompt: "PIN for token\(token.map { " '\(terminalSafe($0))'" } ?? ""): ")
}

/// The PIN to log in to `reference`'s token: none for a TPM key made without one (the empty
/// PIN, no prompt), else as ``readTokenPIN(_:command:token:)``.
func readTokenPIN(_ arguments: ParsedArguments, command: String, reference: RSATokenReference) throws -> RSASecretBytes
{
    if reference.isTPM {
        guard reference.requiresPIN else { return RSASecretBytes(zeroedCount: 0) }
        return try Passphrase.read(
            arguments, command: command, option: "token-pin", variable: "RSAKIT_TOKEN_PIN",
            prompt: "PIN for the TPM key: ")
    }
    return try readTokenPIN(arguments, command: command, token: reference.tokenLabel)
}

/// `--tpm`, `--usage`, `--padding` and `--tpm-pin` of genpair.
let tpmOptions: [OptionSpec] = [
    .flag(
        "tpm",
        "Create the private key inside this machine's TPM (tpm2-tss; RSA 2048 or 3072, not exportable, one usage). "
            + "The TPM is $RSAKIT_TPM_TCTI, else device:/dev/tpmrm0."
    ),
    .value(
        "usage", "USAGE",
        "With --tpm: what the key may do, fixed in the TPM: decrypt (default) or sign, never both (a key that does "
            + "both would do raw RSA)."
    ).choices(["decrypt", "sign"]),
    .value(
        "padding", "SCHEME",
        "With --tpm --usage decrypt: the one scheme the TPM will decrypt, oaep (default, RSAES-OAEP SHA-256) or pkcs1 "
            + "(RSAES-PKCS1-v1_5, checked inside the TPM without implicit rejection)."
    ).choices(["oaep", "pkcs1"]),
    .flag(
        "tpm-pin",
        "With --tpm: protect the key with a PIN (at most 32 bytes), read from --token-pin, $RSAKIT_TOKEN_PIN or a "
            + "prompt (asked twice).")
]

/// The usage named by genpair's --usage and --padding (decrypt with OAEP by default).
/// - Throws: `UsageError` for --padding with --usage sign.
func tpmUsage(_ arguments: ParsedArguments, command: String) throws -> RSATPMKeyUsage {
    switch (arguments.value("usage") ?? "decrypt", arguments.value("padding")) {
    case ("sign", nil): return .sign
    case ("sign", _):
        throw UsageError(message: "--padding applies to --usage decrypt: a signing key has none", command: command)
    case ("decrypt", nil), ("decrypt", "oaep"): return .decryptOAEP
    case ("decrypt", "pkcs1"): return .decryptPKCS1v15
    case let (usage, padding):
        throw UsageError(
            message: "unknown --usage '\(usage)' or --padding '\(padding ?? "")' (use decrypt|sign, oaep|pkcs1)",
            command: command)
    }
}

/// The token key stored under `tag`, or nil when its private key is in the store (or the
/// tag has no private item: the caller's usual lookup then reports that).
func storeTokenKey(_ store: RSAKeyStore, tag: String) -> RSATokenKey? {
    (try? store.tokenKey(tag: tag)) ?? nil
}
