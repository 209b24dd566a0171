import Foundation
import XCTest
import RSAKitTestSupport

/// The base of the TPM tests (`CLITPMTests`, `CLITPMBoundaryTests`): each test starts its own
/// software TPM (`swtpm socket --tpm2 --flags not-need-init,startup-clear`) on two free ports of
/// 127.0.0.1, its state in the test's folder, reached through RSAKIT_TPM_TCTI
/// (`swtpm:host=127.0.0.1,port=P`). No test touches a /dev/tpm* device. Without swtpm or
/// tpm2-tss installed (scripts/install-deps.sh installs both) the tests skip, saying so.
class TPMTestCase: CLITestCase {
    var swtpm: ChildProcess?
    var port = 0
    var environment: [String: String?] = [:]
    var servers: [TLSTestServer] = []
    var stateDirectory: String { path("tpmstate") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard
            let swtpmPath = ["/usr/bin/swtpm", TestTools.path(of: "swtpm")].compactMap({ $0 })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            throw XCTSkip(
                "SWTPM NOT INSTALLED (apt package swtpm; scripts/install-deps.sh installs it): TPM KEY TESTS NOT RUN")
        }
        guard dlopen("libtss2-esys.so.0", RTLD_NOW | RTLD_LOCAL) != nil else {
            throw XCTSkip("TPM2-TSS NOT INSTALLED (apt package libtss2-esys-3.0.2-0): TPM KEY TESTS NOT RUN")
        }
        try startTPM(swtpmPath)
        environment = [
            "RSAKIT_TPM_TCTI": "swtpm:host=127.0.0.1,port=\(port)", "RSAKIT_TOKEN_PIN": nil, "RSAKIT_PASSIN": nil,
            "TSS2_LOG": nil
        ]
    }

    override func tearDownWithError() throws {
        for server in servers { server.stop() }
        servers = []
        swtpm?.kill9()
        try super.tearDownWithError()
    }

    /// Start swtpm on a fresh state folder (manufactured on first start) and wait, at most
    /// 10 s, until its command port accepts a connection.
    func startTPM(_ executable: String? = nil) throws {
        let executable = executable ?? "/usr/bin/swtpm"
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        for _ in 0..<3 {
            // tpm2-tss's swtpm TCTI takes the control channel to be the next port.
            let server = try TLSTestServer.freePort(), control = server + 1
            guard control < 65536 else { continue }
            let process = try ChildProcess(
                [
                    executable, "socket", "--tpm2", "--tpmstate", "dir=\(stateDirectory)",
                    "--server", "type=tcp,port=\(server),bindaddr=127.0.0.1",
                    "--ctrl", "type=tcp,port=\(control),bindaddr=127.0.0.1",
                    "--flags", "not-need-init,startup-clear"
                ],
                stdout: .appending(path("swtpm.log")), stderr: .appending(path("swtpm.log")))
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline && process.isRunning {
                if Self.accepts(port: server) {
                    swtpm = process
                    port = server
                    return
                }
                usleep(20_000)
            }
            process.kill9()
        }
        XCTFail("swtpm did not start: \((try? String(contentsOfFile: path("swtpm.log"), encoding: .utf8)) ?? "")")
        throw CocoaError(.executableLoad)
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    @discardableResult
    func tpm(_ arguments: [String], stdin: [UInt8]? = nil, file: StaticString = #filePath, line: UInt = #line)
        throws -> Result
    {
        try rsakitOK(arguments, stdin: stdin, environment: environment, file: file, line: line)
    }

    func run(_ arguments: [String], environment extra: [String: String?] = [:]) throws -> Result {
        try rsakit(arguments, environment: environment.merging(extra) { $1 })
    }

    /// `openssl pkeyutl -encrypt` of the file `input` to the public key in `publicKey` with
    /// RSAES-OAEP, SHA-256 and MGF1-SHA-256 (the scheme of a TPM decryption key made with the
    /// default padding), written to `output`; fails the test when openssl fails.
    func opensslEncryptOAEP(
        publicKey: String, input: String, output: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let result = try runProcess(
            try openssl(),
            [
                "pkeyutl", "-encrypt", "-pubin", "-inkey", publicKey, "-in", input, "-out", output,
                "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256"
            ])
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
    }

    /// rsakit's PKCS#11 module and pkcs11-tool, when both are there (nil otherwise).
    func pkcs11Tool() -> (module: String, tool: String)? {
        let module = Self.productsDirectory.appendingPathComponent("librsakit-pkcs11.so").path
        guard FileManager.default.fileExists(atPath: module),
            let tool = ["/usr/bin/pkcs11-tool"].first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { return nil }
        return (module, tool)
    }
}
