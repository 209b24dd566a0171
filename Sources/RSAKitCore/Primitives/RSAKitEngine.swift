#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
internal import CRSAKitMontADX
internal import CRSAKitVector

/// Which code runs the exponentiations of RSA private-key operations (RSADP's
/// m1 = c^dP mod p and m2 = c^dQ mod q, RFC 8017 §5.1.2 step 2.b).
public enum RSAPrivateKeyPath: String, Sendable, Hashable, CaseIterable {
    /// GMP's constant-time exponentiation (`mpn_sec_powm`): every CPU.
    case gmp
    /// RSAKit's AVX-512 IFMA Montgomery kernel in radix 2^52 (primes of at most 2048 bits):
    /// eight blocks at once in chunked decryption, single-buffer for one block.
    case ifma
    /// RSAKit's Montgomery kernel in radix 2^64 on mulx/adcx/adox (BMI2 and ADX: Intel since
    /// Broadwell, AMD since Zen 1), primes of at most 4096 bits, one block at a time.
    case adx
}

/// Facts about RSAKit's arithmetic engine on this machine.
public enum RSAKitEngine {
    /// The private-key exponentiation path this process uses, decided once at first use.
    ///
    /// `RSAKIT_ENGINE=ifma|adx|gmp` in the environment forces one (for tests and
    /// measurement; a path the CPU cannot run makes every private key refuse with
    /// `RSAError.engineUnavailable`, and this property then says ``RSAPrivateKeyPath/gmp``).
    /// Otherwise the fastest the machine runs: ``RSAPrivateKeyPath/ifma`` when the CPU reports
    /// AVX-512 F, BW, VL, DQ and IFMA, the OS saves the zmm state (xgetbv), the environment
    /// does not set `RSAKIT_DISABLE_IFMA=1`, and the kernel passed its known-answer test;
    /// else ``RSAPrivateKeyPath/adx`` when the CPU reports BMI2 and ADX and that kernel
    /// passed its known-answer test; else ``RSAPrivateKeyPath/gmp``.
    ///
    /// Every path is constant-time in the key, blinded and checked; the choice depends only on
    /// the machine and the environment, never on a key or an input.
    public static var privateKeyPath: RSAPrivateKeyPath { (try? EngineSelection.selected.get()) ?? .gmp }

    /// One line saying which path runs and why (for `rsakit --version`), e.g.
    /// `adx (mulx/adcx/adox radix-2^64 Montgomery kernel; this CPU or OS has no AVX-512 IFMA)`,
    /// or `unavailable: ...` when `RSAKIT_ENGINE` forces a path this machine cannot run.
    public static var privateKeyPathDescription: String {
        switch EngineSelection.selected {
        case let .failure(error):
            return "unavailable: \(error.description)"
        case .success(.ifma):
            return String(cString: rsakit_vec_private_path_description())
        case .success(.adx):
            let why = EngineSelection.forced == .adx ? "RSAKIT_ENGINE=adx" : EngineSelection.whyNotIFMA
            return "adx (mulx/adcx/adox radix-2^64 Montgomery kernel; \(why))"
        case .success(.gmp):
            let why =
                EngineSelection.forced == .gmp
                ? "RSAKIT_ENGINE=gmp"
                : "\(EngineSelection.whyNotIFMA); \(EngineSelection.whyNotADX)"
            return "gmp (GMP constant-time exponentiation; \(why))"
        }
    }

    /// True when this CPU and OS could run the IFMA kernel (cpuid + xgetbv), whatever
    /// `RSAKIT_DISABLE_IFMA` says.
    public static var cpuSupportsIFMA: Bool { rsakit_vec_cpu_has_ifma() != 0 }

    /// True when this CPU has BMI2 and ADX, which the ADX kernel needs (cpuid leaf 7).
    public static var cpuSupportsADX: Bool { rsakit_adx_cpu_supported() != 0 }
}

/// The decision behind ``RSAKitEngine/privateKeyPath``, made once per process.
package enum EngineSelection {
    /// The path `RSAKIT_ENGINE` names, nil when it is unset or empty.
    static let forced: RSAPrivateKeyPath? = environmentValue().flatMap(RSAPrivateKeyPath.init(rawValue:))

    /// The path every private key of this process uses, or why none can (a forced path this
    /// machine cannot run, or an `RSAKIT_ENGINE` value that names none).
    package static let selected: Result<RSAPrivateKeyPath, RSAError> = decide()

    /// Why the IFMA kernel does not run, as the C dispatch decided it.
    static var whyNotIFMA: String {
        switch rsakit_vec_private_path() {
        case RSAKIT_VEC_PATH_GMP_DISABLED: return "the AVX-512 IFMA kernel is disabled by RSAKIT_DISABLE_IFMA"
        case RSAKIT_VEC_PATH_GMP_SELFTEST_FAILED: return "the AVX-512 IFMA kernel failed its known-answer test"
        case RSAKIT_VEC_PATH_GMP_UNOPTIMISED:
            return "the AVX-512 IFMA kernel was built without optimisation, as a dependency's debug build is"
        case RSAKIT_VEC_PATH_IFMA: return "RSAKIT_ENGINE chose another path"
        default: return "this CPU or OS has no AVX-512 IFMA"
        }
    }

    /// Why the ADX kernel does not run.
    static var whyNotADX: String {
        rsakit_adx_cpu_supported() == 0 ? "this CPU has no BMI2/ADX" : "the ADX kernel failed its known-answer test"
    }

    private static func environmentValue() -> String? {
        guard let value = getenv("RSAKIT_ENGINE").map({ String(cString: $0) }), !value.isEmpty else { return nil }
        return value
    }

    private static func decide() -> Result<RSAPrivateKeyPath, RSAError> {
        let ifma = rsakit_vec_private_path() == RSAKIT_VEC_PATH_IFMA
        let adx = rsakit_adx_usable() == 1
        guard let value = environmentValue() else {
            return .success(ifma ? .ifma : adx ? .adx : .gmp)
        }
        switch RSAPrivateKeyPath(rawValue: value) {
        case .gmp?:
            return .success(.gmp)
        case .ifma?:
            guard ifma else { return .failure(.engineUnavailable(reason: "RSAKIT_ENGINE=ifma, but \(whyNotIFMA)")) }
            return .success(.ifma)
        case .adx?:
            guard adx else { return .failure(.engineUnavailable(reason: "RSAKIT_ENGINE=adx, but \(whyNotADX)")) }
            return .success(.adx)
        case nil:
            return .failure(.engineUnavailable(reason: "RSAKIT_ENGINE=\(value) names no path: give ifma, adx or gmp"))
        }
    }
}
