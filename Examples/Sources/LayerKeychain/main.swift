// RSAKitKeychain (with RSAKitCore), as a package that keeps keys uses it. Usage:
// LayerKeychain <work folder>. Exits 1 on a failed check.
import Foundation
import RSAKitCore
import RSAKitKeychain

func check(_ condition: Bool, _ what: String) {
    guard condition else {
        FileHandle.standardError.write(Data("LayerKeychain: check failed: \(what)\n".utf8)); exit(1)
    }
    print("  ok: \(what)")
}

do {
    guard CommandLine.arguments.count == 2 else {
        FileHandle.standardError.write(Data("usage: LayerKeychain <folder>\n".utf8)); exit(64)
    }
    let store = try RSAKeyStore(path: CommandLine.arguments[1] + "/layer-store", createIfMissing: true)
    let made = try store.generateKeyPair(tag: "com.example.layers", bitCount: 2048)
    check(try store.privateKey(tag: "com.example.layers") == made.key, "the stored key is the generated key")
    let sealed = try RSAMessage.encrypt(Array("kept".utf8), for: made.key.publicKey)
    check(try RSAMessage.decrypt(sealed, using: store) == Array("kept".utf8), "decrypted with the key the store finds")
    print("RSAKitKeychain passed")
} catch {
    FileHandle.standardError.write(Data("LayerKeychain: \(error.localizedDescription)\n".utf8))
    exit(1)
}
