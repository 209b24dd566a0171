#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// `rsakit import`: add a key from a file (any format the formats layer reads).
struct ImportCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "import",
        overview: "Import a key file into the store under an application tag.",
        usage:
            "rsakit import --tag <TAG> [<FILE>] [--label <TEXT>] [--replace] [--token <URI> [--token-pin <SPEC>]] "
            + "[--protect] [--passin <SPEC>] [--store <DIR>]",
        options: [
            accessGroupOption,
            .value("tag", "TAG", "Application tag for the imported key."),
            .value("label", "TEXT", "A free-text label."),
            .flag("replace", "Replace existing items with the same tag."),
            .value(
                "token", "URI",
                "Place the private key on this PKCS#11 token instead of the store (it was in memory once: delete the "
                    + "file yourself)."
            ),
            tokenPINOption
        ] + protectOptions,
        positionals: ["FILE"],
        discussion:
            "A public key creates a public item; a private key creates both a public and a private item.\nWithout "
            + "FILE (or with '-') the key is read from standard input.\nAn encrypted key file (PKCS#8 "
            + "\"ENCRYPTED PRIVATE KEY\", or OpenSSL \"Proc-Type: 4,ENCRYPTED\") is decrypted with\nthe --passin "
            + "passphrase; a protected store's is read with --store-passin (else the same --passin)."
    )

    let arguments: ParsedArguments
    let tag: String
    /// The key file, or nil for standard input.
    let path: String?

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        tag = try arguments.required("tag", Self.spec.name)
        let given = arguments.positionals.first
        path = given == "-" ? nil : given
    }

    func run() throws {
        let file: RSAKeyFile
        if let path {
            file = try loadKeyFile(path, arguments: arguments, command: Self.spec.name)
        } else {
            var source = RSAFileDescriptorSource(fileDescriptor: STDIN_FILENO)
            let bytes = try peek(&source, RSAKeyFile.maximumByteCount + 1)
            file = try parseKeyFile(bytes, name: "standard input", arguments: arguments, command: Self.spec.name)
        }
        if let uri = try tokenURI(arguments, command: Self.spec.name) {
            guard case let .privateKey(key) = file.key else {
                throw CLIFailure("--token needs a private key; this file holds only a public key", .usage)
            }
            try importToToken(key, uri)
            return
        }
        let store = try PendingStore(arguments, command: Self.spec.name, unlock: false).open()
        let label = arguments.value("label"), replace = arguments.flag("replace")
        switch file.key {
        case let .privateKey(key):
            let items = try withUnlockedStore(store, arguments, command: Self.spec.name) {
                try store.addKeyPair(key, tag: tag, privateTag: nil, label: label, replace: replace)
            }
            try printOutput(
                "imported key pair: tag: \(terminalSafe(tag)), bits: \(key.modulusBitCount), fingerprint: "
                    + "\(items.public.fingerprint.base64String)\n"
            )
        case let .publicKey(key):
            let item = try store.addPublicKey(key, tag: tag, label: label, replace: replace)
            try printOutput(
                "imported public key: tag: \(terminalSafe(tag)), bits: \(key.modulusBitCount), fingerprint: "
                    + "\(item.fingerprint.base64String)\n"
            )
        }
    }

    /// import --token: C_CreateObject on the token, then the store's reference items. The
    /// duplicate check comes first, so a taken tag leaves the token untouched.
    private func importToToken(_ key: RSAPrivateKey, _ uri: RSATokenURI) throws {
        let pending = try PendingStore(arguments, command: Self.spec.name, unlock: false)
        let replace = arguments.flag("replace")
        if !replace, let store = pending.existing {
            for keyClass in RSAKeyClass.allCases where (try? store.keyItem(tag: tag, keyClass: keyClass)) != nil {
                throw RSAError.duplicateItem(.key(tag: tag, keyClass: keyClass))
            }
        }
        let pin = try readTokenPIN(arguments, command: Self.spec.name, token: uri.tokenLabel)
        let tokenKey = try RSATokenKey.importKey(key, to: uri, label: arguments.value("label") ?? tag, pin: pin)
        let store = try pending.open()
        let items = try store.addTokenKeyPair(tokenKey, tag: tag, label: arguments.value("label"), replace: replace)
        try printOutput(
            "imported key pair to token \(terminalSafe(tokenKey.reference.tokenLabel)): tag: \(terminalSafe(tag)), "
                + "bits: \(key.modulusBitCount), fingerprint: \(items.public.fingerprint.base64String)\n"
        )
    }
}

/// `rsakit export`: write a stored key in the format another tool wants.
struct ExportCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "export",
        overview: "Export a stored key (public SPKI PEM by default).",
        usage:
            "rsakit export --tag <TAG> [--private [--encrypt [--passout <SPEC>]]] [--format pkcs1|spki|pkcs8] "
            + "[--der] [--out <FILE>] [--store <DIR>]",
        options: [
            accessGroupOption,
            .value("tag", "TAG", "Application tag of the key."),
            .flag("private", "Export the private key (PKCS#8 by default); written with mode 0600."),
            .value(
                "format", "FORMAT",
                "pkcs1 (iOS SecKeyCopyExternalRepresentation), spki (OpenSSL/Java public), pkcs8 (private)."
            ).choices(["pkcs1", "spki", "pkcs8"]),
            .flag(
                "encrypt",
                "With --private: write encrypted PKCS#8 (PBES2: PBKDF2-HMAC-SHA256, 600,000 iterations, "
                    + "AES-256-CBC), as `openssl pkey -passin` reads."
            ),
            .value(
                "passout", "SPEC",
                "The passphrase for --encrypt, same syntax as --passin (default: $RSAKIT_PASSOUT, else a prompt, "
                    + "asked twice)."
            ),
            .flag("der", "Write DER instead of PEM."),
            .value("out", "FILE", "Write to FILE (default: standard output).")
        ])

    let arguments: ParsedArguments
    let tag: String
    let format: RSAKeyFormat
    let encrypt: Bool

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        tag = try arguments.required("tag", Self.spec.name)
        let isPrivate = arguments.flag("private")
        if let name = arguments.value("format") {
            guard let format = RSAKeyFormat(rawValue: name) else {
                throw UsageError(
                    message: "--format must be pkcs1, spki or pkcs8, got '\(name)'", command: Self.spec.name)
            }
            if isPrivate && format == .spki {
                throw UsageError(
                    message: "spki is a public-key format; use pkcs8 or pkcs1 with --private", command: Self.spec.name)
            }
            if !isPrivate && format == .pkcs8 {
                throw UsageError(
                    message: "pkcs8 is a private-key format; add --private or use spki or pkcs1",
                    command: Self.spec.name)
            }
            self.format = format
        } else {
            format = isPrivate ? .pkcs8 : .spki
        }
        encrypt = arguments.flag("encrypt")
        if encrypt && !isPrivate {
            throw UsageError(message: "--encrypt applies to private keys; add --private", command: Self.spec.name)
        }
        if encrypt && format != .pkcs8 {
            throw UsageError(
                message: "--encrypt writes PKCS#8; use --format pkcs8 (the default)", command: Self.spec.name)
        }
        if arguments.value("passout") != nil && !encrypt {
            throw UsageError(message: "--passout needs --encrypt", command: Self.spec.name)
        }
    }

    func run() throws {
        let store = try openStore(arguments)
        let der = arguments.flag("der")
        let bytes: [UInt8]
        if arguments.flag("private") {
            let key = try storePrivateKey(store, tag: tag, arguments: arguments, command: Self.spec.name)
            try refusePKCS1(for: key.publicKey)
            if encrypt {
                let passphrase = try Passphrase.read(
                    arguments, command: Self.spec.name, option: "passout", variable: "RSAKIT_PASSOUT",
                    prompt: "Passphrase for the exported key: ", confirm: true)
                bytes =
                    der
                    ? try key.encryptedPKCS8DERRepresentation(passphrase: passphrase.bytes)
                    : Array(try key.encryptedPKCS8PEMRepresentation(passphrase: passphrase.bytes).utf8)
            } else {
                bytes =
                    der
                    ? try key.derRepresentation(format: format) : Array(try key.pemRepresentation(format: format).utf8)
            }
        } else {
            let key = try storePublicKey(store, tag: tag)
            try refusePKCS1(for: key)
            bytes =
                der ? try key.derRepresentation(format: format) : Array(try key.pemRepresentation(format: format).utf8)
        }
        try writeOutput(bytes, to: arguments.value("out"), mode: arguments.flag("private") ? 0o600 : 0o644)
    }

    /// PKCS#1 has no algorithm identifier: an RSA-PSS key written in it would lose its restriction.
    private func refusePKCS1(for key: RSAPublicKey) throws {
        guard format == .pkcs1, let restriction = key.pssRestriction else { return }
        throw CLIFailure(
            "the key under tag \"\(terminalSafe(tag))\" is an \(restriction) key; PKCS#1 has no algorithm identifier "
                + "to keep that in: export it as \(arguments.flag("private") ? "pkcs8" : "spki") (the default)",
            .usage)
    }
}

/// `rsakit show`: the attributes of the items under one tag.
struct ShowCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "show",
        overview: "Show the items stored under an application tag, or any item by its id.",
        usage: "rsakit show --tag <TAG> | --id <ID> [--json] [--tpm-blobs <DIR>] [--store <DIR>]",
        options: [
            accessGroupOption,
            .value("tag", "TAG", "Application tag."),
            .value("id", "ID", "Item id (persistent reference) of an item of any class."),
            .flag("json", "Print a JSON array of items."),
            .value(
                "tpm-blobs", "DIR",
                "For a key in the TPM: also write its TPM blobs to DIR as key.pub (TPM2B_PUBLIC) and key.priv "
                    + "(TPM2B_PRIVATE), the files tpm2_load reads (useless on another TPM)."
            )
        ],
        passphrases: .none)

    let arguments: ParsedArguments
    let tag: String
    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        tag = try tagUnlessItemID(arguments, command: Self.spec.name, conflict: "give --tag or --id, not both")
    }

    /// The "location:" line of a private key that is not in the store.
    static func location(_ token: RSATokenReference) -> String {
        if let tpmKey = token.tpmKey {
            return
                "\nlocation: tpm (id \(token.objectIDHex); PIN: \(token.requiresPIN ? "required" : "none"); not "
                + "exportable)\nusage: \(tpmKey.usage)"
        }
        return
            "\nlocation: token \(terminalSafe(token.tokenLabel)) (serial \(terminalSafe(token.tokenSerial))), id "
            + "\(token.objectIDHex), module \(terminalSafe(token.modulePath))"
    }

    func run() throws {
        let store = try openStore(arguments)
        var items: [RSAKeyItemAttributes]
        if let id = arguments.value("id") {
            switch try store.item(id: id) {
            case let .key(item):
                items = [item]
            case let .genericPassword(item):
                try printOutput(arguments.flag("json") ? try jsonText([passwordJSON(item)]) : passwordText(item))
                return
            case let .internetPassword(item):
                try printOutput(
                    arguments.flag("json") ? try jsonText([internetPasswordJSON(item)]) : internetPasswordText(item))
                return
            case let .certificate(item):
                try printOutput(arguments.flag("json") ? try jsonText([certificateJSON(item)]) : certificateText(item))
                return
            case let .crl(item):
                try printOutput(arguments.flag("json") ? try jsonText([CRLCommand.json(item)]) : CRLCommand.text(item))
                return
            }
        } else {
            // Only "not found" means "not there": a damaged item is reported, not passed over.
            items = try RSAKeyClass.allCases.compactMap { keyClass in
                do {
                    return try store.keyItem(tag: tag, keyClass: keyClass)
                } catch RSAError.itemNotFound {
                    return nil
                }
            }
        }
        guard !items.isEmpty else { throw tagNotFound(store, tag: tag) }
        if let directory = arguments.value("tpm-blobs") {
            guard let blobs = items.lazy.compactMap({ $0.token?.tpmKey }).first else {
                throw UsageError(message: "--tpm-blobs: the key is not in a TPM", command: Self.spec.name)
            }
            try writeTPMBlobs(blobs, to: directory)
        }
        if arguments.flag("json") {
            try printOutput(try jsonText(items.map(ItemJSON.init)))
            return
        }
        var text = ""
        for item in items {
            let sizes = blockSizes(item)
            if !text.isEmpty { text += "\n" }
            // An RSA-PSS key signs only: its algorithm replaces the encryption payloads.
            var use =
                item.pssRestriction.map { "algorithm: \($0), signatures only (id-RSASSA-PSS, RFC 4055)" } ?? """
                    maximum raw block payload: \(sizes.rawBlockPayload) bytes (k - 11, --raw)
                    maximum container block payload: \(sizes.containerBlockPayload) bytes (k - 68, rsakit container v2 \
                    with PKCS#1 v1.5)
                    """
            // A key in the TPM decrypts one scheme, or none: its payloads are that scheme's.
            switch item.token?.tpmKey?.usage {
            case .sign?: use = "signatures only (a TPM key made with usage sign)"
            case .decryptOAEP?:
                let container = RSAMessageContainer.payloadByteCount(
                    blockSize: sizes.blockSize, padding: .oaep(RSAOAEPParameters(hash: .sha256)))
                use = """
                    maximum raw block payload: \(sizes.blockSize - 66) bytes (k - 66, --raw --padding oaep)
                    maximum container block payload: \(container) bytes (rsakit container v2 with OAEP SHA-256, \
                    --padding oaep)
                    """
            default: break
            }
            text += """
                tag: \(terminalSafe(item.applicationTag))
                class: \(item.keyClass.rawValue)
                bits: \(item.keySizeInBits)
                block size: \(sizes.blockSize) bytes
                \(use)
                fingerprint: \(item.fingerprint.base64String)
                fingerprint (hex): \(item.fingerprint.hexString)
                label: \(item.label.map(terminalSafe) ?? "(none)")\(item.token.map(Self.location) ?? "")
                access group: \(item.accessGroup)
                item id: \(item.itemID)
                created: \(rfc3339(item.creationDate))

                """
            // A key in the TPM cannot be exported: its public half is shown with it, as the
            // one thing of it that may leave the machine.
            if item.token?.isTPM == true, let key = storeTokenKey(store, tag: item.applicationTag) {
                text +=
                    "public key:\n" + key.publicKey.pemRepresentation
                    + (key.publicKey.pemRepresentation.hasSuffix("\n") ? "" : "\n") + "\n"
            }
        }
        try printOutput(text)
    }
}

extension ShowCommand {
    /// Write a TPM key's blobs as DIR/key.pub and DIR/key.priv (0600; DIR made 0700 when
    /// missing), each file whole or not at all.
    func writeTPMBlobs(_ blobs: RSATPMKeyBlobs, to directory: String) throws {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw CLIFailure(
                "cannot make \(terminalSafe(directory)): \(String(cString: strerror(errno)))", .failure)
        }
        for (name, bytes) in [("key.pub", blobs.publicBlob), ("key.priv", blobs.privateBlob)] {
            try writeOutput(bytes, to: directory + "/" + name, input: nil, mode: 0o600)
        }
    }
}

/// `rsakit delete`: remove the items under a tag.
struct DeleteCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "delete",
        overview: "Delete the items stored under an application tag, or any item by its id.",
        usage: "rsakit delete --tag <TAG> [--public-only] | --id <ID> [--store <DIR>]",
        options: [
            accessGroupOption,
            .value("tag", "TAG", "Application tag."),
            .value("id", "ID", "Item id (persistent reference) of an item of any class."),
            .flag("public-only", "Delete only the public item.")
        ],
        passphrases: .none)

    let arguments: ParsedArguments
    let tag: String
    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        tag = try tagUnlessItemID(
            arguments, command: Self.spec.name, excludedFlags: ["public-only"],
            conflict: "--id takes neither --tag nor --public-only")
    }

    func run() throws {
        let store = try openStore(arguments)
        if let id = arguments.value("id") {
            // deleteItem, not item(id:) first: an item of another group is refused (77), not
            // passed over as a lookup would.
            let item = try store.deleteItem(id: id)
            try printOutput("deleted \(item.className) item: \(id)\n")
            return
        }
        do {
            try store.deleteKey(tag: tag, keyClass: arguments.flag("public-only") ? .public : nil)
        } catch RSAError.itemNotFound where arguments.flag("public-only") {
            throw CLIFailure("no public key with tag \"\(terminalSafe(tag))\"", .notFound)
        } catch RSAError.itemNotFound {
            throw tagNotFound(store, tag: tag)
        }
        try printOutput(
            "deleted \(arguments.flag("public-only") ? "public item" : "items") for tag: \(terminalSafe(tag))\n")
    }
}

/// k (the block size, ceil(bits / 8) bytes), k - 11 (the most plaintext bytes in one raw
/// PKCS#1 v1.5 block) and k - 68 (the most in one version 2 rsakit container block, after its
/// 57-byte frame), for show and the JSON forms.
func blockSizes(_ item: RSAKeyItemAttributes) -> (blockSize: Int, rawBlockPayload: Int, containerBlockPayload: Int) {
    let k = (item.keySizeInBits + 7) / 8
    return (k, k - RSAHazmat.EMEPKCS1v15.overheadByteCount, RSAMessageContainer.payloadByteCount(blockSize: k))
}

/// The JSON object for one key item (list and show), in the names of the JSON table (docs/scripting.md):
/// class "key", applicationTag, keyClass, keySizeInBits, fingerprint as 64 hex digits,
/// creationDate as RFC 3339 with milliseconds, itemID, label (null when absent), plus the
/// derived block sizes; for a private key on a token, token (RSATokenReference's fields).
struct ItemJSON: Encodable {
    let item: RSAKeyItemAttributes

    enum CodingKeys: String, CodingKey {
        case `class`, applicationTag, keyClass, keySizeInBits, fingerprint, creationDate, itemID, label, accessGroup
        case keyAlgorithm, pssParameters, token
        case blockSize, maximumRawBlockPayload, maximumContainerBlockPayload
    }

    /// An RSA-PSS key's parameters: hash and mgf1Hash in the CLI's names, saltLength in bytes.
    struct PSSParametersJSON: Encodable {
        let hash: String
        let mgf1Hash: String
        let saltLength: Int
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        let sizes = blockSizes(item)
        try c.encode("key", forKey: .class)
        try c.encode(item.applicationTag, forKey: .applicationTag)
        try c.encode(item.keyClass.rawValue, forKey: .keyClass)
        try c.encode(item.keySizeInBits, forKey: .keySizeInBits)
        try c.encode(item.fingerprint.hexString, forKey: .fingerprint)
        try c.encode(rfc3339(item.creationDate), forKey: .creationDate)
        try c.encode(item.itemID, forKey: .itemID)
        try c.encode(item.accessGroup, forKey: .accessGroup)
        if let label = item.label { try c.encode(label, forKey: .label) } else { try c.encodeNil(forKey: .label) }
        try c.encode(sizes.blockSize, forKey: .blockSize)
        // Only for a private key on a token: modulePath, tokenLabel, tokenSerial, objectIDHex;
        // for a key in the TPM also "tpm" (its usage and TPM blobs) and pinRequired.
        if let token = item.token { try c.encode(token, forKey: .token) }
        guard let restriction = item.pssRestriction else {
            try c.encode("rsaEncryption", forKey: .keyAlgorithm)
            try c.encode(sizes.rawBlockPayload, forKey: .maximumRawBlockPayload)
            try c.encode(sizes.containerBlockPayload, forKey: .maximumContainerBlockPayload)
            return
        }
        // An RSA-PSS key signs only: no encryption payloads; null parameters allow any.
        try c.encode("rsassaPSS", forKey: .keyAlgorithm)
        if let p = restriction.parameters {
            try c.encode(
                PSSParametersJSON(hash: p.hash.rawValue, mgf1Hash: p.mgf1Hash.rawValue, saltLength: p.saltLength),
                forKey: .pssParameters)
        } else {
            try c.encodeNil(forKey: .pssParameters)
        }
    }
}
