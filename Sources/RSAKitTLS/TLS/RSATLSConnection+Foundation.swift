// Foundation form of ``RSATLSConnection/write(_:)-([UInt8])``.
import RSAKitCore
import RSAKitKeychain
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RSATLSConnection {
    /// Send the bytes of `data` as application data; see ``write(_:)-([UInt8])``.
    /// - Throws: `RSATLSError.connectionFailed` (the connection is closed or failed).
    public func write(_ data: Data) throws {
        try write([UInt8](data))
    }
}
