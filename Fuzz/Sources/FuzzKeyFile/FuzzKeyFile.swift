// Key-file auto-detection harness (RSAKeyFile(bytes:): DER or PEM, PKCS#1, SPKI, PKCS#8).
// Properties:
// 1. Every rejection is an RSAError (the CLI maps those to messages and exit statuses).
// 2. A key that loads exports in every format it has (DER and PEM) and reloads to the same
//    key, format and kind, with no warnings; a private key's public half is the file's public key.
// 3. DER read without warnings is canonical: exporting in the detected format gives the input.
// 4. The typed initialisers agree with the file reader.
@_spi(Fuzzing) import RSAKit
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyFile(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = fuzzInput(start, count)
    let file: RSAKeyFile
    do {
        file = try RSAKeyFile(bytes: input)
    } catch let error as RSAError {
        _ = error.description
        return 0
    } catch {
        unreachable("RSAKeyFile threw a non-RSAError: \(error)")
    }
    switch file.key {
    case let .publicKey(key):
        for format in [RSAKeyFormat.pkcs1, .spki] {
            let der = orAbort { try key.derRepresentation(format: format) }
            let pem = orAbort { try key.pemRepresentation(format: format) }
            for (bytes, isPEM) in [(der, false), (Array(pem.utf8), true)] {
                let back = orAbort { try RSAKeyFile(bytes: bytes) }
                require(
                    back.format == format && back.isPEM == isPEM && back.warnings.isEmpty,
                    "reload of \(format) differs: \(back.warnings)")
                guard case let .publicKey(reloaded) = back.key else { unreachable("public key reloaded as private") }
                require(reloaded == key, "public key changed in a \(format) round trip")
            }
            let typed = orAbort { try RSAPublicKey(derRepresentation: der) }
            require(typed == key, "RSAPublicKey(derRepresentation:) disagrees")
        }
        if !file.isPEM && file.warnings.isEmpty {
            require(
                orAbort { try key.derRepresentation(format: file.format) } == input,
                "canonical DER public key does not export to its input")
        }
    case let .privateKey(key):
        require(key.publicKey == file.publicKey, "private key's public half differs")
        for format in [RSAKeyFormat.pkcs1, .pkcs8] {
            let der = orAbort { try key.derRepresentation(format: format) }
            let pem = orAbort { try key.pemRepresentation(format: format) }
            for (bytes, isPEM) in [(der, false), (Array(pem.utf8), true)] {
                let back = orAbort { try RSAKeyFile(bytes: bytes) }
                require(
                    back.format == format && back.isPEM == isPEM && back.warnings.isEmpty,
                    "reload of \(format) differs: \(back.warnings)")
                guard case let .privateKey(reloaded) = back.key else { unreachable("private key reloaded as public") }
                require(reloaded == key, "private key changed in a \(format) round trip")
            }
            let typed = orAbort { try RSAPrivateKey(derRepresentation: der) }
            require(typed == key, "RSAPrivateKey(derRepresentation:) disagrees")
            let typedPEM = orAbort { try RSAPrivateKey(pemRepresentation: pem) }
            require(typedPEM == key, "RSAPrivateKey(pemRepresentation:) disagrees")
        }
        if !file.isPEM && file.warnings.isEmpty && isPlainPrivateKeyDER(input, format: file.format) {
            require(
                orAbort { try key.derRepresentation(format: file.format) } == input,
                "canonical DER private key does not export to its input")
        }
    }
    return 0
}

/// The value, or stop: used where the property says the call cannot fail.
func orAbort<T>(_ body: () throws -> T, line: UInt = #line) -> T {
    do { return try body() } catch { unreachable("line \(line): unexpected error \(error)") }
}

/// PKCS#1, or PKCS#8 version 0 without the optional fields (attributes, publicKey), which
/// rsakit reads but does not write.
func isPlainPrivateKeyDER(_ der: [UInt8], format: RSAKeyFormat) -> Bool {
    guard format == .pkcs8 else { return true }
    guard let tree = try? RSAKitFuzzing.derTree(der) else { return false }
    return tree.children.count == 3 && tree.children[0].content == [0]
}
