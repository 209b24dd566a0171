/// A key fingerprint: SHA-256 (FIPS 180-4, computed by Nettle) over the DER
/// SubjectPublicKeyInfo of the public key, the value of
/// `openssl pkey -pubin -outform DER | sha256sum`.
///
/// Shown two ways: 64 lower-case hex digits (``hexString``, as `sha256sum` prints it),
/// or OpenSSH style "SHA256:" followed by unpadded base64 (``base64String``, as
/// `ssh-keygen -l` prints its fingerprints). Note that ssh-keygen hashes the SSH wire
/// encoding of the key, not the SPKI, so the two tools' values for one key differ; only
/// the notation is shared.
public struct RSAKeyFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte SHA-256 digest.
    public let bytes: [UInt8]

    package init(digest: [UInt8]) {
        precondition(digest.count == RSAHashAlgorithm.sha256.digestByteCount)
        self.bytes = digest
    }

    /// A fingerprint from its 32 digest bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == RSAHashAlgorithm.sha256.digestByteCount else { return nil }
        self.bytes = bytes
    }

    /// 64 lower-case hex digits.
    public var hexString: String {
        bytes.map(hexByte).joined()
    }

    /// "SHA256:" followed by 43 characters of unpadded base64 (OpenSSH notation).
    public var base64String: String {
        "SHA256:" + Base64.encode(bytes, padded: false)
    }

    /// The OpenSSH-style ``base64String``.
    public var description: String { base64String }

    /// Parse either printed form back: "SHA256:" + base64 (padding optional; the unused
    /// low bits must be zero), or 64 hex digits (either case, optionally in colon-separated
    /// pairs). Surrounding blanks are ignored.
    /// - Returns: nil for anything else, or a digest that is not 32 bytes.
    public init?(string: String) {
        let trimmed = Array(string.utf8).drop(while: RSAKeyFingerprint.isBlank).reversed()
            .drop(while: RSAKeyFingerprint.isBlank).reversed()
        let text = Array(trimmed)
        let prefix = Array("SHA256:".utf8)
        if text.starts(with: prefix) {
            guard let digest = try? Base64.decode(Array(text.dropFirst(prefix.count)), strict: true) else { return nil }
            self.init(bytes: digest)
            return
        }
        var hex = text
        if hex.count == 95 {
            // aa:bb:...: 32 pairs and 31 colons.
            for index in stride(from: 2, to: 95, by: 3) where hex[index] != UInt8(ascii: ":") { return nil }
            hex = hex.enumerated().filter { $0.offset % 3 != 2 }.map(\.element)
        }
        guard hex.count == 64 else { return nil }
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        var index = 0
        while index < 64 {
            guard let high = hexDigitValue(hex[index]),
                let low = hexDigitValue(hex[index + 1])
            else { return nil }
            digest.append(high << 4 | low)
            index += 2
        }
        self.init(bytes: digest)
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }
}
