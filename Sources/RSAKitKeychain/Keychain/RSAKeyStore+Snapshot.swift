// The keys and certificates of a store read once, with a stamp that tells a long-lived reader
// (the PKCS#11 module, whose hosts search again and again) whether to read them again.
//
// Every write of rsakit goes through the journal (StoreTransaction.swift): "journal" is made
// in the store folder and removed there, and each item file is renamed into its shard folder,
// so each write changes the modification time of the store folder and of the shard folders it
// touched. The stamp is the identity (device, inode) and modification time of the store folder,
// of the key and certificate class folders and of each of their shard folders.

import RSAKitCore
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a store's folders looked like at one moment: equal stamps of a settled stamp mean that
/// no key or certificate was added, replaced or removed in between.
///
/// A folder's modification time has the file system's granularity (a kernel clock tick on
/// Linux, 1 s on some), so two writes close together can leave the same time. A stamp whose
/// newest folder time is less than ``settlingInterval`` before the moment it was taken is not
/// settled: a write right after it might not change it, and a reader must read again.
public struct RSAKeyStoreStamp: Sendable, Equatable {
    /// How old (seconds) the newest folder time must be for equal stamps to prove no change.
    public static let settlingInterval: Int = 2

    /// For each folder, in a fixed order: device, inode, mtime seconds, mtime nanoseconds.
    private let folders: [Int64]
    /// Whether equal stamps prove that nothing changed (see the type's documentation).
    public let isSettled: Bool

    init(folders: [Int64], isSettled: Bool) {
        self.folders = folders
        self.isSettled = isSettled
    }

    /// Equal when every folder has the same identity and modification time (``isSettled``
    /// is not compared).
    public static func == (a: RSAKeyStoreStamp, b: RSAKeyStoreStamp) -> Bool { a.folders == b.folders }
}

/// A certificate item and the certificate it holds.
public struct RSAStoredCertificate: Sendable {
    /// The item's attributes.
    public let attributes: RSACertificateAttributes
    /// The certificate, parsed by GnuTLS and checked against the attributes.
    public let certificate: X509Certificate
}

/// The keys and certificates of a store, read once (``RSAKeyStore/snapshot()``).
public struct RSAKeyStoreSnapshot: Sendable {
    /// The stamp taken before the reading: a later ``RSAKeyStore/stamp()`` that equals it,
    /// when it ``RSAKeyStoreStamp/isSettled``, means this snapshot is still the store's content.
    public let stamp: RSAKeyStoreStamp
    /// The key items that read, as ``RSAKeyStore/allItems()`` lists them.
    public let keys: [RSAKeyItemAttributes]
    /// The public key of each key item by ``RSAKeyItemAttributes/itemID`` (for a private item,
    /// its public half, readable without the passphrase).
    public let publicKeys: [String: RSAPublicKey]
    /// The certificate items that read and parse, in the listing's order.
    public let certificates: [RSAStoredCertificate]
    /// Every key or certificate item file that did not read, or whose certificate does not
    /// parse, sorted by path: left out of ``keys`` and ``certificates``, reported here.
    public let problems: [RSAKeyStoreProblem]
}

extension RSAKeyStore {
    /// The stamp of the store's folders now (see ``RSAKeyStoreStamp``). Costs one `stat` per
    /// folder and one listing of each class folder; reads no item.
    ///
    /// - Throws: `RSAError.storeIOError` when a folder cannot be listed or examined.
    public func stamp() throws -> RSAKeyStoreStamp {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var folders: [Int64] = []
        var newest = Int64.min
        func add(_ st: stat) {
            folders += [
                Int64(bitPattern: UInt64(st.st_dev)), Int64(bitPattern: UInt64(st.st_ino)),
                Int64(st.st_mtim.tv_sec), Int64(st.st_mtim.tv_nsec)
            ]
            newest = max(newest, Int64(st.st_mtim.tv_sec))
        }
        var st = stat()
        guard stat(layout.root, &st) == 0 else { throw StoreFileSystem.ioError("stat", layout.root) }
        add(st)
        let classFolders = RSAKeyClass.allCases.map(StoreLayout.classDirectory) + [StoreLayout.certificateDirectory]
        for folder in classFolders {
            let path = layout.absolute(folder)
            guard stat(path, &st) == 0 else {
                if errno == ENOENT { folders += [-1, -1, -1, -1]; continue }
                throw StoreFileSystem.ioError("stat", path)
            }
            add(st)
            var shards: [(String, stat)] = []
            try StoreFileSystem.forEachEntryStatus(path) { name, entry in
                let shard = String(cString: name)
                if StoreLayout.isShardName(shard) { shards.append((shard, entry)) }
            }
            for (_, entry) in shards.sorted(by: { $0.0 < $1.0 }) { add(entry) }
        }
        return RSAKeyStoreStamp(
            folders: folders, isSettled: Int64(now.tv_sec) - newest >= Int64(RSAKeyStoreStamp.settlingInterval))
    }

    /// The keys and certificates of the store, each item file read once, with the
    /// ``stamp()`` taken before the reading. A listing: items that do not read (damaged, or a
    /// certificate that does not parse) are in ``RSAKeyStoreSnapshot/problems``, as
    /// ``allItems()`` lists them. Needs no passphrase.
    ///
    /// - Throws: `RSAError.storeIOError` when a folder cannot be listed.
    public func snapshot() throws -> RSAKeyStoreSnapshot {
        let stamp = try stamp()
        let (keys, publicKeys) = try allKeyItemsWithPublicKeys()
        var problems = keys.problems
        var certificates: [RSAStoredCertificate] = try withReadLock {
            readRecords(try certificateFileHashes(), path: StoreLayout.certificatePath, problems: &problems) { hash in
                try loadCertificate(hash: hash).map {
                    RSAStoredCertificate(attributes: $0.attributes, certificate: try Self.parsedCertificate($0))
                }
            }
        }
        certificates.sort { Self.certificatePrecedes($0.attributes, $1.attributes) }
        return RSAKeyStoreSnapshot(
            stamp: stamp, keys: keys.items, publicKeys: publicKeys, certificates: certificates,
            problems: problems.sorted { $0.path < $1.path })
    }
}
