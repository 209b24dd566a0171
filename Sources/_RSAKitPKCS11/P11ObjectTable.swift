// The object handles of the one token: read from the key store at C_FindObjectsInit (so
// items added by `rsakit` while a host runs appear at its next search), with each item keeping
// its handle for the life of the C_Initialize (handles are never reused within it). The
// reading (public keys and certificates only, never a private key) is kept across searches
// and across C_Finalize while the store's stamp says nothing changed (RSAKeyStoreStamp): a
// host that searches often, or initialises the module again and again, reads the store once.
internal import CP11Kit
import RSAKit

/// The last snapshot of each store, by store path (a host has one store; the fuzz harness two),
/// at most `lastSnapshotLimit` paths: only public data (public keys, certificates,
/// attributes). Used under the module's lock; its own lock makes it a safe global.
private let lastSnapshots = RSAPThreadMutex<[String: RSAKeyStoreSnapshot]>([:])
private let lastSnapshotLimit = 4

extension RSAKeyStore {
    /// The store's keys and certificates: the last snapshot when the store's settled stamp
    /// has not changed since, else a fresh reading.
    /// - Throws: RSAKit's store errors.
    func currentSnapshot() throws -> RSAKeyStoreSnapshot {
        let stamp = try stamp()
        if let last = lastSnapshots.withLock({ $0[path] }), last.stamp.isSettled, last.stamp == stamp {
            return last
        }
        let fresh = try snapshot()
        lastSnapshots.withLock { snapshots in
            if snapshots[path] == nil, snapshots.count >= lastSnapshotLimit { snapshots.removeAll() }
            snapshots[path] = fresh
        }
        return fresh
    }
}

/// Object handles over the store's items.
struct P11ObjectTable {
    /// The objects by handle.
    private(set) var objects: [CK_OBJECT_HANDLE: P11Object] = [:]
    /// Each item's handle, by "class:itemID", stable across re-reads.
    private var handles: [String: CK_OBJECT_HANDLE] = [:]
    private var nextHandle: CK_OBJECT_HANDLE = 1

    /// Re-read the store's keys and certificates (``RSAKeyStore/currentSnapshot()``). Items
    /// that fail to read (listed among the store's problems, or damaged since) are left out,
    /// not reported.
    ///
    /// - Parameters:
    ///   - store: the slot's store.
    ///   - privateKeysArePrivate: CKA_PRIVATE of private keys (true for a protected store).
    /// - Throws: RSAKit's store errors (the listing itself failed).
    mutating func reload(from store: RSAKeyStore, privateKeysArePrivate: Bool) throws {
        let snapshot = try store.currentSnapshot()
        var fresh: [CK_OBJECT_HANDLE: P11Object] = [:]
        let publicFingerprints = Set(snapshot.keys.filter { $0.keyClass == .public }.map(\.fingerprint))
        for item in snapshot.keys {
            let label = item.label ?? item.applicationTag
            switch item.keyClass {
            case .public:
                guard let key = snapshot.publicKeys[item.itemID] else { continue }
                fresh[handle(for: "public:" + item.itemID)] = .publicKey(key, label: label)
            case .private:
                // The public half of a sealed item is readable without the passphrase.
                guard let key = snapshot.publicKeys[item.itemID], key.fingerprint == item.fingerprint else { continue }
                fresh[handle(for: "private:" + item.itemID)] = .privateKey(
                    itemID: item.itemID, publicKey: key, label: label, isPrivate: privateKeysArePrivate,
                    tpmUsage: item.token?.tpmKey?.usage)
                if !publicFingerprints.contains(item.fingerprint) {
                    fresh[handle(for: "public-of-private:" + item.itemID)] = .publicKey(key, label: label)
                }
            }
        }
        for stored in snapshot.certificates {
            fresh[handle(for: "certificate:" + stored.attributes.itemID)] = .certificate(
                stored.certificate, label: stored.attributes.label)
        }
        objects = fresh
    }

    /// Replace the objects (the system keychain's listing, P11System.swift).
    mutating func replaceObjects(_ fresh: [CK_OBJECT_HANDLE: P11Object]) { objects = fresh }

    /// The handle of the item `key`, made on first sight.
    mutating func handle(for key: String) -> CK_OBJECT_HANDLE {
        if let existing = handles[key] { return existing }
        let new = nextHandle
        nextHandle &+= 1
        handles[key] = new
        return new
    }

    /// The object `handle` as the session sees it: private objects only after login.
    /// - Throws: CKR_OBJECT_HANDLE_INVALID.
    func object(_ handle: CK_OBJECT_HANDLE, loggedIn: Bool) throws -> P11Object {
        guard let object = objects[handle], loggedIn || !object.isPrivate else {
            throw P11Error(CK_RV(CKR_OBJECT_HANDLE_INVALID))
        }
        return object
    }
}
