// OCSP responses (RFC 6960 §4.2.1), as a responder or a TLS server's stapled status sends
// them, through the check trust evaluation runs on them (Revocation/OCSPCheck.swift: GnuTLS
// parses and verifies; rsakit checks status, signer, CertID and dates). The fixed chain is
// chain.pem beside this file: "fuzz leaf" (serial 0x1234) issued by "FuzzOCSP CA", whose key,
// and the key of its delegated responder "fuzz resp" (id-kp-OCSPSigning), were thrown away
// after signing the seed responses (Fuzz/Corpus/FuzzOCSP: good signed by the CA, revoked by
// the delegated responder with its certificate, good by the responder without it, unknown,
// good signed by another CA of the same name, tryLater). Properties:
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

/// The fixed chain: the leaf, then its CA.
let fuzzChain: [X509Certificate] = fixedChain(besideFile: #filePath)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOCSP(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    let leaf = fuzzChain[0], ca = fuzzChain[1]
    let now = leaf.notValidBefore.addingTimeInterval(86_400)
    let verdict = RSAKitFuzzing.ocspJudge(input, certificate: leaf, issuer: ca, now: now)
    require(RSAKitFuzzing.ocspJudge(input, certificate: leaf, issuer: ca, now: now) == verdict, "the same response judged twice differs")
    if verdict.status != "not-checked" {
        require(verdict.signatureVerifies, "status \(verdict.status) from a response whose signature does not verify")
    }
    if verdict.status == "revoked" {
        require(verdict.revocationDate != nil, "revoked without a revocation date")
    }
    return 0
}
