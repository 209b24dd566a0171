import Foundation
import RSAKit

/// `rsakit import`: add a key from a file (any format the formats layer reads).
struct ImportCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "import",
        overview: "Import a key file into the store under an application tag.",
        usage: "rsakit import --tag <TAG> <FILE> [--label <TEXT>] [--replace] [--protect] [--passin <SPEC>] [--store <DIR>]",
        options: [
            .value("tag", "TAG", "Application tag for the imported key."),
            .value("label", "TEXT", "A free-text label."),
            .flag("replace", "Replace existing items with the same tag."),
        ] + protectOptions,
        positionals: ["FILE"],
        discussion: "A public key creates a public item; a private key creates both a public and a private item.\nAn encrypted key file (PKCS#8 \"ENCRYPTED PRIVATE KEY\", or OpenSSL \"Proc-Type: 4,ENCRYPTED\") is decrypted with\nthe --passin passphrase (also the store's, if it is protected).")

    let arguments: ParsedArguments
    let tag: String
    let path: String

    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        tag = try arguments.required("tag", Self.spec.name)
        guard let path = arguments.positionals.first else {
            throw UsageError(message: "missing key file argument <FILE>", command: Self.spec.name)
        }
        self.path = path
    }

    func run() throws {
        let file = try loadKeyFile(path, arguments: arguments, command: Self.spec.name)
        let store = try openStore(arguments)
        try protectNewStoreIfAsked(store, arguments, command: Self.spec.name)
        let label = arguments.value("label"), replace = arguments.flag("replace")
        switch file.key {
        case let .privateKey(key):
            let items = try withUnlockedStore(store, arguments, command: Self.spec.name) {
                try store.addKeyPair(key, tag: tag, privateTag: nil, label: label, replace: replace)
            }
            try printOutput("imported key pair: tag: \(tag), bits: \(key.modulusBitCount), fingerprint: \(items.public.fingerprint.base64String)\n")
        case let .publicKey(key):
            let item = try store.addPublicKey(key, tag: tag, label: label, replace: replace)
            try printOutput("imported public key: tag: \(tag), bits: \(key.modulusBitCount), fingerprint: \(item.fingerprint.base64String)\n")
        }
    }
}

/// `rsakit export`: write a stored key in the format another tool wants.
struct ExportCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "export",
        overview: "Export a stored key (public SPKI PEM by default).",
        usage: "rsakit export --tag <TAG> [--private [--encrypt [--passout <SPEC>]]] [--format pkcs1|spki|pkcs8] [--der] [--out <FILE>] [--store <DIR>]",
        options: [
            .value("tag", "TAG", "Application tag of the key."),
            .flag("private", "Export the private key (PKCS#8 by default); written with mode 0600."),
            .value("format", "FORMAT", "pkcs1 (iOS SecKeyCopyExternalRepresentation), spki (OpenSSL/Java public), pkcs8 (private)."),
            .flag("encrypt", "With --private: write encrypted PKCS#8 (PBES2: PBKDF2-HMAC-SHA256, 600,000 iterations, AES-256-CBC), as `openssl pkey -passin` reads."),
            .value("passout", "SPEC", "The passphrase for --encrypt, same syntax as --passin (default: $RSAKIT_PASSOUT, else a prompt, asked twice)."),
            .flag("der", "Write DER instead of PEM."),
            .value("out", "FILE", "Write to FILE (default: standard output)."),
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
                throw UsageError(message: "--format must be pkcs1, spki or pkcs8, got '\(name)'", command: Self.spec.name)
            }
            if isPrivate && format == .spki {
                throw UsageError(message: "spki is a public-key format; use pkcs8 or pkcs1 with --private", command: Self.spec.name)
            }
            if !isPrivate && format == .pkcs8 {
                throw UsageError(message: "pkcs8 is a private-key format; add --private or use spki or pkcs1", command: Self.spec.name)
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
            throw UsageError(message: "--encrypt writes PKCS#8; use --format pkcs8 (the default)", command: Self.spec.name)
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
            if encrypt {
                let passphrase = try Passphrase.read(arguments, command: Self.spec.name, option: "passout", variable: "RSAKIT_PASSOUT",
                                                     prompt: "Passphrase for the exported key: ", confirm: true)
                bytes = der ? try key.encryptedPKCS8DERRepresentation(passphrase: passphrase.bytes)
                    : Array(try key.encryptedPKCS8PEMRepresentation(passphrase: passphrase.bytes).utf8)
            } else {
                bytes = der ? try key.derRepresentation(format: format) : Array(try key.pemRepresentation(format: format).utf8)
            }
        } else {
            let key = try storePublicKey(store, tag: tag)
            bytes = der ? try key.derRepresentation(format: format) : Array(try key.pemRepresentation(format: format).utf8)
        }
        let output = try OutputFile(arguments.value("out"), input: nil, mode: arguments.flag("private") ? 0o600 : 0o644)
        do {
            var sink = FileDescriptorSink(fileDescriptor: output.fileDescriptor)
            try sink.write(bytes)
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }
}

/// `rsakit list`: every item of every class with its attributes.
struct ListCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "list",
        overview: "List the items in the store (keys, then generic passwords); needs no passphrase.",
        usage: "rsakit list [--class key|password|certificate] [--json] [--store <DIR>]",
        options: [
            .value("class", "CLASS", "Only items of this class: key, password or certificate."),
            .flag("json", "Print a JSON array of items."),
        ])

    let arguments: ParsedArguments
    let classes: Set<String>
    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        if let name = arguments.value("class") {
            guard ["key", "password", "certificate"].contains(name) else {
                throw UsageError(message: "--class must be key, password or certificate, got '\(name)'", command: Self.spec.name)
            }
            classes = [name]
        } else {
            classes = ["key", "password", "certificate"]
        }
    }

    func run() throws {
        let listing = try openStore(arguments).allKeychainItems()
        for problem in listing.problems { printError("rsakit: warning: \(problem.description)\n") }
        let keys = classes.contains("key") ? listing.keys : []
        let passwords = classes.contains("password") ? listing.passwords : []
        let certificates = classes.contains("certificate") ? listing.certificates : []
        if arguments.flag("json") {
            try printOutput(try jsonText(keys.map(itemJSON) + passwords.map(passwordJSON) + certificates.map(certificateJSON)))
            return
        }
        if keys.isEmpty && passwords.isEmpty && certificates.isEmpty {
            let empty: String
            switch classes {
            case ["password"]: empty = "no generic passwords in the store\n"
            case ["certificate"]: empty = "no certificates in the store\n"
            case ["key"]: empty = "no keys in the store\n"
            default: empty = "no items in the store\n"
            }
            try printOutput(empty)
            return
        }
        var text = ""
        if !keys.isEmpty {
            text += "CLASS    BITS   " + "FINGERPRINT".padding(toLength: 52, withPad: " ", startingAt: 0) + "TAG\n"
            for item in keys {
                let keyClass = item.keyClass.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
                let bits = String(item.keySizeInBits).padding(toLength: 6, withPad: " ", startingAt: 0)
                text += "\(keyClass) \(bits) \(item.fingerprint.base64String)  \(item.applicationTag)"
                if let label = item.label { text += "  (\(label))" }
                text += "\n"
            }
        }
        if !passwords.isEmpty {
            if !text.isEmpty { text += "\n" }
            text += "CLASS    SERVICE / ACCOUNT\n"
            for item in passwords {
                text += "password \(item.service) / \(item.account)"
                if let label = item.label { text += "  (\(label))" }
                text += "\n"
            }
        }
        if !certificates.isEmpty {
            if !text.isEmpty { text += "\n" }
            text += certificateTable(certificates)
        }
        try printOutput(text)
    }
}

/// `rsakit show`: the attributes of the items under one tag.
struct ShowCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "show",
        overview: "Show the items stored under an application tag, or any item by its id.",
        usage: "rsakit show --tag <TAG> | --id <ID> [--json] [--store <DIR>]",
        options: [
            .value("tag", "TAG", "Application tag."),
            .value("id", "ID", "Item id (persistent reference) of an item of any class."),
            .flag("json", "Print a JSON array of items."),
        ])

    let arguments: ParsedArguments
    let tag: String
    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        if arguments.value("id") != nil {
            guard arguments.value("tag") == nil else {
                throw UsageError(message: "give --tag or --id, not both", command: Self.spec.name)
            }
            tag = ""
        } else {
            tag = try arguments.required("tag", Self.spec.name)
        }
    }

    func run() throws {
        let store = try openStore(arguments)
        var items: [RSAKeyItemAttributes]
        if let id = arguments.value("id") {
            switch try store.keychainItem(id: id) {
            case let .key(item):
                items = [item]
            case let .genericPassword(item):
                try printOutput(arguments.flag("json") ? try jsonText([passwordJSON(item)]) : passwordText(item))
                return
            case let .certificate(item):
                try printOutput(arguments.flag("json") ? try jsonText([certificateJSON(item)]) : certificateText(item))
                return
            }
        } else {
            items = RSAKeyClass.allCases.compactMap { try? store.item(tag: tag, keyClass: $0) }
        }
        guard !items.isEmpty else { throw RSAError.keyNotFound(tag: tag) }
        if arguments.flag("json") {
            try printOutput(try jsonText(items.map(itemJSON)))
            return
        }
        var text = ""
        for item in items {
            let (k, maximumChunk) = blockSizes(item)
            if !text.isEmpty { text += "\n" }
            text += """
            tag: \(item.applicationTag)
            class: \(item.keyClass.rawValue)
            bits: \(item.keySizeInBits)
            block size: \(k) bytes
            maximum chunk: \(maximumChunk) bytes
            fingerprint: \(item.fingerprint.base64String)
            fingerprint (hex): \(item.fingerprint.hexString)
            label: \(item.label ?? "(none)")
            item id: \(item.itemID)
            created: \(iso8601(item.creationDate))

            """
        }
        try printOutput(text)
    }
}

/// `rsakit delete`: remove the items under a tag.
struct DeleteCommand: RSAKitCommand {
    static let spec = CommandSpec(
        name: "delete",
        overview: "Delete the items stored under an application tag, or any item by its id.",
        usage: "rsakit delete --tag <TAG> [--public-only] | --id <ID> [--store <DIR>]",
        options: [
            .value("tag", "TAG", "Application tag."),
            .value("id", "ID", "Item id (persistent reference) of an item of any class."),
            .flag("public-only", "Delete only the public item."),
        ])

    let arguments: ParsedArguments
    let tag: String
    init(_ arguments: ParsedArguments) throws {
        self.arguments = arguments
        if arguments.value("id") != nil {
            guard arguments.value("tag") == nil, !arguments.flag("public-only") else {
                throw UsageError(message: "--id takes neither --tag nor --public-only", command: Self.spec.name)
            }
            tag = ""
        } else {
            tag = try arguments.required("tag", Self.spec.name)
        }
    }

    func run() throws {
        let store = try openStore(arguments)
        if let id = arguments.value("id") {
            let item = try store.keychainItem(id: id)
            try store.deleteItem(id: id)
            try printOutput("deleted \(item.className) item: \(id)\n")
            return
        }
        do {
            try store.delete(tag: tag, keyClass: arguments.flag("public-only") ? .public : nil)
        } catch RSAError.keyNotFound where arguments.flag("public-only") {
            throw CLIFailure("no public key with tag \"\(tag)\"", .notFound)
        }
        try printOutput("deleted \(arguments.flag("public-only") ? "public item" : "items") for tag: \(tag)\n")
    }
}

/// k (the block size, ceil(bits / 8) bytes) and k - 11 (the most plaintext bytes per
/// PKCS#1 v1.5 block) of an item, for show and the JSON forms.
func blockSizes(_ item: RSAKeyItemAttributes) -> (blockSize: Int, maximumChunk: Int) {
    let k = (item.keySizeInBits + 7) / 8
    return (k, k - EMEPKCS1v15.overheadByteCount)
}

/// The JSON object for one item (list and show).
func itemJSON(_ item: RSAKeyItemAttributes) -> [String: Any] {
    let (k, maximumChunk) = blockSizes(item)
    return [
        "class": item.keyClass.rawValue,
        "tag": item.applicationTag,
        "label": item.label as Any? ?? NSNull(),
        "bits": item.keySizeInBits,
        "blockSize": k,
        "maximumChunk": maximumChunk,
        "fingerprint": item.fingerprint.base64String,
        "fingerprintHex": item.fingerprint.hexString,
        "itemID": item.itemID,
        "created": iso8601(item.creationDate),
    ]
}
