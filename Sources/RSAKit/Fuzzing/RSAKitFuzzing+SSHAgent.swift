// The agent's ssh-agent side (SSHAgentProtocol, RSAKeychainAgent+SSH.swift), for
// Fuzz/Sources/FuzzSSHAgent: what an ssh client of the same user sends is untrusted input
// (frame lengths, message numbers, key blobs, data, flags). The codec is package access,
// which the separate Fuzz package cannot see; these hand it out as plain values.

import RSAKitCore
import RSAKitKeychain

@_spi(Fuzzing)
extension RSAKitFuzzing {
    /// A request as ``SSHAgentProtocol/parseRequest(_:)`` reads it.
    public enum SSHAgentRequest: Sendable, Equatable {
        /// SSH_AGENTC_REQUEST_IDENTITIES (11).
        case requestIdentities
        /// SSH_AGENTC_SIGN_REQUEST (13): the key blob, the data to sign, the flags.
        case sign(keyBlob: [UInt8], data: [UInt8], flags: UInt32)
        /// Any other message number (answered SSH_AGENT_FAILURE).
        case unsupported(UInt8)
    }

    /// The largest frame payload the agent reads, in bytes (256 KiB).
    public static var sshAgentMaximumFrameByteCount: Int { SSHAgentProtocol.maximumFrameByteCount }

    /// The payload length a 4-byte frame header announces, as the agent reads it; nil when the
    /// agent refuses the header (0, over the limit, not 4 bytes).
    public static func sshAgentPayloadLength(header: [UInt8]) -> Int? {
        try? SSHAgentProtocol.payloadLength(header: header)
    }

    /// A request payload (the frame without its length) parsed as the agent parses it; nil
    /// when it is malformed (the agent then closes the connection).
    public static func sshAgentParseRequest(_ payload: [UInt8]) -> SSHAgentRequest? {
        switch try? SSHAgentProtocol.parseRequest(payload) {
        case nil: return nil
        case .requestIdentities: return .requestIdentities
        case let .sign(keyBlob, data, flags): return .sign(keyBlob: keyBlob, data: data, flags: flags)
        case let .unsupported(number): return .unsupported(number)
        }
    }

    /// The RFC 4251 mpint (length prefix included) of the unsigned big-endian `magnitude`.
    public static func sshAgentMPInt(_ magnitude: [UInt8]) -> [UInt8] { SSHAgentProtocol.mpint(magnitude) }

    /// The `ssh-rsa` public key blob (RFC 4253 §6.6) of a key given by unsigned big-endian
    /// magnitudes.
    public static func sshAgentPublicKeyBlob(modulus: [UInt8], publicExponent: [UInt8]) -> [UInt8] {
        SSHAgentProtocol.publicKeyBlob(modulus: modulus, publicExponent: publicExponent)
    }

    /// Serve one ssh-agent connection whose client sends `clientBytes` (then closes its
    /// side) with a fresh agent for `store` (protected and unlocked), exactly as the agent
    /// serves its SSH_AUTH_SOCK; return every byte it wrote back.
    /// - Parameter clientBytes: at most 64 KiB.
    /// - Throws: `RSAError.internalError` when the socket pair cannot be made; what the agent's
    ///   initialiser throws.
    public static func sshAgentConnection(store: RSAKeyStore, clientBytes: [UInt8]) throws -> [UInt8] {
        precondition(clientBytes.count <= 64 * 1024, "the socket buffer holds the whole request")
        let agent = try RSAKeychainAgent(store: store, socketPath: "/nonexistent/rsakit-fuzz.sock")
        return try served(clientBytes) { agent.serveSSHConnection($0) }
    }
}
