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

// The shared lock for readers and the journaled write transaction for writers.
extension RSAKeyStore {
    // MARK: Locking

    /// Run `body` under the shared lock, first applying a journal left by a crashed writer
    /// (which needs the exclusive lock for a moment).
    package func withReadLock<T>(_ body: () throws -> T) throws -> T {
        var lock = try StoreLock(path: layout.lockPath, exclusive: false)
        if access(layout.journalPath, F_OK) == 0 {
            // Writers hold the exclusive lock from start to end, so a journal seen under the
            // shared lock was left by a writer that died.
            lock.release()
            let exclusive = try StoreLock(path: layout.lockPath, exclusive: true)
            try StoreTransaction.recover(layout: layout)
            exclusive.release()
            lock = try StoreLock(path: layout.lockPath, exclusive: false)
        }
        defer { lock.release() }
        return try body()
    }

    /// Run `body` under the exclusive lock, after applying any left-over journal and removing
    /// stale temporary files of the store folder, then commit what it planned (or remove its
    /// temporary files when it throws).
    func withWriteTransaction<T>(
        crashPoint: StoreCrashPoint? = nil, _ body: (inout StoreTransaction) throws -> T
    ) throws -> T {
        let lock = try StoreLock(path: layout.lockPath, exclusive: true)
        defer { lock.release() }
        try StoreTransaction.recover(layout: layout)
        for name in try StoreFileSystem.listDirectory(layout.root) where name.hasPrefix(StoreFileSystem.temporaryPrefix)
        {
            try StoreFileSystem.removeFile(layout.absolute(name))
        }
        var tx = StoreTransaction(layout: layout)
        do {
            let result = try body(&tx)
            // Migration: a store made before the keychain says "rsakit key store 1"; its layout
            // is a subset of this one, so its first write also rewrites VERSION (in the same
            // journal as the write itself) and adds the new folders.
            if !tx.isEmpty, let version = try StoreFileSystem.readFile(layout.versionPath, maximumByteCount: 256),
                version.bytes.elementsEqual(StoreLayout.versionTextV1.utf8)
            {
                for folder in [StoreLayout.passwordDirectory, StoreLayout.certificateDirectory] {
                    try StoreFileSystem.makeDirectory(layout.absolute(folder), layout.permissions)
                }
                try tx.stageFile(StoreLayout.versionName, contents: Array(StoreLayout.versionText.utf8))
            }
            try tx.commit(crashPoint: crashPoint)
            return result
        } catch {
            tx.abandon()
            throw error
        }
    }
}
