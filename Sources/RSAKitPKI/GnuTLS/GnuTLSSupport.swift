// Shared plumbing for the GnuTLS wrapper: error codes, datums, size-query calls and
// passphrases as C strings. Nothing here is public; the rest of RSAKit sees Swift types.
import RSAKitCore
internal import CGnuTLS

/// A GnuTLS call returned a negative error code.
package struct GnuTLSFailure: Error, CustomStringConvertible {
    /// The GnuTLS error code (`GNUTLS_E_*`, negative).
    let code: Int32
    /// The GnuTLS function that failed, for messages.
    let function: String

    /// GnuTLS's own sentence for the code (`gnutls_strerror`).
    var message: String { String(cString: gnutls_strerror(code)) }

    package var description: String { "\(function): \(message)" }

    /// GNUTLS_E_MAC_VERIFY_FAILED, for callers outside this folder.
    static let macVerifyFailed: Int32 = GNUTLS_E_MAC_VERIFY_FAILED

    /// Whether GnuTLS reports a failed decryption or a password mismatch (the wrong passphrase).
    var isDecryptionFailure: Bool {
        code == GNUTLS_E_DECRYPTION_FAILED || code == GNUTLS_E_MAC_VERIFY_FAILED
    }
}

/// Throw ``GnuTLSFailure`` when `code` is negative; return it otherwise.
@discardableResult
internal func gnutlsCheck(_ code: Int32, _ function: String) throws -> Int32 {
    if code < 0 { throw GnuTLSFailure(code: code, function: function) }
    return code
}

/// Run `body` with a datum pointing at a copy of `bytes`; the copy is wiped afterwards
/// (the bytes may be secret: a key, a PKCS#12 file).
@discardableResult
internal func withDatum<R>(_ bytes: [UInt8], _ body: (UnsafePointer<gnutls_datum_t>) throws -> R) rethrows -> R {
    var copy = bytes
    defer { wipe(&copy) }
    if copy.isEmpty { copy.reserveCapacity(1) }
    return try copy.withUnsafeMutableBufferPointer { buffer in
        var datum = gnutls_datum_t(data: buffer.baseAddress, size: UInt32(buffer.count))
        return try body(&datum)
    }
}

/// The bytes of a datum GnuTLS allocated, which is then zeroed and freed.
internal func takeDatum(_ datum: inout gnutls_datum_t) -> [UInt8] {
    defer { rsakit_gnutls_free_datum(&datum) }
    guard let data = datum.data, datum.size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: Int(datum.size)))
}

/// Call a GnuTLS getter of the "buffer, inout size" kind twice: once to learn the size
/// (GNUTLS_E_SHORT_MEMORY_BUFFER), once to fill. Returns nil when GnuTLS says the data is
/// not there (GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE), else the bytes (without a final NUL
/// when `isString`).
internal func gnutlsSizedQuery(
    _ function: String, isString: Bool = false,
    _ call: (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>) -> Int32
) throws -> [UInt8]? {
    var size = 0
    var code = call(nil, &size)
    if code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { return nil }
    if code != GNUTLS_E_SHORT_MEMORY_BUFFER && code < 0 {
        throw GnuTLSFailure(code: code, function: function)
    }
    var buffer = [UInt8](repeating: 0, count: max(size, 1) + 1)
    size = buffer.count
    code = buffer.withUnsafeMutableBytes { call($0.baseAddress, &size) }
    if code == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE { return nil }
    try gnutlsCheck(code, function)
    buffer.removeSubrange(min(size, buffer.count)...)
    if isString, buffer.last == 0 { buffer.removeLast() }
    return buffer
}

/// A getter of the "buffer, inout size" kind whose length GnuTLS 3.7 does not write back
/// when the buffer is larger (`gnutls_x509_crt_get_signature`, `gnutls_x509_crl_get_signature`):
/// asked for the size, then with a buffer of exactly that size. Nil on any error.
internal func gnutlsExactSizedQuery(_ call: (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>) -> Int32) -> [UInt8]?
{
    var size = 0
    _ = call(nil, &size)
    guard size > 0 else { return nil }
    var buffer = [UInt8](repeating: 0, count: size)
    guard buffer.withUnsafeMutableBytes({ call($0.baseAddress, &size) }) >= 0, size == buffer.count else { return nil }
    return buffer
}

/// Every extension's OID (dotted) and criticality, in order, through a getter of the
/// `gnutls_x509_crt_get_extension_info` / `gnutls_x509_crl_get_extension_info` kind
/// (`info(index, buffer, size, critical)`), until GnuTLS says there is no more (at most 256).
internal func gnutlsExtensionInfo(
    _ function: String,
    _ info: (UInt32, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>, UnsafeMutablePointer<UInt32>) -> Int32
) throws -> [(oid: String, critical: Bool)] {
    var result: [(oid: String, critical: Bool)] = []
    var index: UInt32 = 0
    while index < 256 {
        var critical: UInt32 = 0
        let oid = try gnutlsSizedQuery(function, isString: true) { buffer, size in info(index, buffer, size, &critical)
        }
        guard let oid else { break }
        result.append((String(decoding: oid, as: UTF8.self), critical != 0))
        index += 1
    }
    return result
}

/// A passphrase as a NUL-terminated C string for GnuTLS, wiped when `body` returns.
///
/// `nil` passes a NULL pointer (no passphrase); an empty array passes "" (PKCS#12 files
/// made with an empty password need "", not NULL).
/// - Throws: `RSAError.passphraseUnusable` when the passphrase contains a NUL byte,
///   which no C API can carry.
@discardableResult
internal func withPassphraseCString<R>(_ passphrase: [UInt8]?, _ body: (UnsafePointer<CChar>?) throws -> R) throws -> R
{
    guard let passphrase else { return try body(nil) }
    guard !passphrase.contains(0) else {
        throw RSAError.passphraseUnusable(reason: "it contains a NUL byte")
    }
    var bytes = passphrase.map { CChar(bitPattern: $0) } + [0]
    defer { for index in bytes.indices { bytes[index] = 0 } }
    return try bytes.withUnsafeBufferPointer { try body($0.baseAddress) }
}
