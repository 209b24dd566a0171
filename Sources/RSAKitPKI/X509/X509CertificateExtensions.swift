// Value types for the certificate extensions X509Certificate exposes: key usage,
// extended key usage, subject alternative names, basic constraints (RFC 5280 §4.2.1).

import RSAKitCore

extension X509Certificate {
    /// The keyUsage extension's bits (RFC 5280 §4.2.1.3), bit n of the BIT STRING as `1 << n`.
    public struct KeyUsage: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// Bit n of the keyUsage BIT STRING (RFC 5280 numbering) is `1 << n`.
        public let rawValue: UInt16
        /// A usage set from RFC 5280 bit positions.
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// digitalSignature (0).
        public static let digitalSignature = KeyUsage(rawValue: 1 << 0)
        /// nonRepudiation, also named contentCommitment (1).
        public static let nonRepudiation = KeyUsage(rawValue: 1 << 1)
        /// keyEncipherment (2): the key may encrypt keys (RSA encryption, PKCS#1 v1.5 / OAEP).
        public static let keyEncipherment = KeyUsage(rawValue: 1 << 2)
        /// dataEncipherment (3).
        public static let dataEncipherment = KeyUsage(rawValue: 1 << 3)
        /// keyAgreement (4).
        public static let keyAgreement = KeyUsage(rawValue: 1 << 4)
        /// keyCertSign (5): the key may sign certificates (CAs).
        public static let keyCertSign = KeyUsage(rawValue: 1 << 5)
        /// cRLSign (6).
        public static let cRLSign = KeyUsage(rawValue: 1 << 6)
        /// encipherOnly (7).
        public static let encipherOnly = KeyUsage(rawValue: 1 << 7)
        /// decipherOnly (8).
        public static let decipherOnly = KeyUsage(rawValue: 1 << 8)

        /// The names OpenSSL prints, in bit order.
        static let names: [(KeyUsage, String)] = [
            (.digitalSignature, "Digital Signature"), (.nonRepudiation, "Non Repudiation"),
            (.keyEncipherment, "Key Encipherment"), (.dataEncipherment, "Data Encipherment"),
            (.keyAgreement, "Key Agreement"), (.keyCertSign, "Certificate Sign"),
            (.cRLSign, "CRL Sign"), (.encipherOnly, "Encipher Only"), (.decipherOnly, "Decipher Only")
        ]

        /// The set usages' names, comma-separated, as `openssl x509 -text` prints them
        /// ("Digital Signature, Key Encipherment").
        public var description: String {
            KeyUsage.names.filter { contains($0.0) }.map(\.1).joined(separator: ", ")
        }
    }

    /// One extendedKeyUsage purpose (RFC 5280 §4.2.1.12): its OID and, for the common ones, a name.
    public struct ExtendedKeyUsage: Sendable, Hashable, CustomStringConvertible {
        /// The purpose OID, dotted decimal ("1.3.6.1.5.5.7.3.1").
        public let oid: String
        /// A purpose from its dotted OID.
        public init(oid: String) { self.oid = oid }

        /// id-kp-serverAuth, TLS WWW server authentication.
        public static let serverAuth = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.1")
        /// id-kp-clientAuth, TLS WWW client authentication.
        public static let clientAuth = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.2")
        /// id-kp-codeSigning.
        public static let codeSigning = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.3")
        /// id-kp-emailProtection.
        public static let emailProtection = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.4")
        /// id-kp-timeStamping.
        public static let timeStamping = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.8")
        /// id-kp-OCSPSigning.
        public static let ocspSigning = ExtendedKeyUsage(oid: "1.3.6.1.5.5.7.3.9")
        /// anyExtendedKeyUsage (2.5.29.37.0).
        public static let any = ExtendedKeyUsage(oid: "2.5.29.37.0")

        /// OpenSSL's name for the purpose ("TLS Web Server Authentication"), or nil.
        public var name: String? {
            switch oid {
            case ExtendedKeyUsage.serverAuth.oid: return "TLS Web Server Authentication"
            case ExtendedKeyUsage.clientAuth.oid: return "TLS Web Client Authentication"
            case ExtendedKeyUsage.codeSigning.oid: return "Code Signing"
            case ExtendedKeyUsage.emailProtection.oid: return "E-mail Protection"
            case ExtendedKeyUsage.timeStamping.oid: return "Time Stamping"
            case ExtendedKeyUsage.ocspSigning.oid: return "OCSP Signing"
            case ExtendedKeyUsage.any.oid: return "Any Extended Key Usage"
            default: return nil
            }
        }

        /// The name, else the OID.
        public var description: String { name ?? oid }
    }

    /// One subjectAltName entry (RFC 5280 §4.2.1.6).
    public enum SubjectAlternativeName: Sendable, Hashable, CustomStringConvertible {
        /// dNSName, for example "www.example.com" or "*.example.com".
        case dnsName(String)
        /// rfc822Name, an e-mail address.
        case emailAddress(String)
        /// uniformResourceIdentifier.
        case uri(String)
        /// iPAddress: 4 octets (IPv4) or 16 (IPv6), network order.
        case ipAddress([UInt8])
        /// directoryName, as an RFC 4514 string.
        case directoryName(String)
        /// registeredID, a dotted OID.
        case registeredID(String)
        /// otherName (or another form), as GnuTLS renders it.
        case other(String)

        /// OpenSSL's notation: "DNS:www.example.com", "email:a@b", "URI:...", "IP Address:127.0.0.1".
        public var description: String {
            switch self {
            case let .dnsName(name): return "DNS:" + name
            case let .emailAddress(address): return "email:" + address
            case let .uri(uri): return "URI:" + uri
            case let .ipAddress(octets): return "IP Address:" + SubjectAlternativeName.format(ip: octets)
            case let .directoryName(name): return "DirName:" + name
            case let .registeredID(oid): return "Registered ID:" + oid
            case let .other(text): return "othername:" + text
            }
        }

        /// Dotted quad for IPv4, colon-separated 16-bit hex groups for IPv6 (no compression).
        static func format(ip octets: [UInt8]) -> String {
            if octets.count == 4 { return octets.map(String.init).joined(separator: ".") }
            guard octets.count == 16 else { return octets.map(hexByte).joined() }
            return stride(from: 0, to: 16, by: 2).map {
                String(UInt16(octets[$0]) << 8 | UInt16(octets[$0 + 1]), radix: 16, uppercase: true)
            }.joined(separator: ":")
        }
    }

    /// The basicConstraints extension (RFC 5280 §4.2.1.9).
    public struct BasicConstraints: Sendable, Hashable {
        /// cA: whether the subject is a certification authority.
        public let isCertificateAuthority: Bool
        /// pathLenConstraint: how many non-self-issued intermediates may follow; nil for no limit.
        public let pathLengthConstraint: Int?
        /// Whether the extension is marked critical.
        public let isCritical: Bool
    }
}
