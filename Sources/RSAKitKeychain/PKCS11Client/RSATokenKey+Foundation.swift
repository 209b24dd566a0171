// Foundation forms of the token calls that take bytes (every byte-taking call has a
// Data form).
import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSATokenKey {
    /// ``signature(for:hash:padding:pin:)-([UInt8],_,_,_)`` over `Data`.
    /// - Returns: the signature, k bytes. - Throws: as the `[UInt8]` form.
    public func signature(
        for message: some DataProtocol, hash: RSAHashAlgorithm, padding: RSASignaturePadding, pin: RSASecretBytes
    ) throws -> Data {
        Data(try signature(for: [UInt8](message), hash: hash, padding: padding, pin: pin))
    }

    /// ``signature(forDigest:hash:padding:pin:)-([UInt8],_,_,_)`` over `Data`.
    /// - Returns: the signature, k bytes. - Throws: as the `[UInt8]` form.
    public func signature(
        forDigest digest: some DataProtocol, hash: RSAHashAlgorithm, padding: RSASignaturePadding, pin: RSASecretBytes
    ) throws -> Data {
        Data(try signature(forDigest: [UInt8](digest), hash: hash, padding: padding, pin: pin))
    }

    /// ``decrypt(_:padding:pin:)-([UInt8],_,_)`` of a k-byte block in `Data`.
    /// - Returns: the message. - Throws: as the `[UInt8]` form.
    public func decrypt(_ ciphertext: some DataProtocol, padding: RSAEncryptionPadding, pin: RSASecretBytes) throws
        -> Data
    {
        var message = try decrypt([UInt8](ciphertext), padding: padding, pin: pin)
        defer { wipe(&message) }
        return Data(message)
    }
}

extension RSATokenReference {
    /// ``init(modulePath:tokenLabel:tokenSerial:objectID:)-(_,_,_,[UInt8])`` with CKA_ID in `Data`.
    public init(modulePath: String, tokenLabel: String, tokenSerial: String, objectID: some DataProtocol) {
        self.init(modulePath: modulePath, tokenLabel: tokenLabel, tokenSerial: tokenSerial, objectID: [UInt8](objectID))
    }
}

extension RSATokenURI {
    /// ``init(modulePath:tokenLabel:tokenSerial:objectLabel:objectID:)-(_,_,_,_,[UInt8]?)`` with CKA_ID in `Data`.
    public init(
        modulePath: String, tokenLabel: String?, tokenSerial: String? = nil, objectLabel: String? = nil, objectID: Data?
    ) {
        self.init(
            modulePath: modulePath, tokenLabel: tokenLabel, tokenSerial: tokenSerial, objectLabel: objectLabel,
            objectID: objectID.map { [UInt8]($0) })
    }
}

extension RSATPMKeyBlobs {
    /// ``init(usage:publicBlob:privateBlob:signsPSSWithDigestLengthSalt:)-(_,[UInt8],[UInt8],_)``
    /// with the blobs in `Data`.
    public init(
        usage: RSATPMKeyUsage, publicBlob: some DataProtocol, privateBlob: some DataProtocol,
        signsPSSWithDigestLengthSalt: Bool
    ) {
        self.init(
            usage: usage, publicBlob: [UInt8](publicBlob), privateBlob: [UInt8](privateBlob),
            signsPSSWithDigestLengthSalt: signsPSSWithDigestLengthSalt)
    }
}
