// Where everything lives inside a store folder (see docs/keychain.md):
//
//   <store>/VERSION                         "rsakit keychain 2" ("rsakit key store 1" before the
//                                           first write by this version: same layout, keys only)
//   <store>/protection                      only in a protected store: the sealed store key
//   <store>/passwords/<ss>/<S><A>.item      generic password; S, A = SHA-256 of service, account
//   <store>/certificates/<hh>/<C>.item      certificate; C = SHA-256 of issuer and serial
//   <store>/crls/<ii>/<I>.item              CRL; I = SHA-256 of the issuer name (one per issuer)
//   <store>/ocsp/<kk>/<K>.item              cached OCSP response; K = hex of its cache key (RSATrust's)
//   <store>/lock                            empty; flock(2) target
//   <store>/sharing                         only in a store shared with a Unix group: its gid
//   <store>/journal                         only while a write is being applied (or after a crash)
//   <store>/public/<hh>/<H>.pem             public item for the tag whose SHA-256 is H
//   <store>/private/<hh>/<H>.pem            private item for that tag
//   <store>/index/fingerprint/<ff>/<F>.<H>.<class>   empty: item (H, class) has fingerprint F
//
//   <store>/index/group/<G>                 empty: the store holds (or held) an item of group G
//
// H = lower-case hex SHA-256 of the tag's UTF-8 bytes (64 digits), hh its first two digits;
// F = lower-case hex fingerprint, ff its first two digits. File names never contain the tag.
//
// Access groups: an item of group "default" is named exactly as above; an item of any other
// group G is named by the SHA-256 of the same bytes behind the prefix 0xFF || len(G) || G
// (``groupQualified(_:group:)``), so the same tag (service and account, issuer and serial...)
// has one file name per group. 0xFF never occurs in UTF-8 and never starts the length-prefixed
// inputs (their first byte is 0x00), so no grouped name equals an ungrouped one.
//
// Every folder and file name of this layout is spelled here and nowhere else; the rest of the
// store asks this type for paths.

/// Paths inside one store folder. Relative paths (as the journal records them) use "/".
import RSAKitCore
import RSAKitPKI

internal struct StoreLayout: Sendable {
    /// The store folder, absolute, without a trailing "/".
    let root: String
    /// The modes and group of what the store makes and accepts (StoreSharing.swift).
    var permissions: StorePermissions = .private

    static let versionName = "VERSION"
    static let versionText = "rsakit keychain 2\n"
    /// The VERSION of stores made before the keychain (keys only); read as they are and
    /// rewritten to ``versionText`` by the first write.
    static let versionTextV1 = "rsakit key store 1\n"
    static let passwordDirectory = "passwords"
    static let certificateDirectory = "certificates"
    static let crlDirectory = "crls"
    static let ocspDirectory = "ocsp"
    static let protectionName = "protection"
    static let recordSuffix = ".item"
    static let lockName = "lock"
    static let journalName = "journal"
    static let indexDirectory = "index"
    static let fingerprintIndexDirectory = "index/fingerprint"
    static let itemSuffix = ".pem"
    /// The folder of the group registry: one empty file per access group other than the
    /// default that has had an item, so that a lookup through a store opened without groups
    /// knows which file names to try.
    static let groupIndexDirectory = "index/group"

    /// "index/group/G" (relative); G is a valid group name, so it is one path component.
    static func groupEntry(_ group: String) -> String {
        groupIndexDirectory + "/" + group
    }

    /// The bytes whose SHA-256 names an item of `group`: `bytes` for the default group, else
    /// 0xFF, the group's length (4 bytes, big-endian), the group, then `bytes`.
    static func groupQualified(_ bytes: [UInt8], group: String) -> [UInt8] {
        guard group != RSAKeyStore.defaultAccessGroup else { return bytes }
        let name = Array(group.utf8), n = UInt32(name.count)
        return [0xFF, UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + name + bytes
    }

    /// Lower-case hex SHA-256 of ``groupQualified(_:group:)``.
    static func groupHash(_ bytes: [UInt8], group: String) -> String {
        StoreHex.encode(RSAHashAlgorithm.sha256.hash(groupQualified(bytes, group: group)))
    }

    /// `relative` under the root.
    func absolute(_ relative: String) -> String { root + "/" + relative }

    var lockPath: String { absolute(Self.lockName) }
    var journalPath: String { absolute(Self.journalName) }
    var versionPath: String { absolute(Self.versionName) }
    var protectionPath: String { absolute(Self.protectionName) }

    /// "public" or "private": the folder of one key class.
    static func classDirectory(_ keyClass: RSAKeyClass) -> String { keyClass.rawValue }

    /// The folders of the record items ("folder/hh/H.item"): passwords, certificates, CRLs and
    /// cached OCSP responses.
    static let recordDirectories = [passwordDirectory, certificateDirectory, crlDirectory, ocspDirectory]

    /// The folders a new store is made with; the others are made by the first write into them.
    static let initialDirectories =
        RSAKeyClass.allCases.map(classDirectory)
        + [indexDirectory, fingerprintIndexDirectory, passwordDirectory, certificateDirectory]

    /// Every name the store's own folder may hold (beside temporary files and nested
    /// application stores): what tells a store from a folder of other files.
    static let topLevelNames: Set<String> = Set(
        [versionName, lockName, journalName, indexDirectory, protectionName, StoreSharing.fileName]
            + RSAKeyClass.allCases.map(classDirectory) + recordDirectories)

    /// "folder/hh/H.item": the record file of hash H in one of ``recordDirectories``.
    static func recordPath(_ folder: String, hash: String) -> String {
        folder + "/" + hash.prefix(2) + "/" + hash + recordSuffix
    }

    /// The tag hash H: lower-case hex SHA-256 of the tag's UTF-8 bytes (64 digits), qualified
    /// by the group for groups other than the default.
    static func tagHash(_ tag: String, group: String) -> String {
        groupHash(Array(tag.utf8), group: group)
    }

    /// "public/hh" or "private/hh".
    static func itemShard(_ keyClass: RSAKeyClass, tagHash: String) -> String {
        classDirectory(keyClass) + "/" + tagHash.prefix(2)
    }

    /// "public/hh/H.pem" (relative).
    static func itemPath(_ keyClass: RSAKeyClass, tagHash: String) -> String {
        itemShard(keyClass, tagHash: tagHash) + "/" + tagHash + itemSuffix
    }

    /// The tag hash in an item file name "H.pem", or nil when the name is not one.
    static func tagHash(fromItemName name: String) -> String? {
        guard name.hasSuffix(itemSuffix) else { return nil }
        let hash = name.dropLast(itemSuffix.count)
        return StoreHex.isLowerHex(hash, count: 64) ? String(hash) : nil
    }

    /// "index/fingerprint/ff" (relative).
    static func fingerprintShard(_ fingerprintHex: String) -> String {
        fingerprintIndexDirectory + "/" + fingerprintHex.prefix(2)
    }

    /// "index/fingerprint/ff/F.H.class" (relative).
    static func fingerprintEntry(fingerprintHex: String, tagHash: String, keyClass: RSAKeyClass) -> String {
        fingerprintShard(fingerprintHex) + "/" + fingerprintHex + "." + tagHash + "." + keyClass.rawValue
    }

    /// (F, H, class) from an index entry name "F.H.class", or nil.
    static func parseFingerprintEntry(_ name: String) -> (
        fingerprintHex: String, tagHash: String, keyClass: RSAKeyClass
    )? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, StoreHex.isLowerHex(parts[0], count: 64),
            StoreHex.isLowerHex(parts[1], count: 64),
            let keyClass = RSAKeyClass(rawValue: String(parts[2]))
        else { return nil }
        return (String(parts[0]), String(parts[1]), keyClass)
    }

    /// The two-digit shard names "00" ... "ff".
    static func isShardName(_ name: String) -> Bool {
        StoreHex.isLowerHex(Substring(name), count: 2)
    }

    // MARK: Item ids

    /// A new item id "H-class-R": the tag hash, the key class and 16 random hex digits.
    /// The id finds its item without a search (H and class give the file); R makes a
    /// replaced item's id differ from its predecessor's.
    static func newItemID(tagHash: String, keyClass: RSAKeyClass) -> String {
        var random = [UInt8](repeating: 0, count: 8)
        random.withUnsafeMutableBytes { SystemRandomSource().fill($0) }
        return tagHash + "-" + keyClass.rawValue + "-" + StoreHex.encode(random)
    }

    /// The middle word of a record item's id "H-kind-R".
    enum RecordKind: String {
        /// A generic or internet password (H = S A or I A, 128 digits).
        case password
        /// A certificate (H = C, 64 digits).
        case certificate
        /// A CRL (H = I, 64 digits).
        case crl
    }

    /// A new item id "H-kind-R" for a record item of this kind.
    static func newItemID(hash: String, kind: RecordKind) -> String {
        hash + "-" + kind.rawValue + "-" + StoreHex.encode(SystemRandomSource().bytes(8))
    }

    /// What an item id names: the file of its item.
    enum ItemReference: Equatable {
        case key(tagHash: String, keyClass: RSAKeyClass)
        case password(hash: String)
        case certificate(hash: String)
        case crl(hash: String)
    }

    /// The item an id names, or nil when the text is not an item id.
    static func parseAnyItemID(_ id: String) -> ItemReference? {
        if let key = parseItemID(id) { return .key(tagHash: key.tagHash, keyClass: key.keyClass) }
        let parts = id.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, StoreHex.isLowerHex(parts[2], count: 16) else { return nil }
        switch RecordKind(rawValue: String(parts[1])) {
        case .password? where StoreHex.isLowerHex(parts[0], count: 128): return .password(hash: String(parts[0]))
        case .certificate? where StoreHex.isLowerHex(parts[0], count: 64): return .certificate(hash: String(parts[0]))
        case .crl? where StoreHex.isLowerHex(parts[0], count: 64): return .crl(hash: String(parts[0]))
        default: return nil
        }
    }

    // MARK: Passwords and certificates

    /// S A: hex SHA-256 of the service's UTF-8 bytes, then of the account's (128 digits).
    static func passwordHash(service: String, account: String, group: String) -> String {
        serviceHash(service, group: group) + StoreHex.encode(RSAHashAlgorithm.sha256.hash(Array(account.utf8)))
    }

    /// I A for an internet password: I = hex SHA-256 of "internet-password" and the server,
    /// protocol, port, path, authentication type and security domain (each as a 4-byte
    /// big-endian length and its UTF-8), A = hex SHA-256 of the account (128 digits). Lives
    /// in the passwords folder, sharded by I. I is qualified by the group (not A).
    static func internetPasswordHash(_ key: RSAInternetPasswordKey, group: String) -> String {
        var bytes: [UInt8] = []
        for field in ["internet-password"] + key.fields.dropLast() {
            let utf8 = Array(field.utf8), n = UInt32(utf8.count)
            bytes += [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + utf8
        }
        return groupHash(bytes, group: group) + StoreHex.encode(RSAHashAlgorithm.sha256.hash(Array(key.account.utf8)))
    }

    /// S: hex SHA-256 of the service's UTF-8 bytes (64 digits), qualified by the group.
    static func serviceHash(_ service: String, group: String) -> String {
        groupHash(Array(service.utf8), group: group)
    }

    /// "passwords/ss" for a service hash S (the folder holding every account of S).
    static func passwordShard(serviceHash: String) -> String {
        passwordDirectory + "/" + serviceHash.prefix(2)
    }

    /// "passwords/ss/SA.item".
    static func passwordPath(hash: String) -> String {
        recordPath(passwordDirectory, hash: hash)
    }

    /// C: hex SHA-256 of (4-byte big-endian length of the issuer's UTF-8, the issuer, the
    /// serial number's bytes), qualified by the group: one name per (group, issuer, serial).
    static func certificateHash(issuer: String, serialNumber: [UInt8], group: String) -> String {
        let name = Array(issuer.utf8)
        let n = UInt32(name.count)
        let bytes =
            [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + name + serialNumber
        return groupHash(bytes, group: group)
    }

    static let labelIndexDirectory = "index/label"
    static let certificateIndexDirectory = "index/certificate"

    /// "index/label/ll/L.C": certificate C has a label whose SHA-256 is L.
    static func labelEntry(label: String, certificateHash: String) -> String {
        let l = StoreHex.encode(RSAHashAlgorithm.sha256.hash(Array(label.utf8)))
        return labelIndexDirectory + "/" + l.prefix(2) + "/" + l + "." + certificateHash
    }

    /// "index/certificate/ff/F.C": certificate C has the DER fingerprint F.
    static func certificateFingerprintEntry(fingerprintHex: String, certificateHash: String) -> String {
        certificateIndexDirectory + "/" + fingerprintHex.prefix(2) + "/" + fingerprintHex + "." + certificateHash
    }

    /// "index/fingerprint/ff/F.C.certificate": certificate C's public key has fingerprint F
    /// (beside the key entries "F.H.public" / "F.H.private", which is how identities link).
    static func certificateKeyEntry(fingerprintHex: String, certificateHash: String) -> String {
        fingerprintShard(fingerprintHex) + "/" + fingerprintHex + "." + certificateHash + "."
            + RecordKind.certificate.rawValue
    }

    /// C from a fingerprint index entry name "F.C.certificate" with this F, or nil when the
    /// name is not one (a key's entry "F.H.public", another fingerprint, anything else).
    static func certificateHash(fromKeyEntry name: String, fingerprintHex: String) -> String? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Substring(fingerprintHex),
            parts[2] == Substring(RecordKind.certificate.rawValue),
            StoreHex.isLowerHex(parts[1], count: 64)
        else { return nil }
        return String(parts[1])
    }

    /// The folder and the name prefix under which index entries for `key` (a 64-digit hash)
    /// live in `directory`.
    static func indexShard(_ directory: String, key: String) -> String {
        directory + "/" + key.prefix(2)
    }

    /// "certificates/cc/C.item".
    static func certificatePath(hash: String) -> String {
        recordPath(certificateDirectory, hash: hash)
    }

    /// I: hex SHA-256 of the CRL issuer's RFC 4514 name (UTF-8): one CRL item per issuer.
    static func crlHash(issuer: String) -> String {
        StoreHex.encode(RSAHashAlgorithm.sha256.hash(Array(issuer.utf8)))
    }

    /// "crls/ii/I.item".
    static func crlPath(hash: String) -> String {
        recordPath(crlDirectory, hash: hash)
    }

    /// "ocsp/kk/K.item": the cached OCSP response under the cache key whose hex is K.
    static func ocspPath(keyHex: String) -> String {
        recordPath(ocspDirectory, hash: keyHex)
    }

    /// The hash in a record file name "X.item" of `digits` hex digits, or nil.
    static func recordHash(fromName name: String, digits: Int) -> String? {
        guard name.hasSuffix(recordSuffix) else { return nil }
        let hash = name.dropLast(recordSuffix.count)
        return StoreHex.isLowerHex(hash, count: digits) ? String(hash) : nil
    }

    /// (H, class) from an item id, or nil when it is not in the form ``newItemID(tagHash:keyClass:)`` makes.
    static func parseItemID(_ id: String) -> (tagHash: String, keyClass: RSAKeyClass)? {
        let parts = id.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, StoreHex.isLowerHex(parts[0], count: 64),
            let keyClass = RSAKeyClass(rawValue: String(parts[1])),
            StoreHex.isLowerHex(parts[2], count: 16)
        else { return nil }
        return (String(parts[0]), keyClass)
    }
}
