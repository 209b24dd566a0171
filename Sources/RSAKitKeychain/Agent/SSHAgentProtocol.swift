// The ssh-agent protocol (draft-miller-ssh-agent) as far as rsakit's agent speaks it: pure
// encoding and parsing on bytes, no sockets, no keys; the serving is RSAKeychainAgent+SSH.swift.
//
//   frame   = uint32 length (big-endian, 1 ... maximumFrameByteCount) || byte message number || contents
//   string  = uint32 length || bytes                                              RFC 4251 §5
//   mpint   = string: two's complement, big-endian, no needless leading byte;
//             a positive value whose top bit is set gets a leading 0x00            RFC 4251 §5
//
//   SSH_AGENTC_REQUEST_IDENTITIES (11), no contents
//     -> SSH_AGENT_IDENTITIES_ANSWER (12): uint32 nkeys || (string key blob || string comment) * nkeys
//   SSH_AGENTC_SIGN_REQUEST (13): string key blob || string data || uint32 flags
//     -> SSH_AGENT_SIGN_RESPONSE (14): string signature
//   key blob  = string "ssh-rsa" || mpint e || mpint n                             RFC 4253 §6.6
//   signature = string "rsa-sha2-256" | "rsa-sha2-512" || string S (k bytes)      RFC 8332 §3
//   anything else (add, remove, lock, unlock, extensions) -> SSH_AGENT_FAILURE (5)
//
// SHA-1 (`ssh-rsa` signatures, a sign request without SSH_AGENT_RSA_SHA2_256 or _512) is
// refused: SHA-1 collisions are practical, RFC 8332 exists to replace it, and OpenSSH has not
// used it by default since 8.8; a server that still wants it is refused rather than served
// a signature over a collision-prone hash.

import RSAKitCore

package enum SSHAgentProtocol {
    /// The largest frame accepted, in bytes (OpenSSH's agent has the same limit): the data
    /// of a sign request is a session id and a user-auth request, a few hundred bytes.
    package static let maximumFrameByteCount = 256 * 1024

    /// Message numbers (draft-miller-ssh-agent §6.1).
    package enum MessageNumber {
        package static let failure: UInt8 = 5
        package static let success: UInt8 = 6
        package static let requestIdentities: UInt8 = 11
        package static let identitiesAnswer: UInt8 = 12
        package static let signRequest: UInt8 = 13
        package static let signResponse: UInt8 = 14
    }

    /// Signature flags of SSH_AGENTC_SIGN_REQUEST (draft-miller-ssh-agent §6.6).
    package enum SignatureFlag {
        package static let rsaSHA2_256: UInt32 = 2
        package static let rsaSHA2_512: UInt32 = 4
    }

    /// A request, as the agent acts on it.
    package enum Request: Equatable {
        /// SSH_AGENTC_REQUEST_IDENTITIES.
        case requestIdentities
        /// SSH_AGENTC_SIGN_REQUEST: the key's public blob, the data to sign, the flags.
        case sign(keyBlob: [UInt8], data: [UInt8], flags: UInt32)
        /// Any other message number; its contents are not read. Answered SSH_AGENT_FAILURE.
        case unsupported(UInt8)
    }

    /// A frame that does not follow the protocol: the connection that sent it is closed.
    package struct MalformedFrame: Error, Equatable, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// An identity as listed: the public key blob and the comment (the store tag).
    package struct Identity: Equatable {
        package var keyBlob: [UInt8]
        package var comment: String

        package init(keyBlob: [UInt8], comment: String) {
            self.keyBlob = keyBlob
            self.comment = comment
        }
    }

    // MARK: Frames

    /// The payload length a 4-byte frame header announces.
    /// - Throws: `MalformedFrame` when it is 0 (no message number) or over ``maximumFrameByteCount``.
    package static func payloadLength(header: [UInt8]) throws -> Int {
        guard header.count == 4 else { throw MalformedFrame("a frame header is 4 bytes") }
        let length = Int(readUInt32(header, 0))
        guard length > 0 else { throw MalformedFrame("an empty frame") }
        guard length <= maximumFrameByteCount else {
            throw MalformedFrame("a frame of \(length) bytes is over the \(maximumFrameByteCount)-byte limit")
        }
        return length
    }

    /// Parse a request payload (the frame without its length).
    /// - Throws: `MalformedFrame` when a known request's contents are truncated, longer than
    ///   their fields, or (sign) carry a string past the end.
    package static func parseRequest(_ payload: [UInt8]) throws -> Request {
        guard let number = payload.first else { throw MalformedFrame("an empty frame") }
        var reader = Reader(payload, offset: 1)
        switch number {
        case MessageNumber.requestIdentities:
            try reader.finish()
            return .requestIdentities
        case MessageNumber.signRequest:
            let keyBlob = try reader.string()
            let data = try reader.string()
            let flags = try reader.uint32()
            try reader.finish()
            return .sign(keyBlob: keyBlob, data: data, flags: flags)
        default:
            return .unsupported(number)
        }
    }

    /// SSH_AGENT_IDENTITIES_ANSWER, framed.
    package static func identitiesAnswer(_ identities: [Identity]) -> [UInt8] {
        var payload = [MessageNumber.identitiesAnswer] + uint32(identities.count)
        for identity in identities {
            payload += string(identity.keyBlob) + string(Array(identity.comment.utf8))
        }
        return frame(payload)
    }

    /// SSH_AGENT_SIGN_RESPONSE, framed: `string(string(algorithm) || string(signature))`.
    package static func signResponse(algorithm: String, signature: [UInt8]) -> [UInt8] {
        frame([MessageNumber.signResponse] + string(string(Array(algorithm.utf8)) + string(signature)))
    }

    /// SSH_AGENT_FAILURE, framed.
    package static let failure: [UInt8] = frame([MessageNumber.failure])

    /// uint32 length || payload.
    package static func frame(_ payload: [UInt8]) -> [UInt8] { uint32(payload.count) + payload }

    // MARK: Keys and signatures

    /// The `ssh-rsa` public key blob (RFC 4253 §6.6): string "ssh-rsa" || mpint e || mpint n.
    /// - Parameters: `modulus`, `publicExponent`: unsigned big-endian magnitudes.
    package static func publicKeyBlob(modulus: [UInt8], publicExponent: [UInt8]) -> [UInt8] {
        string(Array("ssh-rsa".utf8)) + mpint(publicExponent) + mpint(modulus)
    }

    /// The signature algorithm a sign request's flags ask for (RFC 8332 §3.1): SHA-256 when
    /// SSH_AGENT_RSA_SHA2_256 is set, else SHA-512 when SSH_AGENT_RSA_SHA2_512 is (OpenSSH's
    /// order when both are); nil for neither (SHA-1 `ssh-rsa`, refused). Other bits are ignored.
    package static func signatureAlgorithm(flags: UInt32) -> (name: String, hash: RSAHashAlgorithm)? {
        if flags & SignatureFlag.rsaSHA2_256 != 0 { return ("rsa-sha2-256", .sha256) }
        if flags & SignatureFlag.rsaSHA2_512 != 0 { return ("rsa-sha2-512", .sha512) }
        return nil
    }

    // MARK: RFC 4251 §5 types

    /// An mpint of a non-negative value given as an unsigned big-endian magnitude.
    package static func mpint(_ magnitude: [UInt8]) -> [UInt8] {
        let digits = Array(magnitude.drop { $0 == 0 })
        guard let top = digits.first else { return string([]) }
        return string(top & 0x80 != 0 ? [0] + digits : digits)
    }

    static func string(_ bytes: [UInt8]) -> [UInt8] { uint32(bytes.count) + bytes }

    static func uint32(_ n: Int) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8),
            UInt8(truncatingIfNeeded: n)
        ]
    }

    static func readUInt32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    /// Reads RFC 4251 types from a payload, never past its end.
    struct Reader {
        let bytes: [UInt8]
        var offset: Int

        init(_ bytes: [UInt8], offset: Int) {
            self.bytes = bytes
            self.offset = offset
        }

        mutating func uint32() throws -> UInt32 {
            guard bytes.count - offset >= 4 else { throw MalformedFrame("a truncated uint32") }
            defer { offset += 4 }
            return readUInt32(bytes, offset)
        }

        mutating func string() throws -> [UInt8] {
            let length = Int(try uint32())
            guard length <= bytes.count - offset else { throw MalformedFrame("a string longer than the frame") }
            defer { offset += length }
            return Array(bytes[offset..<(offset + length)])
        }

        func finish() throws {
            guard offset == bytes.count else { throw MalformedFrame("\(bytes.count - offset) bytes after the request") }
        }
    }
}
