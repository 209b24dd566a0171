import Foundation

/// The implicit-rejection test vectors (Tests/RSAKitTests/Fixtures/implicit-rejection, see
/// the README there): draft-irtf-cfrg-rsa-guidance Appendix B (2048-, 2049- and 4096-bit keys),
/// each case a ciphertext with the message a conforming implementation returns.
package struct ImplicitRejectionVectors: Decodable {
    /// One key and its cases.
    package struct KeySet: Decodable {
        /// The modulus length in bits.
        package let modulusBits: Int
        /// The private key, PKCS#8 PEM.
        package let privateKeyPEM: String
        package let cases: [Case]

        enum CodingKeys: String, CodingKey {
            case modulusBits = "modulus_bits", privateKeyPEM = "private_key_pem", cases
        }
    }

    /// One ciphertext.
    package struct Case: Decodable {
        /// The draft's name for it ("B.1.6").
        package let draft: String?
        /// tlslite-ng's name for the same case, saying what is wrong with the padding, if anything.
        package let name: String
        /// The ciphertext, hex.
        package let ciphertext: String
        /// The expected output, hex (the real or the synthetic message).
        package let message: String?
    }

    package let about: String
    package let sets: [KeySet]

    /// The folder holding vectors.json.
    package static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("RSAKitTests/Fixtures/implicit-rejection")

    /// Read and decode vectors.json. - Throws: when the file is missing or malformed.
    package static func load() throws -> ImplicitRejectionVectors {
        try JSONDecoder().decode(
            ImplicitRejectionVectors.self,
            from: Data(contentsOf: folder.appendingPathComponent("vectors.json")))
    }

    /// Bytes from hex text (two digits per byte). - Throws: on an odd length or a non-hex digit.
    package static func bytes(hex: String) throws -> [UInt8] {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { throw CocoaError(.coderReadCorrupt) }
        return try stride(from: 0, to: digits.count, by: 2).map { i in
            guard let byte = UInt8(String(decoding: digits[i..<(i + 2)], as: UTF8.self), radix: 16) else {
                throw CocoaError(.coderReadCorrupt)
            }
            return byte
        }
    }
}
