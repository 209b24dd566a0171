#if canImport(Glibc)
import Glibc
#endif
import RSAKit

/// Write `bytes` to `--out PATH` (or standard output) under the `OutputFile` rules: the file
/// appears whole on success and not at all on failure (the temporary is discarded).
/// - Parameters:
///   - path: the destination, or nil / "-" for standard output.
///   - input: the command's input, to refuse an output that is the same file.
///   - mode: 0o600 for private material, else 0o644 (see `OutputFile.init`).
/// - Throws: what `OutputFile` and the write throw (`CLIFailure` with the path).
func writeOutput(_ bytes: [UInt8], to path: String?, input: InputFile? = nil, mode: mode_t = 0o644) throws {
    let output = try OutputFile(path, input: input, mode: mode)
    do {
        var sink = RSAFileDescriptorSink(fileDescriptor: output.fileDescriptor)
        try sink.write(bytes)
        try output.commit()
    } catch {
        output.discard()
        throw error
    }
}
