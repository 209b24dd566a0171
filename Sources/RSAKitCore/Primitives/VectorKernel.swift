internal import CRSAKitMontADXSeam
internal import CRSAKitVector

/// Which implementation of the radix-2^52 Montgomery exponentiation (CRSAKitVector) a key's
/// constant-time private path uses as its kernel (the seam of `rsakit_secret.h`).
internal enum VectorImplementation: Sendable, Equatable {
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

/// Attaching a kernel to a key's constant-time form.
internal enum VectorKernel {
    /// Attach `implementation` (or, when nil, the IFMA kernel if the dispatch runs it) to
    /// `secret`, which must not be shared yet. Returns the implementation attached, or nil
    /// when the key stays on GMP (no IFMA, `RSAKIT_DISABLE_IFMA`, a prime above 2048 bits).
    static func attach(to secret: ConstantTimeKey, implementation: VectorImplementation?) -> VectorImplementation? {
        let chosen: VectorImplementation
        if let implementation {
            chosen = implementation
        } else {
            guard RSAKitEngine.privateKeyPath == .ifma else { return nil }
            chosen = .ifma
        }
        let status = secret.withHandle { rsakit_vec_sec_attach($0, chosen.c) }
        return status == 0 ? chosen : nil
    }

    /// Attach the ADX kernel (radix 2^64, mulx/adcx/adox) to `secret`, which must not be
    /// shared yet: its exponentiations, re-encryption check and blinding products. False when
    /// the key stays on GMP (no BMI2/ADX, a prime above 4096 bits).
    static func attachADX(to secret: ConstantTimeKey) -> Bool {
        secret.withHandle { rsakit_adx_sec_attach($0) } == 0
    }
}

extension RSAPrivateKey {
    /// A key over an existing storage (the copy of ``withVectorKernel(_:)``).
    private init(storage: PrivateKeyStorage, publicKey: RSAPublicKey) {
        self.storage = storage
        self.publicKey = publicKey
    }

    /// A copy of this key whose private operations run on `implementation` of the vector
    /// kernel (tests of the IFMA path's integration on any CPU), or nil when it cannot attach.
    internal func withVectorKernel(_ implementation: VectorImplementation) throws -> RSAPrivateKey? {
        let s = storage
        let storage = try PrivateKeyStorage(
            n: s.n, e: s.e, d: s.d, p: s.p, q: s.q, dP: s.dP, dQ: s.dQ, qInv: s.qInv,
            otherPrimes: s.otherPrimes, vector: implementation)
        guard storage.vectorKernel == implementation else { return nil }
        return RSAPrivateKey(storage: storage, publicKey: publicKey)
    }
}

extension ConstantTimeKey {
    /// Re-attach `implementation` of the vector kernel with a simulated fault (one residue
    /// bit flipped per call), the re-encryption check staying on the kernel where n has at
    /// most 2048 bits. Tests only; the key must not be shared. Returns false when it cannot
    /// attach.
    func attachFaultyVectorKernelForTests(_ implementation: VectorImplementation) -> Bool {
        withHandle { rsakit_vec_sec_attach_faulty_for_tests($0, implementation.c) } == 0
    }
}
