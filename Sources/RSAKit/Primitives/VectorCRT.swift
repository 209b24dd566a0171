internal import CRSAKitVector

/// Which implementation of the radix-2^52 Montgomery exponentiation a ``VectorCRT`` runs.
internal enum VectorImplementation: Sendable {
    /// The portable C reference (scalar products): correctness and valgrind; slower than GMP.
    case reference
    /// The AVX-512 IFMA kernel (only where ``RSAKitEngine/cpuSupportsIFMA``).
    case ifma
    /// The kernel's source over a scalar emulation of its vector operations (tests only).
    case ifmaEmulated

    var c: rsakit_vec_impl {
        switch self {
        case .reference: return RSAKIT_VEC_IMPL_REFERENCE
        case .ifma: return RSAKIT_VEC_IMPL_IFMA
        case .ifmaEmulated: return RSAKIT_VEC_IMPL_IFMA_EMULATED
        }
    }
}

/// The two CRT exponentiations of RSADP (RFC 8017 §5.1.2 step 2.b i-ii),
/// m1 = c^dP mod p and m2 = c^dQ mod q, on the CRSAKitVector kernel: one block
/// (single-buffer) or up to eight blocks of one key at once (multi-buffer, one lane each).
///
/// Per-prime constants (-p^-1 mod 2^52, R^2 mod p) are computed once, in constant time, when
/// the key's storage is built. The exponentiations are constant-time in c, dP, dQ, p and q;
/// the reductions c mod p, c mod q stay GMP's `mpz_mod` as on the GMP path, on a blinded c.
///
/// Thread safety (`@unchecked Sendable`): every stored property is immutable after `init`;
/// the C contexts are read-only after creation (documented shareable in rsakit_vector.h)
/// and the exponent limbs are written only in `init` and `deinit`.
internal final class VectorCRT: @unchecked Sendable {
    let implementation: VectorImplementation
    private let pContext: OpaquePointer
    private let qContext: OpaquePointer
    private let pLimbs: Int
    private let qLimbs: Int
    private let p: BigNumber
    private let q: BigNumber
    /// dP (pLimbs limbs) then dQ (qLimbs limbs); zeroed in deinit.
    private let exponents: UnsafeMutableBufferPointer<UInt64>

    /// nil when a prime has more than 2048 bits (GMP serves those) or memory runs out.
    init?(p: BigNumber, q: BigNumber, dP: BigNumber, dQ: BigNumber, implementation: VectorImplementation) {
        let pl = p.limbCount, ql = q.limbCount
        // Odd primes with their trimmed limb counts: what rsakit_vec_modulus_create requires.
        guard p.isOdd, q.isOdd, pl >= 1, ql >= 1, pl <= Int(RSAKIT_VEC_MAX_LIMBS), ql <= Int(RSAKIT_VEC_MAX_LIMBS) else { return nil }
        var pArray = p.limbs(count: pl), qArray = q.limbs(count: ql)
        guard let pc = rsakit_vec_modulus_create(&pArray, pl) else { return nil }
        guard let qc = rsakit_vec_modulus_create(&qArray, ql) else {
            rsakit_vec_modulus_destroy(pc)
            return nil
        }
        pArray.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        qArray.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        let storage = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: pl + ql)
        var dPLimbs = dP.limbs(count: pl), dQLimbs = dQ.limbs(count: ql)
        for i in 0..<pl { storage[i] = dPLimbs[i] }
        for i in 0..<ql { storage[pl + i] = dQLimbs[i] }
        dPLimbs.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        dQLimbs.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        self.implementation = implementation
        self.pContext = pc
        self.qContext = qc
        self.pLimbs = pl
        self.qLimbs = ql
        self.p = p
        self.q = q
        self.exponents = storage
    }

    deinit {
        rsakit_vec_modulus_destroy(pContext)
        rsakit_vec_modulus_destroy(qContext)
        exponents.update(repeating: 0)
        exponents.deallocate()
    }

    /// The context the dispatch chooses for a key: the IFMA kernel when
    /// ``RSAKitEngine/privateKeyPath`` is ``RSAPrivateKeyPath/ifma``, else nil (GMP path).
    static func forDispatch(p: BigNumber, q: BigNumber, dP: BigNumber, dQ: BigNumber) -> VectorCRT? {
        guard RSAKitEngine.privateKeyPath == .ifma else { return nil }
        return VectorCRT(p: p, q: q, dP: dP, dQ: dQ, implementation: .ifma)
    }

    /// (m1, m2) for each c in `bases` (1 to 8 values, each 0 <= c < n). One value runs the
    /// single-buffer kernel; several run one multi-buffer call per prime (unused lanes 0).
    func exponentiate(_ bases: [BigNumber]) -> [(m1: BigNumber, m2: BigNumber)] {
        precondition((1...Int(RSAKIT_VEC_LANES)).contains(bases.count))
        let m1 = powm(bases.map { $0.mod(p) }, context: pContext, limbs: pLimbs, exponentOffset: 0)
        let m2 = powm(bases.map { $0.mod(q) }, context: qContext, limbs: qLimbs, exponentOffset: pLimbs)
        return Array(zip(m1, m2)).map { (m1: $0.0, m2: $0.1) }
    }

    private func powm(_ residues: [BigNumber], context: OpaquePointer, limbs: Int, exponentOffset: Int) -> [BigNumber] {
        let lanes = Int(RSAKIT_VEC_LANES)
        let single = residues.count == 1
        let slots = single ? 1 : lanes
        let buffer = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: 2 * slots * limbs)
        buffer.initialize(repeating: 0)
        defer {
            buffer.update(repeating: 0)
            buffer.deallocate()
        }
        for (j, residue) in residues.enumerated() {
            var l = residue.limbs(count: limbs)
            for i in 0..<limbs { buffer[j * limbs + i] = l[i] }
            l.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        }
        let base = buffer.baseAddress!
        let result = base + slots * limbs
        let exponent = UnsafePointer(exponents.baseAddress! + exponentOffset)
        let status = single
            ? rsakit_vec_powm(implementation.c, context, result, base, exponent, limbs)
            : rsakit_vec_powm8(implementation.c, context, result, base, exponent, limbs)
        // Only an allocation failure or a CPU without the instructions makes it fail: both
        // are faults, not input-dependent. The re-encryption check would catch a wrong value.
        precondition(status == 0, "vector exponentiation failed (allocation or CPU support)")
        return (0..<residues.count).map { j in
            BigNumber(limbs: UnsafeBufferPointer(start: result + j * limbs, count: limbs))
        }
    }
}
