internal import CRSAKitVector

/// Which code runs the exponentiations of RSA private-key operations (RSADP's
/// m1 = c^dP mod p and m2 = c^dQ mod q, RFC 8017 §5.1.2 step 2.b).
public enum RSAPrivateKeyPath: String, Sendable, Hashable, CaseIterable {
    /// GMP's constant-time exponentiation (`mpz_powm_sec`): every CPU.
    case gmp
    /// RSAKit's AVX-512 IFMA Montgomery kernel in radix 2^52 (primes of at most 2048 bits):
    /// eight blocks at once in chunked decryption, single-buffer for one block.
    case ifma
}

/// Facts about RSAKit's arithmetic engine on this machine.
public enum RSAKitEngine {
    /// The private-key exponentiation path this process uses, decided once at first use:
    /// ``RSAPrivateKeyPath/ifma`` when the CPU reports AVX-512 F, BW, VL, DQ and IFMA, the OS
    /// saves the zmm state (xgetbv), the environment does not set `RSAKIT_DISABLE_IFMA=1`,
    /// and the kernel passed its known-answer test (a product and a squaring of each kind in
    /// each size class, compared with the portable reference's digest: microseconds);
    /// ``RSAPrivateKeyPath/gmp`` otherwise.
    ///
    /// Both paths are constant-time in the key and blinded; the choice depends only on the
    /// machine and the environment, never on a key or an input.
    public static var privateKeyPath: RSAPrivateKeyPath {
        rsakit_vec_private_path() == RSAKIT_VEC_PATH_IFMA ? .ifma : .gmp
    }

    /// One line saying which path runs and why (for `rsakit --version`), e.g.
    /// `gmp (GMP constant-time exponentiation; this CPU or OS has no AVX-512 IFMA)`.
    public static var privateKeyPathDescription: String {
        String(cString: rsakit_vec_private_path_description())
    }

    /// True when this CPU and OS could run the IFMA kernel (cpuid + xgetbv), whatever
    /// `RSAKIT_DISABLE_IFMA` says.
    public static var cpuSupportsIFMA: Bool { rsakit_vec_cpu_has_ifma() != 0 }
}
