internal import CGMP
internal import CRSAKitShims

/// The constant-time form of a private key: an owning wrapper over `rsakit_sec_key`
/// (Sources/CRSAKitShims/include/rsakit_secret.h), the private-key operation on GMP's
/// side-channel-silent `mpn_sec_*` layer (RFC 8017 §5.1.2, CRT over two or more primes,
/// blinded, checked by re-encryption).
///
/// Immutable after construction; `deinit` zeroes every limb. Safe to share across threads
/// (the C object is read-only; blinding pairs are separate ``SecretLimbs`` the caller owns).
internal final class ConstantTimeKey: @unchecked Sendable {
    private let key: OpaquePointer

    /// Outcome of one block, as the C layer reports it.
    enum Status: Equatable {
        case ok
        /// c >= n (public: c is the ciphertext).
        case outOfRange
        /// The re-encryption check failed (a fault), or r had no inverse (blinding).
        case checkFailed
        case badArgument

        init(_ code: Int32) {
            switch code {
            case RSAKIT_SEC_OK: self = .ok
            case RSAKIT_SEC_OUT_OF_RANGE: self = .outOfRange
            case RSAKIT_SEC_CHECK_FAILED: self = .checkFailed
            default: self = .badArgument
            }
        }
    }

    /// Most blocks one ``privateOperation(_:pairs:)`` batch takes (`RSAKIT_SEC_BATCH`).
    static let batchLimit = Int(RSAKIT_SEC_BATCH)

    /// The constant-time form of a validated key. `primes` in RFC 8017 order (p, q, r_3 ...),
    /// `exponents` d_i = d mod (r_i - 1), `coefficients` qInv then the t_i of
    /// otherPrimeInfos (primes.count - 1 of them). Nil when the shape is unusable.
    init?(n: BigNumber, e: BigNumber, primes: [BigNumber], exponents: [BigNumber], coefficients: [BigNumber]) {
        guard primes.count >= 2, primes.count <= Int(RSAKIT_SEC_MAX_PRIMES),
            exponents.count == primes.count, coefficients.count == primes.count - 1
        else { return nil }
        // Big-endian copies for the C constructor, wiped right after.
        var buffers: [[UInt8]] = [n.minimalBytes, e.minimalBytes]
        buffers += primes.map(\.minimalBytes) + exponents.map(\.minimalBytes) + coefficients.map(\.minimalBytes)
        defer { for i in buffers.indices { wipe(&buffers[i]) } }
        let created: OpaquePointer? = ConstantTimeKey.withOctets(buffers) { octets in
            let u = primes.count
            let primeOctets = Array(octets[2..<(2 + u)])
            let exponentOctets = Array(octets[(2 + u)..<(2 + 2 * u)])
            let coefficientOctets = Array(octets[(2 + 2 * u)...])
            return rsakit_sec_key_create(octets[0], octets[1], u, primeOctets, exponentOctets, coefficientOctets)
        }
        guard let created else { return nil }
        key = created
    }

    deinit { rsakit_sec_key_destroy(key) }

    /// Attach a kernel that returns one wrong residue bit (a simulated fault in a CRT
    /// half), so that tests can see the re-encryption check refuse the result. Tests only;
    /// the key must not be shared.
    func attachFaultyKernelForTests() {
        let faulty: rsakit_sec_powm_kernel = { context, key, count, bases, residues in
            let status = rsakit_sec_crt_powm_gmp(context, key, count, bases, residues)
            if let first = residues?[0] { first[0] ^= 1 }
            return status
        }
        rsakit_sec_key_set_kernel(key, faulty, nil, nil)
    }

    /// The C handle, for the constant-time harness's test kernel.
    func withHandle<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R { try body(key) }

    /// Run `body` with `rsakit_sec_octets` views of every buffer (valid only inside).
    private static func withOctets<R>(_ buffers: [[UInt8]], _ body: ([rsakit_sec_octets]) -> R) -> R {
        var octets: [rsakit_sec_octets] = []
        func nest(_ index: Int) -> R {
            if index == buffers.count { return body(octets) }
            return buffers[index].withUnsafeBufferPointer { buffer in
                octets.append(rsakit_sec_octets(bytes: buffer.baseAddress, length: buffer.count))
                return nest(index + 1)
            }
        }
        return nest(0)
    }

    /// k, the modulus length in octets.
    var modulusByteCount: Int { Int(rsakit_sec_key_modulus_bytes(key)) }

    /// Limbs of one blinding pair (vf then vi).
    var blindingLimbCount: Int { Int(rsakit_sec_blinding_limbs(key)) }

    /// Random octets a fresh blinding pair needs (2 (k + 8): r and the inversion's blind).
    var blindingRandomByteCount: Int { Int(rsakit_sec_blinding_random_bytes(key)) }

    /// A fresh pair (r^e, r^-1) mod n from OS randomness, r = random mod n (constant-time in
    /// r: `mpn_sec_div_r`, `mpn_sec_powm`; r^-1 by a blinded inversion, t = r s mod n for a
    /// second secret random s inverted by `mpz_invert`, then t^-1 s, as BoringSSL's
    /// `bn_mod_inverse_blinded`). Draws again in the (negligible) case that r s has no inverse.
    func freshBlindingPair(random: RSARandomSource) -> SecretLimbs {
        let pair = SecretLimbs(count: blindingLimbCount)
        var bytes = [UInt8](repeating: 0, count: blindingRandomByteCount)
        defer { wipe(&bytes) }
        while true {
            bytes.withUnsafeMutableBytes { random.fill($0) }
            let status = bytes.withUnsafeBufferPointer { buffer in
                rsakit_sec_blinding_create(key, pair.limbs, buffer.baseAddress, buffer.count)
            }
            if status == RSAKIT_SEC_OK { return pair }
        }
    }

    /// Every pair = (vf^2, vi^2) mod n (again a valid pair, for r^2), in one call for up to
    /// ``batchLimit`` pairs (`rsakit_sec_blinding_square_batch`: on the eight-lane kernel for
    /// three or more where one is attached, else `mpn_sec_sqr`, `mpn_sec_div_r`). Constant-time.
    func square(_ pairs: [SecretLimbs]) {
        precondition(pairs.count <= ConstantTimeKey.batchLimit)
        var pointers: [UnsafeMutablePointer<mp_limb_t>?] = pairs.map { $0.limbs }
        rsakit_sec_blinding_square_batch(key, pairs.count, &pointers)
    }

    /// The blinded, checked private operation on up to ``batchLimit`` k-byte blocks, one
    /// pair each: `outputs[j]` = I2OSP(c_j^d mod n, k), zeroed unless the status is `.ok`.
    func privateOperation(_ inputs: [[UInt8]], pairs: [SecretLimbs]) -> [(status: Status, output: [UInt8])] {
        precondition(inputs.count == pairs.count && inputs.count >= 1 && inputs.count <= ConstantTimeKey.batchLimit)
        let k = modulusByteCount
        guard inputs.allSatisfy({ $0.count == k }) else {
            return inputs.map { _ in (Status.badArgument, []) }
        }
        let count = inputs.count
        let output = SecretBytes(count: count * k)
        var status = [Int32](repeating: RSAKIT_SEC_BAD_ARGUMENT, count: count)
        let joined = inputs.flatMap { $0 }
        joined.withUnsafeBufferPointer { input in
            var inPointers: [UnsafePointer<UInt8>?] = (0..<count).map { input.baseAddress! + $0 * k }
            var outPointers: [UnsafeMutablePointer<UInt8>?] = (0..<count).map { output.baseAddress + $0 * k }
            var pairPointers: [UnsafePointer<mp_limb_t>?] = pairs.map { UnsafePointer($0.limbs) }
            _ = rsakit_sec_private_batch(key, count, &outPointers, &inPointers, k, &pairPointers, &status)
        }
        return (0..<count).map { j in
            (Status(status[j]), Array(UnsafeBufferPointer(start: output.baseAddress + j * k, count: k)))
        }
    }

    /// The bare CRT exponentiation (no blinding, no check): benchmarks and tests only.
    func unprotectedCRT(_ input: [UInt8]) -> (status: Status, output: [UInt8]) {
        let k = modulusByteCount
        var out = [UInt8](repeating: 0, count: k)
        let code = input.withUnsafeBufferPointer { inBuffer in
            out.withUnsafeMutableBufferPointer { outBuffer in
                rsakit_sec_crt_unprotected(key, outBuffer.baseAddress, k, inBuffer.baseAddress, inBuffer.count)
            }
        }
        return (Status(code), out)
    }

    /// Mark every secret limb of the key undefined for valgrind's memcheck (the
    /// constant-time harness). `keepGMPTableLimbs` leaves defined, as Nettle's
    /// sc-rsa-sec-decrypt test does, the lowest and the top two limbs of each prime: GMP's
    /// `binvert_limb` (in mpn_sec_powm) and `invert_limb` (in mpn_sec_div_r) index small
    /// tables by them. A no-op outside valgrind.
    func poisonForHarness(keepGMPTableLimbs: Bool) {
        rsakit_sec_key_poison(key, keepGMPTableLimbs ? 1 : 0)
    }
}

/// Limbs holding secrets (a blinding pair): allocated zeroed, zeroed again when freed.
internal final class SecretLimbs: @unchecked Sendable {
    let limbs: UnsafeMutablePointer<mp_limb_t>
    let count: Int

    init(count: Int) {
        self.count = count
        limbs = .allocate(capacity: count)
        limbs.initialize(repeating: 0, count: count)
    }

    /// A copy with its own limbs.
    init(copying other: SecretLimbs) {
        count = other.count
        limbs = .allocate(capacity: count)
        limbs.initialize(from: other.limbs, count: count)
    }

    deinit {
        rsakit_secure_zero(limbs, count * MemoryLayout<mp_limb_t>.stride)
        limbs.deallocate()
    }

    /// Mark the limbs undefined for memcheck (the harness's blinding factor).
    func poisonForHarness() {
        rsakit_ct_poison(limbs, count * MemoryLayout<mp_limb_t>.stride)
    }
}
