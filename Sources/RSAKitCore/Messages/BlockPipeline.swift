import Dispatch
import Synchronization

/// One input block handed to a ``BlockPipeline`` transform.
internal struct PipelineBlock {
    /// The block's input bytes (a full block, or a shorter final one when allowed).
    let bytes: ArraySlice<UInt8>
    /// Position in the stream, from 0.
    let index: UInt64
    /// True for the last block of the stream.
    let isFinal: Bool
}

/// Reads a stream in fixed-size blocks, transforms batches of blocks in parallel and writes
/// the results in order.
///
/// Memory is bounded: at most two batches of input (the current one and a one-batch
/// look-ahead that tells which block is final) and one batch of output are held at once,
/// whatever the stream length.
internal struct BlockPipeline {
    /// Bytes per input block (k - 11 for encryption, k for decryption).
    let inputBlockSize: Int
    /// Worker threads; 1 runs the transform on the calling thread.
    let concurrency: Int
    /// Blocks per batch.
    var blocksPerBatch: Int { max(16, 32 * concurrency) }

    enum FinalBlockPolicy {
        /// The last block may be shorter than `inputBlockSize` (encryption).
        case mayBeShort
        /// Every block must be complete; a short tail throws `ciphertextLengthInvalid`
        /// before the batch holding it is transformed (decryption).
        case mustBeComplete
    }

    /// Run the pipeline.
    /// - Parameter emitBlockForEmptyInput: when true, empty input yields one (empty, final)
    ///   block; when false it yields no block at all.
    /// - Returns: the number of blocks and input bytes processed.
    /// - Throws: the first error of the transform (in block order is not guaranteed) or of I/O.
    @discardableResult
    func run<Source: RSAByteSource, Sink: RSAByteSink>(
        source: inout Source, sink: inout Sink,
        finalBlock: FinalBlockPolicy, emitBlockForEmptyInput: Bool,
        transform: @escaping @Sendable (PipelineBlock) throws -> [UInt8]
    ) throws -> (blockCount: UInt64, byteCount: UInt64) {
        try run(
            source: &source, sink: &sink, finalBlock: finalBlock,
            emitBlockForEmptyInput: emitBlockForEmptyInput, groupSize: 1
        ) { group in
            try group.map(transform)
        }
    }

    /// ``run(source:sink:finalBlock:emitBlockForEmptyInput:transform:)`` handing each worker
    /// `groupSize` consecutive blocks at a time (the multi-buffer kernel's 8 lanes; the last
    /// group of a batch may be shorter). `transform` returns one output per block of its
    /// group, in order. Output order and the memory bound are the same as per block.
    @discardableResult
    func run<Source: RSAByteSource, Sink: RSAByteSink>(
        source: inout Source, sink: inout Sink,
        finalBlock: FinalBlockPolicy, emitBlockForEmptyInput: Bool, groupSize: Int,
        transform: @escaping @Sendable ([PipelineBlock]) throws -> [[UInt8]]
    ) throws -> (blockCount: UInt64, byteCount: UInt64) {
        let groupSize = max(1, groupSize)
        let batchBytes = blocksPerBatch * inputBlockSize
        var current = try source.readFully(batchBytes)
        var nextIndex: UInt64 = 0
        var totalBytes: UInt64 = 0

        if current.isEmpty {
            guard emitBlockForEmptyInput else { return (0, 0) }
            let output = try transform([PipelineBlock(bytes: [], index: 0, isFinal: true)])
            try sink.write(output[0])
            return (1, 0)
        }

        while !current.isEmpty {
            // Look ahead one batch: the stream ends here if nothing follows.
            let next = current.count == batchBytes ? try source.readFully(batchBytes) : []
            let isLastBatch = next.isEmpty
            if finalBlock == .mustBeComplete, current.count % inputBlockSize != 0 {
                throw RSAError.ciphertextLengthInvalid(
                    byteCount: Int(totalBytes) + current.count, blockSize: inputBlockSize)
            }
            var blocks: [PipelineBlock] = []
            var offset = 0
            while offset < current.count {
                let end = min(offset + inputBlockSize, current.count)
                blocks.append(
                    PipelineBlock(
                        bytes: current[offset..<end], index: nextIndex,
                        isFinal: isLastBatch && end == current.count))
                nextIndex += 1
                offset = end
            }
            for output in try transformBatch(blocks, groupSize: groupSize, transform) {
                try sink.write(output)
            }
            totalBytes += UInt64(current.count)
            current = next
        }
        return (nextIndex, totalBytes)
    }

    /// Apply `transform` to every group of `groupSize` consecutive blocks, on up to
    /// `concurrency` threads; results in block order.
    private func transformBatch(
        _ blocks: [PipelineBlock], groupSize: Int,
        _ transform: @escaping @Sendable ([PipelineBlock]) throws -> [[UInt8]]
    ) throws -> [[UInt8]] {
        let groupCount = (blocks.count + groupSize - 1) / groupSize
        let workers = min(concurrency, groupCount)
        if workers <= 1 {
            var outputs: [[UInt8]] = []
            outputs.reserveCapacity(blocks.count)
            var start = 0
            while start < blocks.count {
                let group = Array(blocks[start..<min(start + groupSize, blocks.count)])
                let produced = try transform(group)
                precondition(produced.count == group.count, "a group transform returns one output per block")
                outputs += produced
                start += groupSize
            }
            return outputs
        }
        let results = ResultSlots(count: blocks.count)
        let firstError = PThreadMutex<Error?>(nil)
        let shared = UnsafeSendable(blocks)
        // Groups go to whichever worker asks next (not a fixed stride per worker): a worker
        // that another process slows down takes fewer groups instead of holding up the batch.
        let next = WorkCounter()
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let g = next.take()
                guard g < groupCount else { return }
                let start = g * groupSize
                let end = min(start + groupSize, shared.value.count)
                do {
                    let produced = try transform(Array(shared.value[start..<end]))
                    precondition(produced.count == end - start, "a group transform returns one output per block")
                    for (offset, output) in produced.enumerated() { results.set(start + offset, output) }
                } catch {
                    firstError.withLock { if $0 == nil { $0 = error } }
                    return
                }
            }
        }
        if let error = firstError.withLock({ $0 }) { throw error }
        return results.values
    }
}

/// Hands out 0, 1, 2, ... to concurrent callers, each value once.
private final class WorkCounter: Sendable {
    private let counter = Atomic<Int>(0)
    func take() -> Int { counter.wrappingAdd(1, ordering: .relaxed).oldValue }
}

/// Fixed slots written by distinct threads at distinct indices, read after they join.
private final class ResultSlots: @unchecked Sendable {
    /// Fixed storage allocated once: threads write distinct elements through this pointer and
    /// never touch a Swift array (whose mutation from several threads would be a data race).
    private let slots: UnsafeMutableBufferPointer<[UInt8]>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: [])
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func set(_ index: Int, _ value: [UInt8]) { slots[index] = value }

    /// The results, once every writer has finished.
    var values: [[UInt8]] { Array(slots) }
}

/// Carries a value the caller knows is only read concurrently.
private struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
