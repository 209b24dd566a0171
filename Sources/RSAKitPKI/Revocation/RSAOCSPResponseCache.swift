import RSAKitCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where trust evaluation keeps OCSP responses between evaluations (``RSATrust/ocspResponseCache``).
/// ``RSAKeyStore`` is one.
public protocol RSAOCSPResponseCache: Sendable {
    /// The response stored under `key` (32 bytes), nil when there is none or it is past `now`.
    func cachedOCSPResponse(key: [UInt8], now: Date) -> [UInt8]?
    /// Keep `response` (DER OCSPResponse) under `key` until `nextUpdate`. Errors are the
    /// cache's business: evaluation goes on without it.
    func cacheOCSPResponse(_ response: [UInt8], key: [UInt8], nextUpdate: Date)
}
