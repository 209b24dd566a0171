import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The async forms of the store-keyed message calls, as in RSAKitCore's RSAMessage+Async.swift
// (the same worker budget, pool rule and cancellation).

extension RSAMessage {
    /// Decrypt a container held in `Data` with the key `store` holds for its recipient
    /// (``decrypt(_:using:)`` with `[UInt8]`) as an `async` call.
    /// - Returns: the plaintext.
    /// - Throws: `CancellationError`; every error of the synchronous form.
    public static func decrypt(_ message: Data, using store: RSAKeyStore, maximumWorkers: Int? = nil) async throws
        -> Data
    {
        try await RSAWorkerBudget.run(maximumWorkers: maximumWorkers) { flag in
            var source = CancellationCheckingSource(inner: RSAArrayByteSource([UInt8](message)), flag: flag)
            var sink = RSAArrayByteSink()
            try decrypt(from: &source, to: &sink, using: store)
            return Data(sink.bytes)
        }
    }

    /// Decrypt the container in a file with the key `store` holds for its recipient
    /// (``decryptFile(atPath:toPath:using:)``) as an `async` call; the output appears only
    /// on success, cancellation included.
    /// - Throws: `CancellationError`; every error of the synchronous form.
    public static func decryptFile(
        at input: URL, to output: URL, using store: RSAKeyStore,
        maximumWorkers: Int? = nil
    ) async throws {
        try await RSAWorkerBudget.run(maximumWorkers: maximumWorkers) { flag in
            try withFiles(input.path, output.path) { source, sink, folder in
                var checked = CancellationCheckingSource(inner: source, flag: flag)
                try decrypt(from: &checked, to: &sink, using: store, temporaryDirectory: folder)
            }
        }
    }
}
