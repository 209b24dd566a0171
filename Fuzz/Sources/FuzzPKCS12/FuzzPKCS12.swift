// PKCS#12 input (RSAPKCS12(derRepresentation:passphrase:)) with the fixed passphrase "fuzz":
// GnuTLS reads the PFX, verifies the MAC and decrypts the bags; RSAKit reads key and certificates.
// Properties:
// 1. Every rejection is an RSAError.
// 2. An identity that parses has a private key matching its certificate (same public key,
//    publicKeyFingerprint = the key's fingerprint); the key exports (PKCS#1, PKCS#8; DER and
//    PEM) and reloads to the same key; leaf and chain re-parse from their DER to themselves.
// 3. A re-export (RSAPKCS12.derRepresentation) parses back to the same key, certificate,
//    chain and friendly name, with a MAC and no warnings. GnuTLS writes 600,000 PBKDF2
//    iterations (about a second per file here), so each distinct identity is re-exported once
//    per process, and at most 64 per process (replaying one input always re-exports it), or
//    RSAKIT_FUZZ_REEXPORTS: CI's smoke run (scripts/fuzz.sh --smoke) sets 4, since its replay of
//    the corpus in one process otherwise spends most of its time (48 of 69 s) in GnuTLS's PBKDF2.
//
// Iteration bound: PKCS#12 runs PBKDF2 (or the RFC 7292 KDF) once for the MAC and once per
// encrypted bag and shrouded key, with the count the file declares, so an input can ask for
// 2^32 iterations and stall the fuzzer (a timeout that is no bug). Inputs declaring more than
// `maximumIterations` (64) are skipped before parsing. The bound was OpenSSL's default count,
// 2048; the count is a number the KDF loops on, not a path through any parser, and the seeds
// declare 1 or 2 (Fuzz/make-seeds.py). (Measured, 180 s runs with -seed=11 on a core shared
// with another fuzzer: 367 exec/s with 2048, 413 with 64. Nettle's SHA-256 in PBKDF2 is half
// of a short run's time, but that is the start-up re-exports of property 3 at 600,000
// iterations each, which the bound does not touch.) The counts
// are found by a scan of the raw bytes, not a DER parse (GnuTLS's libtasn1 accepts some BER
// that RSAKit's strict reader refuses): every count in PKCS#12 (MacData, pkcs-12PbeParams,
// PBEParameter, PBKDF2-params) is an INTEGER right after an OCTET STRING salt, so every
// INTEGER of 1 to 8 content octets that directly follows an OCTET STRING TLV (primitive 0x04
// or constructed 0x24, definite length) is read, and any value above the bound skips the
// input. Counts inside encrypted content (a shrouded key bag in an encrypted SafeContents)
// are not visible; libFuzzer's -timeout reports those if the fuzzer ever makes one.
import RSAKit
import FuzzSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

let passphrase = Array("fuzz".utf8)
let maximumIterations: UInt64 = 64

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPKCS12(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    guard largestDeclaredIterationCount(input) <= maximumIterations else { return -1 }  // -1: not added to the corpus
    let p12: RSAPKCS12
    do {
        p12 = try RSAPKCS12(derRepresentation: input, passphrase: passphrase)
    } catch let error as RSAError {
        _ = error.description
        return 0
    } catch {
        unreachable("RSAPKCS12 threw a non-RSAError: \(error)")
    }
    let key = p12.privateKey
    let certificate = p12.certificate
    require(certificate.publicKey == key.publicKey, "the certificate's public key is not the private key's")
    require(
        certificate.publicKeyFingerprint == key.fingerprint, "publicKeyFingerprint differs from the key's fingerprint")
    for format in [RSAKeyFormat.pkcs1, .pkcs8] {
        let der = orAbort { try key.derRepresentation(format: format) }
        require(
            orAbort { try RSAPrivateKey(derRepresentation: der) } == key,
            "private key changed in a \(format) DER round trip")
        let pem = orAbort { try key.pemRepresentation(format: format) }
        require(
            orAbort { try RSAPrivateKey(pemRepresentation: pem) } == key,
            "private key changed in a \(format) PEM round trip")
    }
    for member in [certificate] + p12.chain {
        require(
            orAbort { try X509Certificate(derRepresentation: member.derRepresentation) } == member,
            "certificate re-parse differs")
    }
    _ = p12.friendlyName?.utf8.count
    _ = p12.macDescription?.utf8.count
    _ = p12.warnings.count
    if p12.macDescription == nil {
        require(p12.warnings.contains { $0.contains("no MAC") }, "a file without a MAC gave no warning")
    }

    let identity = Identity(
        key: key.fingerprint, certificate: certificate.fingerprint,
        chain: p12.chain.map(\.fingerprint), friendlyName: p12.friendlyName)
    guard reexported.withLock({ $0.count < reexportLimit && $0.insert(identity).inserted }) else { return 0 }
    let exported = orAbort {
        try RSAPKCS12.derRepresentation(
            privateKey: key, certificate: certificate, chain: p12.chain,
            friendlyName: p12.friendlyName, passphrase: passphrase)
    }
    let back = orAbort { try RSAPKCS12(derRepresentation: exported, passphrase: passphrase) }
    require(back.privateKey == key, "re-export: private key differs")
    require(back.certificate == certificate, "re-export: certificate differs")
    require(Set(back.chain) == Set(p12.chain) && back.chain.count == p12.chain.count, "re-export: chain differs")
    require(
        back.friendlyName == p12.friendlyName,
        "re-export: friendly name \(String(describing: back.friendlyName)) != \(String(describing: p12.friendlyName))")
    require(back.macDescription != nil && back.warnings.isEmpty, "re-export: \(back.warnings)")
    return 0
}

struct Identity: Hashable {
    let key: RSAKeyFingerprint
    let certificate: [UInt8]
    let chain: [[UInt8]]
    let friendlyName: String?
}

/// The identities re-exported so far in this process (at most `reexportLimit`: the first distinct
/// identities a run meets).
let reexported = Mutex<Set<Identity>>([])

/// How many distinct identities one process re-exports: RSAKIT_FUZZ_REEXPORTS (a positive
/// integer), else 64.
let reexportLimit: Int = {
    guard let text = getenv("RSAKIT_FUZZ_REEXPORTS"), let limit = Int(String(cString: text)), limit > 0 else {
        return 64
    }
    return limit
}()

/// The largest INTEGER (1 to 8 content octets) that directly follows an OCTET STRING TLV
/// anywhere in `bytes`: an upper bound of every iteration count the file declares in clear.
func largestDeclaredIterationCount(_ bytes: [UInt8]) -> UInt64 {
    var largest: UInt64 = 0
    var index = 0
    while index + 1 < bytes.count {
        defer { index += 1 }
        guard bytes[index] == 0x04 || bytes[index] == 0x24,
            let (octetsLength, octetsHeader) = length(bytes, at: index + 1)
        else { continue }
        let next = index + 1 + octetsHeader + octetsLength
        guard next < bytes.count, bytes[next] == 0x02,
            let (integerLength, integerHeader) = length(bytes, at: next + 1),
            (1...8).contains(integerLength), next + 1 + integerHeader + integerLength <= bytes.count
        else { continue }
        let start = next + 1 + integerHeader
        let value = bytes[start..<(start + integerLength)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        largest = max(largest, value)
    }
    return largest
}

/// A definite length at `offset` (short form, or long form of 1 to 4 octets): (length, header octets).
func length(_ bytes: [UInt8], at offset: Int) -> (Int, Int)? {
    guard offset < bytes.count else { return nil }
    let first = bytes[offset]
    if first < 0x80 { return (Int(first), 1) }
    let count = Int(first & 0x7F)
    guard (1...4).contains(count), offset + count < bytes.count else { return nil }
    let value = bytes[(offset + 1)...(offset + count)].reduce(0) { $0 << 8 | Int($1) }
    return (value, 1 + count)
}

/// The value, or stop: used where the property says the call cannot fail.
func orAbort<T>(_ body: () throws -> T, line: UInt = #line) -> T {
    do { return try body() } catch { unreachable("line \(line): unexpected error \(error)") }
}
