// The system keychain's client, as services use it: each call is one request to the system
// agent (RSASystemKeychain.swift), which decides by the caller's Unix user and groups. The
// private keys stay in the agent.

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
internal import CRSAKitShims

/// A client of the system keychain agent: what `--system` on the command line uses. Every
/// call is one request over a fresh connection; the agent decides by this process's uid and
/// groups.
public struct RSASystemKeychainClient: Sendable {
    /// The agent's socket.
    public let socketPath: String

    /// A client of the agent at `socketPath` (default ``RSASystemKeychain/defaultSocketPath(environment:)``).
    public init(socketPath: String = RSASystemKeychain.defaultSocketPath()) {
        self.socketPath = socketPath
    }

    /// How long a client waits for an answer, in seconds (a signature or a store read).
    static let answerTimeoutSeconds = 30

    private func request(_ verb: String, _ fields: [[UInt8]], query: RSAKeychainItemQuery? = nil) throws -> [[UInt8]] {
        var message = AgentWire.Message(.system, [Array(verb.utf8)] + fields)
        defer { for index in message.fields.indices { wipe(&message.fields[index]) } }
        let fd: Int32?
        do { fd = try AgentWire.connect(socketPath, timeoutSeconds: Self.answerTimeoutSeconds) } catch {
            throw RSAError.storeIOError(path: socketPath, reason: "\(error)")
        }
        guard let fd else {
            throw RSAError.storeIOError(path: socketPath, reason: "no system keychain agent listens there")
        }
        defer { close(fd) }
        var frame = message.encoded()
        defer { wipe(&frame) }
        let answer: AgentWire.Message
        do {
            try AgentWire.writeAll(fd, frame)
            answer = try AgentWire.readMessage(fd)
        } catch {
            throw RSAError.storeIOError(path: socketPath, reason: "the system keychain agent: \(error)")
        }
        guard answer.operation == .error else { return answer.fields }
        let text = answer.fields.first.map { String(decoding: $0, as: UTF8.self) } ?? "refused"
        switch answer.fields.count > 1 ? String(decoding: answer.fields[1], as: UTF8.self) : "failure" {
        case "denied": throw RSAError.storeAccessDenied(path: socketPath, reason: text)
        case "notfound": throw query.map { RSAError.itemNotFound($0) } ?? RSAError.invalidAttribute(reason: text)
        case "duplicate": throw query.map { RSAError.duplicateItem($0) } ?? RSAError.invalidAttribute(reason: text)
        case "usage": throw RSAError.invalidAttribute(reason: text)
        case "data": throw RSAError.decryptionFailed
        default: throw RSAError.storeIOError(path: socketPath, reason: text)
        }
    }

    /// The value of the generic password (service, account) in a group this user may use
    /// (`accessGroup`, or any of them when nil).
    ///
    /// - Throws: `RSAError.storeAccessDenied` when the agent allows this user no group, or not
    ///   `accessGroup`; `RSAError.itemNotFound` when no allowed group holds it;
    ///   `RSAError.storeIOError` when no agent answers.
    public func genericPasswordValue(service: String, account: String, accessGroup: String? = nil) throws
        -> RSASecretBytes
    {
        var fields = try request(
            "password-get", [Array(service.utf8), Array(account.utf8), Array((accessGroup ?? "").utf8)],
            query: .genericPassword(service: service, account: account))
        guard fields.count == 1 else { throw RSAError.storeIOError(path: socketPath, reason: "malformed answer") }
        return RSASecretBytes(consuming: &fields[0])
    }

    /// Add a generic password to `accessGroup` (nil: this user's only group).
    ///
    /// - Returns: the group it was added to.
    /// - Throws: `RSAError.storeAccessDenied` for a group this user may not use (a mistyped
    ///   group is refused, not created); `RSAError.duplicateItem`; `RSAError.invalidAttribute`;
    ///   `RSAError.storeIOError`.
    @discardableResult
    public func addGenericPassword(
        _ value: RSASecretBytes, service: String, account: String, accessGroup: String? = nil
    ) throws -> String {
        let fields = try request(
            "password-add", [Array(service.utf8), Array(account.utf8), value.bytes, Array((accessGroup ?? "").utf8)],
            query: .genericPassword(service: service, account: account))
        return fields.first.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Sign `digest` (Hash(M), made with `hash`) with the private key of tag `tag`, PKCS#1
    /// v1.5 or PSS (salt = digest length); the key stays in the agent.
    ///
    /// - Returns: the signature, k bytes.
    /// - Throws: `RSAError.storeAccessDenied`, `RSAError.itemNotFound`, `RSAError.invalidAttribute`
    ///   (a digest of the wrong length, a key too small), `RSAError.storeIOError`.
    public func signature(
        forDigest digest: [UInt8], hash: RSAHashAlgorithm, pss: Bool = false, tag: String,
        accessGroup: String? = nil
    ) throws -> [UInt8] {
        let fields = try request(
            "sign",
            [
                Array(tag.utf8), Array(hash.rawValue.utf8), Array((pss ? "pss" : "pkcs1").utf8), digest,
                Array((accessGroup ?? "").utf8)
            ],
            query: .key(tag: tag, keyClass: .private))
        guard let signature = fields.first else {
            throw RSAError.storeIOError(path: socketPath, reason: "malformed answer")
        }
        return signature
    }

    /// Sign a DER DigestInfo (what PKCS#11's CKM_RSA_PKCS and TLS 1.2's PKCS#1 v1.5
    /// signatures hand over) with the private key of tag `tag`: the DigestInfo of a SHA-1,
    /// SHA-2 or SHA-3 digest, recognised by its exact DER prefix and length, whose digest the
    /// agent signs with PKCS#1 v1.5 (re-encoding the same DigestInfo); the key stays in the agent.
    ///
    /// - Returns: the signature, k bytes.
    /// - Throws: `RSAError.invalidAttribute` for bytes that are not such a DigestInfo (nothing
    ///   is sent); as ``signature(forDigest:hash:pss:tag:accessGroup:)``.
    public func signature(forDigestInfo digestInfo: [UInt8], tag: String, accessGroup: String? = nil) throws -> [UInt8]
    {
        for hash in RSAHashAlgorithm.allCases {
            let prefix = RSAHazmat.EMSAPKCS1v15.digestInfoPrefix(for: hash)
            guard digestInfo.count == prefix.count + hash.digestByteCount, digestInfo.starts(with: prefix) else {
                continue
            }
            return try signature(
                forDigest: Array(digestInfo.dropFirst(prefix.count)), hash: hash, pss: false, tag: tag,
                accessGroup: accessGroup)
        }
        throw RSAError.invalidAttribute(reason: "not the DER DigestInfo of a SHA-1, SHA-2 or SHA-3 digest")
    }

    /// Decrypt `ciphertext` with the private key of tag `tag` (PKCS#1 v1.5, or OAEP with
    /// `oaepHash` for hash and MGF1 and an empty label); the key stays in the agent.
    ///
    /// - Throws: `RSAError.decryptionFailed` (opaque), and as ``signature(forDigest:hash:pss:tag:accessGroup:)``.
    public func decrypt(
        _ ciphertext: [UInt8], tag: String, oaepHash: RSAHashAlgorithm? = nil,
        accessGroup: String? = nil
    ) throws -> RSASecretBytes {
        var fields = try request(
            "decrypt",
            [
                Array(tag.utf8), Array((oaepHash.map { "oaep-" + $0.rawValue } ?? "pkcs1").utf8), ciphertext,
                Array((accessGroup ?? "").utf8)
            ],
            query: .key(tag: tag, keyClass: .private))
        guard fields.count == 1 else { throw RSAError.storeIOError(path: socketPath, reason: "malformed answer") }
        return RSASecretBytes(consuming: &fields[0])
    }

    /// The items of the groups this user may use, one line each, tab-separated: "key GROUP
    /// CLASS TAG", "password GROUP SERVICE ACCOUNT", "certificate GROUP SUBJECT".
    public func itemLines() throws -> [String] {
        try request("list", []).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The public keys (of public key items, and the public halves of private key items) and
    /// the certificates of every group this user may use: what the PKCS#11 module's slot
    /// shows over the system keychain, and where ``RSATLSClientIdentity`` finds a
    /// certificate for a private key the agent holds. No private key's parts leave the agent.
    ///
    /// - Returns: one ``RSASystemKeychainObject`` per item that read (items the agent could
    ///   not read are left out), keys first, in the store's listing order.
    /// - Throws: `RSAError.storeAccessDenied` when the agent allows this user no group;
    ///   `RSAError.storeIOError` when no agent answers or the answer is malformed.
    public func objects() throws -> [RSASystemKeychainObject] {
        let fields = try request("objects", [])
        guard fields.count % 5 == 0 else { throw RSAError.storeIOError(path: socketPath, reason: "malformed answer") }
        var objects: [RSASystemKeychainObject] = []
        for start in stride(from: 0, to: fields.count, by: 5) {
            let kind = String(decoding: fields[start], as: UTF8.self)
            let group = String(decoding: fields[start + 1], as: UTF8.self)
            let tag = String(decoding: fields[start + 2], as: UTF8.self)
            let label = String(decoding: fields[start + 3], as: UTF8.self)
            let der = fields[start + 4]
            do {
                switch kind {
                case "certificate":
                    objects.append(
                        RSASystemKeychainObject(
                            kind: .certificate(try X509Certificate(derRepresentation: der)), accessGroup: group,
                            tag: tag, label: label))
                case RSAKeyClass.private.rawValue:
                    objects.append(
                        RSASystemKeychainObject(
                            kind: .privateKey(try RSAPublicKey(derRepresentation: der)), accessGroup: group, tag: tag,
                            label: label))
                case RSAKeyClass.public.rawValue:
                    objects.append(
                        RSASystemKeychainObject(
                            kind: .publicKey(try RSAPublicKey(derRepresentation: der)), accessGroup: group, tag: tag,
                            label: label))
                default:
                    continue
                }
            } catch {
                throw RSAError.storeIOError(path: socketPath, reason: "malformed answer: \(error)")
            }
        }
        return objects
    }

    /// The rules: every rule for root, the rules of the groups this user may use for another
    /// user ("GROUP user USER", "GROUP group UNIXGROUP").
    ///
    /// - Throws: `RSAError.storeAccessDenied` for a user allowed no group; `RSAError.storeIOError`.
    public func rules() throws -> [String] {
        try request("rules", []).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Add (`allow: true`) or remove a rule; root only.
    ///
    /// - Throws: `RSAError.storeAccessDenied` for any caller but root; `RSAError.invalidAttribute`
    ///   for an invalid access group name or a Unix user or group that does not exist (nothing
    ///   is stored); `RSAError.storeIOError`.
    public func setRule(_ rule: RSASystemAccessRule, allow: Bool) throws {
        let (kind, name): (String, String)
        switch rule.subject {
        case let .user(user): (kind, name) = ("user", user)
        case let .group(group): (kind, name) = ("group", group)
        }
        _ = try request(allow ? "allow" : "deny", [Array(rule.accessGroup.utf8), Array(kind.utf8), Array(name.utf8)])
    }
}

/// One item of the system keychain as ``RSASystemKeychainClient/objects()`` lists it: public
/// data only.
public struct RSASystemKeychainObject: Sendable {
    /// What the item is.
    public enum Kind: Sendable {
        /// A public key item.
        case publicKey(RSAPublicKey)
        /// A private key item, by its public half: the agent signs and decrypts with it
        /// (``RSASystemKeychainClient/signature(forDigest:hash:pss:tag:accessGroup:)``).
        case privateKey(RSAPublicKey)
        /// A certificate item.
        case certificate(X509Certificate)
    }

    /// The item's kind and public value.
    public let kind: Kind
    /// The access group the item is in.
    public let accessGroup: String
    /// The application tag of a key; empty for a certificate.
    public let tag: String
    /// The item's label: a key's (empty when it has none) or a certificate's.
    public let label: String
}
