// RSAKitCore on its own, as a package that needs only the engine uses it (this target
// depends on that product alone, so the executable links GMP and Nettle, and no GnuTLS,
// libcurl or libsodium: scripts/examples.sh checks with ldd). Exits 1 on a failed check.
import Foundation
import RSAKitCore

func check(_ condition: Bool, _ what: String) {
    guard condition else { FileHandle.standardError.write(Data("LayerCore: check failed: \(what)\n".utf8)); exit(1) }
    print("  ok: \(what)")
}

do {
    let key = try RSAPrivateKey.generate(bitCount: 2048)
    let message = Array("a message for the engine alone".utf8)
    let sealed = try RSAMessage.encrypt(message, for: key.publicKey)
    check(try RSAMessage.decrypt(sealed, with: key) == message, "container round trip")
    let block = try key.publicKey.encrypt(message, padding: .oaep(RSAOAEPParameters()))
    check(block.count == key.blockSize, "one OAEP block of k = \(key.blockSize) bytes")
    check(try key.decrypt(block, padding: .oaep(RSAOAEPParameters())) == message, "OAEP round trip")
    let signature = try key.signature(for: message, hash: .sha256, padding: .pss(saltLength: .digestLength))
    check(
        key.publicKey.isValidSignature(
            signature, for: message, hash: .sha256, padding: .pss(saltLength: .digestLength)),
        "PSS signature verifies")
    check(try RSAPrivateKey(pemRepresentation: key.pemRepresentation) == key, "PEM export and import")
    print("RSAKitCore passed")
} catch {
    FileHandle.standardError.write(Data("LayerCore: \(error.localizedDescription)\n".utf8))
    exit(1)
}
