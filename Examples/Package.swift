// swift-tools-version:6.0
// An app's-eye use of RSAKit: the six steps a developer does (issue 16) and a server-shaped
// flow (issue 28: async calls, cancellation, mutual TLS with a trust handler), in the Swift 6
// language mode with complete concurrency checking, depending on RSAKit by path.
// Run it with `scripts/examples.sh` from the repository root.
import Foundation
import PackageDescription

// A path dependency's package identity is the name of its folder, which is whatever the
// clone was called ("rsakit", "main", ...): read it from this manifest's location. In an
// app of your own, write `.package(url: "https://github.com/<owner>/rsakit.git", from: "0.16.0")`
// and `.product(name: "RSAKit", package: "rsakit")`.
let rsakitFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rsakitIdentity = rsakitFolder.lastPathComponent.lowercased()

let package = Package(
    name: "RSAKitExamples",
    dependencies: [
        .package(path: ".."),
    ],
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
    ],
    swiftLanguageModes: [.v6]
)
