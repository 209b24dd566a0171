import Foundation
import RSAKit

/// A server-shaped flow, as a Swift server writes it: every slow call is async and
/// off the cooperative pool, requests run concurrently, cancellation stops work, and a TLS
/// client authenticates with a stored identity to a server whose own certificate is pinned,
/// deciding on trust in a handler. Usage:
/// `ServerFlow <work folder> <port of openssl s_server> <server.pem> <client.p12> <p12 passphrase>`
/// (scripts/examples.sh makes the PKI with openssl and starts the server); exits 1 on the
/// first failed check.
@main
struct ServerFlow {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 6, let port = Int(arguments[2]) else {
            FileHandle.standardError.write(
                Data("usage: ServerFlow <work> <port> <server.pem> <client.p12> <passphrase>\n".utf8))
            exit(64)
        }
        do {
            try await run(
                work: URL(fileURLWithPath: arguments[1], isDirectory: true), port: port,
                serverCertificate: URL(fileURLWithPath: arguments[3]), clientP12: URL(fileURLWithPath: arguments[4]),
                passphrase: arguments[5])
            print("the server flow passed")
        } catch let error as RSAError {
            FileHandle.standardError.write(Data("ServerFlow: \(error.localizedDescription)\n".utf8))
            exit(1)
        }
    }

    static func check(_ condition: Bool, _ what: String) {
        if condition {
            print("  ok: \(what)")
        } else {
            FileHandle.standardError.write(Data("ServerFlow: check failed: \(what)\n".utf8))
            exit(1)
        }
    }

    static func run(work: URL, port: Int, serverCertificate: URL, clientP12: URL, passphrase: String) async throws {
        // The store, opened off the pool (a protected store would be unlocked here too).
        print("store and identity")
        let store = try await RSAKeyStore.open(at: work.appendingPathComponent("server-store"), createIfMissing: true)
        let p12 = try RSAPKCS12(
            derRepresentation: [UInt8](try Data(contentsOf: clientP12)), passphrase: Array(passphrase.utf8))
        // The import's trust (kSecImportItemTrust): the example root is not a system anchor.
        check(
            !p12.trustEvaluation.result.isTrusted,
            "imported chain not trusted by the system anchors (\(p12.trustEvaluation.result))")
        try store.addIdentity(
            privateKey: p12.privateKey, certificate: p12.certificate, chain: p12.chain,
            tag: "com.example.server-flow.client", label: "server-flow client")
        let identity = try RSATLSClientIdentity(store: store, label: "server-flow client")

        // Key generation: async, cancellable. An 8192-bit key cancelled after 50 ms stops.
        print("key generation")
        let slow = Task { try await RSAPrivateKey(bitCount: 8192) }
        try await Task.sleep(nanoseconds: 50_000_000)
        slow.cancel()
        do {
            _ = try await slow.value
            check(false, "cancelled key generation")
        } catch is CancellationError {
            check(true, "8192-bit key generation cancelled")
        }
        let key = try await RSAPrivateKey(bitCount: 2048)
        check(key.blockSize == 256, "2048-bit key generated off the pool")

        // The pinned server: its own certificate is the only anchor; the handler sees
        // every evaluation before the client certificate is sent.
        let pinnedLeaf = try X509Certificate.certificates(from: [UInt8](try Data(contentsOf: serverCertificate)))[0]
        var settings = RSATLSClientConfiguration(serverName: "127.0.0.1")
        settings.anchorCertificates = [pinnedLeaf]
        settings.anchorCertificatesOnly = true
        settings.timeout = 20
        settings.serverTrustHandler = { _, evaluation in
            evaluation.chain.first == pinnedLeaf ? .performDefaultHandling : .cancel
        }
        let tls = settings

        // Concurrent requests: eight in-memory round trips and three TLS requests at once.
        print("concurrent requests")
        let payload = Data((0..<262_144).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let sealed = try await RSAMessage.encrypt(payload, for: key.publicKey)
                    let opened = try await RSAMessage.decrypt(sealed, with: key)
                    return opened == payload ? "message \(index)" : "message \(index) differs"
                }
            }
            for index in 0..<3 {
                group.addTask {
                    let connection = try await RSAAsyncTLSConnection.connect(
                        host: "127.0.0.1", port: port,
                        configuration: tls, identity: identity)
                    try await connection.write(Data("GET / HTTP/1.0\r\n\r\n".utf8))
                    var page: [UInt8] = []
                    while let bytes = try await connection.read(timeout: 20) { page += bytes }
                    await connection.close()
                    let text = String(decoding: page, as: UTF8.self)
                    return text.contains("HTTP/1.0 200 ok") && connection.clientCertificateSent
                        && connection.trustEvaluation.chain == [pinnedLeaf] ? "tls \(index)" : "tls \(index) failed"
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        check(
            results.sorted() == ((0..<8).map { "message \($0)" } + (0..<3).map { "tls \($0)" }).sorted(),
            "8 round trips of 256 KiB and 3 mutual-TLS requests, concurrently")

        // A typed trust failure: without the pin the chain ends at a root that is no anchor
        // (s_server sends the example root with its certificate); the
        // error carries the failure kinds and the chain, to decide on an override.
        print("trust failure and override")
        var unpinned = tls
        unpinned.anchorCertificates = []
        unpinned.serverTrustHandler = nil
        do {
            _ = try await RSAAsyncTLSConnection.connect(
                host: "127.0.0.1", port: port, configuration: unpinned, identity: identity)
            check(false, "an unpinned, unanchored server was trusted")
        } catch let RSATLSError.serverNotTrusted(evaluation, sent, _) {
            let kinds = evaluation.failures.map(\.kind.code)
            check(
                kinds == ["untrusted-root"] && evaluation.failures[0].chainIndex == 1,
                "typed failure: \(kinds), \(sent.count) certificate(s) sent")
            // The override a user might approve: trust this exact leaf in the handler.
            var override = unpinned
            let approved = sent[0].fingerprint
            override.serverTrustHandler = { trust, _ in
                trust.certificates.first?.fingerprint == approved ? .trust : .cancel
            }
            let connection = try await RSAAsyncTLSConnection.connect(
                host: "127.0.0.1", port: port, configuration: override,
                identity: identity)
            check(connection.serverTrustDecision == .trust, "connected after the handler's override")
            await connection.close()
        }

        // Cancellation of a request in flight: a 16 MB file encryption stops, no output left.
        print("cancellation")
        let big = work.appendingPathComponent("big.bin"), sealed = work.appendingPathComponent("big.rsa")
        try Data(repeating: 0x42, count: 16_000_000).write(to: big)
        let request = Task {
            try await RSAMessage.encryptFile(at: big, to: sealed, for: key.publicKey, maximumWorkers: 1)
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        request.cancel()
        do {
            try await request.value
            check(false, "the cancelled encryption finished")
        } catch is CancellationError {
            check(!FileManager.default.fileExists(atPath: sealed.path), "cancelled file encryption left no output")
        }
    }
}
