// swift-tools-version:6.0
// libFuzzer harnesses for rsakit's parsers. A package of its own, so the normal
// build of the root package never compiles them. Build and run with scripts/fuzz.sh; by hand:
//
//   cd Fuzz && swift build -c release --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address
//   --product FuzzDER
//   .build/release/FuzzDER -dict=Dictionaries/der.dict Corpus/FuzzDER
// (Why not `--sanitize=fuzzer --sanitize=address`: see scripts/fuzz.sh; SwiftPM 6.3.1 then
// builds the Swift code without coverage about half the time.)
//
// One executable target per harness, each a single `LLVMFuzzerTestOneInput` (no main.swift:
// libFuzzer supplies `main`). The library is reached through its public API and, for the
// internal parsers, `@_spi(Fuzzing) import RSAKit` (Sources/RSAKit/Fuzzing/). The CLI's and
// the PKCS#11 module's logic are library targets of the root package, products only for these
// harnesses: FuzzCLIArguments imports `_RSAKitCLI` (its parser and command specs, behind
// `@_spi(Fuzzing)`), FuzzPKCS11 links `_RSAKitPKCS11` (the module's entry points and its C
// function table) and calls it through the table, as a host does. So the harnesses test the
// code as it is, compiled with coverage and AddressSanitizer, without the `rsakit-pkcs11`
// product's link flags (static runtime, export list).
import PackageDescription

let rsakit = Target.Dependency.product(name: "RSAKit", package: "rsakit")
let cli = Target.Dependency.product(name: "_RSAKitCLI", package: "rsakit")
let pkcs11 = Target.Dependency.product(name: "_RSAKitPKCS11", package: "rsakit")

let package = Package(
    name: "rsakit-fuzz",
    dependencies: [
        // Through the link `rsakit` -> `..`, so the package identity is "rsakit" whatever the
        // checkout folder is called (SwiftPM names a path dependency after its last component).
        .package(path: "rsakit")
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
        .executableTarget(name: "FuzzCLIArguments", dependencies: ["FuzzSupport", rsakit, cli]),
        // X.509 input (DER, PEM, bundles) through GnuTLS: re-parse, PEM and key round trips, trust evaluation.
        .executableTarget(name: "FuzzX509", dependencies: ["FuzzSupport", rsakit]),
        // PKCS#12 input with a fixed passphrase: key matches certificate, key and re-export round trips.
        .executableTarget(name: "FuzzPKCS12", dependencies: ["FuzzSupport", rsakit]),
        // The keychain agent's socket protocol: one connection's bytes, served by a real agent.
        .executableTarget(name: "FuzzAgentWire", dependencies: ["FuzzSupport", rsakit]),
        // The agent's ssh-agent socket: one ssh client's bytes, served by a real agent holding one key.
        .executableTarget(name: "FuzzSSHAgent", dependencies: ["FuzzSupport", rsakit]),
        // CRLs (PEM or DER) through GnuTLS, and their use in a trust evaluation of a fixed chain.
        .executableTarget(name: "FuzzCRL", dependencies: ["FuzzSupport", rsakit], exclude: ["chain.pem"]),
        // OCSP responses through the check trust evaluation runs (signature, signer, CertID, dates):
        // as they come, on a chain whose CA key was discarded (no status without a valid
        // signature), and re-signed with the fuzz key so that mutated bodies reach the checks.
        .executableTarget(
            name: "FuzzOCSP", dependencies: ["FuzzSupport", rsakit],
            exclude: ["chain.pem", "signed-chain.pem", "make-signed-seeds.sh"]),
        // The PKCS#11 module's C_* entry points with hostile templates, mechanisms and buffers,
        // one session per input against a fixed store.
        .executableTarget(name: "FuzzPKCS11", dependencies: ["FuzzSupport", rsakit, pkcs11])
    ],
    swiftLanguageModes: [.v6]
)
