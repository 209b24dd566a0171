#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit

/// The public key of a certificate to encrypt to (`encrypt --cert FILE | --cert-label L`):
/// refuses a non-RSA key, warns when the certificate is expired or not yet valid, or when
/// its keyUsage does not allow keyEncipherment (RFC 5280 §4.2.1.3).
enum CertificateRecipient {
    static func publicKey(file path: String) throws -> RSAPublicKey {
        try publicKey(firstCertificate(file: path), name: path)
    }

    /// The first certificate in a DER, PEM or PEM-bundle file, or a data error naming the file.
    static func firstCertificate(file path: String) throws -> X509Certificate {
        try readCertificateFile(path)[0]
    }

    static func publicKey(label: String, store: RSAKeyStore) throws -> RSAPublicKey {
        let items = try store.certificates(label: label)
        guard let item = items.first else {
            throw RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .certificate, label: label))
        }
        guard items.count == 1 else {
            throw CLIFailure("\(items.count) certificates have the label \"\(label)\"; use --cert with a file", .usage)
        }
        return try publicKey(try store.certificateValue(id: item.itemID), name: "certificate \"\(label)\"")
    }

    static func publicKey(_ certificate: X509Certificate, name: String) throws -> RSAPublicKey {
        guard let key = certificate.publicKey else {
            throw CLIFailure(
                "\(name): the certificate's public key is \(certificate.publicKeyAlgorithmName), not RSA; rsakit "
                    + "encrypts to RSA keys only",
                .dataError)
        }
        let now = Date()
        if now > certificate.notValidAfter {
            printWarning("\(name): the certificate expired at \(iso8601(certificate.notValidAfter))")
        } else if now < certificate.notValidBefore {
            printWarning("\(name): the certificate is not valid before \(iso8601(certificate.notValidBefore))")
        }
        if let usage = certificate.keyUsage, !usage.contains(.keyEncipherment) {
            printWarning("\(name): the certificate's key usage (\(usage)) does not allow key encipherment")
        }
        return key
    }
}
