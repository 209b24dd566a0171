/// How a message is written: the rsakit container (optionally armored), raw RSA blocks, or
/// Apple's RSA-OAEP + AES-GCM, each with its padding.
///
/// Made with the factory functions, which only allow combinations that exist:
/// `.container()`, `.container(padding: .oaep(RSAOAEPParameters()), armored: true)`,
/// `.rawBlocks(padding: .pkcs1v15)`, `.rawBlocksWithImplicitRejection()`,
/// `.appleAESGCM(hash: .sha256)`.
public struct RSAMessageFormat: Sendable, Hashable, CustomStringConvertible {
    /// The three formats; the raw values are the CLI's `--format` names.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The rsakit container, version 2 (``RSAMessageContainer``).
        case container
        /// Concatenated k-byte blocks (``RSARawBlocks``).
        case raw
        /// Apple's `kSecKeyAlgorithmRSAEncryptionOAEPSHA*AESGCM` (``RSAAppleAESGCM``).
        case appleAESGCM = "apple-aesgcm"
    }

    /// Which format.
    public let kind: Kind
    /// The RSA padding of the blocks (for Apple's format: OAEP with hash = MGF1 hash, empty label).
    public let padding: RSAEncryptionPadding
    /// True for ASCII armor around a container (``RSAArmor``).
    public let armored: Bool
    /// What decrypting a raw PKCS#1 v1.5 block with a bad padding gives: `.explicit` (an
    /// error) everywhere except in ``rawBlocksWithImplicitRejection()``. Encryption ignores it.
    public let rejection: RSAPaddingRejection

    private init(kind: Kind, padding: RSAEncryptionPadding, armored: Bool, rejection: RSAPaddingRejection = .explicit) {
        self.kind = kind
        self.padding = padding
        self.armored = armored
        self.rejection = rejection
    }

    /// The rsakit container, version 2; its header records the padding, so decryption needs
    /// no options. OAEP labels must be empty (the header records no label).
    public static func container(padding: RSAEncryptionPadding = .pkcs1v15, armored: Bool = false) -> RSAMessageFormat {
        RSAMessageFormat(kind: .container, padding: padding, armored: armored)
    }

    /// Raw k-byte blocks with `padding` (PKCS#1 v1.5 by default; OAEP with any hashes and label).
    public static func rawBlocks(padding: RSAEncryptionPadding = .pkcs1v15) -> RSAMessageFormat {
        RSAMessageFormat(kind: .raw, padding: padding, armored: false)
    }

    /// Raw k-byte PKCS#1 v1.5 blocks decrypted with implicit rejection: a block whose padding
    /// is wrong gives its synthetic message instead of an error (``RSAPaddingRejection``;
    /// draft-irtf-cfrg-rsa-guidance §7). For protocols that must not reveal padding errors;
    /// a file tool wants ``rawBlocks(padding:)``. Encrypting with it is the same as with
    /// `.rawBlocks(padding: .pkcs1v15)`.
    public static func rawBlocksWithImplicitRejection() -> RSAMessageFormat {
        RSAMessageFormat(kind: .raw, padding: .pkcs1v15, armored: false, rejection: .implicit)
    }

    /// Apple's RSA-OAEP + AES-GCM with `hash` (SHA-1, -224, -256, -384 or -512) for OAEP and MGF1.
    public static func appleAESGCM(hash: RSAHashAlgorithm = .sha256) -> RSAMessageFormat {
        RSAMessageFormat(
            kind: .appleAESGCM, padding: .oaep(RSAOAEPParameters(hash: hash, mgf1Hash: hash, label: [])), armored: false
        )
    }

    /// How many RSA private operations decrypting `plaintextByteCount` bytes in this format
    /// takes with a `modulusByteCount`-byte key: one per block for the container (at least
    /// one: an empty message has a final block) and for raw blocks, one for Apple's format.
    /// What it costs matters for a key in a TPM or on a token, which does a few to a few dozen
    /// private operations a second.
    ///
    /// - Returns: the count, or nil when a block holds no payload (a key too small for this
    ///   format and padding).
    public func privateOperationCount(plaintextByteCount: Int, modulusByteCount k: Int) -> Int? {
        let perBlock: Int
        switch kind {
        case .appleAESGCM: return 1
        case .container: perBlock = RSAMessageContainer.payloadByteCount(blockSize: k, padding: padding)
        case .raw:
            switch padding {
            case .pkcs1v15: perBlock = k - EMEPKCS1v15.overheadByteCount
            case let .oaep(parameters): perBlock = k - 2 * parameters.hash.digestByteCount - 2
            }
        }
        guard perBlock > 0 else { return nil }
        let blocks = (max(plaintextByteCount, 0) + perBlock - 1) / perBlock
        return kind == .container ? max(blocks, 1) : blocks
    }

    /// The OAEP hash of Apple's format (SHA-256 if the padding is not OAEP).
    package var appleHash: RSAHashAlgorithm {
        if case let .oaep(parameters) = padding { return parameters.hash }
        return .sha256
    }

    /// For example "container (PKCS#1 v1.5, armored)".
    public var description: String {
        switch kind {
        case .container: return "container (\(padding)\(armored ? ", armored" : ""))"
        case .raw: return "raw blocks (\(padding)\(rejection == .implicit ? ", implicit rejection" : ""))"
        case .appleAESGCM: return "Apple RSA-OAEP + AES-GCM (\(appleHash.rawValue))"
        }
    }
}
