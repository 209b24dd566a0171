// swift-tools-version:6.0
// An app's-eye use of RSAKit: the six steps a developer does and a server-shaped flow (async
// calls, cancellation, mutual TLS with a trust handler), in the Swift 6 language mode with
// complete concurrency checking; and one small program per layer product (Layer*). Run it with `scripts/examples.sh`
// from the repository root.
//
// The script builds it as a real dependent package does: RSAKit by version, from a fresh
// tagged clone of the tree (RSAKIT_EXAMPLES_URL and RSAKIT_EXAMPLES_VERSION), which is also
// the check that SwiftPM accepts RSAKit as a versioned dependency (it refuses one with unsafe
// build flags, and by path nothing shows that). Without those variables it takes the tree by
// path, for editing.
import Foundation
import PackageDescription

let rsakit: Package.Dependency
let rsakitIdentity: String
if let url = Context.environment["RSAKIT_EXAMPLES_URL"], let version = Context.environment["RSAKIT_EXAMPLES_VERSION"] {
    rsakit = .package(url: url, .upToNextMinor(from: Version(stringLiteral: version)))
    rsakitIdentity = URL(string: url)!.lastPathComponent.lowercased()
} else {
    // A path dependency's identity is the name of its folder, whatever the clone was called.
    rsakit = .package(path: "..")
    rsakitIdentity = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .lastPathComponent.lowercased()
}

let package = Package(
    name: "RSAKitExamples",
    dependencies: [rsakit],
    targets: [
        .executableTarget(
            name: "SixSteps",
            dependencies: [.product(name: "RSAKit", package: rsakitIdentity)],
            path: "Sources/SixSteps"
        ),
        .executableTarget(
            name: "ServerFlow",
            dependencies: [.product(name: "RSAKit", package: rsakitIdentity)],
            path: "Sources/ServerFlow"
        ),
        .executableTarget(
            name: "IdentityDownload",
            dependencies: [.product(name: "RSAKit", package: rsakitIdentity)],
            path: "Sources/IdentityDownload"
        ),
        // One small target per layer product, each depending on what it imports and nothing
        // more: a package that needs one layer builds and links only that layer's C libraries.
        .executableTarget(
            name: "LayerCore",
            dependencies: [.product(name: "RSAKitCore", package: rsakitIdentity)],
            path: "Sources/LayerCore"
        ),
        .executableTarget(
            name: "LayerPKI",
            dependencies: [
                .product(name: "RSAKitCore", package: rsakitIdentity),
                .product(name: "RSAKitPKI", package: rsakitIdentity)
            ],
            path: "Sources/LayerPKI"
        ),
        .executableTarget(
            name: "LayerKeychain",
            dependencies: [
                .product(name: "RSAKitCore", package: rsakitIdentity),
                .product(name: "RSAKitKeychain", package: rsakitIdentity)
            ],
            path: "Sources/LayerKeychain"
        ),
        .executableTarget(
            name: "LayerTLS",
            dependencies: [.product(name: "RSAKitTLS", package: rsakitIdentity)],
            path: "Sources/LayerTLS"
        )
    ],
    swiftLanguageModes: [.v6]
)
