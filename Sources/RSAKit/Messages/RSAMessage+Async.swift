#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Swift concurrency forms of the streaming and file calls (issue 16 §6). Each takes its
// workers from one process-wide budget (at most one per active processor across all
// concurrent async calls; `maximumWorkers` caps a single call) and checks for task
// cancellation between batches of blocks: a cancelled call throws `CancellationError`,
// and a file call then leaves no output file. The work runs synchronously on the calling
// task's thread plus the granted Dispatch workers.

extension RSAMessage {
    /// Encrypt a stream (``encrypt(from:to:for:format:random:)``) as an `async` call.
    /// - Parameter maximumWorkers: at most this many block workers (default: as many as the
    ///   shared budget grants, up to the processor count).
    /// - Throws: `CancellationError` when the task is cancelled (checked between batches);
    ///   every error of the synchronous form.
    public static func encrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, for key: RSAPublicKey,
        format: RSAMessageFormat = .container(), random: RSARandomSource = SystemRandomSource(),
        maximumWorkers: Int? = nil
    ) async throws {
        var checked = CancellationCheckingSource(inner: source)
        defer { source = checked.inner }
        var output = sink
        defer { sink = output }
        try await RSAWorkerBudget.run(maximumWorkers: maximumWorkers) {
            try encrypt(from: &checked, to: &output, for: key, format: format, random: random)
        }
    }

    /// Decrypt a stream with `key` (``decrypt(from:to:with:format:rawPadding:temporaryDirectory:)``)
    /// as an `async` call. Discard `sink` on failure.
    /// - Throws: `CancellationError`; every error of the synchronous form.
    public static func decrypt<Source: RSAByteSource, Sink: RSAByteSink>(
        from source: inout Source, to sink: inout Sink, with key: RSAPrivateKey,
        format: RSAMessageFormat? = nil, rawPadding: RSAEncryptionPadding = .pkcs1v15,
        temporaryDirectory: String? = nil, maximumWorkers: Int? = nil
    ) async throws {
        var checked = CancellationCheckingSource(inner: source)
        defer { source = checked.inner }
        var output = sink
        defer { sink = output }
        try await RSAWorkerBudget.run(maximumWorkers: maximumWorkers) {
            try decrypt(from: &checked, to: &output, with: key, format: format, rawPadding: rawPadding,
                        temporaryDirectory: temporaryDirectory)
        }
    }

    /// Encrypt a file to a file (``encryptFile(atPath:toPath:for:format:random:)``) as an
    /// `async` call; the output appears only on success, cancellation included.
    /// - Throws: `CancellationError`; every error of the synchronous form.
    public static func encryptFile(
        at input: URL, to output: URL, for key: RSAPublicKey,
        format: RSAMessageFormat = .container(), random: RSARandomSource = SystemRandomSource(),
        maximumWorkers: Int? = nil
    ) async throws {
        try await RSAWorkerBudget.run(maximumWorkers: maximumWorkers) {
            try withFiles(input.path, output.path) { source, sink, _ in
                var checked = CancellationCheckingSource(inner: source)
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
        try await RSAWorkerBudget.run(maximumWorkers: maximumWorkers) {
            try withFiles(input.path, output.path) { source, sink, folder in
                var checked = CancellationCheckingSource(inner: source)
                try decrypt(from: &checked, to: &sink, with: key, format: format, rawPadding: rawPadding,
                            temporaryDirectory: folder)
            }
        }
    }
}
