// swift-tools-version:6.0
// libFuzzer harnesses for rsakit's parsers (issue 15 §1). A package of its own, so the normal
// build of the root package never compiles them. Build and run with scripts/fuzz.sh; by hand:
//
//   cd Fuzz && swift build -c release --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address --product FuzzDER
//   .build/release/FuzzDER -dict=Dictionaries/der.dict Corpus/FuzzDER
// (Why not `--sanitize=fuzzer --sanitize=address`: see scripts/fuzz.sh; SwiftPM 6.3.1 then
// builds the Swift code without coverage about half the time.)
//
// One executable target per harness, each a single `LLVMFuzzerTestOneInput` (no main.swift:
// libFuzzer supplies `main`). The library is reached through its public API and, for the
// internal parsers, `@_spi(Fuzzing) import RSAKit` (Sources/RSAKit/Fuzzing/). The CLI is an
// executable target and cannot be imported, so FuzzCLIArguments compiles the CLI's own
// sources: `RSAKitCLI` in its folder is a symbolic link to ../../../Sources/RSAKitCLI,
// with main.swift excluded. The harnesses thus always test the CLI code as it is.
// FuzzPKCS11 does the same for the PKCS#11 module (a dynamic library product, not importable
// either): `RSAKitPKCS11` in its folder links to ../../../Sources/RSAKitPKCS11, and
// CFuzzPKCS11Table's two files link to the C function table of Sources/CRSAKitPKCS11 (a C
// target of its own here, since SwiftPM does not mix C and Swift in one target and target
// names must be unique in the package graph). So the module is compiled into the harness
// with coverage and AddressSanitizer, and the root package is not changed: its
// `rsakit-pkcs11` product keeps its link flags (static runtime, export list), which an
// executable linking that product would inherit and a dlopen'd normal build would not be
// instrumented. CP11Kit (p11-kit's header) comes with RSAKit, which depends on it.
import PackageDescription

let rsakit = Target.Dependency.product(name: "RSAKit", package: "rsakit")

let package = Package(
    name: "rsakit-fuzz",
    dependencies: [
        // Through the link `rsakit` -> `..`, so the package identity is "rsakit" whatever the
        // checkout folder is called (SwiftPM names a path dependency after its last component).
        .package(path: "rsakit"),
    ],
    targets: [
        // Property checks that stop the process (so libFuzzer saves the input), the fixed key.
        .target(name: "FuzzSupport", dependencies: [rsakit]),
        // DER reader: decode then re-encode gives the same bytes; typed reads agree.
        .executableTarget(name: "FuzzDER", dependencies: ["FuzzSupport", rsakit]),
        // PEM scanner and base64: every decoded block re-encodes and re-reads to itself.
        .executableTarget(name: "FuzzPEM", dependencies: ["FuzzSupport", rsakit]),
        // Key-file auto-detection, every format: a key that loads exports and reloads to itself.
        .executableTarget(name: "FuzzKeyFile", dependencies: ["FuzzSupport", rsakit]),
        // Container header and block stream (versions 1 and 2) with two fixed keys, against a reference model.
        .executableTarget(name: "FuzzContainer", dependencies: ["FuzzSupport", rsakit]),
        // The store's item-file parser: parse, write, parse again gives the same record.
        .executableTarget(name: "FuzzStoreItem", dependencies: ["FuzzSupport", rsakit]),
        // ASCII armor: decode of encode is the identity; bad armor fails as a data error.
        .executableTarget(name: "FuzzArmor", dependencies: ["FuzzSupport", rsakit]),
        // The CLI argument parser with the real command specs.
        .executableTarget(name: "FuzzCLIArguments", dependencies: ["FuzzSupport", rsakit],
                          exclude: ["RSAKitCLI/main.swift"]),
        // X.509 input (DER, PEM, bundles) through GnuTLS: re-parse, PEM and key round trips, trust evaluation.
        .executableTarget(name: "FuzzX509", dependencies: ["FuzzSupport", rsakit]),
        // PKCS#12 input with a fixed passphrase: key matches certificate, key and re-export round trips.
        .executableTarget(name: "FuzzPKCS12", dependencies: ["FuzzSupport", rsakit]),
        // The keychain agent's socket protocol: one connection's bytes, served by a real agent.
        .executableTarget(name: "FuzzAgentWire", dependencies: ["FuzzSupport", rsakit]),
        // CRLs (PEM or DER) through GnuTLS, and their use in a trust evaluation of a fixed chain.
        .executableTarget(name: "FuzzCRL", dependencies: ["FuzzSupport", rsakit], exclude: ["chain.pem"]),
        // OCSP responses through the check trust evaluation runs (signature, signer, CertID, dates):
        // as they come, on a chain whose CA key was discarded (no status without a valid
        // signature), and re-signed with the fuzz key so that mutated bodies reach the checks.
        .executableTarget(name: "FuzzOCSP", dependencies: ["FuzzSupport", rsakit],
                         exclude: ["chain.pem", "signed-chain.pem", "make-signed-seeds.sh"]),
        // The PKCS#11 module's function table (Sources/CRSAKitPKCS11 through links), for FuzzPKCS11.
        .target(name: "CFuzzPKCS11Table", dependencies: [rsakit]),
        // The PKCS#11 module's C_* entry points with hostile templates, mechanisms and buffers,
        // one session per input against a fixed store (the module's sources through a link).
        .executableTarget(name: "FuzzPKCS11", dependencies: ["FuzzSupport", "CFuzzPKCS11Table", rsakit]),
    ],
    swiftLanguageModes: [.v6]
)
