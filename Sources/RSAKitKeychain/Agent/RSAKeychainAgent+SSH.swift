// The agent's ssh-agent socket (SSH_AUTH_SOCK): it lists the store's RSA keys and signs with
// them for ssh clients of the same user (SSHAgentProtocol). A private key is opened with the
// store key the agent holds, used for one signature, and let go; neither it nor the store key
// ever crosses the socket.

import RSAKitCore
import RSAKitPKI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
internal import CRSAKitShims

extension RSAKeychainAgent {
    /// How long an ssh connection may stay idle between requests, in milliseconds. ssh keeps
    /// its agent connection open through user authentication (a network round trip between
    /// listing and signing); a frame once begun must still arrive within the read timeout.
    static let sshIdleMilliseconds: Int32 = 60_000

    /// Requests on one ssh-agent connection until it closes, stays idle too long, or sends a
    /// malformed or over-long frame (that connection only is closed).
    package func serveSSHConnection(_ fd: Int32) {
        AgentWire.setTimeouts(fd, seconds: AgentWire.readTimeoutSeconds)
        var peer: UInt32 = 0
        // An ssh client has no use for a message: a peer of another user is just closed.
        guard rsakit_peer_uid(fd, &peer) == 0, peer == getuid() else { return }
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Self.sshIdleMilliseconds) > 0 else { return }
            var payload: [UInt8]
            do {
                let length = try SSHAgentProtocol.payloadLength(header: try AgentWire.readExactly(fd, 4))
                payload = try AgentWire.readExactly(fd, length)
            } catch {
                return
            }
            defer { wipe(&payload) }
            guard let request = try? SSHAgentProtocol.parseRequest(payload) else { return }
            guard (try? AgentWire.writeAll(fd, sshAnswer(to: request))) != nil else { return }
        }
    }

    /// The framed answer to one well-formed request.
    package func sshAnswer(to request: SSHAgentProtocol.Request) -> [UInt8] {
        if expireIfDue() {
            return request == .requestIdentities ? SSHAgentProtocol.identitiesAnswer([]) : SSHAgentProtocol.failure
        }
        switch request {
        case .requestIdentities:
            // A locked agent lists nothing, as OpenSSH's locked agent does: ssh then moves on
            // to its other keys instead of offering one it cannot sign with.
            guard let key = currentKey(touch: false),
                let identities = try? sshIdentities(storeKey: key)
            else { return SSHAgentProtocol.identitiesAnswer([]) }
            return SSHAgentProtocol.identitiesAnswer(identities.map(\.identity))
        case let .sign(keyBlob, data, flags):
            guard let algorithm = SSHAgentProtocol.signatureAlgorithm(flags: flags),
                let key = currentKey(touch: true),
                let itemID = try? sshIdentities(storeKey: key).first(where: { $0.identity.keyBlob == keyBlob })?.itemID,
                let (tagHash, _) = StoreLayout.parseItemID(itemID),
                let privateKey = try? store.withReadLock({
                    try store.loadItem(.private, tagHash: tagHash, knownTag: nil, secrets: .key(key))
                })?.privateKey,
                let signature = try? privateKey.signature(for: data, hash: algorithm.hash, padding: .pkcs1v15)
            else {
                return SSHAgentProtocol.failure
            }
            return SSHAgentProtocol.signResponse(algorithm: algorithm.name, signature: signature)
        case .unsupported:
            return SSHAgentProtocol.failure
        }
    }

    /// The keys ssh may use: every private key item held in the store (not on a token, not
    /// restricted to PSS, which ssh cannot use), once per key under the first of its tags in
    /// tag order. An identity's key is such an item, so identities are served through it.
    /// Only the access groups the agent's store was opened with are served (every group when
    /// it was opened without); the item id, not the tag, names the key to sign with, since a
    /// tag may be in several groups. Reads public halves only (sealed items keep their public
    /// key readable).
    /// - Parameter storeKey: proof that the agent is unlocked; listing needs no secret.
    func sshIdentities(storeKey _: UnlockedStoreKey) throws -> [(identity: SSHAgentProtocol.Identity, itemID: String)] {
        let (listing, publicKeys) = try store.allKeyItemsWithPublicKeys()
        var seen = Set<RSAKeyFingerprint>()
        var identities: [(identity: SSHAgentProtocol.Identity, itemID: String)] = []
        for item in listing.items where item.keyClass == .private && item.token == nil && item.pssRestriction == nil {
            guard let publicKey = publicKeys[item.itemID], seen.insert(item.fingerprint).inserted else { continue }
            let blob = SSHAgentProtocol.publicKeyBlob(
                modulus: publicKey.modulus, publicExponent: publicKey.publicExponent)
            identities.append((SSHAgentProtocol.Identity(keyBlob: blob, comment: item.applicationTag), item.itemID))
        }
        return identities
    }
}
