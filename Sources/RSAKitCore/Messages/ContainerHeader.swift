// The public header of an rsakit container (versions 1 and 2). Layouts: RSAMessageContainer.swift
// and docs/container-format.md.

extension RSAMessageContainer {
    /// The parsed public header of a container (not encrypted; every byte of a version 2
    /// header is bound to the blocks through ``digest``).
    public struct Header: Sendable, Equatable {
        /// Format version: 1 (read only) or 2 (written).
        public let version: UInt8
        /// The encryption padding of every block: RSAES-PKCS1-v1_5, or RSAES-OAEP with the
        /// recorded hashes and an empty label (version 2 only).
        public let padding: RSAEncryptionPadding
        /// k, the block size in bytes.
        public let blockSize: Int
        /// The recipient key's fingerprint (SHA-256 of its DER SubjectPublicKeyInfo).
        public let recipientFingerprint: RSAKeyFingerprint
        /// The random message id, 16 bytes, fresh for every message. Public.
        public let messageID: [UInt8]

        /// Bytes in this header: 60 for version 1, 64 for version 2.
        public var byteCount: Int { RSAMessageContainer.headerByteCount(version: version) }

        /// The header bytes exactly as written (60 or 64 bytes).
        public var bytes: [UInt8] {
            let k = [UInt8(blockSize >> 8), UInt8(blockSize & 0xFF)]
            if version == 1 {
                return RSAMessageContainer.magic + [1, RSAMessageContainer.paddingSchemePKCS1v15] + k
                    + recipientFingerprint.bytes + messageID
            }
            var scheme: [UInt8] = [RSAMessageContainer.paddingSchemePKCS1v15, 0, 0, 0]
            if case let .oaep(parameters) = padding {
                scheme = [
                    RSAMessageContainer.paddingSchemeOAEP, parameters.hash.containerID,
                    parameters.mgf1Hash.containerID, 0
                ]
            }
            return RSAMessageContainer.magic + [2] + scheme + [0] + k + recipientFingerprint.bytes + messageID
        }

        /// SHA-256 of ``bytes`` (32 bytes): what every version 2 frame carries to bind the
        /// whole header to the blocks.
        public var digest: [UInt8] { RSAHashAlgorithm.sha256.hash(bytes) }

        /// Parse a header.
        /// - Parameter bytes: at least the first ``byteCount`` bytes of the container (60 for
        ///   version 1, 64 for version 2); later bytes are ignored.
        /// - Throws: `RSAError.containerInvalid` for a short input, a wrong magic, an unknown
        ///   version, padding scheme or hash, an OAEP label other than empty, a reserved byte
        ///   that is not zero, or k = 0 (these are public fields: the message says which).
        public init(parsing bytes: [UInt8]) throws {
            guard bytes.count >= 9, Array(bytes[0..<8]) == RSAMessageContainer.magic else {
                if bytes.count < RSAMessageContainer.magic.count {
                    throw RSAError.containerInvalid(reason: "input is shorter than the container header")
                }
                throw RSAError.containerInvalid(reason: "not an rsakit container (wrong magic)")
            }
            let version = bytes[8]
            guard version == 1 || version == 2 else {
                throw RSAError.containerInvalid(
                    reason: "unsupported container version \(version) (this rsakit reads versions 1 and 2)")
            }
            let count = RSAMessageContainer.headerByteCount(version: version)
            guard bytes.count >= count else {
                throw RSAError.containerInvalid(reason: "input is shorter than the \(count)-byte container header")
            }
            self.version = version
            if version == 1 {
                guard bytes[9] == RSAMessageContainer.paddingSchemePKCS1v15 else {
                    throw RSAError.containerInvalid(reason: "unsupported padding scheme \(bytes[9])")
                }
                padding = .pkcs1v15
                blockSize = Int(bytes[10]) << 8 | Int(bytes[11])
                recipientFingerprint = RSAKeyFingerprint(bytes: Array(bytes[12..<44]))!
                messageID = Array(bytes[44..<60])
            } else {
                switch bytes[9] {
                case RSAMessageContainer.paddingSchemePKCS1v15:
                    guard bytes[10] == 0, bytes[11] == 0, bytes[12] == 0 else {
                        throw RSAError.containerInvalid(reason: "PKCS#1 v1.5 header with non-zero OAEP fields")
                    }
                    padding = .pkcs1v15
                case RSAMessageContainer.paddingSchemeOAEP:
                    guard let hash = RSAHashAlgorithm(containerID: bytes[10]) else {
                        throw RSAError.containerInvalid(reason: "unknown OAEP hash \(bytes[10])")
                    }
                    guard let mgf1 = RSAHashAlgorithm(containerID: bytes[11]) else {
                        throw RSAError.containerInvalid(reason: "unknown MGF1 hash \(bytes[11])")
                    }
                    guard bytes[12] == 0 else {
                        throw RSAError.containerInvalid(
                            reason: "unsupported OAEP label form \(bytes[12]) (only 0, the empty label)")
                    }
                    padding = .oaep(RSAOAEPParameters(hash: hash, mgf1Hash: mgf1, label: []))
                default:
                    throw RSAError.containerInvalid(reason: "unsupported padding scheme \(bytes[9])")
                }
                guard bytes[13] == 0 else {
                    throw RSAError.containerInvalid(reason: "reserved header byte 13 is \(bytes[13]), not 0")
                }
                blockSize = Int(bytes[14]) << 8 | Int(bytes[15])
                recipientFingerprint = RSAKeyFingerprint(bytes: Array(bytes[16..<48]))!
                messageID = Array(bytes[48..<64])
            }
            guard blockSize > 0 else { throw RSAError.containerInvalid(reason: "block size 0") }
        }

        /// A version 2 header for a new message.
        init(padding: RSAEncryptionPadding, blockSize: Int, recipientFingerprint: RSAKeyFingerprint, messageID: [UInt8])
        {
            self.version = 2
            self.padding = padding
            self.blockSize = blockSize
            self.recipientFingerprint = recipientFingerprint
            self.messageID = messageID
        }
    }
}

extension RSAHashAlgorithm {
    /// The byte naming this hash in a version 2 container header (docs/container-format.md lists them).
    var containerID: UInt8 {
        switch self {
        case .sha1: return 0x01
        case .sha224: return 0x02
        case .sha256: return 0x03
        case .sha384: return 0x04
        case .sha512: return 0x05
        case .sha512_224: return 0x06
        case .sha512_256: return 0x07
        case .sha3_224: return 0x08
        case .sha3_256: return 0x09
        case .sha3_384: return 0x0A
        case .sha3_512: return 0x0B
        }
    }

    /// The hash a container header byte names; nil for an unknown byte.
    init?(containerID: UInt8) {
        guard let match = RSAHashAlgorithm.allCases.first(where: { $0.containerID == containerID }) else { return nil }
        self = match
    }
}
