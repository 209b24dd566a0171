/// The result of reading arbitrary key bytes (a file's contents): which key, in which
/// format, PEM or DER, and any warnings worth showing the user.
///
/// Detection, in order:
/// 1. DER, when the bytes are exactly one DER SEQUENCE (or start with 0x30 and hold no
///    PEM BEGIN line);
/// 2. PEM, when some line starts with "-----BEGIN ". Reading is as lenient as OpenSSL:
///    CRLF or LF, no final newline, blanks around lines, text before/between/after blocks
///    (PKCS#12 "Bag Attributes"), base64 at any width, RFC 1421 headers. Of several
///    blocks the first key block is used (a UTF-8 byte order mark is skipped) and a warning says which. The DER
///    structure
///    decides the format; a label that does not match it gives a warning;
/// 3. otherwise a specific error, with hints for base64 of a PEM file, base64 DER
///    without armour, and OpenSSH keys.
///
/// Structures recognised: PKCS#1 RSAPublicKey / RSAPrivateKey, SubjectPublicKeyInfo,
/// PKCS#8 PrivateKeyInfo, two-prime and multi-prime (loaded); PKCS#8 EncryptedPrivateKeyInfo
/// (PBES2 with PBKDF2 and AES or 3DES, PBES1, the PKCS#12 PBE schemes) and OpenSSL's legacy
/// "Proc-Type: 4,ENCRYPTED" PEM, decrypted by GnuTLS with the passphrase given, and PBES2 with
/// PBKDF2 and RC2-CBC (RFC 8018 §B.2.3), which GnuTLS lacks, decrypted by RSAKit over Nettle (see
/// ``init(bytes:passphrase:)-([UInt8],[UInt8]?)``); X.509 certificates and scrypt-encrypted PKCS#8 (refused with
/// `RSAError.unsupportedKeyFormat`).
public struct RSAKeyFile: Sendable {
    /// A public or a private key.
    public enum Key: Sendable {
        /// The file held a public key (PKCS#1 RSAPublicKey or SubjectPublicKeyInfo).
        case publicKey(RSAPublicKey)
        /// The file held a private key (PKCS#1 RSAPrivateKey or PKCS#8 PrivateKeyInfo).
        case privateKey(RSAPrivateKey)
    }

    /// The key read.
    public let key: Key
    /// The format of the structure read (`.pkcs1`, `.spki` or `.pkcs8`).
    public let format: RSAKeyFormat
    /// Whether the input was PEM text (else DER).
    public let isPEM: Bool
    /// Human-readable warnings, lower-case sentences: several PEM blocks ("file has 3 PEM
    /// blocks; using the first key block (block 1, PRIVATE KEY)"), a PEM label that does not
    /// match the structure, and deviations from DER that were accepted (INTEGERs with
    /// redundant leading zero octets, rsaEncryption without NULL parameters). Empty for a
    /// file exactly as rsakit or OpenSSL writes it.
    public let warnings: [String]
    /// The name of the structure read ("SubjectPublicKeyInfo", "PKCS#1 RSAPrivateKey",
    /// "PKCS#8 EncryptedPrivateKeyInfo"...).
    public let structureName: String
    /// How the file was encrypted, nil for a plain key file.
    public let encryption: RSAKeyFileEncryption?

    /// The largest input accepted, in bytes (1 MiB; an RSA key file is a few kilobytes).
    public static let maximumByteCount = 1 << 20

    /// Read a key from the bytes of a file: PEM or DER, any supported structure,
    /// auto-detected as described on ``RSAKeyFile``.
    ///
    /// Private-key material decoded from PEM is wiped after parsing (best effort).
    /// - Throws: `RSAError.malformedPEM(reason:line:)`, `RSAError.malformedDER(reason:offset:)`,
    ///   `RSAError.malformedKey(reason:)` (unrecognised input),
    ///   `RSAError.unsupportedKeyFormat(reason:)` (multi-prime, encrypted, certificate,
    ///   non-RSA, OpenSSH, base64-encoded PEM), `RSAError.invalidKey`,
    ///   `RSAError.keySizeUnsupported`.
    public init(bytes: [UInt8]) throws {
        try self.init(bytes: bytes, requirePEM: false, preferring: nil, passphrase: nil)
    }

    /// Whether `bytes` hold an encrypted private key (PKCS#8 EncryptedPrivateKeyInfo, DER
    /// or PEM, or OpenSSL legacy encrypted PEM), so a caller knows to ask for a passphrase.
    public static func isEncrypted(_ bytes: [UInt8]) -> Bool {
        do {
            _ = try RSAKeyFile(bytes: bytes)
            return false
        } catch RSAError.passphraseNeeded {
            return true
        } catch {
            return false
        }
    }

    /// The public key: the key itself, or the public half of a private key.
    public var publicKey: RSAPublicKey {
        switch key {
        case let .publicKey(key): return key
        case let .privateKey(key): return key.publicKey
        }
    }

    /// The private key, if the file held one.
    public var privateKey: RSAPrivateKey? {
        if case let .privateKey(key) = key { return key }
        return nil
    }

    /// Which kind of key a caller wants, to pick among several PEM blocks.
    package enum Preference {
        case publicKey, privateKey
    }

    /// The reader behind every public initialiser: `requirePEM` refuses DER, `preference`
    /// picks among PEM blocks, and an encrypted key is decrypted with `passphrase` (by
    /// `decryptor` unless it is PBES2 with RC2-CBC, which this layer decrypts itself).
    package init(
        bytes: [UInt8], requirePEM: Bool, preferring preference: Preference?, passphrase: [UInt8]? = nil,
        decryptor: (any RSAKeyFileDecryptor)? = nil
    ) throws {
        guard bytes.count <= RSAKeyFile.maximumByteCount else {
            throw RSAError.malformedKey(
                reason:
                    "input of \(bytes.count) bytes is larger than the \(RSAKeyFile.maximumByteCount)-byte limit for "
                    + "key files"
            )
        }
        guard !bytes.isEmpty else {
            throw RSAError.malformedKey(reason: "the input is empty")
        }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            throw RSAError.unsupportedKeyFormat(
                reason: "this is UTF-16 text (as PowerShell's > redirection writes); save the key as ASCII or UTF-8")
        }
        let hasPEM = PEMDocument.containsBeginLine(
            bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes)
        if !requirePEM && RSAKeyFile.looksLikeDER(bytes, hasPEM: hasPEM) {
            let (decoded, encryption) = try EncryptedKeyDecoder.decode(
                der: bytes, passphrase: passphrase, decryptor: decryptor)
            self.init(decoded: decoded, isPEM: false, warnings: [], encryption: encryption)
            return
        }
        guard hasPEM else {
            throw RSAKeyFile.diagnoseUnrecognised(bytes, requirePEM: requirePEM)
        }
        // A UTF-8 byte order mark (Windows editors) is text before the first line.
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        try self.init(
            pem: PEMDocument(scanning: text), preferring: preference, passphrase: passphrase, decryptor: decryptor)
    }

    private init(decoded: DecodedKey, isPEM: Bool, warnings: [String], encryption: RSAKeyFileEncryption?) {
        self.key = decoded.key
        self.format = decoded.format
        self.isPEM = isPEM
        self.warnings = warnings + decoded.notes
        self.structureName =
            encryption?.scheme == "OpenSSL legacy PEM"
            ? "\(decoded.structure.name) (OpenSSL encrypted PEM)" : decoded.structure.name
        self.encryption = encryption
    }

    /// DER when the bytes are exactly one SEQUENCE TLV, or start with 0x30 and are not
    /// plain text (so that damaged DER is reported as DER, with an offset, while a text
    /// file that happens to start with "0" gets the text diagnosis).
    private static func looksLikeDER(_ bytes: [UInt8], hasPEM: Bool) -> Bool {
        guard bytes.first == DERTag.sequence else { return false }
        let reader = DERReader(bytes)
        if let top = try? reader.element(at: 0, limit: bytes.count), top.end == bytes.count {
            return true
        }
        return !hasPEM && !isPlainText(bytes)
    }

    /// Printable ASCII, tabs and line ends only.
    private static func isPlainText(_ bytes: [UInt8]) -> Bool {
        bytes.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    }

    private init(
        pem document: PEMDocument, preferring preference: Preference?, passphrase: [UInt8]?,
        decryptor: (any RSAKeyFileDecryptor)?
    ) throws {
        let blocks = document.blocks
        let keyBlocks = blocks.filter(\.isKeyLabel)
        let preferred: PEMBlock?
        switch preference {
        case .publicKey?: preferred = keyBlocks.first(where: \.isPublicKeyLabel)
        case .privateKey?: preferred = keyBlocks.first(where: { !$0.isPublicKeyLabel })
        case nil: preferred = nil
        }
        if blocks.isEmpty {
            throw RSAKeyFile.diagnoseBrokenFraming(document.bytes)
        }
        guard let block = preferred ?? keyBlocks.first else {
            if let broken = blocks.first(where: { $0.problem != nil }), let problem = broken.problem {
                throw RSAError.malformedPEM(reason: problem.reason, line: problem.line)
            }
            if blocks.contains(where: \.isCertificateLabel) {
                throw RSAError.unsupportedKeyFormat(reason: RSAKeyFile.certificateReason)
            }
            if blocks.contains(where: { $0.label == "CERTIFICATE REQUEST" || $0.label == "NEW CERTIFICATE REQUEST" }) {
                throw RSAError.unsupportedKeyFormat(reason: "certification requests (CSRs) are not supported")
            }
            let labels = blocks.map { "\"\($0.label)\"" }.joined(separator: ", ")
            throw RSAError.malformedPEM(
                reason: "no key block found (blocks: \(labels))", line: blocks.first?.beginLine ?? 1)
        }
        var warnings: [String] = []
        if blocks.count > 1 {
            var which = "key block"
            if let preferred, preferred.index != keyBlocks.first?.index {
                which = preferred.isPublicKeyLabel ? "public key block" : "private key block"
            }
            warnings.append(
                "file has \(blocks.count) PEM blocks; using the first \(which) (block \(block.index), \(block.label))")
        }
        try RSAKeyFile.refuseUnsupportedLabel(block)
        var (headers, der) = try document.decode(block)
        defer { wipe(&der) }
        if headers.contains(where: { $0.name == "Proc-Type" && $0.value.uppercased().contains("ENCRYPTED") }) {
            let (decoded, encryption) = try EncryptedKeyDecoder.decodeLegacyPEM(
                label: block.label, headers: headers, der: der, line: block.beginLine, passphrase: passphrase,
                decryptor: decryptor)
            self.init(decoded: decoded, isPEM: true, warnings: warnings, encryption: encryption)
            return
        }
        let decoded: DecodedKey
        let encryption: RSAKeyFileEncryption?
        do {
            (decoded, encryption) = try EncryptedKeyDecoder.decode(
                der: der, passphrase: passphrase, decryptor: decryptor)
        } catch let RSAError.malformedDER(reason, offset) {
            // Offsets count from the start of the block's decoded bytes; say which block.
            throw RSAError.malformedDER(
                reason: "\(reason) (in the base64-decoded PEM block \"\(block.label)\" at line \(block.beginLine))",
                offset: offset)
        }
        if block.label != decoded.structure.pemLabel {
            warnings.append(
                "PEM label \"\(block.label)\" does not match the contents: the block holds a "
                    + "\(decoded.structure.name), whose label is \"\(decoded.structure.pemLabel)\"; the key was read "
                    + "by its structure"
            )
        }
        self.init(decoded: decoded, isPEM: true, warnings: warnings, encryption: encryption)
    }

    // MARK: What to do with files RSAKit cannot use (yet)

    /// The `RSAError.unsupportedKeyFormat` reason given for an X.509 certificate (PEM
    /// "CERTIFICATE" or DER) read as a key file: it names ``X509Certificate`` and the
    /// `openssl` command that extracts its public key. Public so that a caller can recognise
    /// it (the rsakit command line adds its own commands to it).
    public static let certificateReason =
        "this is an X.509 certificate, not a key file: read it as a certificate (X509Certificate, whose publicKey is "
        + "the key), or extract its public key with `openssl x509 -pubkey -noout -in CERT`"

    /// The `RSAError.unsupportedKeyFormat` reason given for a PKCS#12 file (RFC 7292 PFX:
    /// SEQUENCE { INTEGER 3, ContentInfo, MacData }) read as a key file: it names
    /// ``RSAPKCS12`` and the `openssl` command that extracts the private key. Public so that a
    /// caller can recognise it.
    public static let pkcs12Reason =
        "this is a PKCS#12 file (.p12, .pfx), not a key file: read its identity (key, certificate and chain) as "
        + "PKCS#12 (RSAPKCS12), or extract the private key with `openssl pkcs12 -in FILE -nodes -nocerts -out "
        + "key.pem`"

    /// Key labels whose contents RSAKit cannot read at all.
    private static func refuseUnsupportedLabel(_ block: PEMBlock) throws {
        switch block.label {
        case "OPENSSH PRIVATE KEY":
            throw RSAError.unsupportedKeyFormat(
                reason: "OpenSSH private keys are not supported; convert with `ssh-keygen -p -m PKCS8 -f FILE`")
        case "EC PRIVATE KEY", "DSA PRIVATE KEY", "EC PUBLIC KEY", "DSA PUBLIC KEY":
            throw RSAError.unsupportedKeyFormat(reason: "not an RSA key: PEM block \"\(block.label)\"")
        default:
            return
        }
    }

    /// Text with a "-----BEGIN " marker but no usable BEGIN line: the usual causes are
    /// line breaks lost or escaped (environment variables, JSON strings, one-line pastes).
    private static func diagnoseBrokenFraming(_ bytes: [UInt8]) -> RSAError {
        let escapedNewline = Array("\\n".utf8)
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == escapedNewline[0] && bytes[index + 1] == escapedNewline[1] {
                return .malformedPEM(
                    reason:
                        "the PEM text contains literal \"\\n\" sequences instead of line breaks (as in an "
                        + "environment variable or a JSON string); replace them with real newlines",
                    line: 1)
            }
            index += 1
        }
        let marker = bytes.firstRange(of: Array("-----BEGIN ".utf8))?.lowerBound ?? 0
        let line = 1 + bytes[..<marker].filter { $0 == 0x0A }.count
        return .malformedPEM(
            reason:
                "a \"-----BEGIN\" marker was found, but not as a line of its own; BEGIN, the base64 text and END "
                + "must be on separate lines",
            line: line)
    }

    /// The most useful error for input that is neither DER nor PEM.
    private static func diagnoseUnrecognised(_ bytes: [UInt8], requirePEM: Bool) -> RSAError {
        if bytes.firstRange(of: Array("-----BEGIN ".utf8)) != nil {
            return diagnoseBrokenFraming(bytes)
        }
        let text = bytes.filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A) }
        if text.starts(with: Array("ssh-rsa".utf8)) {
            return .unsupportedKeyFormat(
                reason:
                    "OpenSSH public keys (ssh-rsa ...) are not supported; convert with `ssh-keygen -e -m PKCS8 -f FILE`"
            )
        }
        if text.starts(with: Array("----BEGINSSH2PUBLICKEY----".utf8)) {
            return .unsupportedKeyFormat(
                reason:
                    "SSH2 (RFC 4716) public keys are not supported; convert with `ssh-keygen -i -m RFC4716 -f FILE`, "
                    + "then `ssh-keygen -e -m PKCS8`"
            )
        }
        if !text.isEmpty, var decoded = try? Base64.decode(text, strict: false) {
            defer { wipe(&decoded) }
            if PEMDocument.containsBeginLine(decoded) {
                return .unsupportedKeyFormat(
                    reason: "this looks like base64-encoded PEM; decode it first (for example with base64 -d)")
            }
            if decoded.first == DERTag.sequence, (try? KeyDecoder.decode(der: decoded)) != nil {
                return .unsupportedKeyFormat(
                    reason:
                        "this looks like base64-encoded DER without PEM armour; decode it (base64 -d) or add "
                        + "BEGIN/END lines"
                )
            }
        }
        if text.count % 2 == 0, text.count >= 2, text.allSatisfy({ hexDigitValue($0) != nil }) {
            var decoded: [UInt8] = []
            var index = 0
            while index < text.count {
                decoded.append(hexDigitValue(text[index])! << 4 | hexDigitValue(text[index + 1])!)
                index += 2
            }
            defer { wipe(&decoded) }
            if decoded.first == DERTag.sequence, (try? KeyDecoder.decode(der: decoded)) != nil {
                return .unsupportedKeyFormat(
                    reason: "this looks like hex-encoded DER; decode it first (for example with xxd -r -p)")
            }
        }
        if requirePEM || isPlainText(bytes) {
            return .malformedPEM(reason: "no \"-----BEGIN\" line found", line: 1)
        }
        let first = bytes.first.map { "0x" + hexByte($0) } ?? "nothing"
        return .malformedKey(
            reason: "input is neither PEM (no \"-----BEGIN\" line) nor DER (starts with \(first), not a SEQUENCE)")
    }
}
