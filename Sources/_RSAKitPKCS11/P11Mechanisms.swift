// The mechanisms (PKCS#11 v2.40 Current Mechanisms §2.1) and their parameters, mapped onto
// RSAKit's schemes. RSAKit does every operation (blinded, constant-time RSADP with its
// re-encryption check); this file only reads CK_MECHANISM.
//
// CKM_RSA_X_509 (raw RSA) is refused for signing and for decryption alike. Raw RSADP returns
// c^d mod n for any c the caller chooses: it is exactly the input a padding oracle attack
// needs (Bleichenbacher 1998, Manger 2001), and since RSASP1 is the same function, raw
// signing would be the same oracle under another name. Every client this module targets
// (OpenSSH, GnuTLS, OpenSSL's pkcs11 provider, NSS) signs with CKM_RSA_PKCS or
// CKM_RSA_PKCS_PSS and decrypts with CKM_RSA_PKCS or CKM_RSA_PKCS_OAEP.
internal import CP11Kit
import RSAKit

/// A signature mechanism with its parameters.
enum P11SignatureScheme {
    /// CKM_RSA_PKCS: EMSA-PKCS1-v1_5 over the DigestInfo the caller gives (RFC 8017 §9.2
    /// steps 3-5).
    case pkcs1DigestInfo
    /// CKM_RSA_PKCS_PSS: PSS over the digest the caller gives.
    case pssDigest(RSAHashAlgorithm, RSASignaturePadding)
    /// CKM_SHAx_RSA_PKCS and CKM_SHAx_RSA_PKCS_PSS: hash the data, then sign.
    case hashAndSign(RSAHashAlgorithm, RSASignaturePadding)
}

enum P11Mechanisms {
    /// The hash of each hash-and-sign mechanism, PKCS#1 v1.5 and PSS.
    private static let hashAndSignPKCS1: [CK_MECHANISM_TYPE: RSAHashAlgorithm] = [
        CK_MECHANISM_TYPE(CKM_SHA1_RSA_PKCS): .sha1, CK_MECHANISM_TYPE(CKM_SHA224_RSA_PKCS): .sha224,
        CK_MECHANISM_TYPE(CKM_SHA256_RSA_PKCS): .sha256, CK_MECHANISM_TYPE(CKM_SHA384_RSA_PKCS): .sha384,
        CK_MECHANISM_TYPE(CKM_SHA512_RSA_PKCS): .sha512
    ]
    private static let hashAndSignPSS: [CK_MECHANISM_TYPE: RSAHashAlgorithm] = [
        CK_MECHANISM_TYPE(CKM_SHA1_RSA_PKCS_PSS): .sha1, CK_MECHANISM_TYPE(CKM_SHA224_RSA_PKCS_PSS): .sha224,
        CK_MECHANISM_TYPE(CKM_SHA256_RSA_PKCS_PSS): .sha256, CK_MECHANISM_TYPE(CKM_SHA384_RSA_PKCS_PSS): .sha384,
        CK_MECHANISM_TYPE(CKM_SHA512_RSA_PKCS_PSS): .sha512
    ]
    /// CKM_SHA_1 ... CKM_SHA512 as RSAKit hashes (the hashAlg of PSS and OAEP parameters).
    private static let hashes: [CK_MECHANISM_TYPE: RSAHashAlgorithm] = [
        CK_MECHANISM_TYPE(CKM_SHA_1): .sha1, CK_MECHANISM_TYPE(CKM_SHA224): .sha224,
        CK_MECHANISM_TYPE(CKM_SHA256): .sha256, CK_MECHANISM_TYPE(CKM_SHA384): .sha384,
        CK_MECHANISM_TYPE(CKM_SHA512): .sha512
    ]
    /// CKG_MGF1_SHA1 ... CKG_MGF1_SHA512.
    private static let mgf1Hashes: [CK_RSA_PKCS_MGF_TYPE: RSAHashAlgorithm] = [
        CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA1): .sha1, CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA224): .sha224,
        CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA256): .sha256, CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA384): .sha384,
        CK_RSA_PKCS_MGF_TYPE(CKG_MGF1_SHA512): .sha512
    ]

    /// Key sizes the module states (RSAKit's range).
    static let minimumKeyBitCount: CK_ULONG = 1024
    static let maximumKeyBitCount: CK_ULONG = 16384

    /// Every mechanism with its CKF_ flags, in C_GetMechanismList's order.
    static let all: [(CK_MECHANISM_TYPE, CK_FLAGS)] = {
        let signVerify = CK_FLAGS(CKF_SIGN) | CK_FLAGS(CKF_VERIFY)
        var list: [(CK_MECHANISM_TYPE, CK_FLAGS)] = [
            (CK_MECHANISM_TYPE(CKM_RSA_PKCS), signVerify | CK_FLAGS(CKF_DECRYPT)),
            (CK_MECHANISM_TYPE(CKM_RSA_PKCS_PSS), signVerify),
            (CK_MECHANISM_TYPE(CKM_RSA_PKCS_OAEP), CK_FLAGS(CKF_DECRYPT))
        ]
        list += hashAndSignPKCS1.keys.sorted().map { ($0, signVerify) }
        list += hashAndSignPSS.keys.sorted().map { ($0, signVerify) }
        return list
    }()

    /// The signature scheme of `mechanism`.
    /// - Throws: CKR_MECHANISM_INVALID for a mechanism not in ``all`` for signing (CKM_RSA_X_509
    ///   included); CKR_MECHANISM_PARAM_INVALID for missing, short or inconsistent parameters.
    static func signatureScheme(_ mechanism: CK_MECHANISM) throws -> P11SignatureScheme {
        let type = mechanism.mechanism
        if type == CK_MECHANISM_TYPE(CKM_RSA_PKCS) {
            try requireNoParameter(mechanism)
            return .pkcs1DigestInfo
        }
        if let hash = hashAndSignPKCS1[type] {
            try requireNoParameter(mechanism)
            return .hashAndSign(hash, .pkcs1v15)
        }
        if type == CK_MECHANISM_TYPE(CKM_RSA_PKCS_PSS) {
            let (hash, padding) = try pssParameters(mechanism)
            return .pssDigest(hash, padding)
        }
        if let hash = hashAndSignPSS[type] {
            let (parameterHash, padding) = try pssParameters(mechanism)
            // §2.1.15: hashAlg must be the mechanism's own hash.
            guard parameterHash == hash else { throw P11Error(CK_RV(CKR_MECHANISM_PARAM_INVALID)) }
            return .hashAndSign(hash, padding)
        }
        throw P11Error(CK_RV(CKR_MECHANISM_INVALID))
    }

    /// The decryption scheme of `mechanism`: CKM_RSA_PKCS or CKM_RSA_PKCS_OAEP.
    /// - Throws: CKR_MECHANISM_INVALID (CKM_RSA_X_509 included); CKR_MECHANISM_PARAM_INVALID.
    static func decryptionScheme(_ mechanism: CK_MECHANISM) throws -> RSAEncryptionPadding {
        switch mechanism.mechanism {
        case CK_MECHANISM_TYPE(CKM_RSA_PKCS):
            try requireNoParameter(mechanism)
            return .pkcs1v15
        case CK_MECHANISM_TYPE(CKM_RSA_PKCS_OAEP):
            let parameters: CK_RSA_PKCS_OAEP_PARAMS = try parameter(mechanism)
            guard let hash = hashes[parameters.hashAlg], let mgf1 = mgf1Hashes[parameters.mgf] else {
                throw P11Error(CK_RV(CKR_MECHANISM_PARAM_INVALID))
            }
            // §2.1.8: the label comes from CKZ_DATA_SPECIFIED (0 is accepted for no label, as
            // some clients send it).
            let label: [UInt8]
            if parameters.source == CK_RSA_PKCS_OAEP_SOURCE_TYPE(CKZ_DATA_SPECIFIED) {
                label = try P11Buffers.bytes(
                    parameters.pSourceData?.assumingMemoryBound(to: UInt8.self), parameters.ulSourceDataLen)
            } else if parameters.source == 0, parameters.ulSourceDataLen == 0 {
                label = []
            } else {
                throw P11Error(CK_RV(CKR_MECHANISM_PARAM_INVALID))
            }
            return .oaep(RSAOAEPParameters(hash: hash, mgf1Hash: mgf1, label: label))
        default:
            throw P11Error(CK_RV(CKR_MECHANISM_INVALID))
        }
    }

    /// CK_RSA_PKCS_PSS_PARAMS as the message hash and RSAKit's padding.
    private static func pssParameters(_ mechanism: CK_MECHANISM) throws -> (RSAHashAlgorithm, RSASignaturePadding) {
        let parameters: CK_RSA_PKCS_PSS_PARAMS = try parameter(mechanism)
        guard let hash = hashes[parameters.hashAlg], let mgf1 = mgf1Hashes[parameters.mgf],
            let saltLength = Int(exactly: parameters.sLen), saltLength <= 1 << 16
        else {
            throw P11Error(CK_RV(CKR_MECHANISM_PARAM_INVALID))
        }
        let salt = RSAPSSSaltLength.byteCount(saltLength)
        return (hash, mgf1 == hash ? .pss(saltLength: salt) : .pssMGF1(mgf1, saltLength: salt))
    }

    /// The mechanism's parameter structure, which must be exactly `T`'s size.
    private static func parameter<T>(_ mechanism: CK_MECHANISM) throws -> T {
        guard let pointer = mechanism.pParameter,
            mechanism.ulParameterLen == CK_ULONG(MemoryLayout<T>.size)
        else {
            throw P11Error(CK_RV(CKR_MECHANISM_PARAM_INVALID))
        }
        return UnsafeRawPointer(pointer).loadUnaligned(as: T.self)
    }

    private static func requireNoParameter(_ mechanism: CK_MECHANISM) throws {
        guard mechanism.ulParameterLen == 0 else { throw P11Error(CK_RV(CKR_MECHANISM_PARAM_INVALID)) }
    }
}
