#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// File to file, with the CLI's output rules (RSAOutputFile): the output path is written only
// when the whole operation succeeds; on failure nothing is left there.

extension RSAMessage {
    /// Encrypt the file at `inputPath` into `outputPath` (written only on success, through
    /// ``RSAOutputFile``: a temporary file renamed into place; devices and FIFOs in place).
    /// - Throws: `RSAError.inputFileFailed`; `RSAError.outputFileFailed` /
    ///   `RSAError.outputFileIsInput`; every error of the streaming
    ///   ``encrypt(from:to:for:format:random:)``.
    public static func encryptFile(
        atPath inputPath: String, toPath outputPath: String, for key: RSAPublicKey,
        format: RSAMessageFormat = .container(), random: RSARandomSource = SystemRandomSource()
    ) throws {
        try withFiles(inputPath, outputPath) { source, sink, _ in
            try encrypt(from: &source, to: &sink, for: key, format: format, random: random)
        }
    }

    /// Decrypt the file at `inputPath` into `outputPath`, detecting the format as
    /// ``decrypt(from:to:with:format:rawPadding:temporaryDirectory:)`` does. The output is
    /// written only on success (nothing is left at `outputPath` when a block fails); Apple's
    /// format keeps its unauthenticated plaintext in a 0600 unlinked file beside the output.
    /// - Throws: `RSAError.inputFileFailed`; `RSAError.outputFileFailed` /
    ///   `RSAError.outputFileIsInput`; every error of the streaming form.
    public static func decryptFile(
        atPath inputPath: String, toPath outputPath: String, with key: RSAPrivateKey,
        format: RSAMessageFormat? = nil, rawPadding: RSAEncryptionPadding = .pkcs1v15
    ) throws {
        try withFiles(inputPath, outputPath) { source, sink, folder in
            try decrypt(
                from: &source, to: &sink, with: key, format: format, rawPadding: rawPadding,
                temporaryDirectory: folder)
        }
    }

    /// Open the input, open the output with ``RSAOutputFile``, run `body`, commit on success,
    /// discard on failure. `body` gets the folder of a renamed output (for temporary files).
    package static func withFiles(
        _ inputPath: String, _ outputPath: String,
        _ body: (inout RSAFileDescriptorSource, inout RSAFileDescriptorSink, String?) throws -> Void
    ) throws {
        let input = open(inputPath, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            throw RSAError.inputFileFailed(path: inputPath, reason: String(cString: strerror(errno)).lowercased())
        }
        defer { close(input) }
        var info = stat()
        if fstat(input, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw RSAError.inputFileFailed(path: inputPath, reason: "is a directory")
        }
        let output = try RSAOutputFile(path: outputPath, input: input)
        do {
            var source = RSAFileDescriptorSource(fileDescriptor: input)
            var sink = RSAFileDescriptorSink(fileDescriptor: output.fileDescriptor)
            var folder: String?
            if output.method == .temporaryAndRename, let destination = output.destinationPath {
                folder = URL(fileURLWithPath: destination).deletingLastPathComponent().path
            }
            try body(&source, &sink, folder)
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }
}
