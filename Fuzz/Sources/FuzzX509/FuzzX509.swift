// X.509 certificate input (X509Certificate.certificates(from:): one DER certificate, several
// concatenated, a PEM block or a PEM bundle), parsed by GnuTLS through RSAKit's wrapper.
// Properties:
// 1. Every rejection is an RSAError.
// 2. Every certificate returned re-parses from its derRepresentation to an equal certificate
//    with the same fields; its fingerprint is SHA-256 of that DER (32 bytes); its
//    pemRepresentation parses back (both entry points) to the same DER.
// 3. DER input: the certificates' DER encodings, concatenated, are exactly the input.
// 4. Every accessor can be read; an RSA public key exports (PKCS#1, SPKI; DER and PEM) and
//    reloads to an equal key whose fingerprint is the certificate's publicKeyFingerprint.
// 5. Trust evaluation (basic X.509 policy, the certificate as its own and only anchor, at
//    notBefore) returns a result; it never throws and must not crash.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzX509(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    let certificates: [X509Certificate]
    do {
        certificates = try X509Certificate.certificates(from: input)
    } catch let error as RSAError {
        _ = error.description
        return 0
    } catch {
        unreachable("certificates(from:) threw a non-RSAError: \(error)")
    }
    require(!certificates.isEmpty, "certificates(from:) returned no certificate without throwing")
    let isPEM = input.contains(0x2D) && String(decoding: input.prefix(64 << 10), as: UTF8.self).contains("-----BEGIN")
    if !isPEM && input.first == 0x30 {
        require(
            certificates.flatMap(\.derRepresentation) == input, "the DER certificates do not concatenate to the input")
    }
    for certificate in certificates {
        check(certificate)
    }
    return 0
}

func check(_ certificate: X509Certificate) {
    let der = certificate.derRepresentation
    require(
        certificate.fingerprint.count == 32 && certificate.fingerprint == RSAHashAlgorithm.sha256.hash(der),
        "fingerprint is not SHA-256 of the DER")
    let again = orAbort { try X509Certificate(derRepresentation: der) }
    require(again == certificate && again.fingerprint == certificate.fingerprint, "DER re-parse differs")
    require(sameFields(again, certificate), "DER re-parse reads different fields")
    let pem = certificate.pemRepresentation
    let fromPEM = orAbort { try X509Certificate(pemRepresentation: pem) }
    require(fromPEM.derRepresentation == der, "PEM re-parse gives other DER")
    let list = orAbort { try X509Certificate.certificates(from: Array(pem.utf8)) }
    require(list.count == 1 && list[0].derRepresentation == der, "certificates(from: PEM) gives other DER")

    // Every accessor (stored fields and computed ones).
    _ = certificate.subject.utf8.count + certificate.issuer.utf8.count + certificate.subjectSummary.utf8.count
    _ = certificate.commonNames.count + certificate.serialNumberHex.count + certificate.fingerprintHex.count
    require(!certificate.serialNumber.isEmpty, "empty serial number")
    require(
        certificate.serialNumber.count == 1 || certificate.serialNumber[0] != 0,
        "serial number has a leading zero octet")
    _ = certificate.isValid(at: certificate.notValidBefore)
    _ = certificate.notValidAfter.timeIntervalSince(certificate.notValidBefore)
    require((1...3).contains(certificate.version), "version \(certificate.version)")
    _ = certificate.keyUsage?.description
    _ = certificate.extendedKeyUsage?.map(\.description)
    _ = certificate.subjectAlternativeNames.map(\.description)
    _ = certificate.basicConstraints.map { ($0.isCertificateAuthority, $0.pathLengthConstraint, $0.isCritical) }
    _ =
        certificate.criticalExtensionOIDs.count + certificate.signatureAlgorithmName.count
        + certificate.publicKeyAlgorithmName.count
    _ = certificate.publicKeyFingerprint?.description
    _ = certificate.description + String(certificate.isSelfIssued)
    _ = certificate.hashValue

    if let key = certificate.publicKey {
        require(
            certificate.publicKeyFingerprint == key.fingerprint, "publicKeyFingerprint is not the RSA key's fingerprint"
        )
        for format in [RSAKeyFormat.pkcs1, .spki] {
            let keyDER = orAbort { try key.derRepresentation(format: format) }
            require(
                orAbort { try RSAPublicKey(derRepresentation: keyDER) } == key,
                "public key changed in a \(format) DER round trip")
            let keyPEM = orAbort { try key.pemRepresentation(format: format) }
            require(
                orAbort { try RSAPublicKey(pemRepresentation: keyPEM) } == key,
                "public key changed in a \(format) PEM round trip")
        }
    }

    // Trust: the certificate as its own anchor, only anchor (no system bundle read per input).
    var trust = RSATrust(certificates: [certificate], policy: .basicX509)
    trust.anchorCertificates = [certificate]
    trust.anchorCertificatesOnly = true
    trust.verifyDate = certificate.notValidBefore
    let evaluation = trust.evaluate()
    _ = evaluation.result.isTrusted
    _ = evaluation.failures.map(\.message)
    require(evaluation.chain.allSatisfy { $0 == certificate }, "trust chain holds a certificate that was not given")
}

/// Every field GnuTLS was asked for, compared.
func sameFields(_ a: X509Certificate, _ b: X509Certificate) -> Bool {
    a.subject == b.subject && a.issuer == b.issuer && a.subjectSummary == b.subjectSummary
        && a.commonNames == b.commonNames && a.serialNumber == b.serialNumber
        && a.notValidBefore == b.notValidBefore && a.notValidAfter == b.notValidAfter && a.version == b.version
        && a.publicKey == b.publicKey && a.publicKeyAlgorithmName == b.publicKeyAlgorithmName
        && a.publicKeyBitCount == b.publicKeyBitCount && a.signatureAlgorithmName == b.signatureAlgorithmName
        && a.publicKeyFingerprint == b.publicKeyFingerprint && a.keyUsage == b.keyUsage
        && a.extendedKeyUsage == b.extendedKeyUsage && a.subjectAlternativeNames == b.subjectAlternativeNames
        && a.basicConstraints == b.basicConstraints && a.criticalExtensionOIDs == b.criticalExtensionOIDs
}

/// The value, or stop: used where the property says the call cannot fail.
func orAbort<T>(_ body: () throws -> T, line: UInt = #line) -> T {
    do { return try body() } catch { unreachable("line \(line): unexpected error \(error)") }
}
