import Foundation
import XCTest
import RSAKit
import RSAKitTestSupport

/// RSAES-OAEP against the real `openssl pkeyutl` and Java's `Cipher`, both directions,
/// through the library API (`encrypt(_:padding:)`, `decrypt(_:padding:)`).
final class OAEPInteropTests: XCTestCase {
    /// (OAEP hash, MGF1 hash, label): the defaults of each peer and the usual mismatches.
    static let matrix: [(RSAHashAlgorithm, RSAHashAlgorithm, [UInt8])] = [
        (.sha1, .sha1, []),  // openssl/Java "OAEPPadding" default
        (.sha256, .sha256, []),  // openssl rsa_oaep_md:sha256
        (.sha256, .sha1, []),  // Java OAEPWithSHA-256AndMGF1Padding
        (.sha224, .sha224, Array("a label".utf8)),
        (.sha384, .sha1, [0x00, 0xFF, 0x10]),
        (.sha512, .sha512, Array("tls".utf8)),
        (.sha512_224, .sha512_224, []),
        (.sha512_256, .sha1, Array("x".utf8)),
        (.sha3_256, .sha3_256, [])
    ]

    func pkeyoptions(_ hash: RSAHashAlgorithm, _ mgf1: RSAHashAlgorithm, _ label: [UInt8]) -> [String] {
        var options = [
            "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:\(hash.rawValue)",
            "-pkeyopt", "rsa_mgf1_md:\(mgf1.rawValue)"
        ]
        if !label.isEmpty { options += ["-pkeyopt", "rsa_oaep_label:\(Hex.encode(label))"] }
        return options
    }

    func testOAEP_OpenSSLEncryptsRSAKitDecrypts() throws {
        let (path, key) = try TestKeys.openssl(bits: 2048)
        for (hash, mgf1, label) in Self.matrix {
            let p = RSAOAEPParameters(hash: hash, mgf1Hash: mgf1, label: label)
            let message = Array("message for \(p)".utf8)
            // Command: openssl pkeyutl -encrypt -inkey KEY -pkeyopt rsa_padding_mode:oaep
            //          -pkeyopt rsa_oaep_md:H -pkeyopt rsa_mgf1_md:M [-pkeyopt rsa_oaep_label:HEX]
            let ciphertext = try OpenSSL.run(
                ["pkeyutl", "-encrypt", "-inkey", path] + pkeyoptions(hash, mgf1, label), input: message)
            XCTAssertEqual(ciphertext.count, 256, "\(p)")
            XCTAssertEqual(try key.decrypt(ciphertext, padding: .oaep(p)), message, "\(p)")
            // Any other parameter fails with the opaque error.
            let wrongMGF = RSAOAEPParameters(hash: hash, mgf1Hash: mgf1 == .sha1 ? .sha256 : .sha1, label: label)
            XCTAssertThrowsError(try key.decrypt(ciphertext, padding: .oaep(wrongMGF))) {
                XCTAssertEqual($0 as? RSAError, .decryptionFailed, "\(p) decrypted as \(wrongMGF)")
            }
            try assertPKCS1v15RejectsOAEPBlock(ciphertext, key: key, "\(p)")
        }
    }

    func testOAEP_RSAKitEncryptsOpenSSLDecrypts() throws {
        let (path, key) = try TestKeys.openssl(bits: 2048)
        for (hash, mgf1, label) in Self.matrix {
            let p = RSAOAEPParameters(hash: hash, mgf1Hash: mgf1, label: label)
            let maximum = key.publicKey.maximumMessageByteCount(padding: .oaep(p))
            XCTAssertEqual(maximum, 256 - 2 * hash.digestByteCount - 2)
            for message in [[], Array("short".utf8), [UInt8](repeating: 0x42, count: maximum)] {
                let ciphertext = try key.publicKey.encrypt(message, padding: .oaep(p))
                XCTAssertEqual(ciphertext.count, 256)
                let plaintext = try OpenSSL.run(
                    ["pkeyutl", "-decrypt", "-inkey", path] + pkeyoptions(hash, mgf1, label), input: ciphertext)
                XCTAssertEqual(plaintext, message, "\(p), \(message.count) bytes")
            }
            XCTAssertThrowsError(
                try key.publicKey.encrypt([UInt8](repeating: 0, count: maximum + 1), padding: .oaep(p))
            ) {
                XCTAssertEqual($0 as? RSAError, .messageTooLong(byteCount: maximum + 1, maximum: maximum))
            }
        }
    }

    func testOAEP_RoundTripWithRSAKitKeysAllHashes() throws {
        let key = try TestKeys.generated(bits: 2048)
        for hash in RSAHashAlgorithm.allCases {
            for mgf1 in [RSAHashAlgorithm.sha1, hash] {
                let p = RSAOAEPParameters(hash: hash, mgf1Hash: mgf1, label: [1, 2])
                let ciphertext = try key.publicKey.encrypt([9, 9, 9], padding: .oaep(p))
                XCTAssertEqual(try key.decrypt(ciphertext, padding: .oaep(p)), [9, 9, 9], "\(p)")
            }
        }
        XCTAssertEqual(RSAOAEPParameters().hash, .sha256)
        XCTAssertEqual(RSAOAEPParameters().mgf1Hash, .sha256, "the MGF1 hash defaults to the OAEP hash")
        XCTAssertEqual(RSAOAEPParameters(hash: .sha384).mgf1Hash, .sha384)
    }

    // MARK: - Java

    /// A small Java program: `OAEP encrypt|decrypt KEY.der TRANSFORM OAEPHASH MGF1HASH LABELHEX IN OUT`.
    /// TRANSFORM "spec" uses RSA/ECB/OAEPPadding with an explicit OAEPParameterSpec; any other
    /// value is passed to Cipher.getInstance as is (for example RSA/ECB/OAEPWithSHA-256AndMGF1Padding).
    static let javaSource = """
        import java.nio.file.*;
        import java.security.*;
        import java.security.spec.*;
        import javax.crypto.Cipher;
        import javax.crypto.spec.*;

        public class OAEP {
            public static void main(String[] a) throws Exception {
                boolean encrypt = a[0].equals("encrypt");
                byte[] der = Files.readAllBytes(Paths.get(a[1]));
                KeyFactory kf = KeyFactory.getInstance("RSA");
                Key key = encrypt ? kf.generatePublic(new X509EncodedKeySpec(der)) : kf.generatePrivate(new \
        PKCS8EncodedKeySpec(der));
                Cipher cipher;
                if (a[2].equals("spec")) {
                    cipher = Cipher.getInstance("RSA/ECB/OAEPPadding");
                    byte[] label = new byte[a[5].length() / 2];
                    for (int i = 0; i < label.length; i++) label[i] = (byte) Integer.parseInt(a[5].substring(2 * i, 2 \
        * i + 2), 16);
                    OAEPParameterSpec spec = new OAEPParameterSpec(a[3], "MGF1", new MGF1ParameterSpec(a[4]), new \
        PSource.PSpecified(label));
                    cipher.init(encrypt ? Cipher.ENCRYPT_MODE : Cipher.DECRYPT_MODE, key, spec);
                } else {
                    cipher = Cipher.getInstance(a[2]);
                    cipher.init(encrypt ? Cipher.ENCRYPT_MODE : Cipher.DECRYPT_MODE, key);
                }
                Files.write(Paths.get(a[7]), cipher.doFinal(Files.readAllBytes(Paths.get(a[6]))));
            }
        }
        """

    /// Compile OAEP.java once per process; skip visibly without a JDK.
    static let javaFolder: URL? = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/javac") || which("javac") != nil else {
            return nil
        }
        let folder = TestKeys.scratch.appendingPathComponent("java-oaep")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let source = folder.appendingPathComponent("OAEP.java")
        try? javaSource.write(to: source, atomically: true, encoding: .utf8)
        guard (try? runTool("javac", [source.path], in: folder))?.status == 0 else { return nil }
        return folder
    }()

    static func which(_ tool: String) -> String? { TestTools.path(of: tool) }

    static func runTool(_ tool: String, _ arguments: [String], in folder: URL) throws -> (status: Int32, stderr: String)
    {
        let result = try ChildProcess.run([which(tool) ?? "/usr/bin/\(tool)"] + arguments, directory: folder.path)
        return (result.status, result.stderr)
    }

    func java(_ mode: String, keyDER: String, transform: String, _ p: RSAOAEPParameters, input: [UInt8]) throws
        -> [UInt8]
    {
        guard let folder = Self.javaFolder else {
            throw XCTSkip("javac/java not found (or OAEP.java did not compile): Java OAEP interop skipped")
        }
        let inURL = folder.appendingPathComponent("in-\(UUID().uuidString)")
        let outURL = folder.appendingPathComponent("out-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: inURL); try? FileManager.default.removeItem(at: outURL) }
        try Data(input).write(to: inURL)
        let result = try Self.runTool(
            "java",
            [
                "-cp", folder.path, "OAEP", mode, keyDER, transform,
                p.hash.displayName, p.mgf1Hash.displayName, Hex.encode(p.label), inURL.path, outURL.path
            ], in: folder)
        guard result.status == 0 else {
            XCTFail("java OAEP \(mode) \(transform) \(p) failed: \(result.stderr)")
            throw CocoaError(.fileReadUnknown)
        }
        return [UInt8](try Data(contentsOf: outURL))
    }

    /// The key as Java reads it, made by openssl: SPKI DER and PKCS#8 DER.
    func javaKeyFiles(_ path: String) throws -> (publicDER: String, privateDER: String) {
        let publicDER = TestKeys.scratch.appendingPathComponent("java-pub-\(UUID().uuidString).der").path
        let privateDER = TestKeys.scratch.appendingPathComponent("java-priv-\(UUID().uuidString).der").path
        // Commands: openssl pkey -in KEY -pubout -outform DER -out PUB; openssl pkcs8 -topk8 -nocrypt -in KEY -outform
        // DER -out PRIV
        try OpenSSL.run(["pkey", "-in", path, "-pubout", "-outform", "DER", "-out", publicDER])
        try OpenSSL.run(["pkcs8", "-topk8", "-nocrypt", "-in", path, "-outform", "DER", "-out", privateDER])
        return (publicDER, privateDER)
    }

    func testOAEP_JavaOAEPWithSHA256AndMGF1PaddingIsMGF1SHA1() throws {
        let (path, key) = try TestKeys.openssl(bits: 2048)
        let files = try javaKeyFiles(path)
        let transform = "RSA/ECB/OAEPWithSHA-256AndMGF1Padding"
        let javaParameters = RSAOAEPParameters(hash: .sha256, mgf1Hash: .sha1)
        let message = Array("from Java".utf8)
        let fromJava = try java(
            "encrypt", keyDER: files.publicDER, transform: transform, javaParameters, input: message)
        XCTAssertEqual(try key.decrypt(fromJava, padding: .oaep(javaParameters)), message)
        XCTAssertThrowsError(try key.decrypt(fromJava, padding: .oaep(RSAOAEPParameters(hash: .sha256)))) {
            XCTAssertEqual($0 as? RSAError, .decryptionFailed, "Java's transform is not MGF1-SHA-256")
        }
        let toJava = try key.publicKey.encrypt(Array("to Java".utf8), padding: .oaep(javaParameters))
        XCTAssertEqual(
            try java("decrypt", keyDER: files.privateDER, transform: transform, javaParameters, input: toJava),
            Array("to Java".utf8))
    }

    func testOAEP_JavaOAEPParameterSpecBothWays() throws {
        let (path, key) = try TestKeys.openssl(bits: 2048)
        let files = try javaKeyFiles(path)
        // Java's SunJCE OAEP supports SHA-1, SHA-2 (with /224, /256) for both hashes.
        for (hash, mgf1, label) in Self.matrix where ![.sha3_256].contains(hash) {
            let p = RSAOAEPParameters(hash: hash, mgf1Hash: mgf1, label: label)
            let message = Array("java \(p)".utf8)
            let fromJava = try java("encrypt", keyDER: files.publicDER, transform: "spec", p, input: message)
            XCTAssertEqual(try key.decrypt(fromJava, padding: .oaep(p)), message, "Java -> rsakit \(p)")
            let toJava = try key.publicKey.encrypt(message, padding: .oaep(p))
            XCTAssertEqual(
                try java("decrypt", keyDER: files.privateDER, transform: "spec", p, input: toJava), message,
                "rsakit -> Java \(p)")
        }
    }
}
