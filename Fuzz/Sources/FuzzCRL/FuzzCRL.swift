// Certificate revocation lists (X509CRL.crls(from:): PEM blocks or one DER CertificateList),
// parsed by GnuTLS, and their use in a trust evaluation. Properties:
// 1. Every rejection is an RSAError.
// 2. Every CRL returned re-parses from its derRepresentation to an equal value.
// 3. revocationDate(ofSerialNumber:) finds every listed serial, with its own date.
// 4. A trust evaluation of a fixed chain (chain.pem beside this file: "fuzz leaf", serial
//    0x1234, issued by "FuzzCRL CA", whose key was thrown away after signing the seed CRLs)
//    with the input's CRLs returns; the leaf is "revoked" only if one of those CRLs names the
//    CA and lists serial 0x1234, and then the evaluation is a fatal failure.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit
import FuzzSupport

/// The fixed chain: the leaf, then its CA (the anchor).
let fuzzChain: [X509Certificate] = fixedChain(besideFile: #filePath)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCRL(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    let crls: [X509CRL]
    do {
        crls = try X509CRL.crls(from: input)
    } catch let error as RSAError {
        _ = error.description
        return 0
    } catch {
        unreachable("a CRL rejection that is not an RSAError: \(error)")
    }
    for crl in crls {
        guard let again = try? X509CRL(derRepresentation: crl.derRepresentation) else {
            unreachable("a CRL does not re-parse from its DER")
        }
        require(again == crl, "a CRL re-parses to different fields")
        for entry in crl.revokedCertificates.prefix(64) {
            require(crl.revocationDate(ofSerialNumber: entry.serialNumber) != nil, "a listed serial is not found")
        }
    }
    let leaf = fuzzChain[0], ca = fuzzChain[1]
    var trust = RSATrust(certificates: [leaf], policy: .basicX509)
    trust.anchorCertificates = [ca]
    trust.anchorCertificatesOnly = true
    trust.crls = crls
    trust.verifyDate = leaf.notValidBefore.addingTimeInterval(86_400)
    let evaluation = trust.evaluate()
    let revoked = evaluation.failures.contains { $0.kind.code == "revoked" }
    if revoked {
        require(
            crls.contains { $0.issuer == ca.subject && $0.revocationDate(ofSerialNumber: leaf.serialNumber) != nil },
            "revoked by no CRL that names the CA and lists the leaf")
        require(evaluation.result == .fatalTrustFailure, "revoked is not fatal")
    }
    if !crls.isEmpty {
        require(
            evaluation.revocation.count == 1,
            "one certificate with an issuer, \(evaluation.revocation.count) revocation results")
    }
    return 0
}
