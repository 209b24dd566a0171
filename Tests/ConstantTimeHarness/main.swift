// The constant-time harness: runs RSAKit's private-key path with every secret marked
// undefined for valgrind's memcheck, so that any branch, conditional move or memory index
// computed from a secret is reported ("Conditional jump or move depends on uninitialised
// value(s)", "Use of uninitialised value"). Run it as
//
//     valgrind --tool=memcheck .build/debug/ConstantTimeHarness MODE KEY.pem [OPERATIONS]
//
// MODE:
//   ct         the constant-time path: decrypt (valid and invalid padding, c = 0, 1, n - 1),
//              RSADP, the batch of 8, the container frame check, EME-PKCS1-v1_5 decode on
//              marked EMs. Expected: 0 reports.
//   ct-strict  as ct, but with every limb of the primes marked (GMP's own invert_limb and
//              binvert_limb table lookups on the top and lowest limbs are then reported).
//   mpz        the pre-rewrite mpz path (rsadpReferenceVarTime) with the same secrets marked.
//   plant      as ct, with a kernel attached that branches once on a secret limb: must report.
//   none       as ct without marking anything (the harness's own noise: must be 0).
//
// Secrets marked: d, p, q, dP, dQ, qInv (and otherPrimeInfos) in both the constant-time
// key and the mpz components; the blinding factor (every random byte the blinding draws);
// the EMs given to the padding decode. The outputs are declassified only where RSAKit
// returns them to its caller (the decrypted message, the RSADP result).
// Prints one line "harness mode=... operations=N ok=N failed=N" on stdout; exit 0.

import Foundation
@_spi(ConstantTimeHarness) import RSAKit
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
    FileHandle.standardError.write(Data("usage: ConstantTimeHarness ct|ct-strict|mpz|plant|none KEY.pem [OPERATIONS]\n".utf8))
    exit(64)
}
let mode = arguments[1]
guard ["ct", "ct-strict", "mpz", "plant", "none"].contains(mode) else {
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
    [UInt8](repeating: 0, count: k),                        // c = 0
    [UInt8](repeating: 0, count: k - 1) + [1],              // c = 1
    [UInt8](repeating: 0, count: k - nMinus1.count) + nMinus1, // c = n - 1
    try publicKey.rsaep([0x00, 0x01] + [UInt8](repeating: 0xFF, count: k - 2)), // bad padding
]
let container: [UInt8] = try {
    var source = ArrayByteSource([UInt8]((0..<(3 * MessageContainer.payloadByteCount(blockSize: k) + 5)).map { UInt8(truncatingIfNeeded: $0) }))
    var sink = ArrayByteSink()
    try MessageContainer.encrypt(from: &source, to: &sink, with: publicKey, concurrency: 1)
    return sink.bytes
}()
let goodEM: [UInt8] = [0x00, 0x02] + [UInt8](repeating: 0x5A, count: k - 8) + [0x00] + [1, 2, 3, 4, 5]
var badEMs: [[UInt8]] = []
for position in [0, 1, 5, k - 6] {
    var em = goodEM
    em[position] ^= (position == k - 6) ? 0x00 : 0xFF
    if position == 5 { em[5] = 0 }           // a zero inside the first 8 octets of PS
    if position == k - 6 { em[k - 6] = 0x11 } // no separator
    badEMs.append(em)
}

let mark = mode != "none"
let random = PoisoningRandomSource(poison: mark)
if mark {
    key.poisonSecretsForHarness(keepGMPTableLimbs: mode != "ct-strict")
}
if mode == "plant" {
    key.withConstantTimeKeyHandleForHarness { rsakit_plant_attach_branching_kernel(UnsafeMutableRawPointer($0)) }
}

var ok = 0
var failed = 0
@MainActor func record(_ success: Bool) { if success { ok += 1 } else { failed += 1 } }

if mode == "mpz" {
    // The pre-rewrite path: RSADP on mpz (blinded, checked), then the same padding decode.
    for (ciphertext, message) in zip(ciphertexts, messages) {
        var em = try key.rsadpReferenceVarTime(ciphertext, random: random)
        let decoded = try? EMEPKCS1v15.decode(em)
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
        let m = try key.rsadp(input, random: random)
        declassify(m)
        record(try publicKey.rsaep(m) == input)
    }
    // 3. The batch entry point, 8 blocks.
    // (Reached through the chunk pipeline once it hands over 8 blocks; called here directly.)
    let batch = Array((ciphertexts + ciphertexts + ciphertexts + ciphertexts + ciphertexts + ciphertexts + ciphertexts + ciphertexts).prefix(8))
    for (j, m) in try key.rsadpBatchForHarness(batch, random: random).enumerated() {
        declassify(m)
        record(try publicKey.rsaep(m) == batch[j])
    }
    // 4. The container: decrypt, frame checks, verdict.
    var source = ArrayByteSource(Array(container[MessageContainer.headerByteCount...]))
    var sink = ArrayByteSink()
    let header = try MessageContainer.Header(parsing: container)
    let decrypted = try? MessageContainer.decrypt(header: header, from: &source, to: &sink, with: key, random: random, concurrency: 1)
    declassify(sink.bytes)
    record(decrypted == 4 && sink.bytes.count == 3 * MessageContainer.payloadByteCount(blockSize: k) + 5)
    // 5. EME-PKCS1-v1_5 decode on marked EMs: one good, four broken.
    let decoded = try? EMEPKCS1v15.decode(mark ? poisoned(goodEM) : goodEM)
    if let decoded { declassify(decoded) }
    record(decoded == [1, 2, 3, 4, 5])
    for em in badEMs {
        record((try? EMEPKCS1v15.decode(mark ? poisoned(em) : em)) == nil)
    }
}
print("harness mode=\(mode) bits=\(key.modulusBitCount) primes=\(key.primeCount) operations=\(ok + failed) ok=\(ok) failed=\(failed) planted_taken=\(rsakit_plant_taken() > 0 ? "some" : "none") valgrind=\(RSAKitConstantTimeHarness.isRunningOnValgrind)")
