// The token's objects (PKCS#11 v2.40 §4.4-4.10): one per key store item, read from the store.
//
//   store item                      object
//   public key item                 CKO_PUBLIC_KEY
//   private key item                CKO_PRIVATE_KEY (and a CKO_PUBLIC_KEY from its public half
//                                   when no public item holds the same key)
//   certificate                     CKO_CERTIFICATE, CKC_X_509
//
// CKA_ID is the key's fingerprint, the SHA-256 of its SubjectPublicKeyInfo DER (32 bytes), the
// same value on a key's public and private objects and on every certificate for that key, so
// that CKA_ID links an identity as PKCS#11 clients expect (OpenSSH, GnuTLS and NSS pair a
// certificate with its private key by CKA_ID). CKA_LABEL is the item's label, else its
// application tag (keys); the certificate's label (certificates).
internal import CP11Kit
import RSAKit

/// One attribute's value as the token holds it.
enum P11AttributeValue {
    /// The encoded value (CK_ULONG values in host byte order, CK_BBOOL one byte).
    case bytes([UInt8])
    /// A value the token never reveals: CKR_ATTRIBUTE_SENSITIVE (the private key's parts).
    case sensitive
}

/// What an object stands for, so an operation can find its key.
enum P11ObjectKind {
    /// A certificate (no operation uses it).
    case certificate
    /// A public key: verification.
    case publicKey(RSAPublicKey)
    /// A private key, loaded from the store by item id when an operation starts (never kept
    /// in the object table). By id, not tag: the same tag may be in several access groups.
    case privateKey(itemID: String, publicKey: RSAPublicKey)
    /// A private key the system keychain's agent holds (`tag` in `accessGroup`): it signs and
    /// decrypts; the key never enters this process.
    case systemPrivateKey(accessGroup: String, tag: String, publicKey: RSAPublicKey)
}

/// One token object: its kind and every attribute it has.
struct P11Object {
    /// The object's kind.
    let kind: P11ObjectKind
    /// CKA_PRIVATE: visible only after C_Login (private keys of a protected store).
    let isPrivate: Bool
    /// Every attribute the object has; others are CKR_ATTRIBUTE_TYPE_INVALID.
    var attributes: [CK_ATTRIBUTE_TYPE: P11AttributeValue]
}

/// Attribute value encodings.
enum P11Encode {
    static func ulong(_ value: CK_ULONG) -> P11AttributeValue {
        .bytes(withUnsafeBytes(of: value) { Array($0) })
    }
    static func bool(_ value: Bool) -> P11AttributeValue {
        .bytes([value ? UInt8(CK_TRUE) : UInt8(CK_FALSE)])
    }
    static func utf8(_ value: String) -> P11AttributeValue { .bytes(Array(value.utf8)) }
    static let empty = P11AttributeValue.bytes([])
}

extension P11Object {
    /// Attributes of every storage object (§4.4).
    private static func storage(class objectClass: CK_OBJECT_CLASS, label: String, isPrivate: Bool)
        -> [CK_ATTRIBUTE_TYPE: P11AttributeValue]
    {
        [
            CK_ATTRIBUTE_TYPE(CKA_CLASS): P11Encode.ulong(objectClass),
            CK_ATTRIBUTE_TYPE(CKA_TOKEN): P11Encode.bool(true),
            CK_ATTRIBUTE_TYPE(CKA_PRIVATE): P11Encode.bool(isPrivate),
            CK_ATTRIBUTE_TYPE(CKA_MODIFIABLE): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_LABEL): P11Encode.utf8(label),
            CK_ATTRIBUTE_TYPE(CKA_COPYABLE): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_DESTROYABLE): P11Encode.bool(false)
        ]
    }

    /// Attributes of every RSA key object (§4.7, §2.1.2-3).
    private static func rsaKey(_ key: RSAPublicKey, id: [UInt8]) -> [CK_ATTRIBUTE_TYPE: P11AttributeValue] {
        [
            CK_ATTRIBUTE_TYPE(CKA_KEY_TYPE): P11Encode.ulong(CK_KEY_TYPE(CKK_RSA)),
            CK_ATTRIBUTE_TYPE(CKA_ID): .bytes(id),
            CK_ATTRIBUTE_TYPE(CKA_START_DATE): P11Encode.empty,
            CK_ATTRIBUTE_TYPE(CKA_END_DATE): P11Encode.empty,
            CK_ATTRIBUTE_TYPE(CKA_DERIVE): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_LOCAL): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_KEY_GEN_MECHANISM): P11Encode.ulong(p11UnavailableInformation),
            CK_ATTRIBUTE_TYPE(CKA_SUBJECT): P11Encode.empty,
            CK_ATTRIBUTE_TYPE(CKA_MODULUS): .bytes(key.modulus),
            CK_ATTRIBUTE_TYPE(CKA_PUBLIC_EXPONENT): .bytes(key.publicExponent),
            CK_ATTRIBUTE_TYPE(CKA_PUBLIC_KEY_INFO): .bytes(key.derRepresentation)
        ]
    }

    /// A CKO_PUBLIC_KEY object for `key` (§4.8, §2.1.2).
    static func publicKey(_ key: RSAPublicKey, label: String) -> P11Object {
        var attributes = storage(class: CK_OBJECT_CLASS(CKO_PUBLIC_KEY), label: label, isPrivate: false)
        attributes.merge(rsaKey(key, id: key.fingerprint.bytes)) { $1 }
        attributes.merge([
            CK_ATTRIBUTE_TYPE(CKA_ENCRYPT): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_VERIFY): P11Encode.bool(true),
            CK_ATTRIBUTE_TYPE(CKA_VERIFY_RECOVER): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_WRAP): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_TRUSTED): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_MODULUS_BITS): P11Encode.ulong(CK_ULONG(key.modulusBitCount))
        ]) { $1 }
        return P11Object(kind: .publicKey(key), isPrivate: false, attributes: attributes)
    }

    /// A CKO_PRIVATE_KEY object for the private item `tag` whose public half is `key`
    /// (§4.9, §2.1.3). The private value's attributes exist and are sensitive: the module never
    /// returns them (RSAKit keeps the key; the module only asks it to sign or decrypt).
    /// CKA_ALWAYS_SENSITIVE and CKA_NEVER_EXTRACTABLE are true from the token's point of view:
    /// no PKCS#11 call ever revealed or exported it.
    ///
    /// A key in the TPM (`tpmUsage` set) shows its one usage: CKA_SIGN or CKA_DECRYPT, and
    /// CKA_ALLOWED_MECHANISMS with the mechanisms the TPM does for it (no CKM_RSA_X_509).
    static func privateKey(
        itemID: String, publicKey key: RSAPublicKey, label: String, isPrivate: Bool, tpmUsage: RSATPMKeyUsage? = nil
    ) -> P11Object {
        var object = privateKey(
            kind: .privateKey(itemID: itemID, publicKey: key), publicKey: key, label: label, isPrivate: isPrivate)
        if let tpmUsage {
            let mechanisms: [UInt]
            switch tpmUsage {
            case .sign:
                mechanisms = [
                    UInt(CKM_RSA_PKCS), UInt(CKM_RSA_PKCS_PSS), UInt(CKM_SHA1_RSA_PKCS), UInt(CKM_SHA256_RSA_PKCS),
                    UInt(CKM_SHA384_RSA_PKCS), UInt(CKM_SHA512_RSA_PKCS), UInt(CKM_SHA1_RSA_PKCS_PSS),
                    UInt(CKM_SHA256_RSA_PKCS_PSS), UInt(CKM_SHA384_RSA_PKCS_PSS), UInt(CKM_SHA512_RSA_PKCS_PSS)
                ]
            case .decryptOAEP: mechanisms = [UInt(CKM_RSA_PKCS_OAEP)]
            case .decryptPKCS1v15: mechanisms = [UInt(CKM_RSA_PKCS)]
            }
            object.attributes[CK_ATTRIBUTE_TYPE(CKA_SIGN)] = P11Encode.bool(tpmUsage.canSign)
            object.attributes[CK_ATTRIBUTE_TYPE(CKA_DECRYPT)] = P11Encode.bool(tpmUsage.canDecrypt)
            object.attributes[CK_ATTRIBUTE_TYPE(CKA_ALLOWED_MECHANISMS)] = .bytes(
                mechanisms.flatMap { m in withUnsafeBytes(of: CK_MECHANISM_TYPE(m)) { Array($0) } })
        }
        return object
    }

    /// A CKO_PRIVATE_KEY object of `kind` (a store's or the system agent's key), with the
    /// attributes of ``privateKey(itemID:publicKey:label:isPrivate:)``.
    static func privateKey(kind: P11ObjectKind, publicKey key: RSAPublicKey, label: String, isPrivate: Bool)
        -> P11Object
    {
        var attributes = storage(class: CK_OBJECT_CLASS(CKO_PRIVATE_KEY), label: label, isPrivate: isPrivate)
        attributes.merge(rsaKey(key, id: key.fingerprint.bytes)) { $1 }
        attributes.merge([
            CK_ATTRIBUTE_TYPE(CKA_SENSITIVE): P11Encode.bool(true),
            CK_ATTRIBUTE_TYPE(CKA_DECRYPT): P11Encode.bool(true),
            CK_ATTRIBUTE_TYPE(CKA_SIGN): P11Encode.bool(true),
            CK_ATTRIBUTE_TYPE(CKA_SIGN_RECOVER): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_UNWRAP): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_EXTRACTABLE): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_ALWAYS_SENSITIVE): P11Encode.bool(true),
            CK_ATTRIBUTE_TYPE(CKA_NEVER_EXTRACTABLE): P11Encode.bool(true),
            CK_ATTRIBUTE_TYPE(CKA_WRAP_WITH_TRUSTED): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_ALWAYS_AUTHENTICATE): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_PRIVATE_EXPONENT): .sensitive,
            CK_ATTRIBUTE_TYPE(CKA_PRIME_1): .sensitive,
            CK_ATTRIBUTE_TYPE(CKA_PRIME_2): .sensitive,
            CK_ATTRIBUTE_TYPE(CKA_EXPONENT_1): .sensitive,
            CK_ATTRIBUTE_TYPE(CKA_EXPONENT_2): .sensitive,
            CK_ATTRIBUTE_TYPE(CKA_COEFFICIENT): .sensitive
        ]) { $1 }
        return P11Object(kind: kind, isPrivate: isPrivate, attributes: attributes)
    }

    /// A CKO_CERTIFICATE object of type CKC_X_509 (§4.6.3).
    static func certificate(_ certificate: X509Certificate, label: String) -> P11Object {
        var attributes = storage(class: CK_OBJECT_CLASS(CKO_CERTIFICATE), label: label, isPrivate: false)
        attributes.merge([
            CK_ATTRIBUTE_TYPE(CKA_CERTIFICATE_TYPE): P11Encode.ulong(CK_CERTIFICATE_TYPE(CKC_X_509)),
            CK_ATTRIBUTE_TYPE(CKA_TRUSTED): P11Encode.bool(false),
            CK_ATTRIBUTE_TYPE(CKA_CERTIFICATE_CATEGORY): P11Encode.ulong(0),
            CK_ATTRIBUTE_TYPE(CKA_START_DATE): P11Encode.empty,
            CK_ATTRIBUTE_TYPE(CKA_END_DATE): P11Encode.empty,
            CK_ATTRIBUTE_TYPE(CKA_VALUE): .bytes(certificate.derRepresentation),
            CK_ATTRIBUTE_TYPE(CKA_URL): P11Encode.empty,
            CK_ATTRIBUTE_TYPE(CKA_JAVA_MIDP_SECURITY_DOMAIN): P11Encode.ulong(0)
        ]) { $1 }
        if let id = certificate.publicKeyFingerprint?.bytes { attributes[CK_ATTRIBUTE_TYPE(CKA_ID)] = .bytes(id) }
        if let subject = certificate.subjectDER { attributes[CK_ATTRIBUTE_TYPE(CKA_SUBJECT)] = .bytes(subject) }
        if let issuer = certificate.issuerDER { attributes[CK_ATTRIBUTE_TYPE(CKA_ISSUER)] = .bytes(issuer) }
        if let serial = certificate.serialNumberDER {
            attributes[CK_ATTRIBUTE_TYPE(CKA_SERIAL_NUMBER)] = .bytes(serial)
        }
        return P11Object(kind: .certificate, isPrivate: false, attributes: attributes)
    }
}
