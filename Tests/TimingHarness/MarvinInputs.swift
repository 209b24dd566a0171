// The classes of encoded messages the PKCS#1 v1.5 targets decrypt, after the Marvin
// attack's test classes (Kario, 2023): a valid EM with one field broken at a time, built by
// hand and encrypted with RSAEP, so that the timed region holds only the decryption.
//
//     EM = 0x00 || 0x02 || PS || 0x00 || M      (k octets, PS at least 8 non-zero octets)

import RSAKit

/// One kind of EM (a class of a target).
enum MarvinClass: String, CaseIterable {
    /// Valid, M of 48 octets (a TLS premaster secret's length).
    case valid48 = "valid M=48"
    /// A random c in [1, n): almost surely no structure at all.
    case random = "random c"
    /// valid48 with EM[0] != 0x00.
    case firstByte = "EM[0]!=00"
    /// valid48 with EM[1] != 0x02.
    case secondByte = "EM[1]!=02"
    /// No 0x00 after EM[1]: no separator.
    case noSeparator = "no separator"
    /// A 0x00 among the first 8 octets of PS (PS too short).
    case shortPS = "PS<8"
    /// Valid, the separator at EM[k-1]: M empty.
    case separatorLast = "separator last (M=0)"
    /// Valid, M of k - 11 octets (the longest).
    case maximumLength = "M=k-11"

    /// Whether RSAES-PKCS1-v1_5 decryption of this class succeeds.
    var isValid: Bool { [.valid48, .separatorLast, .maximumLength].contains(self) }

    /// The length of the M encoded (before a field is broken).
    func messageLength(k: Int) -> Int {
        switch self {
        case .separatorLast: 0
        case .maximumLength: k - 11
        default: 48
        }
    }
}

/// `count` non-zero random octets.
func nonZeroBytes(_ count: Int, using generator: inout SystemRandomNumberGenerator) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: 1...255, using: &generator) }
}

/// An EM of class `kind` for a k-octet modulus whose top octet is `topOctet`, fresh
/// random PS and M each call.
func pkcs1EM(_ kind: MarvinClass, k: Int, topOctet: UInt8, using generator: inout SystemRandomNumberGenerator)
    -> [UInt8]
{
    let messageLength = kind.messageLength(k: k)
    let message = (0..<messageLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
    var em: [UInt8] = [0x00, 0x02] + nonZeroBytes(k - messageLength - 3, using: &generator) + [0x00] + message
    switch kind {
    case .firstByte:
        // Any non-zero octet that keeps EM < n.
        em[0] = UInt8.random(in: 1..<max(2, topOctet), using: &generator)
    case .secondByte:
        em[1] = ([0x00, 0x01, 0x03, 0x82, 0xFF] as [UInt8]).randomElement(using: &generator)!
    case .noSeparator:
        em.replaceSubrange(2..<k, with: nonZeroBytes(k - 2, using: &generator))
    case .shortPS:
        em[2 + Int.random(in: 0..<8, using: &generator)] = 0x00
    case .random:
        // A uniform EM below n is a uniform c (RSAEP is a permutation); redrawn in the
        // rare case (about 1 in 2^15) that it happens to be valid.
        repeat {
            em = (0..<k).map { _ in UInt8.random(in: 0...255, using: &generator) }
            em[0] = UInt8.random(in: 0..<topOctet, using: &generator)
        } while (try? RSAHazmat.EMEPKCS1v15.decode(em)) != nil
    case .valid48, .separatorLast, .maximumLength:
        break
    }
    return em
}

/// A fresh ciphertext of class `kind` under `key` (RSAEP of a hand-built EM).
func pkcs1Ciphertext(_ kind: MarvinClass, key: RSAPublicKey) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    let em = pkcs1EM(kind, k: key.modulusByteCount, topOctet: key.modulus.first ?? 0xFF, using: &generator)
    // EM < n by construction (EM[0] below n's top octet): RSAEP cannot fail.
    return try! RSAHazmat.rsaep(em, key: key)
}

/// `count` random octets.
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}
