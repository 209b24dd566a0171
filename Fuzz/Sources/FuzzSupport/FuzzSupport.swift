// Shared pieces of the harnesses: property checks that stop the process, the fixed test
// key, a deterministic random source, and a reader over the fuzzer's bytes.
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import RSAKit
import Synchronization

/// Stop the process when a property does not hold. libFuzzer sees the abort as a crash and
/// saves the input (crash-<sha1>), which becomes a regression fixture.
public func require(
    _ condition: Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    guard !condition else { return }
    let text = "PROPERTY FAILED at \(file):\(line): \(message())\n"
    var bytes = Array(text.utf8)
    _ = write(2, &bytes, bytes.count)
    abort()
}

/// Stop the process: code that must not be reached.
public func unreachable(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    require(false, message, file: file, line: line)
    abort()
}

/// The fixed chain of a revocation harness (FuzzCRL, FuzzOCSP): the certificates of the PEM
/// file `name` (by default `chain.pem`: the leaf, then its CA) in the folder of `filePath` (the
/// harness's `#filePath`). Stops the process when the file cannot be read or does not hold
/// exactly `count` certificates.
public func fixedChain(besideFile filePath: String, named name: String = "chain.pem", count: Int = 2)
    -> [X509Certificate]
{
    let path = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent(name).path
    guard let data = FileManager.default.contents(atPath: path),
        let certificates = try? X509Certificate.certificates(from: [UInt8](data)), certificates.count == count
    else {
        unreachable("cannot read the harness's \(name) at \(path) (\(count) certificates)")
    }
    return certificates
}

/// The fuzzer's input as a byte array.
public func fuzzInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
    guard let start, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: start, count: count))
}

/// Takes bytes and small numbers from the front of the input (structure-aware harnesses).
public struct FuzzReader {
    public private(set) var bytes: ArraySlice<UInt8>
    public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }
    public var isEmpty: Bool { bytes.isEmpty }
    /// One byte, 0 when the input is used up.
    public mutating func byte() -> UInt8 {
        guard let first = bytes.first else { return 0 }
        bytes = bytes.dropFirst()
        return first
    }
    /// Up to `count` bytes.
    public mutating func take(_ count: Int) -> [UInt8] {
        let piece = bytes.prefix(max(0, count))
        bytes = bytes.dropFirst(piece.count)
        return Array(piece)
    }
    /// Everything left.
    public mutating func rest() -> [UInt8] {
        defer { bytes = bytes[bytes.endIndex...] }
        return Array(bytes)
    }
}

/// A deterministic random source (xorshift64*): harness runs must be reproducible, and the
/// re-encryptions inside properties need no real randomness. Never used outside Fuzz/.
/// Each call continues the stream (a source that repeats itself would make rejection sampling,
/// as in the blinding factor's, loop forever).
public final class FuzzRandomSource: RSARandomSource {
    private let state: Atomic<UInt64>
    public init(seed: UInt64) { state = Atomic(seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed) }
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        // One fresh 64-bit state per call (a Weyl step), then xorshift64* inside the call.
        var state = self.state.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue | 1
        for index in buffer.indices {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            buffer[index] = UInt8(truncatingIfNeeded: (state &* 0x2545_F491_4F6C_DD1D) >> 56)
        }
    }
}

/// The fixed key of the container harness: a 512-bit test key, small so that each private
/// operation is cheap and the fuzzer runs many inputs. Made with
/// `openssl genrsa 512 | openssl pkey` (a test key, used nowhere else; never use 512 bits for data).
public let fuzzPrivateKeyPEM = """
    -----BEGIN PRIVATE KEY-----
    MIIBVAIBADANBgkqhkiG9w0BAQEFAASCAT4wggE6AgEAAkEAsIGB705qGS/tKyP9
    DtfKqeHFwvVOMiUwh7WZYXyEz0289le48xUlEnliq8RRZK+qzfah4qfqBQ31Ok5a
    lnh50wIDAQABAkEArU0LIcbRH5fR+sikH926i+A0Rz6Jn2yqYKTqSzBySgL9aLJR
    WpKn2BDdwW55VC9EShiLPP/hFjmetWi+k57yOQIhANgzf0VlqURGe++t+R4DcPZn
    Elbs/b5Rbc3j7xjzcQ9tAiEA0P9d0OssTRhC/CFxjDk5On5SR3XegKwr0xwlXswZ
    pj8CIG2QS2Mjzc/n2E7yX1iybcCxIz4iA8U7BuZcKIMAe79RAiABbBt5VoBgre+W
    w6uAJsuK6F0q+1ReT82kjCZ89KqgBQIgKE/x25gN8UdyjVaO7lzirWfhv2xQAGDM
    WhxDlSruPek=
    -----END PRIVATE KEY-----

    """

/// The fixed key, loaded once.
public let fuzzPrivateKey: RSAPrivateKey = {
    do { return try RSAPrivateKey(pemRepresentation: fuzzPrivateKeyPEM) } catch {
        unreachable("the fixed fuzz key does not load: \(error)")
    }
}()

/// The second fixed key of the container harness: 1024 bits, the smallest common size that
/// carries a version 2 container (mLen - 57 payload bytes: 60 with PKCS#1 v1.5, 29 with OAEP
/// SHA-1, 13 with SHA-224, 5 with SHA-256; the 512-bit key has k - 68 < 1). Made with
/// `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 | openssl pkey` (a test key,
/// used nowhere else).
public let fuzzPrivateKey1024PEM = """
    -----BEGIN PRIVATE KEY-----
    MIICdwIBADANBgkqhkiG9w0BAQEFAASCAmEwggJdAgEAAoGBANv83E83DlIz7KCC
    iXl/+aDEL8hsAIEttHtJ9t8G2aMctMvIia0cJufa8Ty3WN1lsPvkRaXGejgW81a1
    m75426Uy4QdO7Nwhwu58HAiAM82h9bClfOImrqgdZxy+/lMN6BHVmVojTqwqcRBG
    7yDt6tdewNCPgws//r3JVgQoNuH5AgMBAAECgYAhkSPMsons4R9qHoD7mRtt/IGO
    A2zQSTkQ1uhkf5cV3Ht53M+lKnaFSlMlAJT+s1WeGebGtNJRXK8ku/FXzvk0o1T8
    UElZV/uX5LSDTS1GCU81PzIgK/n6U0ktHOyt1D+aZLlqcxfdLp0n9bYvSmZ3i6Wd
    B2Tv0zLScs8/vKlAAQJBAPsq7WRYZtPEW9DQx2IXI38NZBb12OJq5c6FASS7V2gI
    T6wfRAMIeb3QNOvb5o03oKt+XYERAiwzes9HZyKhQnkCQQDgOFz0rMml7poIxlbI
    fahUVbL/Y2rMz65Oyyj2lKCxaJmANu7k0q7G4qJZExmYQh1APBVVqmAdJaN/ixEL
    FruBAkEA3+Jp7VJnhki31zDjKWqat3wGRfkrNNg4tJgWZtmflhoierj79QAvFKVt
    JvjDUAnP7E4dpxi0KRZSWEW7h0DbcQJALayNkvHXqctu6Tat2u1t6rACZG+2A76S
    fU55K7GfAkSScEHAbDBWlgD4nTh80D03hCw5FFg+d/GA2qxTbnTVAQJBAJfWShnu
    RNZZcZbEVlsHLFUprG6D61tTv/ozA72kJfbuGNvNOuL/zz4GmcwqFgaToRhPSq1s
    Iu7nxtHiwZ+DkYE=
    -----END PRIVATE KEY-----

    """

/// The 1024-bit fixed key, loaded once.
public let fuzzPrivateKey1024: RSAPrivateKey = {
    do { return try RSAPrivateKey(pemRepresentation: fuzzPrivateKey1024PEM) } catch {
        unreachable("the fixed 1024-bit fuzz key does not load: \(error)")
    }
}()
