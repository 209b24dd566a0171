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
#endif

// The store as an app uses it: open by URL, a per-application location,
// generate-and-store in one call, a key together with its attributes. Thin API over the
// calls in RSAKeyStore.swift; every rule (locking, journaled writes, 0600/0700) is theirs.

extension RSAKeyStore {
    // MARK: Location and opening

    /// The store folder of one application: `$XDG_DATA_HOME/rsakit/<applicationIdentifier>`
    /// (XDG_DATA_HOME absolute), else `$HOME/.local/share/rsakit/<applicationIdentifier>`.
    ///
    /// The analogue of a keychain access group: apps that pass different identifiers never
    /// see each other's application tags, nor the CLI's (the `rsakit` tool uses the folder
    /// `.../rsakit` itself, which tolerates these nested stores). `RSAKIT_STORE` is not
    /// consulted: it names the CLI's store.
    ///
    /// - Parameters:
    ///   - applicationIdentifier: a reverse-DNS name such as "com.example.notes": 1 to 255
    ///     bytes of ASCII letters, digits, '-', '_' and '.', containing a dot, not starting
    ///     with '.' or '-'.
    ///   - environment: the variables to consult (default: this process's).
    /// - Returns: an absolute folder path (not created; ``init(applicationIdentifier:allowInsecurePermissions:)``
    ///   creates it).
    /// - Throws: `RSAError.invalidApplicationIdentifier`; `RSAError.storeIOError` when
    ///   neither XDG_DATA_HOME nor HOME gives a folder.
    public static func defaultLocation(
        applicationIdentifier: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String {
        try validateApplicationIdentifier(applicationIdentifier)
        var cliEnvironment = environment
        cliEnvironment["RSAKIT_STORE"] = nil
        return try defaultLocation(environment: cliEnvironment) + "/" + applicationIdentifier
    }

    /// Open (creating it if needed) the store of one application, at
    /// ``defaultLocation(applicationIdentifier:environment:)``.
    /// - Throws: `RSAError.invalidApplicationIdentifier`, and every error of
    ///   ``init(path:createIfMissing:allowInsecurePermissions:)``.
    public convenience init(applicationIdentifier: String, allowInsecurePermissions: Bool = false) throws {
        try self.init(
            path: RSAKeyStore.defaultLocation(applicationIdentifier: applicationIdentifier),
            allowInsecurePermissions: allowInsecurePermissions)
    }

    /// Open (creating it if needed, unless `createIfMissing` is false) the store in the folder
    /// `url`, as ``init(path:createIfMissing:allowInsecurePermissions:)``.
    ///
    /// The store creates missing folders itself with mode 0700. A folder that already exists,
    /// is owned by this user and is completely empty (as `FileManager.createDirectory` leaves
    /// it, mode 0755 under the usual umask) is tightened to 0700 and used: nothing in it can
    /// have been exposed, the same reasoning by which `ssh-keygen` creates `~/.ssh` 0700. A
    /// store folder that holds items and has group or other bits is refused
    /// (`RSAError.insecureStorePermissions`), as ssh refuses a readable private key, since
    /// its keys may already have been read.
    ///
    /// - Parameters:
    ///   - url: a `file:` URL of the store folder.
    ///   - createIfMissing: false to open only an existing store (`RSAError.storeNotFound`).
    ///   - allowInsecurePermissions: as in ``init(path:createIfMissing:allowInsecurePermissions:)``.
    /// - Throws: `RSAError.storeIOError` for a URL that is not a file URL, and every error of
    ///   ``init(path:createIfMissing:allowInsecurePermissions:)``.
    public convenience init(url: URL, createIfMissing: Bool = true, allowInsecurePermissions: Bool = false) throws {
        guard url.isFileURL else {
            throw RSAError.storeIOError(path: url.absoluteString, reason: "the store location must be a file URL")
        }
        try self.init(
            path: url.path, createIfMissing: createIfMissing, allowInsecurePermissions: allowInsecurePermissions)
    }

    /// The store folder as a file URL.
    public var url: URL { URL(fileURLWithPath: path, isDirectory: true) }

    // MARK: Generating and reading

    /// Generate a key pair and store it under `tag`, in one call: the tags are checked first,
    /// so a taken tag fails in microseconds instead of after seconds of 4096-bit generation
    /// (the store checks again under its lock when adding, so a race loses nothing).
    ///
    /// - Parameters:
    ///   - tag: the application tag of the public item (and of the private item unless
    ///     `privateTag` is given).
    ///   - privateTag: another tag for the private item.
    ///   - label: optional free text on both items.
    ///   - bitCount: nlen, 1024 ... 16384 (default 2048). - publicExponent: e (default 65537).
    ///   - replace: replace existing items with these tags instead of failing.
    ///   - progress: called during generation; return false to cancel.
    /// - Returns: the new private key and the attributes of both items.
    /// - Throws: `RSAError.duplicateItem` (the taken tag and key class) before generating
    ///   (unless `replace`);
    ///   `RSAError.invalidTag`, `RSAError.invalidLabel`; every error of
    ///   ``RSAPrivateKey/generate(bitCount:publicExponent:random:progress:)``; `RSAError.storeIOError`.
    @discardableResult
    public func generateKeyPair(
        tag: String, privateTag: String? = nil, label: String? = nil,
        bitCount: Int = 2048, publicExponent: UInt64 = 65537, replace: Bool = false,
        progress: ((RSAKeyGenerationProgress) -> Bool)? = nil
    ) throws -> (key: RSAPrivateKey, public: RSAKeyItemAttributes, private: RSAKeyItemAttributes) {
        let privateTag = privateTag ?? tag
        try RSAKeyStore.validateTag(tag)
        try RSAKeyStore.validateTag(privateTag)
        try RSAKeyStore.validateLabel(label)
        if !replace {
            // As `rsakit genpair` checks: only an item that reads back counts as taken here;
            // any other state (a damaged item file) is left to addKeyPair's check under the lock.
            for (candidate, keyClass) in [(tag, RSAKeyClass.public), (privateTag, .private)]
            where (try? keyItem(tag: candidate, keyClass: keyClass)) != nil {
                throw RSAError.duplicateItem(.key(tag: candidate, keyClass: keyClass))
            }
        }
        let key = try RSAPrivateKey.generate(bitCount: bitCount, publicExponent: publicExponent, progress: progress)
        let added = try addKeyPair(key, tag: tag, privateTag: privateTag, label: label, replace: replace)
        return (key, added.public, added.private)
    }

    /// The private key under `tag` together with its item's attributes (label, fingerprint,
    /// key size, dates), read so that both belong to the same item even if another process
    /// replaces it meanwhile.
    /// - Throws: as ``privateKey(tag:)``.
    public func privateKeyItem(tag: String) throws -> (key: RSAPrivateKey, attributes: RSAKeyItemAttributes) {
        for _ in 0..<3 {
            let key = try privateKey(tag: tag)
            let attributes = try keyItem(tag: tag, keyClass: .private)
            if attributes.fingerprint == key.fingerprint { return (key, attributes) }
        }
        throw RSAError.storeIOError(path: path, reason: "the item with tag \"\(tag)\" kept changing while it was read")
    }

    /// The public key under `tag` together with its item's attributes.
    /// - Throws: as ``publicKey(tag:)``.
    public func publicKeyItem(tag: String) throws -> (key: RSAPublicKey, attributes: RSAKeyItemAttributes) {
        for _ in 0..<3 {
            let key = try publicKey(tag: tag)
            let attributes = try keyItem(tag: tag, keyClass: .public)
            if attributes.fingerprint == key.fingerprint { return (key, attributes) }
        }
        throw RSAError.storeIOError(path: path, reason: "the item with tag \"\(tag)\" kept changing while it was read")
    }

    // MARK: Helpers for RSAKeyStore.swift

    static func validateApplicationIdentifier(_ identifier: String) throws {
        func refuse(_ reason: String) -> RSAError { .invalidApplicationIdentifier(identifier, reason: reason) }
        let bytes = Array(identifier.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else { throw refuse("it must be 1 to 255 bytes long") }
        let allowed = bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: "-") || b == UInt8(ascii: "_") || b == UInt8(ascii: ".")
        }
        guard allowed else { throw refuse("use only ASCII letters, digits, '-', '_' and '.'") }
        guard bytes.contains(UInt8(ascii: ".")) else { throw refuse("use a reverse-DNS name such as com.example.app") }
        guard bytes[0] != UInt8(ascii: "."), bytes[0] != UInt8(ascii: "-"), !identifier.contains("..") else {
            throw refuse("it must not start with '.' or '-' or contain \"..\"")
        }
    }

    /// Tighten a folder that exists, belongs to this user and is empty to 0700 (see
    /// ``init(url:createIfMissing:allowInsecurePermissions:)``). Anything else is left for the usual checks.
    static func tightenIfEmptyFolder(_ path: String) throws {
        guard let st = try StoreFileSystem.status(path), StoreFileSystem.isDirectory(st),
            st.st_uid == geteuid(),
            StoreFileSystem.permissions(st) & UInt32(StoreFileSystem.groupOtherBits) != 0,
            try StoreFileSystem.listDirectory(path).isEmpty
        else { return }
        guard chmod(path, StoreFileSystem.directoryMode) == 0 else { throw StoreFileSystem.ioError("chmod", path) }
    }

    /// Whether `name` in the store folder is an application store (a folder with a VERSION
    /// file, see ``defaultLocation(applicationIdentifier:environment:)``), which the
    /// enclosing store tolerates.
    static func isNestedApplicationStore(_ layout: StoreLayout, _ name: String) -> Bool {
        guard (try? validateApplicationIdentifier(name)) != nil else { return false }
        let folder = layout.absolute(name)
        guard let st = try? StoreFileSystem.status(folder), StoreFileSystem.isDirectory(st) else { return false }
        return (try? StoreFileSystem.status(folder + "/" + StoreLayout.versionName)) != nil
    }
}
