// swift-tools-version:6.0
import PackageDescription

/// This folder, for linker inputs named by path (the PKCS#11 module's export list).
let packageDirectory = String(#filePath.dropLast("/Package.swift".count))

/// Whether SwiftPM is building this package as another package's dependency: checked out from
/// a URL (under that package's `.build/checkouts/`) or downloaded from a registry. SwiftPM
/// refuses unsafe flags in such a dependency ("contains unsafe build flags"), so the library
/// targets take theirs only when this package is the root or a path dependency. Set
/// RSAKIT_AS_DEPENDENCY=1 to build here exactly what a dependent package builds.
let builtAsDependency =
    ["/checkouts/", "/registry/downloads/"].contains { Context.packageDirectory.contains($0) }
    || Context.environment["RSAKIT_AS_DEPENDENCY"] == "1"

let package = Package(
    name: "rsakit",
    products: [
        // Everything, re-exported: `import RSAKit`.
        .library(name: "RSAKit", targets: ["RSAKit"]),
        // The layers on their own, for a package that needs less (and fewer C libraries):
        // the engine alone needs only GMP and Nettle. ARCHITECTURE.md draws the graph.
        .library(name: "RSAKitCore", targets: ["RSAKitCore"]),
        .library(name: "RSAKitPKI", targets: ["RSAKitPKI"]),
        .library(name: "RSAKitKeychain", targets: ["RSAKitKeychain"]),
        .library(name: "RSAKitTLS", targets: ["RSAKitTLS"]),
        .executable(name: "rsakit", targets: ["RSAKitCLI"]),
        // The PKCS#11 v2.40 module: `librsakit-pkcs11.so`, one slot per key store,
        // for p11-kit, GnuTLS, OpenSC's pkcs11-tool, OpenSSH and NSS (docs/mutual-tls.md).
        .library(name: "rsakit-pkcs11", type: .dynamic, targets: ["RSAKitPKCS11"]),
        // The command's and the module's logic, products only so that the separate Fuzz/
        // package can build its harnesses on them; their API is `@_spi(Fuzzing)`, not for use.
        .library(name: "_RSAKitCLI", targets: ["_RSAKitCLI"]),
        .library(name: "_RSAKitPKCS11", targets: ["_RSAKitPKCS11"])
    ],
    targets: [
        // GMP, the big-integer engine (libgmp-dev). Only RSAKit/BigInt and the shim import it.
        .systemLibrary(
            name: "CGMP",
            path: "Sources/CGMP",
            pkgConfig: "gmp",
            providers: [.apt(["libgmp-dev"])]
        ),
        // Nettle, for SHA-256 (fingerprints, the container) and other well-kept primitives.
        .systemLibrary(
            name: "CNettle",
            path: "Sources/CNettle",
            pkgConfig: "nettle",
            providers: [.apt(["nettle-dev"])]
        ),
        // libsodium (libsodium-dev): Argon2id and XChaCha20-Poly1305 for the keychain's secrets
        // at rest. Only RSAKit/Sodium imports it.
        .systemLibrary(
            name: "CSodium",
            path: "Sources/CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // GMP macros as real functions, fixed-length I2OSP, the zeroing allocator.
        .target(
            name: "CRSAKitShims",
            dependencies: ["CGMP"],
            path: "Sources/CRSAKitShims"
        ),
        // The layers, lowest first; each imports only the ones above it in this list, and the
        // build's import check (scripts/test.sh) refuses any other import.
        // The engine: big integers and kernels, padding, schemes, key formats, messages and
        // containers, RSAError.
        .target(
            name: "RSAKitCore",
            dependencies: [
                "CGMP", "CNettle", "CRSAKitShims", "CRSAKitVector", "CRSAKitVectorIFMA",
                "CRSAKitMontADX", "CRSAKitMontADXSeam"
            ],
            path: "Sources/RSAKitCore"
        ),
        // X.509, trust evaluation, revocation (OCSP, CRLs), PKCS#12 and key files that need
        // GnuTLS; HTTP for OCSP and CRL fetching.
        .target(
            name: "RSAKitPKI",
            dependencies: ["RSAKitCore", "CGnuTLS", "CCurl"],
            path: "Sources/RSAKitPKI"
        ),
        // The key store: items, sealing, passwords, the unlock agent, keys on PKCS#11 tokens.
        .target(
            name: "RSAKitKeychain",
            dependencies: ["RSAKitCore", "RSAKitPKI", "CRSAKitShims", "CSodium", "CP11Kit", "CTSS2"],
            path: "Sources/RSAKitKeychain"
        ),
        // The TLS client with a stored identity (mutual TLS), on GnuTLS through RSAKitPKI;
        // the HTTPS client, whose HTTP is libcurl (CCurl) over that TLS client.
        .target(
            name: "RSAKitTLS",
            dependencies: ["RSAKitCore", "RSAKitPKI", "RSAKitKeychain", "CCurl"],
            path: "Sources/RSAKitTLS"
        ),
        // `import RSAKit`: re-exports the four layers; holds the fuzzing entry points, which
        // reach into every layer.
        .target(
            name: "RSAKit",
            dependencies: ["RSAKitCore", "RSAKitPKI", "RSAKitKeychain", "RSAKitTLS"],
            path: "Sources/RSAKit"
        ),
        // p11-kit's PKCS#11 header (libp11-kit-dev), headers only: the module's C ABI types,
        // and the client's (tokens as a keychain backend). Only CRSAKitPKCS11, RSAKitPKCS11
        // and RSAKit/PKCS11Client import it.
        .systemLibrary(
            name: "CP11Kit",
            path: "Sources/CP11Kit",
            pkgConfig: "p11-kit-1",
            providers: [.apt(["libp11-kit-dev"])]
        ),
        // The module's C face: C_GetFunctionList and the CK_FUNCTION_LIST table, every entry
        // a Swift `@_cdecl` function of _RSAKitPKCS11 (or "not supported").
        .target(
            name: "CRSAKitPKCS11",
            dependencies: ["CP11Kit"],
            path: "Sources/CRSAKitPKCS11"
        ),
        // The PKCS#11 module's logic: sessions, objects, attributes, mechanisms and login over
        // RSAKit (no crypto of its own), and its `@_cdecl` entry points.
        .target(
            name: "_RSAKitPKCS11",
            dependencies: ["RSAKit", "CRSAKitPKCS11", "CP11Kit"],
            path: "Sources/_RSAKitPKCS11"
        ),
        // librsakit-pkcs11.so: the link unit of _RSAKitPKCS11 and the C table, with the
        // shared object's linker settings.
        .target(
            name: "RSAKitPKCS11",
            dependencies: ["_RSAKitPKCS11"],
            path: "Sources/RSAKitPKCS11",
            // Release builds carry the Swift runtime inside the .so (swiftc -static-stdlib,
            // plus FoundationEssentials' two helper archives, which -static-stdlib leaves out:
            // without them the module has undefined _FoundationCollections symbols and
            // p11-kit's dlopen(RTLD_NOW) refuses it), so ssh, p11tool or a browser load it
            // without the toolchain's lib folder; SwiftPM's --static-swift-stdlib applies to
            // executables only. Debug builds (the tests) use the toolchain's shared runtime
            // through the rpath.
            linkerSettings: [
                .unsafeFlags(
                    ["-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims"],
                    .when(configuration: .release)),
                // Export C_GetFunctionList only (Sources/CRSAKitPKCS11/exports.map says why).
                .unsafeFlags(["-Xlinker", "--version-script=\(packageDirectory)/Sources/CRSAKitPKCS11/exports.map"])
            ]
        ),
        // The `rsakit` command's logic: commands, options, messages, completion, over RSAKit.
        .target(
            name: "_RSAKitCLI",
            dependencies: ["RSAKit"],
            path: "Sources/_RSAKitCLI"
        ),
        // The `rsakit` executable: process hardening, then the command line.
        .executableTarget(
            name: "RSAKitCLI",
            dependencies: ["_RSAKitCLI"],
            path: "Sources/RSAKitCLI"
        ),
        // Drives a key store from separate processes (concurrency and kill -9 tests, and the
        // 100,000-item lookup measurement). Not a product: tests run it from the build folder.
        .executableTarget(
            name: "StoreStressHelper",
            dependencies: ["RSAKit"],
            path: "Tests/StoreStressHelper"
        ),
        // The PKCS#11 module's API from C, as a host calls it (CLIPKCS11Tests runs it from the
        // build folder): return codes, attribute queries, output lengths, threads. Not a product.
        .executableTarget(
            name: "PKCS11APIHarness",
            dependencies: ["CP11Kit"],
            path: "Tests/PKCS11APIHarness",
            linkerSettings: [.linkedLibrary("pthread"), .linkedLibrary("dl")]
        ),
        // Plain-GMP reference code the benchmark measures RSAKit against (not part of RSAKit).
        .target(
            name: "CRSAKitAnchors",
            dependencies: ["CGMP"],
            path: "Benchmarks/CRSAKitAnchors"
        ),
        // `swift run -c release RSAKitBenchmarks [--quick] [--json] ...`; see BENCHMARKS.md.
        .executableTarget(
            name: "RSAKitBenchmarks",
            dependencies: ["RSAKit", "RSAKitCore", "CRSAKitAnchors"],
            path: "Benchmarks/RSAKitBenchmarks",
            exclude: ["Keys"]
        ),
        // Montgomery exponentiation in radix 2^52: the portable reference, the
        // emulation and the runtime dispatch; the AVX-512 IFMA kernel is the next target.
        .target(
            name: "CRSAKitVector",
            dependencies: ["CGMP", "CRSAKitShims"],
            path: "Sources/CRSAKitVector",
            exclude: ["rsakit_vector_kernel.inc", "rsakit_vector_kernel_single.inc", "rsakit_vector_ifma.c"]
        ),
        // The AVX-512 IFMA kernel (function target attributes, no global -mavx512*), a target
        // of its own so that it is optimised in debug builds too: at -O0 it is about 17x slower
        // than GMP's path (an 8 MiB `rsakit decrypt` of the long tests ran past 300 s on an IFMA
        // CPU), so a debug build would test a kernel nobody runs. The reference stays at the
        // build's level: optimised, clang turns its masked selects into cmov, which the valgrind
        // constant-time check counts. Clang cannot raise the level per function, hence the flag,
        // which a dependent package's build goes without (see builtAsDependency and
        // docs/library.md: its debug builds run this kernel unoptimised).
        .target(
            name: "CRSAKitVectorIFMA",
            dependencies: ["CRSAKitVector"],
            path: "Sources/CRSAKitVectorIFMA",
            cSettings: builtAsDependency
                ? []
                : [
                    .unsafeFlags(["-O2"], .when(configuration: .debug)),
                    // SwiftPM passes -fno-omit-frame-pointer, after these flags; the cc1 option
                    // below comes last and wins. With %rbp kept for a frame pointer, the eight-lane
                    // squaring with the fused table scan at N = 20 spilled zmm registers (6-26, by
                    // the code's shape). The kernel's functions are leaves, so profiles lose only
                    // their callers' frames. scripts/check-ifma-spills.sh compiles with the same flags.
                    .unsafeFlags(["-Xclang", "-mframe-pointer=none"])
                ]
        ),
        // Montgomery exponentiation in radix 2^64 on mulx/adcx/adox (BMI2 + ADX), for CPUs
        // without AVX-512 IFMA. Its loops are assembly (a .S file guarded by __x86_64__), so
        // no flag is needed and a debug build runs them at full speed; elsewhere it builds
        // to stubs that report the kernel unsupported. Depends on nothing.
        .target(
            name: "CRSAKitMontADX",
            path: "Sources/CRSAKitMontADX"
        ),
        // The ADX kernel in the constant-time private path's kernel seam (rsakit_secret.h):
        // rsakit_adx_sec_attach, as rsakit_vec_sec_attach does for the IFMA kernel.
        .target(
            name: "CRSAKitMontADXSeam",
            dependencies: ["CRSAKitMontADX", "CRSAKitShims", "CGMP"],
            path: "Sources/CRSAKitMontADXSeam"
        ),
        // The ADX kernel under valgrind with base, exponent and modulus marked undefined, and
        // the private operation on it with the key's secrets marked undefined
        // (scripts/constant-time-adx.sh and MontADXKernelTests run it; not a product).
        .executableTarget(
            name: "MontADXCTHarness",
            dependencies: ["CRSAKitMontADX", "CRSAKitMontADXSeam", "CRSAKitShims", "CGMP"],
            path: "Tests/MontADXCTHarness"
        ),
        // The portable radix-2^52 reference under valgrind with secrets marked undefined
        // (run by VectorKernelTests; not a product).
        .executableTarget(
            name: "VectorCTHarness",
            dependencies: ["CRSAKitVector", "CRSAKitVectorIFMA", "CGMP"],
            path: "Tests/VectorCTHarness"
        ),
        .testTarget(
            name: "RSAKitTests",
            dependencies: [
                "RSAKit", "RSAKitCore", "RSAKitPKI", "RSAKitKeychain", "RSAKitTLS", "CRSAKitVector",
                "CRSAKitMontADX", "CRSAKitMontADXSeam", "RSAKitTestSupport"
            ],
            path: "Tests/RSAKitTests",
            exclude: [
                "Fixtures/README.md", "Fixtures/legacy-store-v1", "Fixtures/fuzz", "Fixtures/pyca",
                "Fixtures/implicit-rejection"
            ]
        ),
        // End-to-end tests of the built `rsakit` binary.
        .testTarget(
            name: "RSAKitCLITests",
            dependencies: ["RSAKitCLI", "RSAKitTestSupport"],
            path: "Tests/RSAKitCLITests",
            exclude: ["Fixtures"]
        ),
        // GnuTLS (libgnutls28-dev): X.509, PKCS#8 decryption, PKCS#12, chain verification.
        // Only RSAKit/GnuTLS imports it.
        .systemLibrary(
            name: "CGnuTLS",
            path: "Sources/CGnuTLS",
            pkgConfig: "gnutls",
            providers: [.apt(["libgnutls28-dev"])]
        ),
        // libcurl (headers from libcurl4-gnutls-dev, the library libcurl3-gnutls): HTTP for
        // OCSP (RFC 6960 Appendix A) and CRL fetching. Loaded by dlopen on first use, not
        // linked (its 20 dependent libraries cost every process ~3 ms of start-up). Only
        // RSAKitPKI/HTTP and RSAKitTLS/HTTPS (plain HTTP over rsakit's TLS) import it.
        .target(
            name: "CCurl",
            path: "Sources/CCurl",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // The TPM through tpm2-tss's ESAPI (headers from libtss2-dev at build time), loaded with
        // dlopen when a TPM key is first used, never linked: a thin binding that speaks the TPM
        // protocol in byte buffers. Only RSAKitKeychain/TPM imports it.
        .target(
            name: "CTSS2",
            path: "Sources/CTSS2",
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // A deliberately leaky test kernel (one branch on a secret limb) that shows the
        // constant-time harness catches what it should. Test-only; not part of RSAKit.
        .target(
            name: "CConstantTimePlant",
            dependencies: ["CRSAKitShims", "CGMP"],
            path: "Tests/CConstantTimePlant"
        ),
        // Runs the private-key path with its secrets marked undefined, under valgrind's
        // memcheck (RSAKitTests.ConstantTimeHarnessTests starts it).
        .executableTarget(
            name: "ConstantTimeHarness",
            dependencies: ["RSAKit", "RSAKitCore", "CConstantTimePlant"],
            path: "Tests/ConstantTimeHarness"
        ),
        // The clocks of the timing harness (LFENCE; RDTSC, and CLOCK_MONOTONIC_RAW). Test-only.
        .target(
            name: "CTimingClock",
            path: "Tests/CTimingClock"
        ),
        // The dudect-style timing harness (Welch's t-test, cropped percentiles, interleaved
        // classes) over RSAKit's decryptions and a planted leak; scripts/timing.sh builds it in
        // release mode and runs it. Not a product.
        .executableTarget(
            name: "TimingHarness",
            dependencies: ["RSAKit", "CTimingClock"],
            path: "Tests/TimingHarness"
        ),
        // What both test targets use: tool lookup, the openssl runner, the openssl-made test
        // PKI and the s_server wrapper. Test-only; not a product.
        .target(
            name: "RSAKitTestSupport",
            dependencies: ["RSAKit"],
            path: "Tests/RSAKitTestSupport"
        )
    ],
    swiftLanguageModes: [.v6]
)
