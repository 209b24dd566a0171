import Foundation
import RSAKit

/// The iOS client-certificate flow on a Swift server, end to end: download the app's `.pfx`
/// over HTTPS, import it into a keychain without writing it to disk, send an HTTPS request
/// that the server answers only with that client certificate, and decide on the server's
/// trust in an async handler that evaluates it against a pinned anchor. Usage:
/// `IdentityDownload <work folder> <port serving client.pfx> <port requiring a client certificate> <root.pem> <pfx
/// passphrase>`
/// (scripts/examples.sh makes the PKI with openssl and starts both `openssl s_server -WWW`);
/// exits 1 on the first failed check.
@main
struct IdentityDownload {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 6, let pfxPort = Int(arguments[2]), let mtlsPort = Int(arguments[3]) else {
            FileHandle.standardError.write(
                Data("usage: IdentityDownload <work> <pfx port> <mTLS port> <root.pem> <passphrase>\n".utf8))
            exit(64)
        }
        let run = Task {
            try await flow(
                work: URL(fileURLWithPath: arguments[1], isDirectory: true), pfxPort: pfxPort, mtlsPort: mtlsPort,
                root: URL(fileURLWithPath: arguments[4]), passphrase: arguments[5])
        }
        if case let .failure(error) = await run.result {
            FileHandle.standardError.write(Data("IdentityDownload: \(error.localizedDescription)\n".utf8))
            exit(1)
        }
        print("the identity download flow passed")
    }

    /// A check that did not hold: the flow stops there.
    struct CheckFailed: LocalizedError {
        let what: String
        var errorDescription: String? { "check failed: \(what)" }
    }

    static func check(_ condition: Bool, _ what: String) throws {
        guard condition else { throw CheckFailed(what: what) }
        print("  ok: \(what)")
    }

    /// The anchors an app ships: its own root, and nothing from the system.
    static func pinned(_ root: X509Certificate) -> RSATLSClientConfiguration {
        var tls = RSATLSClientConfiguration(serverName: "")
        tls.anchorCertificates = [root]
        tls.anchorCertificatesOnly = true
        return tls
    }

    static func flow(work: URL, pfxPort: Int, mtlsPort: Int, root rootFile: URL, passphrase: String) async throws {
        let root = try X509Certificate(pemRepresentation: String(contentsOf: rootFile, encoding: .utf8))

        // 1. The keychain, opened off the cooperative pool.
        let store = try await RSAKeyStore.open(at: work.appendingPathComponent("identity-store"), createIfMissing: true)

        // 2. Download the .pfx (URLSession.data(from:)) and import it (SecPKCS12Import, SecItemAdd):
        //    the server is trusted by the pinned root only, the file never touches the disk.
        var download = RSAHTTPSClientConfiguration()
        download.tlsConfiguration = pinned(root)
        let pfx = URL(string: "https://127.0.0.1:\(pfxPort)/client.pfx")!
        let (identity, contents) = try await store.importIdentityAsync(
            contentsOf: pfx, client: RSAHTTPSClient(configuration: download),
            passphrase: Array(passphrase.utf8), label: "example client")
        try check(identity.certificate.label == "example client", "the identity is stored under its label")
        try check(
            contents.certificate.publicKeyFingerprint == contents.privateKey.publicKey.fingerprint,
            "the downloaded file holds the key and its certificate")
        try check(
            !FileManager.default.fileExists(atPath: work.appendingPathComponent("client.pfx").path),
            "no .pfx was written")

        // 3. An mTLS request with the stored identity; the server's trust is decided by an
        //    async handler (URLSession's async delegate) that evaluates it against the pinned
        //    root off the cooperative pool.
        let decisions = Decisions()
        var mtls = RSAHTTPSClientConfiguration(
            identity: try RSATLSClientIdentity(store: store, label: "example client"))
        mtls.tlsConfiguration = pinned(root)
        mtls.tlsConfiguration.serverTrustHandlerAsync = { trust, _ in
            var pinnedTrust = trust
            pinnedTrust.anchorCertificates = [root]
            pinnedTrust.anchorCertificatesOnly = true
            let evaluation = try? await pinnedTrust.evaluateAsync()
            let trusted = evaluation?.result.isTrusted == true && evaluation?.anchor == root
            await decisions.record(trusted)
            return trusted ? .performDefaultHandling : .cancel
        }
        let request = RSAHTTPSRequest(url: URL(string: "https://127.0.0.1:\(mtlsPort)/hello.txt")!, timeoutInterval: 20)
        let (body, response) = try await RSAHTTPSClient(configuration: mtls).data(for: request)
        try check(response.statusCode == 200, "the server answered the request made with the client certificate")
        try check(String(decoding: body, as: UTF8.self) == "hello, client\n", "the body is the served file")
        let recorded = await decisions.all
        try check(recorded == [true], "the server's trust was evaluated once, against the pinned root, and trusted")
    }
}

/// The handler's decisions, kept by an actor as an app keeps its pins.
actor Decisions {
    private(set) var all: [Bool] = []
    func record(_ trusted: Bool) { all.append(trusted) }
}
