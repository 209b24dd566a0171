// OCSP responses (RFC 6960 §4.2.1), as a responder or a TLS server's stapled status sends
// them, through the check trust evaluation runs on them (Revocation/OCSPCheck.swift: GnuTLS
// parses and verifies; rsakit checks status, signer, CertID and dates). Each input is judged
// in two modes.
//
// Raw mode: the whole input is the response. The fixed chain is chain.pem beside this file:
// "fuzz leaf" (serial 0x1234) issued by "FuzzOCSP CA", whose key, and the key of its delegated
// responder "fuzz resp" (id-kp-OCSPSigning), were thrown away after signing the seed responses
// (Fuzz/Corpus/FuzzOCSP: good signed by the CA, revoked by the delegated responder with its
// certificate, good by the responder without it, unknown, good signed by another CA of the
// same name, tryLater). A mutation almost always breaks the signature, so this mode covers the
// outer structure and the signature check, not what follows.
//
// Re-signed mode: byte 0 is flags (bit 0: attach the responder certificate in `certs`), the
// rest is a tbsResponseData, which the harness signs with the fixed 1024-bit fuzz key
// (FuzzSupport) and wraps in a successful OCSPResponse (RSAKitFuzzing.ocspResponse). The
// chain is signed-chain.pem: "fuzz signed leaf" (serial 0x1234), "FuzzOCSP signing CA" and
// its delegated responder "fuzz signing responder", both holding the fuzz key; it and the
// seeds (Corpus/FuzzOCSP/seed-signed-*) are made by make-signed-seeds.sh. Every mutation of
// the body keeps a valid signature, so rsakit's own checks after the signature's (responder,
// CertID, status, dates, reason) see hostile content.
//
// Properties, in both modes:
// 1. The judgement never crashes and is a function of the input (judged twice, equal).
// 2. A status (good, revoked, unknown) only for a response whose signature verifies for the
//    fixed CA: no mutation is believed unless it kept a valid signature.
// 3. Revoked always carries its revocation date.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(Fuzzing) import RSAKit
import FuzzSupport

/// Raw mode's chain: the leaf, then its CA (keys discarded).
let fuzzChain: [X509Certificate] = fixedChain(besideFile: #filePath)
/// Re-signed mode's chain: the leaf, its CA and the CA's delegated responder (the fuzz key).
let signedChain: [X509Certificate] = fixedChain(besideFile: #filePath, named: "signed-chain.pem", count: 3)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOCSP(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    check(input, leaf: fuzzChain[0], issuer: fuzzChain[1])
    if let flags = input.first {
        let certificates = flags & 1 != 0 ? [signedChain[2]] : []
        do {
            let response = try RSAKitFuzzing.ocspResponse(
                signing: Array(input.dropFirst()), with: fuzzPrivateKey1024,
                certificates: certificates)
            check(response, leaf: signedChain[0], issuer: signedChain[1])
        } catch {
            unreachable("signing a tbsResponseData with the fuzz key threw \(error)")
        }
    }
    return 0
}

/// Judges `response` about `leaf` one day after the leaf's notBefore and checks the properties.
func check(_ response: [UInt8], leaf: X509Certificate, issuer: X509Certificate) {
    let now = leaf.notValidBefore.addingTimeInterval(86_400)
    let verdict = RSAKitFuzzing.ocspJudge(response, certificate: leaf, issuer: issuer, now: now)
    require(
        RSAKitFuzzing.ocspJudge(response, certificate: leaf, issuer: issuer, now: now) == verdict,
        "the same response judged twice differs")
    if verdict.status != "not-checked" {
        require(verdict.signatureVerifies, "status \(verdict.status) from a response whose signature does not verify")
    }
    if verdict.status == "revoked" {
        require(verdict.revocationDate != nil, "revoked without a revocation date")
    }
}
