// RSAKitPKI (with RSAKitCore, whose types its API uses), as a package that checks
// certificates uses it. Usage: LayerPKI <certificate PEM> <its key, PKCS#8 encrypted with the
// passphrase "layers">. Exits 1 on a failed check.
import Foundation
import RSAKitCore
import RSAKitPKI

func check(_ condition: Bool, _ what: String) {
    guard condition else { FileHandle.standardError.write(Data("LayerPKI: check failed: \(what)\n".utf8)); exit(1) }
    print("  ok: \(what)")
}

do {
    let arguments = CommandLine.arguments
    guard arguments.count == 3 else {
        FileHandle.standardError.write(Data("usage: LayerPKI <cert.pem> <key.pem>\n".utf8)); exit(64)
    }
    let certificate = try X509Certificate(pemRepresentation: try String(contentsOfFile: arguments[1], encoding: .utf8))
    let file = try RSAKeyFile(
        bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: arguments[2]))),
        passphrase: Array("layers".utf8))
    check(file.encryption != nil, "the key file was encrypted (\(file.encryption.map { "\($0)" } ?? "plain"))")
    check(file.publicKey == certificate.publicKey, "the certificate's key is the decrypted key")
    var trust = RSATrust(certificates: [certificate], policy: .basicX509)
    trust.anchorCertificates = [certificate]
    let evaluation = trust.evaluate()
    check(
        evaluation.result == .proceed || evaluation.result == .unspecified,
        "the self-signed certificate is trusted as its own anchor (\(evaluation.result))")
    print("RSAKitPKI passed")
} catch {
    FileHandle.standardError.write(Data("LayerPKI: \(error.localizedDescription)\n".utf8))
    exit(1)
}
