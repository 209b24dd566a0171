/// Every error RSAKit throws.
///
/// Errors about values the caller supplied are specific (they say what was wrong and
/// the numbers involved). Errors an attacker can provoke with a ciphertext are opaque:
/// ``decryptionFailed`` carries no payload and is the same for every padding, length
/// or range failure, so that it reveals nothing about which check failed
/// (RFC 8017 §7.2.2, note on Bleichenbacher's attack). No description ever contains
/// secret bytes.
public enum RSAError: Error, Equatable, Sendable, CustomStringConvertible {
    // MARK: Engine

    /// The plaintext is longer than one block can carry: `byteCount` bytes given,
    /// `maximum` = k - 11 allowed for EME-PKCS1-v1_5 (RFC 8017 §7.2.1 step 1).
    case messageTooLong(byteCount: Int, maximum: Int)
    /// Decryption failed. Deliberately says nothing more (RFC 8017 §7.2.2 step 4).
    case decryptionFailed
    /// I2OSP could not write the integer in `byteCount` octets (RFC 8017 §4.1 step 1).
    case integerTooLarge(byteCount: Int)
    /// The input integer is out of range for RSAEP: it must satisfy 0 <= m < n
    /// (RFC 8017 §5.1.1 step 1).
    case messageRepresentativeOutOfRange
    /// The key size (in bits) is not supported for this operation.
    case keySizeUnsupported(bits: Int, reason: String)
    /// The public exponent is not usable (even, below 3, or too large).
    case publicExponentUnsupported(reason: String)
    /// Key components are inconsistent; the payload names the failed check.
    case invalidKey(KeyValidationFailure)
    /// A ciphertext stream whose length is not a multiple of the block size k.
    /// Lengths are public, so this error is specific.
    case ciphertextLengthInvalid(byteCount: Int, blockSize: Int)
    /// Key generation gave up after the bound of FIPS 186-5 A.1.3 step 4.7 / 5.8.
    case keyGenerationFailed(reason: String)
    /// An rsakit container whose public header is unusable (wrong magic, unknown version or
    /// padding scheme, block size not matching the key). Header fields are public: `reason` says which.
    case containerInvalid(reason: String)
    /// The progress callback asked key generation to stop.
    case keyGenerationCancelled
    /// An internal consistency check failed (for example the re-encryption check after
    /// a private-key operation, which detects faults). Never caused by input alone.
    case internalError(String)

    // MARK: Encoding and store (specific, caller-supplied)

    /// A key could not be parsed; `reason` says what and where.
    case malformedKey(reason: String)
    /// No item in the key store matches the application tag.
    case keyNotFound(tag: String)
    /// An item with this application tag and key class already exists (errSecDuplicateItem).
    case keyAlreadyExists(tag: String)

    // MARK: Encoding (DER, PEM, PKCS#1, SPKI, PKCS#8; caller-supplied bytes)

    /// The bytes are not valid DER (ITU-T X.690 §10) for an RSA key structure: `reason`
    /// says what was wrong (indefinite length, non-minimal length, truncation, wrong tag,
    /// negative INTEGER, trailing bytes...) and `offset` is the 0-based byte offset into
    /// the DER input (for PEM input: into the base64-decoded block) where it was found.
    case malformedDER(reason: String, offset: Int)
    /// The PEM text (RFC 7468) could not be read: `reason` says what (bad base64, missing
    /// END line...), `line` is the 1-based line number in the input.
    case malformedPEM(reason: String, line: Int)
    /// The input is a recognised structure that RSAKit does not (yet) support. `reason` is
    /// one of the fixed sentences "encrypted private keys are not supported yet", "certificates are not supported yet", "this looks like
    /// base64-encoded PEM; decode it first (for example with base64 -d)", or names the
    /// unsupported algorithm or format.
    case unsupportedKeyFormat(reason: String)
    /// A well-formed key of the other kind: for example a private key given where a public
    /// key is expected. `expected` and `found` are short phrases ("a public key",
    /// "a private key (PKCS#8 PrivateKeyInfo)").
    case keyTypeMismatch(expected: String, found: String)

    // MARK: Store

    /// The application tag is not usable: empty, or longer than 255 bytes of UTF-8.
    case invalidTag(reason: String)
    /// The label is not usable (longer than ``RSAKeyStore/maximumLabelByteCount`` bytes of UTF-8).
    case invalidLabel(reason: String)
    /// A store folder or private item file is accessible by group or others (`mode` is the
    /// permission bits found, for example 0o644). Like ssh's "unprotected private key file":
    /// the store refuses to read on unless opened with `allowInsecurePermissions: true`.
    case insecureStorePermissions(path: String, mode: UInt32)
    /// An item file in the store is damaged (truncated, bad PEM, metadata that does not match
    /// the key or the file's place). `tag` is the application tag when it is known.
    /// The rest of the store stays usable.
    case damagedItem(tag: String?, path: String, reason: String)
    /// A file-system operation on the store failed; `reason` names the call and the errno text.
    case storeIOError(path: String, reason: String)
    /// No item in the store has this item id (the analogue of a persistent reference).
    case itemNotFound(itemID: String)

    /// A lower-case sentence, without secret bytes.
    public var description: String {
        switch self {
        case let .messageTooLong(byteCount, maximum):
            return "message too long: \(byteCount) bytes given, at most \(maximum) fit in one block"
        case .decryptionFailed:
            return "decryption failed"
        case let .integerTooLarge(byteCount):
            return "integer too large to encode in \(byteCount) bytes"
        case .messageRepresentativeOutOfRange:
            return "message representative out of range (must be less than the modulus)"
        case let .keySizeUnsupported(bits, reason):
            return "unsupported key size \(bits) bits: \(reason)"
        case let .publicExponentUnsupported(reason):
            return "unsupported public exponent: \(reason)"
        case let .invalidKey(failure):
            return "invalid key: \(failure.description)"
        case let .ciphertextLengthInvalid(byteCount, blockSize):
            return "ciphertext length \(byteCount) bytes is not a multiple of the block size \(blockSize) bytes"
        case let .keyGenerationFailed(reason):
            return "key generation failed: \(reason)"
        case let .containerInvalid(reason):
            return "invalid rsakit container: \(reason)"
        case .keyGenerationCancelled:
            return "key generation cancelled"
        case let .internalError(what):
            return "internal error: \(what)"
        case let .malformedKey(reason):
            return "malformed key: \(reason)"
        case let .keyNotFound(tag):
            return "no key with tag \"\(tag)\""
        case let .keyAlreadyExists(tag):
            return "a key with tag \"\(tag)\" already exists"
        case let .malformedDER(reason, offset):
            return "malformed DER at byte offset \(offset): \(reason)"
        case let .malformedPEM(reason, line):
            return "malformed PEM at line \(line): \(reason)"
        case let .unsupportedKeyFormat(reason):
            return "unsupported key format: \(reason)"
        case let .keyTypeMismatch(expected, found):
            return "expected \(expected), found \(found)"
        case let .invalidTag(reason):
            return "invalid application tag: \(reason)"
        case let .invalidLabel(reason):
            return "invalid label: \(reason)"
        case let .insecureStorePermissions(path, mode):
            return "unprotected key store: \(path) has mode 0\(String(mode, radix: 8)), "
                + "which lets group or others read it (chmod go-rwx, or open with allowInsecurePermissions)"
        case let .damagedItem(tag, path, reason):
            if let tag {
                return "damaged key store item with tag \"\(tag)\" at \(path): \(reason)"
            }
            return "damaged key store item at \(path): \(reason)"
        case let .storeIOError(path, reason):
            return "key store i/o error at \(path): \(reason)"
        case let .itemNotFound(itemID):
            return "no key store item with id \(itemID)"
        }
    }
}

/// Which consistency check a set of RSA key components failed.
///
/// Modelled on BoringSSL's `RSA_check_key`: each case names one relation of
/// RFC 8017 §3.1 / §3.2 that does not hold.
public enum KeyValidationFailure: Equatable, Sendable, CustomStringConvertible {
    /// n is even.
    case modulusEven
    /// n <= 1.
    case modulusTooSmall
    /// e is even.
    case publicExponentEven
    /// e < 3.
    case publicExponentTooSmall
    /// e >= n.
    case publicExponentNotLessThanModulus
    /// p <= 1 or q <= 1.
    case primeTooSmall
    /// p = q.
    case primesEqual
    /// p * q != n.
    case primeProductMismatch
    /// d <= 0 or e * d != 1 mod lcm(p - 1, q - 1).
    case privateExponentMismatch
    /// dP is not in [1, p - 1) or e * dP != 1 mod (p - 1).
    case firstCRTExponentMismatch
    /// dQ is not in [1, q - 1) or e * dQ != 1 mod (q - 1).
    case secondCRTExponentMismatch
    /// qInv is not in [1, p) or qInv * q != 1 mod p.
    case crtCoefficientMismatch

    // MARK: multi-prime keys (helper ct)
    /// More primes than RSAKit takes (RFC 8017 §3.2 has no limit; RSAKit takes 16).
    case tooManyPrimes(count: Int)
    /// Prime r_i (RFC numbering, i >= 3) is <= 1 or equals an earlier prime.
    case otherPrimeInvalid(index: Int)
    /// The product of all primes is not n.
    case multiPrimeProductMismatch
    /// d_i is not in [1, r_i - 1) or e * d_i != 1 mod (r_i - 1).
    case otherPrimeExponentMismatch(index: Int)
    /// t_i is not in [1, r_i) or t_i * (r_1 ... r_(i-1)) != 1 mod r_i.
    case otherPrimeCoefficientMismatch(index: Int)

    /// A lower-case phrase naming the failed relation.
    public var description: String {
        switch self {
        case .modulusEven: return "modulus n is even"
        case .modulusTooSmall: return "modulus n must be greater than 1"
        case .publicExponentEven: return "public exponent e is even"
        case .publicExponentTooSmall: return "public exponent e must be at least 3"
        case .publicExponentNotLessThanModulus: return "public exponent e must be less than n"
        case .primeTooSmall: return "prime p or q must be greater than 1"
        case .primesEqual: return "primes p and q are equal"
        case .primeProductMismatch: return "p * q does not equal n"
        case .privateExponentMismatch: return "e * d is not 1 modulo lcm(p - 1, q - 1)"
        case .firstCRTExponentMismatch: return "dP is not the inverse of e modulo p - 1"
        case .secondCRTExponentMismatch: return "dQ is not the inverse of e modulo q - 1"
        case .crtCoefficientMismatch: return "qInv * q is not 1 modulo p"
        case .tooManyPrimes(let count): return "\(count) primes are more than the 16 rsakit supports"
        case .otherPrimeInvalid(let index): return "prime r_\(index) must be greater than 1 and differ from the other primes"
        case .multiPrimeProductMismatch: return "the product of the primes does not equal n"
        case .otherPrimeExponentMismatch(let index): return "d_\(index) is not the inverse of e modulo r_\(index) - 1"
        case .otherPrimeCoefficientMismatch(let index): return "t_\(index) is not the inverse of r_1 ... r_\(index - 1) modulo r_\(index)"
        }
    }
}
