#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
internal import CRSAKitShims

/// A source of cryptographically secure random bytes.
///
/// RSAKit draws every secret (padding bytes, blinding factors, prime candidates and
/// Miller-Rabin bases) through this protocol so tests can inject a deterministic source.
/// The library itself only ships ``SystemRandomSource``; it never uses GMP's
/// `gmp_randstate`, which is not a cryptographic generator.
public protocol RSARandomSource: Sendable {
    /// Fill `buffer` entirely with random bytes. Must not fail: a source that cannot
    /// deliver randomness must stop the process rather than return predictable bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}

extension RSARandomSource {
    /// `count` random bytes.
    package func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }
}

/// The operating system's generator: `getrandom(2)` on Linux (blocking until the kernel
/// pool is initialised), `arc4random_buf` on Apple platforms.
///
/// Thread-safe and stateless. If the kernel refuses to deliver randomness (which
/// `getrandom` only does for invalid arguments), the process traps: continuing
/// without randomness would be worse than stopping.
public struct SystemRandomSource: RSARandomSource {
    /// The system generator.
    public init() {}

    /// Fill `buffer` from the kernel, 256 bytes per `getrandom` call, retrying on EINTR.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard var base = buffer.baseAddress else { return }
        var remaining = buffer.count
        #if canImport(Darwin)
        arc4random_buf(base, remaining)
        #else
        while remaining > 0 {
            let chunk = min(remaining, 256)
            let got = Int(rsakit_getrandom(base, chunk))
            if got < 0 {
                if errno == EINTR { continue }
                fatalError("rsakit: getrandom failed with errno \(errno); refusing to continue without randomness")
            }
            base += got
            remaining -= got
        }
        #endif
    }
}
