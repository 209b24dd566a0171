import Foundation
import XCTest
import RSAKitTestSupport

/// RSAKit's public top-level names must not collide with swift-crypto's (an app
/// importing both `Crypto` and `RSAKit` would get "'SHA256' is ambiguous"). The names are
/// read from the built module itself with the toolchain's `swift-symbolgraph-extract`
/// (the same symbol graph DocC reads), not from a hand-kept list, so a colliding name that
/// comes back fails here.
final class PublicNamesTests: XCTestCase {
    /// Names swift-crypto (Crypto, _CryptoExtras) and CryptoKit export at top level, plus
    /// the unprefixed names RSAKit itself used before it took the `RSA` prefix.
    static let taken: Set<String> = [
        "SHA256", "SHA384", "SHA512", "SHA1", "Insecure", "Digest", "HashFunction", "HMAC",
        "SymmetricKey", "SymmetricKeySize", "AES", "ChaChaPoly", "SealedBox", "Curve25519", "P256",
        "P384", "P521", "CryptoKitError", "CryptoError", "HKDF", "SharedSecret", "_RSA", "RSA",
        "Certificate", "PublicKey", "PrivateKey", "Signature", "Nonce", "MessageAuthenticationCode",
        "MessageContainer", "ArrayByteSink", "ArrayByteSource", "FileDescriptorSource",
        "FileDescriptorSink", "FileDescriptorError", "PKCS1v15Chunking", "EMEOAEP", "EMSAPSS",
        "EMEPKCS1v15", "EMSAPKCS1v15", "MGF1"
    ]

    /// Unprefixed top-level names that stay, each checked against swift-crypto's public
    /// surface: neither `SystemRandomSource` nor `KeyValidationFailure` exists there.
    static let allowedUnprefixed: Set<String> = ["SystemRandomSource", "KeyValidationFailure"]

    /// Prefixes that mark a name as RSAKit's: `RSA`, and `X509` for the agreed certificate
    /// types (`X509Certificate`; swift-certificates' type is plain `Certificate`).
    static let prefixes = ["RSA", "X509"]

    func testPublicTopLevelNames_CarryThePrefix_AndAvoidSwiftCryptoNames() throws {
        let names = try Self.topLevelNames()
        XCTAssertTrue(
            names.contains("RSAPublicKey") && names.contains("RSAHazmat"),
            "the symbol graph did not list RSAKit's types: \(names.sorted())")
        let colliding = names.intersection(Self.taken)
        XCTAssertTrue(colliding.isEmpty, "public top-level names that collide: \(colliding.sorted())")
        let unprefixed = names.filter { name in
            !Self.prefixes.contains { name.hasPrefix($0) } && !Self.allowedUnprefixed.contains(name)
        }
        XCTAssertTrue(
            unprefixed.isEmpty,
            "new public top-level names need an RSA prefix or nesting: \(unprefixed.sorted())")
    }

    /// The benchmark and constant-time harness hooks have `package` access: no public symbol
    /// of any layer names one, and none of the engine's internals shows through.
    func testHooks_AreNotPublic() throws {
        let paths = try Self.symbolPaths()
        XCTAssertTrue(
            paths.contains(["RSAPrivateKey", "decrypt(_:padding:random:)"]),
            "the symbol graph did not list RSAKit's members")
        let hookWords = [
            "ForBenchmarks", "ForHarness", "RSAKitConstantTimeHarness", "RSABenchmarkVectorImplementation",
            "rsadpReferenceVarTime", "RSAKitFuzzing", "RSAKeyFileDecryptor", "EncryptedKeyDecoder",
            "DERReader", "PEMDocument", "GnuTLS", "StoreItemRecord", "AgentWire"
        ]
        let leaked = paths.filter { path in path.contains { component in hookWords.contains { component.contains($0) } }
        }
        XCTAssertTrue(
            leaked.isEmpty, "hooks or internals in the public API: \(leaked.map { $0.joined(separator: ".") })")
    }

    /// The hazardous building blocks are reachable only through `RSAHazmat`.
    func testHazardousBuildingBlocks_AreNestedInRSAHazmat() throws {
        let paths = try Self.symbolPaths()
        for name in ["EMEOAEP", "EMSAPSS", "EMEPKCS1v15", "EMSAPKCS1v15", "MGF1"] {
            XCTAssertTrue(paths.contains(["RSAHazmat", name]), "RSAHazmat.\(name) missing")
        }
        XCTAssertTrue(paths.contains(["RSAHazmat", "rsaep(_:key:)"]))
        XCTAssertTrue(paths.contains(["RSAHazmat", "rsadp(_:key:random:)"]))
        XCTAssertFalse(paths.contains(["RSAPublicKey", "rsaep(_:)"]), "raw RSAEP beside encrypt")
        XCTAssertFalse(paths.contains(["RSAPrivateKey", "rsadp(_:)"]), "raw RSADP beside decrypt")
    }

    /// No public async call may be spelled like a synchronous one. In top-level
    /// code Swift ranks a synchronous overload first even after `await` (it then warns "no
    /// 'async' operations occur within 'await' expression" and blocks), so an async form is
    /// told apart by its first parameter (a `Data` or `URL` where the synchronous form takes
    /// `[UInt8]` or a path) or by its name. Checked: same type, same base name, same first
    /// parameter (label and type).
    func testNoAsyncCallSharesItsSpellingWithASynchronousOne() throws {
        let functions = try Self.symbols().filter { $0.parameters != nil && $0.pathComponents.count >= 2 }
        /// "Type/base/first label: first parameter's type" ("RSAMessage/encryptFile/at: URL").
        func key(_ symbol: Symbol) -> String {
            let name = symbol.pathComponents.last!
            let parts = name.split(separator: "(", maxSplits: 1)
            let base = String(parts[0])
            let label = parts.count > 1 ? String(parts[1].split(separator: ":", maxSplits: 1).first ?? "") : ""
            let first = symbol.parameters?.first ?? ""
            let type =
                first.split(separator: ":", maxSplits: 1).dropFirst().first.map {
                    $0.trimmingCharacters(in: .whitespaces)
                } ?? ""
            return (symbol.pathComponents.dropLast() + [base, "\(label): \(type)"]).joined(separator: "/")
        }
        let asyncKeys = Set(functions.filter(\.isAsync).map(key))
        XCTAssertTrue(
            asyncKeys.contains("RSAMessage/encryptFile/at: URL"), "async forms not read: \(asyncKeys.sorted())")
        XCTAssertTrue(asyncKeys.contains("RSAPrivateKey/init/bitCount: Int"), "\(asyncKeys.sorted())")
        let clashes = functions.filter { !$0.isAsync && asyncKeys.contains(key($0)) }.map {
            $0.pathComponents.joined(separator: ".")
        }
        XCTAssertEqual(clashes, [], "synchronous calls spelled like an async one")
    }

    /// The rule that tells the async forms apart, as GettingStarted states it: the async form
    /// of a synchronous method `name(...)` is `nameAsync(...)` (Security's
    /// `SecTrustEvaluateAsyncWithError` beside `SecTrustEvaluateWithError`). The only async
    /// calls that share a base name with a synchronous one are the message calls' Foundation
    /// forms (a first argument of `Data` or `URL` where the synchronous one takes `[UInt8]` or
    /// a path) and initialisers (told apart by their labels). Calls with no synchronous twin
    /// (`RSAHTTPSClient.data(for:)`, `RSAAsyncTLSConnection`'s) keep plain names, and the calls
    /// that can block for long each have their `Async` twin.
    func testAsyncForms_FollowTheNamingRule() throws {
        let functions = try Self.symbols().filter { $0.parameters != nil && $0.pathComponents.count >= 2 }
        func base(_ symbol: Symbol) -> String {
            String(symbol.pathComponents.last!.split(separator: "(", maxSplits: 1)[0])
        }
        func owner(_ symbol: Symbol) -> String { symbol.pathComponents.dropLast().joined(separator: ".") }
        func firstType(_ symbol: Symbol) -> String {
            (symbol.parameters?.first ?? "").split(separator: ":", maxSplits: 1).dropFirst().first
                .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        }
        var synchronousNames: [String: Set<String>] = [:]
        for symbol in functions where !symbol.isAsync {
            synchronousNames[owner(symbol), default: []].insert(base(symbol))
        }
        // The standard library's `Actor.withSerialExecutor` pair, which every actor shows.
        let inherited: Set<String> = ["withSerialExecutor"]
        var broken: [String] = []
        for symbol in functions where !inherited.contains(base(symbol)) {
            let name = base(symbol), type = owner(symbol), spelled = symbol.pathComponents.joined(separator: ".")
            let synchronous = synchronousNames[type] ?? []
            if name.hasSuffix("Async") {
                if !symbol.isAsync { broken.append("\(spelled): named Async but synchronous") }
                if !synchronous.contains(String(name.dropLast("Async".count))) {
                    broken.append("\(spelled): no synchronous \(name.dropLast("Async".count)) to be the async form of")
                }
            } else if symbol.isAsync, synchronous.contains(name), name != "init",
                !["Data", "URL"].contains(firstType(symbol))
            {
                broken.append("\(spelled): shares its name with a synchronous call; spell it \(name)Async")
            }
        }
        XCTAssertEqual(broken, [], "async forms that break the naming rule")
        let asyncNames = Set(functions.filter(\.isAsync).map { "\(owner($0)).\(base($0))" })
        for slow in [
            "RSAPrivateKey.generate", "RSAKeyStore.generateKeyPair", "RSATrust.evaluate", "RSAKeyStore.importIdentity"
        ] {
            XCTAssertTrue(asyncNames.contains(slow + "Async"), "\(slow) blocks for long and has no \(slow)Async")
        }
    }

    // MARK: - The public API against its baseline

    /// The public API (every symbol of the symbol graph: its path, and for a function its
    /// parameters and `async`) matches `api/public-symbols.txt`. A symbol gone from it must be
    /// named in CHANGELOG.md (the last component, as `name(label:)`, or its removed type), so
    /// that no rename or removal ships without its migration note; a new symbol only needs the
    /// baseline regenerated. `RSAKIT_UPDATE_API_BASELINE=1 swift test --filter
    /// PublicNamesTests/testPublicAPI` rewrites the file, in the same commit as the entry.
    func testPublicAPI_MatchesTheBaseline_AndEveryRemovalIsInTheChangelog() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let baselineURL = root.appendingPathComponent("api/public-symbols.txt")
        let current = Self.apiLines(try Self.symbols())
        XCTAssertGreaterThan(current.count, 1000, "the symbol graph listed too few symbols")
        if ProcessInfo.processInfo.environment["RSAKIT_UPDATE_API_BASELINE"] == "1" {
            try Data((Self.baselineHeader + current.joined(separator: "\n") + "\n").utf8).write(to: baselineURL)
            print("note: wrote \(current.count) symbols to \(baselineURL.path)")
            return
        }
        let text = try String(contentsOf: baselineURL, encoding: .utf8)
        let baseline = Set(text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty })
        let now = Set(current)
        let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let removed = baseline.subtracting(now).sorted()
        let removedTypes = Set(
            removed.map { $0.split(separator: " ")[0] }.filter { !$0.contains(".") }.map(String.init))
        let unmentioned = removed.filter { line in
            let path = line.split(separator: " ")[0].split(separator: ".").map(String.init)
            return !changelog.contains(path.last!)
                && !(path.count > 1 && removedTypes.contains(path[0]) && changelog.contains(path[0]))
        }
        XCTAssertEqual(unmentioned, [], "public symbols removed or renamed without a CHANGELOG.md entry naming them")
        let added = now.subtracting(baseline).sorted()
        XCTAssertTrue(
            removed.isEmpty && added.isEmpty,
            "the public API differs from api/public-symbols.txt (\(removed.count) gone, \(added.count) new; first: "
                + "\((removed.prefix(5) + added.prefix(5)).joined(separator: "; "))): regenerate it with "
                + "RSAKIT_UPDATE_API_BASELINE=1 swift test --filter PublicNamesTests/testPublicAPI, in the same "
                + "commit as the CHANGELOG entry"
        )
    }

    static let baselineHeader = """
        # The public API of RSAKit (every layer, as `import RSAKit` shows it), one symbol a line:
        # its path, and for a function its parameters and `async`. PublicNamesTests checks it
        # against the built modules; regenerate with
        # RSAKIT_UPDATE_API_BASELINE=1 swift test --filter PublicNamesTests/testPublicAPI

        """

    /// One line per public symbol, sorted and without duplicates.
    static func apiLines(_ symbols: [Symbol]) -> [String] {
        Set(
            symbols.map { symbol in
                var line = symbol.pathComponents.joined(separator: ".")
                if let parameters = symbol.parameters { line += " (" + parameters.joined(separator: ", ") + ")" }
                if symbol.isAsync { line += " async" }
                return line
            }
        ).sorted()
    }

    // MARK: - The symbol graph of the built module

    static func topLevelNames() throws -> Set<String> {
        Set(try symbolPaths().filter { $0.count == 1 }.map { $0[0] })
    }

    nonisolated(unsafe) private static var cachedSymbols: [Symbol]?

    /// Every public symbol's path components (["RSAHazmat", "MGF1"]), from
    /// `swift-symbolgraph-extract` run over `.build/<config>/Modules/RSAKit.swiftmodule`.
    static func symbolPaths() throws -> [[String]] {
        try symbols().map(\.pathComponents)
    }

    /// Every public symbol of the built module: its path components (prefixed with "@" for
    /// extensions of other modules' types) and, for functions and initialisers, the
    /// declarations of its parameters ("label: [UInt8]").
    static func symbols() throws -> [Symbol] {
        if let cachedSymbols { return cachedSymbols }
        let products = Bundle.main.bundleURL
        let modules = products.appendingPathComponent("Modules")
        guard FileManager.default.fileExists(atPath: modules.appendingPathComponent("RSAKit.swiftmodule").path) else {
            throw XCTSkip("RSAKit.swiftmodule not found under \(modules.path)")
        }
        guard let tool = findTool("swift-symbolgraph-extract") else {
            throw XCTSkip("swift-symbolgraph-extract not found beside swift on PATH")
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "rsakit-symbols-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }

        // RSAKit imports its C modules internally; the extractor still has to find their maps.
        // RSAKit re-exports its layers; their symbols are listed as RSAKit's, as
        // `import RSAKit` shows them.
        var arguments = [
            "-module-name", "RSAKit", "-I", modules.path, "-minimum-access-level", "public",
            "-experimental-allowed-reexported-modules=RSAKitCore,RSAKitPKI,RSAKitKeychain,RSAKitTLS",
            "-output-dir", output.path
        ]
        #if arch(x86_64)
        arguments += ["-target", "x86_64-unknown-linux-gnu"]
        #elseif arch(arm64)
        arguments += ["-target", "aarch64-unknown-linux-gnu"]
        #endif
        let sources = root.appendingPathComponent("Sources")
        for target in (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? [] {
            let map = sources.appendingPathComponent(target).appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) {
                arguments += ["-Xcc", "-fmodule-map-file=" + map.path]
            }
            let include = sources.appendingPathComponent(target).appendingPathComponent("include")
            if FileManager.default.fileExists(atPath: include.path) { arguments += ["-I", include.path] }
        }
        // p11-kit's header lives in a folder of its own (`pkg-config --cflags-only-I p11-kit-1`),
        // which RSAKit/PKCS11Client's CP11Kit includes.
        if let pkgConfig = TestTools.path(of: "pkg-config"),
            let flags = try? ChildProcess.run([pkgConfig, "--cflags-only-I", "p11-kit-1"]), flags.status == 0
        {
            for flag in String(decoding: flags.stdout, as: UTF8.self).split(separator: " ") where flag.hasPrefix("-I") {
                arguments += ["-Xcc", String(flag).trimmingCharacters(in: .whitespacesAndNewlines)]
            }
        }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: products.path)) ?? []
        where entry.hasSuffix(".build") {
            let map = products.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) {
                arguments += ["-Xcc", "-fmodule-map-file=" + map.path]
            }
        }

        let result = try ChildProcess.run([tool.path] + arguments)
        guard result.status == 0 else {
            XCTFail("swift-symbolgraph-extract failed: \(result.stderr)")
            throw CocoaError(.fileReadUnknown)
        }
        var symbols: [Symbol] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: output.path) where file.hasPrefix("RSAKit") {
            let data = try Data(contentsOf: output.appendingPathComponent(file))
            let graph = try JSONDecoder().decode(SymbolGraph.self, from: data)
            // Only RSAKit.symbols.json holds RSAKit's own top-level declarations; the
            // RSAKit@Other files are extensions of other modules' types.
            symbols += graph.symbols.map { symbol in
                Symbol(
                    pathComponents: file == "RSAKit.symbols.json"
                        ? symbol.pathComponents : ["@"] + symbol.pathComponents,
                    parameters: symbol.functionSignature.map { signature in
                        (signature.parameters ?? []).map { ($0.declarationFragments ?? []).map(\.spelling).joined() }
                    },
                    isAsync: (symbol.declarationFragments ?? []).contains {
                        $0.kind == "keyword" && $0.spelling == "async"
                    })
            }
        }
        cachedSymbols = symbols
        return symbols
    }

    /// One public symbol: its path, and for a function or initialiser its parameters'
    /// declarations ("bytes: [UInt8]", "passphrase: [UInt8]?"); nil for other symbols.
    struct Symbol {
        let pathComponents: [String]
        let parameters: [String]?
        /// Whether the declaration says `async`.
        let isAsync: Bool
    }

    private struct SymbolGraph: Decodable {
        struct Fragment: Decodable { let kind: String?; let spelling: String }
        struct Parameter: Decodable { let declarationFragments: [Fragment]? }
        struct FunctionSignature: Decodable { let parameters: [Parameter]? }
        struct Symbol: Decodable {
            let pathComponents: [String]
            let functionSignature: FunctionSignature?
            let declarationFragments: [Fragment]?
        }
        let symbols: [Symbol]
    }

    private static func findTool(_ name: String) -> URL? { TestTools.path(of: name).map { URL(fileURLWithPath: $0) } }
}
