// The constant-time harness: runs RSAKit's private-key path with every secret marked
// undefined for valgrind's memcheck, so that any branch, conditional move or memory index
// computed from a secret is reported ("Conditional jump or move depends on uninitialised
// value(s)", "Use of uninitialised value"). Run it as
//
//     valgrind --tool=memcheck .build/debug/ConstantTimeHarness MODE KEY.pem [OPERATIONS]
//
// MODE:
//   ct         the constant-time path: decrypt (valid and invalid padding, c = 0, 1, n - 1),
//              decrypt with implicit rejection (valid paddings and the broken EMs below),
//              RSADP, the batch of 8, the container frame check, EME-PKCS1-v1_5 decode on
//              marked EMs; RSAES-OAEP (SHA-1 and SHA-256, with and without a label) on valid
//              ciphertexts and on ones whose EM has a wrong Y octet, a wrong lHash, no 0x01
//              separator or a non-zero octet in PS, and with the wrong label; EME-OAEP decode
//              on the same EMs marked; an OAEP container (valid, and with another
//              container's header, so that the frame verdict fails). Expected: 0 reports.
//   ct-strict  as ct, but with every limb of the primes marked (GMP's own invert_limb and
//              binvert_limb table lookups on the top and lowest limbs are then reported).
//   mpz        the pre-rewrite mpz path (rsadpReferenceVarTime) with the same secrets marked.
//   plant      as ct, with a kernel attached that branches once on a secret limb: must report.
//   plant-oaep as ct, with a probe attached inside the EME-OAEP decode that branches once on
//              the unmasked DB (RSAKitConstantTimeHarness.attachOAEPDecodeProbe): must report,
//              so that the OAEP coverage cannot pass vacuously.
//   none       as ct without marking anything (the harness's own noise: must be 0).
//
// Secrets marked: d, p, q, dP, dQ, qInv (and otherPrimeInfos) in both the constant-time
// key and the mpz components; the blinding factor (every random byte the blinding draws);
// the EMs given to the padding decode (through RSADP, the unmasked seed and DB of OAEP are
// then secret too). The outputs are declassified only where RSAKit
// returns them to its caller (the decrypted message, the RSADP result).
// Prints one line "harness mode=... operations=N ok=N failed=N" on stdout; exit 0.

import Foundation
import RSAKit
import RSAKitCore
import CConstantTimePlant

/// The OS generator, its output marked secret (the blinding factor r is drawn from it).
struct PoisoningRandomSource: RSARandomSource {
    let poison: Bool
    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        SystemRandomSource().fill(buffer)
        if poison { RSAKitConstantTimeHarness.poison(UnsafeRawBufferPointer(buffer)) }
    }
}

func declassify(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { RSAKitConstantTimeHarness.declassify($0) }
}

func poisoned(_ bytes: [UInt8]) -> [UInt8] {
    let copy = bytes
    copy.withUnsafeBytes { RSAKitConstantTimeHarness.poison($0) }
    return copy
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(
        Data("usage: ConstantTimeHarness ct|ct-strict|mpz|plant|plant-oaep|none KEY.pem [OPERATIONS]\n".utf8))
    exit(64)
}
let mode = arguments[1]
guard ["ct", "ct-strict", "mpz", "plant", "plant-oaep", "none"].contains(mode) else {
    FileHandle.standardError.write(Data("ConstantTimeHarness: unknown mode \(mode)\n".utf8))
    exit(64)
}
let operations = arguments.count > 3 ? Int(arguments[3]) ?? 4 : 4
let pem = try String(contentsOfFile: arguments[2], encoding: .utf8)
let key = try RSAPrivateKey(pemRepresentation: pem)
let publicKey = key.publicKey
let k = key.modulusByteCount

// Public inputs, made before anything is marked.
var messages: [[UInt8]] = []
var ciphertexts: [[UInt8]] = []
for i in 0..<operations {
    let message = [UInt8]((0..<(i * 7 % max(1, k - 11))).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) })
    messages.append(message)
    ciphertexts.append(try publicKey.encrypt(message))
}
let modulus = key.modulus
var nMinus1 = modulus
nMinus1[nMinus1.count - 1] -= 1  // n is odd
let edgeInputs: [[UInt8]] = [
    [UInt8](repeating: 0, count: k),  // c = 0
    [UInt8](repeating: 0, count: k - 1) + [1],  // c = 1
    [UInt8](repeating: 0, count: k - nMinus1.count) + nMinus1,  // c = n - 1
    try RSAHazmat.rsaep([0x00, 0x01] + [UInt8](repeating: 0xFF, count: k - 2), key: publicKey)  // bad padding
]
let container: [UInt8] = try {
    var source = RSAArrayByteSource(
        [UInt8](
            (0..<(3 * RSAMessageContainer.payloadByteCount(blockSize: k) + 5)).map { UInt8(truncatingIfNeeded: $0) }))
    var sink = RSAArrayByteSink()
    try RSAMessageContainer.encrypt(from: &source, to: &sink, with: publicKey, concurrency: 1)
    return sink.bytes
}()
let goodEM: [UInt8] = [0x00, 0x02] + [UInt8](repeating: 0x5A, count: k - 8) + [0x00] + [1, 2, 3, 4, 5]
var badEMs: [[UInt8]] = []
for position in [0, 1, 5, k - 6] {
    var em = goodEM
    em[position] ^= (position == k - 6) ? 0x00 : 0xFF
    if position == 5 { em[5] = 0 }  // a zero inside the first 8 octets of PS
    if position == k - 6 { em[k - 6] = 0x11 }  // no separator
    badEMs.append(em)
}

// OAEP inputs (public, made before anything is marked): for each parameter set, valid
// ciphertexts (empty, short and longest messages) and hand-built EMs broken in one field each.
struct OAEPCase {
    let parameters: RSAOAEPParameters
    let valid: [(ciphertext: [UInt8], message: [UInt8])]
    let invalidEMs: [[UInt8]]
    let goodEM: [UInt8]
    let goodMessage: [UInt8]
    let wrongLabel: RSAOAEPParameters
}

/// EM = Y || maskedSeed || maskedDB of RFC 8017 §7.1.1 step 2, with a fixed seed and the
/// fields given (to break one at a time).
func oaepEM(
    _ message: [UInt8], k: Int, parameters: RSAOAEPParameters, y: UInt8 = 0,
    lHashFlip: UInt8 = 0, separator: UInt8 = 0x01, psOctet: UInt8? = nil
) -> [UInt8] {
    let hLen = parameters.hash.digestByteCount
    var db = parameters.hash.hash(parameters.label)
    db[hLen / 2] ^= lHashFlip
    var ps = [UInt8](repeating: 0, count: k - message.count - 2 * hLen - 2)
    if let psOctet, !ps.isEmpty { ps[ps.count / 2] = psOctet }
    db += ps + [separator] + message
    var seed = [UInt8](repeating: 0x3C, count: hLen)
    let dbMask = RSAHazmat.MGF1.mask(seed: seed, length: db.count, hash: parameters.mgf1Hash)
    for i in db.indices { db[i] ^= dbMask[i] }
    let seedMask = RSAHazmat.MGF1.mask(seed: db, length: hLen, hash: parameters.mgf1Hash)
    for i in seed.indices { seed[i] ^= seedMask[i] }
    return [y] + seed + db
}

let label = Array("rsakit harness label".utf8)
var oaepCases: [OAEPCase] = []
for hash in [RSAHashAlgorithm.sha1, .sha256] {
    for withLabel in [false, true] {
        let parameters = RSAOAEPParameters(hash: hash, label: withLabel ? label : [])
        let maximum = k - parameters.overheadByteCount
        var valid: [(ciphertext: [UInt8], message: [UInt8])] = []
        for length in [0, 1, 37, maximum] {
            let message = [UInt8]((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ length) })
            valid.append((try publicKey.encrypt(message, padding: .oaep(parameters)), message))
        }
        let message: [UInt8] = [9, 8, 7, 6, 5]
        let invalidEMs = [
            oaepEM(message, k: k, parameters: parameters, y: 0x01),  // Y != 0x00
            oaepEM(message, k: k, parameters: parameters, lHashFlip: 0x40),  // lHash' != lHash
            oaepEM(message, k: k, parameters: parameters, separator: 0x00),  // no 0x01 separator
            oaepEM([], k: k, parameters: parameters, separator: 0x00),  // DB = lHash || zeros
            oaepEM(message, k: k, parameters: parameters, separator: 0x02),  // 0x02 where 0x01 belongs
            oaepEM(message, k: k, parameters: parameters, psOctet: 0x07)  // non-zero octet in PS
        ]
        let wrongLabel = RSAOAEPParameters(hash: hash, label: withLabel ? [] : label)
        oaepCases.append(
            OAEPCase(
                parameters: parameters, valid: valid, invalidEMs: invalidEMs,
                goodEM: oaepEM(message, k: k, parameters: parameters), goodMessage: message,
                wrongLabel: wrongLabel))
    }
}
let oaepInvalidCiphertexts: [[[UInt8]]] = try oaepCases.map {
    try $0.invalidEMs.map { try RSAHazmat.rsaep($0, key: publicKey) }
}
let oaepContainerPadding = RSAEncryptionPadding.oaep(RSAOAEPParameters(hash: .sha256))
let oaepPlaintext = [UInt8](
    (0..<(2 * RSAMessageContainer.payloadByteCount(blockSize: k, padding: oaepContainerPadding) + 3)).map {
        UInt8(truncatingIfNeeded: $0 &* 5)
    })
func oaepContainer() throws -> [UInt8] {
    var source = RSAArrayByteSource(oaepPlaintext)
    var sink = RSAArrayByteSink()
    try RSAMessageContainer.encrypt(
        from: &source, to: &sink, with: publicKey, padding: oaepContainerPadding, concurrency: 1)
    return sink.bytes
}
let oaepContainers = [try oaepContainer(), try oaepContainer()]

let mark = mode != "none"
let random = PoisoningRandomSource(poison: mark)
if mark {
    key.poisonSecretsForHarness(keepGMPTableLimbs: mode != "ct-strict")
}
if mode == "plant" {
    key.withConstantTimeKeyHandleForHarness { rsakit_plant_attach_branching_kernel(UnsafeMutableRawPointer($0)) }
}
if mode == "plant-oaep" {
    RSAKitConstantTimeHarness.attachOAEPDecodeProbe(rsakit_plant_oaep_probe)
}

var ok = 0
var failed = 0
@MainActor func record(_ success: Bool) { if success { ok += 1 } else { failed += 1 } }

if mode == "mpz" {
    // The pre-rewrite path: RSADP on mpz (blinded, checked), then the same padding decode.
    for (ciphertext, message) in zip(ciphertexts, messages) {
        var em = try key.rsadpReferenceVarTime(ciphertext, random: random)
        let decoded = try? RSAHazmat.EMEPKCS1v15.decode(em)
        if let decoded { declassify(decoded) }
        record(decoded == message)
        em.withUnsafeMutableBytes { for i in $0.indices { $0[i] = 0 } }
    }
} else {
    // 1. Decrypt through the public API (RSADP + EME-PKCS1-v1_5 decode).
    for (ciphertext, message) in zip(ciphertexts, messages) {
        let decoded = try? key.decrypt(ciphertext, random: random)
        if let decoded { declassify(decoded) }
        record(decoded == message)
    }
    // 2. Edge inputs: decrypt must fail (opaquely) for all of them; RSADP must succeed.
    for input in edgeInputs {
        record((try? key.decrypt(input, random: random)) == nil)
        let m = try RSAHazmat.rsadp(input, key: key, random: random)
        declassify(m)
        record(try RSAHazmat.rsaep(m, key: publicKey) == input)
    }
    // 2b. Implicit rejection (draft-irtf-cfrg-rsa-guidance §7): valid ciphertexts give their
    //     message; the broken EMs of step 5 (but the first), encrypted, give a synthetic message (no error),
    //     the same twice. The synthetic message is derived from the marked d.
    for (ciphertext, message) in zip(ciphertexts, messages).prefix(4) {
        let decoded = try? key.decrypt(ciphertext, rejection: .implicit, random: random)
        if let decoded { declassify(decoded) }
        record(decoded == message)
    }
    // (badEMs[0] starts with 0xFF: no ciphertext has it.)
    for ciphertext in try badEMs.dropFirst().map({ try RSAHazmat.rsaep($0, key: publicKey) }) + [edgeInputs[3]] {
        let first = try? key.decrypt(ciphertext, rejection: .implicit, random: random)
        let second = try? key.decrypt(ciphertext, rejection: .implicit, random: random)
        if let first { declassify(first) }
        if let second { declassify(second) }
        record(first != nil && first == second && first!.count <= k - 11)
    }
    // 3. The batch entry point, 8 blocks.
    // (Reached through the chunk pipeline once it hands over 8 blocks; called here directly.)
    let batch = Array(
        (ciphertexts + ciphertexts + ciphertexts + ciphertexts + ciphertexts + ciphertexts + ciphertexts + ciphertexts)
            .prefix(8))
    for (j, m) in try key.rsadpBatchForHarness(batch, random: random).enumerated() {
        declassify(m)
        record(try RSAHazmat.rsaep(m, key: publicKey) == batch[j])
    }
    // 4. The container: decrypt, frame checks, verdict.
    var source = RSAArrayByteSource(Array(container[RSAMessageContainer.headerByteCount...]))
    var sink = RSAArrayByteSink()
    let header = try RSAMessageContainer.Header(parsing: container)
    let decrypted = try? RSAMessageContainer.decrypt(
        header: header, from: &source, to: &sink, with: key, random: random, concurrency: 1)
    declassify(sink.bytes)
    record(decrypted == 4 && sink.bytes.count == 3 * RSAMessageContainer.payloadByteCount(blockSize: k) + 5)
    // 5. EME-PKCS1-v1_5 decode on marked EMs: one good, four broken.
    let decoded = try? RSAHazmat.EMEPKCS1v15.decode(mark ? poisoned(goodEM) : goodEM)
    if let decoded { declassify(decoded) }
    record(decoded == [1, 2, 3, 4, 5])
    for em in badEMs {
        record((try? RSAHazmat.EMEPKCS1v15.decode(mark ? poisoned(em) : em)) == nil)
    }
    // 6. RSAES-OAEP: decrypt (RSADP + EME-OAEP decode) of valid and broken ciphertexts, with
    //    the right and the wrong label; then EME-OAEP decode on marked EMs.
    for (oaep, invalidCiphertexts) in zip(oaepCases, oaepInvalidCiphertexts) {
        let padding = RSAEncryptionPadding.oaep(oaep.parameters)
        for (ciphertext, message) in oaep.valid {
            let decoded = try? key.decrypt(ciphertext, padding: padding, random: random)
            if let decoded { declassify(decoded) }
            record(decoded == message)
        }
        for ciphertext in invalidCiphertexts {
            record((try? key.decrypt(ciphertext, padding: padding, random: random)) == nil)
        }
        record((try? key.decrypt(oaep.valid[2].ciphertext, padding: .oaep(oaep.wrongLabel), random: random)) == nil)
        let decoded = try? RSAHazmat.EMEOAEP.decode(
            mark ? poisoned(oaep.goodEM) : oaep.goodEM, parameters: oaep.parameters)
        if let decoded { declassify(decoded) }
        record(decoded == oaep.goodMessage)
        for em in oaep.invalidEMs {
            record((try? RSAHazmat.EMEOAEP.decode(mark ? poisoned(em) : em, parameters: oaep.parameters)) == nil)
        }
    }
    // 7. An OAEP container: decrypt and frame checks; then the same body under another
    //    container's header (the frame check's digest comparison must fail, opaquely).
    for (headerFrom, bodyFrom) in [(0, 0), (1, 0)] {
        let header = try RSAMessageContainer.Header(parsing: oaepContainers[headerFrom])
        var source = RSAArrayByteSource(Array(oaepContainers[bodyFrom][header.byteCount...]))
        var sink = RSAArrayByteSink()
        let blocks = try? RSAMessageContainer.decrypt(
            header: header, from: &source, to: &sink, with: key, random: random, concurrency: 1)
        declassify(sink.bytes)
        if headerFrom == bodyFrom {
            record(blocks == 3 && sink.bytes == oaepPlaintext)
        } else {
            record(blocks == nil)
        }
    }
}
print(
    "harness mode=\(mode) bits=\(key.modulusBitCount) primes=\(key.primeCount) operations=\(ok + failed) ok=\(ok) "
        + "failed=\(failed) planted_taken=\(rsakit_plant_taken() + rsakit_plant_oaep_taken() > 0 ? "some" : "none") "
        + "valgrind=\(RSAKitConstantTimeHarness.isRunningOnValgrind)"
)
