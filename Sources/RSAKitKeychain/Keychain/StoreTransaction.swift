// All-or-nothing writes: a redo journal over atomic renames.
//
// A write runs under the exclusive store lock:
//   1. every new file is written as a temporary file in its final folder and fsynced;
//   2. the list of operations (rename temp -> item, remove, create empty) is written to
//      "journal" atomically (temporary file, fsync, rename, fsync of the store folder):
//      this is the commit point;
//   3. the operations are applied and the folders they touched are fsynced;
//   4. the journal is removed and the store folder fsynced.
// A crash before step 2 leaves the old state (plus temporary files, which are ignored and
// removed later); a crash after it leaves a journal that the next writer or reader applies
// again (every operation is idempotent) before doing anything else, giving the new state.
// Each single rename replaces an item in one step, so there is never a moment when a
// replaced item is unreadable.

import RSAKitCore
import RSAKitPKI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One journalled operation; paths are relative to the store folder.
internal struct StoreJournalOperation: Codable, Equatable {
    enum Kind: String, Codable {
        /// rename(`from`, `path`), skipped when `from` no longer exists (already applied).
        case rename
        /// unlink(`path`), ignoring a missing file.
        case remove
        /// Create `path` as an empty 0600 file (0660 in a shared store) unless it exists.
        case createEmpty
    }

    var kind: Kind
    var path: String
    var from: String?
}

/// The journal file's content.
internal struct StoreJournal: Codable {
    var format: Int = 1
    var operations: [StoreJournalOperation]
}

/// A write in preparation. Create it only while holding the exclusive lock.
internal struct StoreTransaction {
    let layout: StoreLayout
    private(set) var operations: [StoreJournalOperation] = []
    private var temporaryFiles: [String] = []
    private var cleanedFolders = Set<String>()
    private var committed = false

    init(layout: StoreLayout) { self.layout = layout }

    var isEmpty: Bool { operations.isEmpty }

    /// Write `contents` to a temporary file beside `relativePath` (creating its shard folder
    /// with mode 0700 if needed) and plan the rename onto it.
    mutating func stageFile(_ relativePath: String, contents: [UInt8]) throws {
        guard relativePath.contains("/") else {
            // A file of the store folder itself (VERSION, protection): its stale temporary
            // files were removed when the write began.
            let temporary = StoreFileSystem.temporaryName(for: relativePath)
            try StoreFileSystem.createFile(layout.absolute(temporary), contents: contents, layout.permissions)
            temporaryFiles.append(temporary)
            operations.append(StoreJournalOperation(kind: .rename, path: relativePath, from: temporary))
            return
        }
        let folder = StoreFileSystem.parent(of: relativePath)
        if cleanedFolders.insert(folder).inserted {
            try ensureFolder(folder)
            // Under the exclusive lock, after recovery, every temporary file here was left by
            // a write that died before its commit point.
            for name in try StoreFileSystem.listDirectory(layout.absolute(folder))
            where name.hasPrefix(StoreFileSystem.temporaryPrefix) {
                try StoreFileSystem.removeFile(layout.absolute(folder + "/" + name))
            }
        }
        let name = String(relativePath[relativePath.index(after: relativePath.lastIndex(of: "/")!)...])
        let temporary = folder + "/" + StoreFileSystem.temporaryName(for: name)
        try StoreFileSystem.createFile(layout.absolute(temporary), contents: contents, layout.permissions)
        temporaryFiles.append(temporary)
        operations.append(StoreJournalOperation(kind: .rename, path: relativePath, from: temporary))
    }

    /// Plan the removal of `relativePath`.
    mutating func remove(_ relativePath: String) {
        operations.append(StoreJournalOperation(kind: .remove, path: relativePath, from: nil))
    }

    /// Plan the creation of the empty file `relativePath` (creating its folder now).
    mutating func createEmpty(_ relativePath: String) throws {
        try ensureFolder(StoreFileSystem.parent(of: relativePath))
        operations.append(StoreJournalOperation(kind: .createEmpty, path: relativePath, from: nil))
    }

    /// Create the folder `relative` and any missing folder above it inside the store (mode
    /// 0700), so that a class or index folder removed by hand comes back at the next write.
    private func ensureFolder(_ relative: String) throws {
        var path = ""
        for part in relative.split(separator: "/") {
            path = path.isEmpty ? String(part) : path + "/" + part
            try StoreFileSystem.makeDirectory(layout.absolute(path), layout.permissions)
        }
    }

    /// Make the planned operations durable and apply them (steps 2 to 4 above).
    ///
    /// - Parameter crashPoint: tests only: stop at this point as if the process died there
    ///   (throwing ``StoreSimulatedCrash``, leaving every file as it is).
    mutating func commit(crashPoint: StoreCrashPoint? = nil) throws {
        guard !operations.isEmpty else { return }
        if crashPoint == .beforeJournal { committed = true; throw StoreSimulatedCrash() }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let journal = try Array(encoder.encode(StoreJournal(operations: operations)))
        let temporary = StoreFileSystem.temporaryName(for: StoreLayout.journalName)
        try StoreFileSystem.createFile(layout.absolute(temporary), contents: journal, layout.permissions)
        do {
            try StoreFileSystem.renameFile(layout.absolute(temporary), layout.journalPath)
        } catch {
            _ = try? StoreFileSystem.removeFile(layout.absolute(temporary))
            throw error
        }
        try StoreFileSystem.syncDirectory(layout.root)
        committed = true
        if crashPoint == .afterJournal { throw StoreSimulatedCrash() }
        // From here on the journal guarantees the new state: a failure below leaves the
        // journal for the next writer or reader to apply.
        try StoreTransaction.apply(
            operations, layout: layout, stopAfter: crashPoint == .afterFirstOperation ? 1 : nil)
    }

    /// Remove the temporary files of a transaction that was not committed.
    func abandon() {
        guard !committed else { return }
        for temporary in temporaryFiles {
            _ = try? StoreFileSystem.removeFile(layout.absolute(temporary))
        }
    }

    /// Apply journalled operations idempotently, fsync the folders they touched, then remove
    /// the journal and fsync the store folder.
    static func apply(_ operations: [StoreJournalOperation], layout: StoreLayout, stopAfter: Int? = nil) throws {
        var touched = Set<String>()
        for (index, op) in operations.enumerated() {
            if let stopAfter, index == stopAfter { throw StoreSimulatedCrash() }
            let path = layout.absolute(op.path)
            switch op.kind {
            case .rename:
                guard let from = op.from else { continue }
                let source = layout.absolute(from)
                if try StoreFileSystem.status(source) != nil {
                    try StoreFileSystem.renameFile(source, path)
                }
            case .remove:
                try StoreFileSystem.removeFile(path)
            case .createEmpty:
                let fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, StoreFileSystem.fileMode)
                guard fd >= 0 else { throw StoreFileSystem.ioError("open", path) }
                if let group = layout.permissions.sharedGroup { fchown(fd, uid_t.max, group) }
                fchmod(fd, layout.permissions.fileMode)
                close(fd)
            }
            touched.insert(StoreFileSystem.parent(of: path))
        }
        for folder in touched.sorted() {
            try StoreFileSystem.syncDirectory(folder)
        }
        try StoreFileSystem.removeFile(layout.journalPath)
        try StoreFileSystem.syncDirectory(layout.root)
    }

    /// If a journal was left by a writer that died after its commit point, apply it.
    /// Call only while holding the exclusive lock.
    ///
    /// - Returns: true when a journal was found and applied.
    /// - Throws: `RSAError.storeIOError` when the journal cannot be read or applied. A
    ///   journal that is not valid JSON cannot come from a crash (it is renamed into place
    ///   complete); it is reported, not guessed at.
    @discardableResult
    static func recover(layout: StoreLayout) throws -> Bool {
        guard let file = try StoreFileSystem.readFile(layout.journalPath, maximumByteCount: 256 * 1024 * 1024) else {
            return false
        }
        let journal: StoreJournal
        do {
            journal = try JSONDecoder().decode(StoreJournal.self, from: Data(file.bytes))
        } catch {
            throw RSAError.storeIOError(
                path: layout.journalPath,
                reason: "the journal of an interrupted write is not readable; move it away to open the store")
        }
        guard journal.format == 1,
            journal.operations.allSatisfy({ isSafeRelativePath($0.path) && ($0.from.map(isSafeRelativePath) ?? true) })
        else {
            throw RSAError.storeIOError(path: layout.journalPath, reason: "the journal names paths outside the store")
        }
        try apply(journal.operations, layout: layout)
        return true
    }

    /// A relative path of plain names (no "", ".", "..", no leading "/").
    private static func isSafeRelativePath(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return !parts.isEmpty && parts.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }
}

/// Where a test makes a write stop as if its process had been killed.
internal enum StoreCrashPoint: Sendable {
    /// Temporary files written, no journal yet: the old state must survive.
    case beforeJournal
    /// Journal written, nothing applied: the new state must appear at the next access.
    case afterJournal
    /// Journal written and its first operation applied.
    case afterFirstOperation
}

/// Thrown by a write stopped at a ``StoreCrashPoint`` (tests only).
internal struct StoreSimulatedCrash: Error {}
