// Foundation forms of the certificate and PKCS#12 calls, in the manner of
// Encoding/RSAKeys+Foundation.swift: parsers accept any `DataProtocol`; calls that produce
// bytes take `Data` and return `Data`. Each forwards to the `[UInt8]` form documented beside
// it; behaviour and errors are that form's.
import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension X509Certificate {
    /// Read one certificate from its DER encoding held in `Data` (SecCertificateCreateWithData);
    /// see ``init(derRepresentation:)-([UInt8])``.
    /// - Parameter derRepresentation: exactly one DER `Certificate`, no trailing bytes, in any
    ///   `DataProtocol` (`Data`, a slice).
    /// - Throws: `RSAError.malformedCertificate(reason:)`, as the `[UInt8]` form.
    public init(derRepresentation: some DataProtocol) throws {
        try self.init(derRepresentation: [UInt8](derRepresentation))
    }

    /// Every certificate in `bytes` held in `Data`: one DER certificate, several
    /// concatenated, one PEM block or a PEM bundle; see ``certificates(from:)-([UInt8])``.
    /// - Parameter bytes: at most ``maximumByteCount`` bytes, in any `DataProtocol`
    ///   (as read with `Data(contentsOf:)`).
    /// - Returns: the certificates in file order; never empty.
    /// - Throws: `RSAError.malformedCertificate`, `RSAError.malformedPEM`, as the `[UInt8]` form.
    public static func certificates(from bytes: some DataProtocol) throws -> [X509Certificate] {
        try certificates(from: [UInt8](bytes))
    }
}

extension RSAPKCS12 {
    /// Read a PKCS#12 file (DER) held in `Data` (SecPKCS12Import); see
    /// ``init(derRepresentation:passphrase:)-([UInt8],[UInt8])``.
    /// - Parameters:
    ///   - derRepresentation: the file's bytes, at most ``maximumByteCount``, in any `DataProtocol`.
    ///   - passphrase: the passphrase's bytes (UTF-8 for text) in any `DataProtocol`; empty is
    ///     the empty passphrase "". RSAKit's copy is wiped.
    /// - Throws: `RSAError.passphraseIncorrect`, `RSAError.pkcs12IntegrityCheckFailed`,
    ///   `RSAError.pkcs12Unusable(reason:)`, `RSAError.unsupportedKeyFormat`,
    ///   `RSAError.malformedCertificate`, `RSAError.passphraseUnusable`, as the `[UInt8]` form.
    public init(derRepresentation: some DataProtocol, passphrase: some DataProtocol) throws {
        var secret = [UInt8](passphrase)
        defer { wipe(&secret) }
        try self.init(derRepresentation: [UInt8](derRepresentation), passphrase: secret)
    }

    /// Write a PKCS#12 file as `Data`, with a passphrase held in `Data`; see
    /// ``derRepresentation(privateKey:certificate:chain:friendlyName:passphrase:)-(_,_,_,_,[UInt8])``.
    /// - Parameters:
    ///   - privateKey: the key; `certificate` must hold its public key.
    ///   - certificate: the leaf certificate.
    ///   - chain: further certificates, written after the leaf in this order.
    ///   - friendlyName: the label, or nil for none.
    ///   - passphrase: not empty, no NUL byte; RSAKit's copies are wiped.
    /// - Returns: the DER PFX.
    /// - Throws: `RSAError.keyTypeMismatch`, `RSAError.passphraseUnusable`,
    ///   `RSAError.internalError`, as the `[UInt8]` form.
    public static func derRepresentation(
        privateKey: RSAPrivateKey, certificate: X509Certificate,
        chain: [X509Certificate] = [], friendlyName: String? = nil,
        passphrase: Data
    ) throws -> Data {
        var secret = [UInt8](passphrase)
        defer { wipe(&secret) }
        return Data(
            try derRepresentation(
                privateKey: privateKey, certificate: certificate, chain: chain,
                friendlyName: friendlyName, passphrase: secret))
    }
}

extension X509CRL {
    /// Parse one DER CertificateList held in `Data`; see ``init(derRepresentation:)-([UInt8])``.
    /// - Throws: `RSAError.malformedCertificate(reason:)`, as the `[UInt8]` form.
    public init(derRepresentation: some DataProtocol) throws {
        try self.init(derRepresentation: [UInt8](derRepresentation))
    }

    /// Every CRL in `bytes` held in `Data` (PEM blocks or one DER CRL); see
    /// ``crls(from:)-([UInt8])``.
    /// - Throws: `RSAError.malformedCertificate`, `RSAError.malformedPEM`, as the `[UInt8]` form.
    public static func crls(from bytes: some DataProtocol) throws -> [X509CRL] {
        try crls(from: [UInt8](bytes))
    }

    /// ``revocationDate(ofSerialNumber:)-([UInt8])`` with the serial number in `Data`
    /// (big-endian, as encoded).
    public func revocationDate(ofSerialNumber serialNumber: some DataProtocol) -> Date? {
        revocationDate(ofSerialNumber: [UInt8](serialNumber))
    }
}
