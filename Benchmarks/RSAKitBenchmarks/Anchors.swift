import CRSAKitAnchors
import RSAKit

/// The C reference CRT exponentiation (mpz_powm_sec, no blinding or check) on one key's input.
final class AnchorCRT {
    private let handle: OpaquePointer
    private let byteCount: Int

    init(_ key: BenchmarkKey) throws {
        let k = key.privateKey
        let components = [k.prime1, k.prime2, k.exponent1, k.exponent2, k.coefficient, key.ciphertext]
        let made = components[0].withUnsafeBufferPointer { p in
            components[1].withUnsafeBufferPointer { q in
                components[2].withUnsafeBufferPointer { dp in
                    components[3].withUnsafeBufferPointer { dq in
                        components[4].withUnsafeBufferPointer { qinv in
                            components[5].withUnsafeBufferPointer { c in
                                rsakit_anchor_crt_create(
                                    p.baseAddress, p.count, q.baseAddress, q.count,
                                    dp.baseAddress, dp.count, dq.baseAddress, dq.count,
                                    qinv.baseAddress, qinv.count, c.baseAddress, c.count)
                            }
                        }
                    }
                }
            }
        }
        guard let made else { throw BenchmarkFailure(description: "anchor-crt: bad key components") }
        handle = made
        byteCount = k.modulusByteCount
    }

    deinit { rsakit_anchor_crt_destroy(handle) }

    func run(_ count: Int) { rsakit_anchor_crt_run(handle, count) }

    /// The last result, k bytes (nil before the first run).
    var result: [UInt8]? {
        var out = [UInt8](repeating: 0, count: byteCount)
        let status = out.withUnsafeMutableBufferPointer { rsakit_anchor_crt_result(handle, $0.baseAddress, $0.count) }
        return status == 0 ? out : nil
    }
}

/// The C reference public exponentiation (mpz_powm with e) on one key's input.
final class AnchorPublic {
    private let handle: OpaquePointer
    private let byteCount: Int

    init(_ key: BenchmarkKey) throws {
        let n = key.publicKey.modulus, e = key.publicKey.publicExponent, m = key.encodedMessage
        let made = n.withUnsafeBufferPointer { nb in
            e.withUnsafeBufferPointer { eb in
                m.withUnsafeBufferPointer { mb in
                    rsakit_anchor_public_create(
                        nb.baseAddress, nb.count, eb.baseAddress, eb.count,
                        mb.baseAddress, mb.count)
                }
            }
        }
        guard let made else { throw BenchmarkFailure(description: "anchor-public: bad key") }
        handle = made
        byteCount = key.publicKey.modulusByteCount
    }

    deinit { rsakit_anchor_public_destroy(handle) }

    func run(_ count: Int) { rsakit_anchor_public_run(handle, count) }

    var result: [UInt8]? {
        var out = [UInt8](repeating: 0, count: byteCount)
        let status = out.withUnsafeMutableBufferPointer {
            rsakit_anchor_public_result(handle, $0.baseAddress, $0.count)
        }
        return status == 0 ? out : nil
    }
}

/// The plain GMP key generator (gmp_randstate Mersenne Twister, mpz_probab_prime_p).
/// A speed reference only: its keys are checked for consistency and thrown away.
final class AnchorKeyGenerator {
    /// Repetitions passed to mpz_probab_prime_p. GMP 6.2 runs a Baillie-PSW test and then
    /// reps - 24 extra Miller-Rabin rounds, so 25 is BPSW plus one round.
    static let reps: Int32 = 25

    private let handle: OpaquePointer

    init() throws {
        var seed: UInt64 = 0
        withUnsafeMutableBytes(of: &seed) { SystemRandomSource().fill($0) }
        guard let made = rsakit_anchor_keygen_create(seed) else {
            throw BenchmarkFailure(description: "anchor-keygen: out of memory")
        }
        handle = made
    }

    deinit { rsakit_anchor_keygen_destroy(handle) }

    /// Generate one key of `bits` bits with e = 65537.
    func generate(bits: Int) {
        _ = rsakit_anchor_keygen_run(handle, UInt32(bits), 65537, AnchorKeyGenerator.reps)
    }

    /// Check the last key: n has `bits` bits and every CRT relation holds.
    func checkLastKey(bits: Int) throws {
        guard rsakit_anchor_keygen_last_modulus_bits(handle) == bits,
            rsakit_anchor_keygen_last_key_consistent(handle) == 1
        else {
            throw BenchmarkFailure(description: "anchor-keygen produced an inconsistent \(bits)-bit key")
        }
    }
}
