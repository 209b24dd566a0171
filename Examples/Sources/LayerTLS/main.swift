// RSAKitTLS, as a package that only makes TLS connections uses it: a connection to a closed
// port fails with the TLS layer's own error type. Exits 1 on a failed check.
import Foundation
import RSAKitTLS

func check(_ condition: Bool, _ what: String) {
    guard condition else { FileHandle.standardError.write(Data("LayerTLS: check failed: \(what)\n".utf8)); exit(1) }
    print("  ok: \(what)")
}

var configuration = RSATLSClientConfiguration(serverName: "localhost")
configuration.timeout = 5
do {
    _ = try RSATLSConnection.connect(host: "127.0.0.1", port: 1, configuration: configuration, identity: nil)
    check(false, "a connection to port 1 is refused")
} catch let RSATLSError.connectFailed(host, port, reason) {
    check(host == "127.0.0.1" && port == 1, "RSATLSError.connectFailed: \(reason)")
    print("RSAKitTLS passed")
} catch {
    FileHandle.standardError.write(Data("LayerTLS: unexpected error \(error)\n".utf8))
    exit(1)
}
