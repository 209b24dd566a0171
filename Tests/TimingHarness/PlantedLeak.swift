// The planted leak: a PKCS#1 v1.5 decryption written the careless way, in the harness and
// never in RSAKit. It runs the real private-key operation (RSAKit's constant-time RSADP,
// blinded and checked), then returns early when EM does not start 0x00 0x02, skipping the
// rest of the padding check and the copy of M. The harness must report t > 4.5 for it, with
// the valid class (the longer path) slower: a difference of the other sign would be
// something else than the plant (scripts/timing.sh fails otherwise), or a clean verdict on
// the real targets means nothing.

import RSAKit

/// RSADP, then the early return, then RSAKit's own padding decode.
func plantedDecrypt(_ ciphertext: [UInt8], key: RSAPrivateKey) -> Bool {
    guard let em = try? RSAHazmat.rsadp(ciphertext, key: key) else { return false }
    // PLANTED LEAK: a branch on the first two octets of EM, a secret.
    guard em[0] == 0x00, em[1] == 0x02 else { return false }
    return (try? RSAHazmat.EMEPKCS1v15.decode(em)) != nil
}

/// The planted leak's target: valid M=48 against random c, as pkcs1-valid-vs-random.
func plantedTarget(key: RSAPrivateKey) -> TimingTarget {
    var target = decryptionTarget(
        "planted-early-return", classes: (MarvinClass.valid48.rawValue, MarvinClass.random.rawValue),
        make: { pkcs1Ciphertext($0 == 0 ? .valid48 : .random, key: key.publicKey) },
        expected: (true, false)
    ) { plantedDecrypt($0, key: key) }
    target.isPlanted = true
    return target
}
