#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Swift concurrency forms of the message calls. The rule that keeps
// them apart from the synchronous forms wherever a call is written (top-level code ranks a
// synchronous overload first, even after `await`): the Foundation forms, `Data` in memory
// and file `URL`s, are async; the `[UInt8]` and path-string forms are synchronous. No
// public pair differs only in async-ness.
//
// Each async call takes its workers from one process-wide budget (at most one per active
// processor across all concurrent async calls; `maximumWorkers` caps a single call), runs
// off the cooperative pool (RSABlockingWork), and stops between batches of blocks when its
// task is cancelled: it throws `CancellationError`, and a file call then leaves no output.

extension RSAMessage {
    /// Encrypt `Data` (``encrypt(_:for:format:random:)`` with `[UInt8]`) as an `async` call.
    /// - Parameter maximumWorkers: at most this many block workers (default: as many as the
    ///   shared budget grants, up to the processor count).
    /// - Returns: the whole message.
    /// - Throws: `CancellationError` when the task is cancelled (checked between batches of
    ///   blocks); every error of the synchronous form.
    public static func encrypt(
        _ plaintext: Data, for key: RSAPublicKey, format: RSAMessageFormat = .container(),
        random: RSARandomSource = SystemRandomSource(), maximumWorkers: Int? = nil
    ) async throws -> Data {
        try await RSAWorkerBudget.run(maximumWorkers: maximumWorkers) { flag in
            var source = CancellationCheckingSource(inner: RSAArrayByteSource([UInt8](plaintext)), flag: flag)
            var sink = RSAArrayByteSink()
            try encrypt(from: &source, to: &sink, for: key, format: format, random: random)
            return Data(sink.bytes)
        }
    }

    /// Decrypt `Data` with `key` (``decrypt(_:with:format:rawPadding:)`` with `[UInt8]`) as
    /// an `async` call; nothing is returned unless the whole message checks.
    /// - Returns: the plaintext.
    /// - Throws: `CancellationError`; every error of the synchronous form.
    public static func decrypt(
        _ message: Data, with key: RSAPrivateKey, format: RSAMessageFormat? = nil,
        rawPadding: RSAEncryptionPadding = .pkcs1v15, maximumWorkers: Int? = nil
    ) async throws -> Data {
        try await RSAWorkerBudget.run(maximumWorkers: maximumWorkers) { flag in
            let bytes = [UInt8](message)
            if format?.kind == .appleAESGCM {
                return Data(try RSAAppleAESGCM.decrypt(bytes, with: key, hash: format!.appleHash))
            }
            var source = CancellationCheckingSource(inner: RSAArrayByteSource(bytes), flag: flag)
            var sink = RSAArrayByteSink()
            try decrypt(from: &source, to: &sink, with: key, format: format, rawPadding: rawPadding)
            return Data(sink.bytes)
        }
    }

    /// Encrypt a file to a file (``encryptFile(atPath:toPath:for:format:random:)``) as an
    /// `async` call; the output appears only on success, cancellation included.
    /// - Parameters:
    ///   - input: a file URL to read.
    ///   - output: a file URL, written through ``RSAOutputFile`` (0600, renamed into place).
    /// - Throws: `CancellationError`; every error of the synchronous form.
    public static func encryptFile(
        at input: URL, to output: URL, for key: RSAPublicKey,
        format: RSAMessageFormat = .container(), random: RSARandomSource = SystemRandomSource(),
        maximumWorkers: Int? = nil
    ) async throws {
        try await RSAWorkerBudget.run(maximumWorkers: maximumWorkers) { flag in
            try withFiles(input.path, output.path) { source, sink, _ in
                var checked = CancellationCheckingSource(inner: source, flag: flag)
                try encrypt(from: &checked, to: &sink, for: key, format: format, random: random)
            }
        }
    }

    /// Decrypt a file to a file with `key` (``decryptFile(atPath:toPath:with:format:rawPadding:)``)
    /// as an `async` call; the output appears only on success, cancellation included.
    /// - Throws: `CancellationError`; every error of the synchronous form.
    public static func decryptFile(
        at input: URL, to output: URL, with key: RSAPrivateKey,
        format: RSAMessageFormat? = nil, rawPadding: RSAEncryptionPadding = .pkcs1v15,
        maximumWorkers: Int? = nil
    ) async throws {
        try await RSAWorkerBudget.run(maximumWorkers: maximumWorkers) { flag in
            try withFiles(input.path, output.path) { source, sink, folder in
                var checked = CancellationCheckingSource(inner: source, flag: flag)
                try decrypt(
                    from: &checked, to: &sink, with: key, format: format, rawPadding: rawPadding,
                    temporaryDirectory: folder)
            }
        }
    }

}
