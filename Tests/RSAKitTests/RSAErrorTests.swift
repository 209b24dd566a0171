import Foundation
import XCTest
import RSAKit

/// RSAError's two faces: `description` and `localizedDescription` are the sentence
/// for people, `String(reflecting:)` the case and its values for debugging; and the library's
/// sentences carry no command-line advice (options and commands belong to the CLI).
final class RSAErrorTests: XCTestCase {
    private static let fingerprint = RSAKeyFingerprint(bytes: [UInt8](repeating: 0xAB, count: 32))!

    /// One value of every case.
    static let representatives: [RSAError] = [
        .messageTooLong(byteCount: 300, maximum: 245), .decryptionFailed, .integerTooLarge(byteCount: 4),
        .messageRepresentativeOutOfRange, .keySizeUnsupported(bits: 512, reason: "below 1024 bits"),
        .publicExponentUnsupported(reason: "even"), .invalidKey(.primesEqual),
        .ciphertextLengthInvalid(byteCount: 7, blockSize: 256), .keyGenerationFailed(reason: "no prime"),
        .containerInvalid(reason: "not an rsakit container (wrong magic)"), .keyGenerationCancelled,
        .internalError("re-encryption check failed"), .malformedKey(reason: "truncated"),
        .itemNotFound(.key(tag: "mail", keyClass: .private)), .itemNotFound(.item(id: "x")),
        .itemNotFound(RSAKeychainItemQuery(itemClass: .identity, label: "alice")),
        .itemNotFound(RSAKeychainItemQuery(itemClass: .identity, applicationTag: "alice-key")),
        .itemNotFound(RSAKeychainItemQuery(itemClass: .key, keyClass: .private, publicKeyFingerprint: fingerprint)),
        .itemNotFound(.genericPassword(service: "s", account: "a")),
        .duplicateItem(.key(tag: "mail", keyClass: .public)),
        .duplicateItem(RSAKeychainItemQuery(itemClass: .certificate, issuer: "CN=Root", serialNumber: [1, 2])),
        .duplicateItem(.internetPassword(try! RSAInternetPasswordKey(url: "https://alice@example.com"))),
        .malformedDER(reason: "indefinite length", offset: 3), .malformedPEM(reason: "missing END line", line: 9),
        .unsupportedKeyFormat(reason: RSAKeyFile.certificateReason),
        .unsupportedKeyFormat(reason: RSAKeyFile.pkcs12Reason),
        .keyTypeMismatch(expected: "a public key", found: "a private key"), .invalidTag(reason: "empty"),
        .invalidLabel(reason: "too long"), .insecureStorePermissions(path: "/s", mode: 0o644),
        .damagedItem(tag: nil, path: "/s/x", reason: "truncated"),
        .storeIOError(path: "/s", reason: "an agent already listens there"),
        .storeNotFound(path: "/s"), .keyStoredUnderAnotherTag(tag: "a", requestedTag: "b"),
        .keyTooSmallForPadding(modulusByteCount: 64, minimumByteCount: 66, padding: "OAEP"),
        .digestLengthMismatch(byteCount: 20, expected: 32), .saltLengthInvalid(byteCount: -1, maximum: 222),
        .keyRestricted(reason: "an RSASSA-PSS key"), .encryptedForAnotherKey(expected: fingerprint),
        .messageFormatUnsupported(reason: "armor with raw blocks"), .messageInvalid(reason: "empty input"),
        .messageNamesNoRecipient, .inputFileFailed(path: "in", reason: "no such file or directory"),
        .outputFileFailed(path: "out", reason: "permission denied"), .outputFileIsInput(path: "f"), .wrongPassphrase,
        .keychainLocked, .keychainProtection(reason: "the store is not protected"),
        .invalidKDFParameters(reason: "ops"),
        .invalidAttribute(reason: "the service is empty"), .malformedCertificate(reason: "not DER"),
        .passphraseNeeded(what: "PKCS#12 file"), .passphraseIncorrect(what: "PKCS#12 file"),
        .passphraseUnusable(reason: "a NUL byte"), .pkcs12IntegrityCheckFailed, .pkcs12Unusable(reason: "no key"),
        .invalidApplicationIdentifier("x", reason: "no dot"),
        .accessGroupNotAllowed(group: "com.example.b", allowed: ["com.example.a"]),
        .storeAccessDenied(path: "/s", reason: "user u is not a member of group g"),
        .insecureSharedStore(path: "/s/lock", reason: "mode 0664 lets users outside group g in")
    ]

    /// One value of every TLS case but serverNotTrusted (its payload, a trust evaluation, is
    /// covered by the TLS suites; its sentence by the source scan below).
    static let tlsRepresentatives: [RSATLSError] = [
        .connectFailed(host: "h", port: 1, reason: "connection refused"),
        .timedOut(operation: "the TLS handshake", seconds: 5),
        .clientCertificateRejected(alert: "Unknown CA", certificateSent: true),
        .clientCertificateRejected(alert: "Certificate is required", certificateSent: false),
        .handshakeFailed(reason: "protocol version"), .connectionFailed(reason: "reset"),
        .identityUnusable(reason: "another key")
    ]

    /// "--identity", "`rsakit cert add`", "(rsakit agent stop ...)": what CLI advice looks like.
    static func commandLineAdvice(in text: String) -> String? {
        let patterns = [
            #"(?<![-\w])--[a-z]"#, #"`rsakit\b"#, #"'rsakit\b"#, #"\brun rsakit\b"#, #"\buse rsakit\b"#,
            #"[(:]\s*rsakit [a-z]"#
        ]
        for pattern in patterns {
            if let range = text.range(of: pattern, options: .regularExpression) { return String(text[range]) }
        }
        return nil
    }

    func testAdviceDetector_FindsTheOldMessagesAndSparesPEMMarkers() {
        XCTAssertNotNil(Self.commandLineAdvice(in: "none was given (alert: x); use --identity or --tag"))
        XCTAssertNotNil(Self.commandLineAdvice(in: "an agent already listens there (rsakit agent stop ends it)"))
        XCTAssertNotNil(Self.commandLineAdvice(in: "with tag \"t\" (an identity needs one: rsakit cert add)"))
        XCTAssertNotNil(Self.commandLineAdvice(in: "encrypt to it with `rsakit encrypt --cert FILE`"))
        XCTAssertNil(Self.commandLineAdvice(in: "a \"-----BEGIN\" marker was found, but no complete PEM block"))
        XCTAssertNil(Self.commandLineAdvice(in: "invalid rsakit container: not an rsakit container (wrong magic)"))
    }

    func testLibraryMessages_CarryNoCommandLineAdvice() {
        let errors: [any Error & CustomStringConvertible] = Self.representatives + Self.tlsRepresentatives
        for error in errors {
            XCTAssertNil(
                Self.commandLineAdvice(in: error.description), "\(String(reflecting: error)): \(error.description)")
            XCTAssertFalse(error.description.contains(" --"), error.description)
        }
    }

    /// Every string literal on a line of the library's sources (every layer) that builds an
    /// error (RSAError, RSATLSError, a `reason:`, a `...Reason` constant, the sentences of
    /// RSAError.swift and RSATLSError.swift): none names an option or an rsakit command.
    /// Catches messages added later that the lists above miss.
    func testLibrarySources_ErrorStringsCarryNoCommandLineAdvice() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let layers = ["RSAKit", "RSAKitCore", "RSAKitPKI", "RSAKitKeychain", "RSAKitTLS"]
        let files = layers.flatMap { layer in
            (FileManager.default.enumerator(atPath: root.appendingPathComponent(layer).path)?.allObjects as? [String]
                ?? [])
                .filter { $0.hasSuffix(".swift") }.map { layer + "/" + $0 }
        }.sorted()
        XCTAssertGreaterThan(files.count, 50, "the library's sources were not found at \(root.path)")
        var scanned = 0
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), code.contains("\""),
                    code.contains("RSAError") || code.contains("RSATLSError") || code.contains("reason:")
                        || code.contains("Reason =") || file.hasSuffix("Errors/RSAError.swift")
                        || file.hasSuffix("TLS/RSATLSError.swift")
                else { continue }
                scanned += 1
                if let advice = Self.commandLineAdvice(in: code) {
                    XCTFail("\(file):\(index + 1): \"\(advice)\" in an error message: \(code)")
                }
            }
        }
        XCTAssertGreaterThan(scanned, 200, "too few error strings scanned")
    }

    func testDescription_IsTheSentence_DebugDescriptionTheCaseAndValues() {
        let notFound = RSAError.itemNotFound(.genericPassword(service: "x", account: "y"))
        XCTAssertEqual(notFound.description, "no generic password for service \"x\" and account \"y\" found")
        XCTAssertEqual(notFound.localizedDescription, notFound.description)
        XCTAssertEqual("\(notFound)", notFound.description)
        XCTAssertEqual(
            String(reflecting: notFound),
            "RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .genericPassword, service: \"x\", account: \"y\"))")

        XCTAssertEqual(
            String(reflecting: RSAError.messageTooLong(byteCount: 300, maximum: 245)),
            "RSAError.messageTooLong(byteCount: 300, maximum: 245)")
        XCTAssertEqual(String(reflecting: RSAError.decryptionFailed), "RSAError.decryptionFailed")
        XCTAssertEqual(RSAError.decryptionFailed.description, "decryption failed")
        XCTAssertEqual(
            String(reflecting: RSAError.damagedItem(tag: nil, path: "/s/x", reason: "a \"quoted\"\nline")),
            #"RSAError.damagedItem(tag: nil, path: "/s/x", reason: "a \"quoted\"\nline")"#)
        XCTAssertEqual(
            String(reflecting: RSAError.damagedItem(tag: "t", path: "/p", reason: "r")),
            #"RSAError.damagedItem(tag: "t", path: "/p", reason: "r")"#)
        XCTAssertEqual(
            String(reflecting: RSAError.invalidApplicationIdentifier("x", reason: "no dot")),
            #"RSAError.invalidApplicationIdentifier("x", reason: "no dot")"#)
        XCTAssertEqual(
            String(reflecting: RSAError.invalidKey(.otherPrimeInvalid(index: 3))),
            "RSAError.invalidKey(KeyValidationFailure.otherPrimeInvalid(index: 3))")
        XCTAssertEqual(
            String(reflecting: RSAError.invalidKey(.primesEqual)),
            "RSAError.invalidKey(KeyValidationFailure.primesEqual)")
        XCTAssertEqual(
            String(reflecting: RSAError.insecureStorePermissions(path: "/s", mode: 0o644)),
            #"RSAError.insecureStorePermissions(path: "/s", mode: 0o644)"#)
        XCTAssertEqual(
            String(reflecting: RSAError.encryptedForAnotherKey(expected: Self.fingerprint)),
            "RSAError.encryptedForAnotherKey(expected: \"\(Self.fingerprint.base64String)\")")
        XCTAssertEqual(
            String(reflecting: RSATLSError.clientCertificateRejected(alert: "Unknown CA", certificateSent: false)),
            #"RSATLSError.clientCertificateRejected(alert: "Unknown CA", certificateSent: false)"#)
        XCTAssertEqual(
            String(reflecting: RSATLSError.timedOut(operation: "the TLS handshake", seconds: 2.5)),
            #"RSATLSError.timedOut(operation: "the TLS handshake", seconds: 2.5)"#)
        XCTAssertEqual(
            RSATLSError.timedOut(operation: "the TLS handshake", seconds: 2.5).description,
            "timed out after 2.5 s: the TLS handshake")
        XCTAssertEqual(
            RSATLSError.connectFailed(host: "::1", port: 8443, reason: "connection refused").localizedDescription,
            "cannot connect to [::1]:8443: connection refused")
        XCTAssertEqual(String(reflecting: RSAError.internalError("x")), #"RSAError.internalError("x")"#)
    }

    func testDebugDescription_OfEveryCaseNamesTheCase_AndDiffersFromTheSentence() {
        for error in Self.tlsRepresentatives {
            let debug = String(reflecting: error)
            XCTAssertTrue(debug.hasPrefix("RSATLSError."), debug)
            XCTAssertNotEqual(debug, error.description)
        }
        for error in Self.representatives {
            let debug = String(reflecting: error)
            XCTAssertTrue(debug.hasPrefix("RSAError."), debug)
            XCTAssertFalse(debug.hasPrefix("RSAError("), "a case the debug description does not name: \(debug)")
            XCTAssertNotEqual(debug, error.description)
            // The case name is the text between "RSAError." and "(" (or the end).
            let name = debug.dropFirst("RSAError.".count).prefix { $0 != "(" }
            XCTAssertTrue(name.allSatisfy { $0.isLetter || $0.isNumber }, debug)
        }
    }

    func testItemQuery_DebugDescriptionShowsOnlyTheAttributesSet() throws {
        let key = try RSAInternetPasswordKey(url: "https://alice@example.com:8443/repo")
        XCTAssertEqual(
            String(reflecting: RSAKeychainItemQuery.internetPassword(key)),
            #"RSAKeychainItemQuery(itemClass: .internetPassword, "#
                + #"internetPasswordKey: "https://alice@example.com:8443/repo")"#
        )
        XCTAssertEqual(
            String(reflecting: RSAKeychainItemQuery.key(tag: "t", keyClass: .private)),
            #"RSAKeychainItemQuery(itemClass: .key, keyClass: .private, applicationTag: "t")"#)
        XCTAssertEqual(
            String(reflecting: RSAKeychainItemQuery.item(id: "abc")),
            #"RSAKeychainItemQuery(itemClass: nil, itemID: "abc")"#)
        let certificate = RSAKeychainItemQuery(itemClass: .certificate, issuer: "CN=Root", serialNumber: [0x5e, 0x01])
        XCTAssertEqual(
            String(reflecting: certificate),
            #"RSAKeychainItemQuery(itemClass: .certificate, issuer: "CN=Root", serialNumber: "5e01")"#)
        XCTAssertEqual(
            RSAError.duplicateItem(certificate).description,
            "a certificate issued by \"CN=Root\" with serial 5e01 already exists")
        XCTAssertEqual(
            RSAError.duplicateItem(.key(tag: "t", keyClass: .public)).description,
            "a public key with tag \"t\" already exists")
        XCTAssertEqual(
            RSAError.itemNotFound(
                RSAKeychainItemQuery(itemClass: .key, keyClass: .private, publicKeyFingerprint: Self.fingerprint)
            ).description,
            "no private key with fingerprint \(Self.fingerprint.base64String) found")
    }
}
