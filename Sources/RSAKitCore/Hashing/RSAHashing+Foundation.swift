// Foundation forms of the incremental hasher and of SHAKE; the one-shot
// ``RSAHashAlgorithm/hash(_:)-(Data)`` is in Encoding/RSAKeys+Foundation.swift. Each forwards
// to the `[UInt8]` form documented beside it; constant-time status is that form's.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSAHasher {
    /// Absorb the bytes of `data` (any length); see ``update(_:)-([UInt8])``.
    public mutating func update(_ data: Data) {
        data.withUnsafeBytes { update(bufferPointer: $0) }
    }
}

extension RSAPSSSHAKE {
    /// SHAKE(data, outputByteCount) for `Data` input; see ``output(_:byteCount:)-([UInt8],_)``.
    /// - Parameters:
    ///   - data: the input, any length.
    ///   - outputByteCount: how many octets to squeeze (0 or more).
    /// - Returns: exactly `outputByteCount` bytes.
    public func output(_ data: Data, byteCount outputByteCount: Int) -> Data {
        Data(output([UInt8](data), byteCount: outputByteCount))
    }

    /// The RFC 8702 message hash SHAKE(data, ``digestByteCount``) for `Data` input; see
    /// ``hash(_:)-([UInt8])``.
    /// - Returns: exactly ``digestByteCount`` (32 or 64) bytes.
    public func hash(_ data: Data) -> Data {
        Data(hash([UInt8](data)))
    }
}
