/// Every error RSAKit throws.
///
/// Errors about values the caller supplied are specific (they say what was wrong and
/// the numbers involved). Errors an attacker can provoke with a ciphertext are opaque:
/// ``decryptionFailed`` carries no payload and is the same for every padding, length
/// or range failure, so that it reveals nothing about which check failed
/// (RFC 8017 §7.2.2, note on Bleichenbacher's attack). No description ever contains
/// secret bytes.
///
/// Keychain lookups follow one rule, as Apple's `SecItemCopyMatching` does: a call that
/// returns one item throws ``itemNotFound(_:)`` when none matches, a call that returns a list
/// returns `[]`. Adding an item whose unique attributes are taken throws ``duplicateItem(_:)``.
///
/// ``description`` (and `localizedDescription`) is the sentence for people; `String(reflecting:)`
/// (``debugDescription``) shows the case and its values for debugging.
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
    /// `RSAKIT_ENGINE` forces a private-key path this machine cannot run, or names none
    /// (``RSAKitEngine/privateKeyPath``): `reason` says which. Every private key of the
    /// process refuses with it; unset the variable to let RSAKit choose.
    case engineUnavailable(reason: String)

    // MARK: Encoding and store (specific, caller-supplied)

    /// A key could not be parsed; `reason` says what and where.
    case malformedKey(reason: String)
    /// No keychain item matches the query (Apple's `errSecItemNotFound`), for every item
    /// class: a key by application tag, item id or fingerprint (including the private key a
    /// container names), a certificate, an identity, a generic or internet password. The
    /// payload says which class and which attributes were looked for. Only calls that return
    /// one item throw it; calls that return a list return `[]`.
    case itemNotFound(RSAKeychainItemQuery)
    /// An item with the same unique attributes already exists (Apple's `errSecDuplicateItem`):
    /// a key with this application tag and key class, a certificate with this issuer and
    /// serial, a generic password with this service and account, an internet password with
    /// this key. The payload names the class and those attributes. Nothing was written.
    case duplicateItem(RSAKeychainItemQuery)
    /// A lookup by unique attributes (a key's tag, a password's service and account, a
    /// certificate's issuer and serial) through a store opened without access groups found
    /// the item in more than one group (`accessGroups`, sorted, at least two): uniqueness is
    /// per group, and without a group the lookup cannot tell which item is meant (where
    /// `SecItemCopyMatching` with `kSecMatchLimitOne` returns an undefined one). Nothing was
    /// read or changed; open the store with one of the groups, or use the item id.
    case ambiguousItem(RSAKeychainItemQuery, accessGroups: [String])

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
    /// one of the fixed sentences "scrypt-encrypted keys are not supported" (or a cipher GnuTLS lacks),
    /// ``RSAKeyFile/certificateReason`` ("this is an X.509 certificate, not a key file: ..."),
    /// ``RSAKeyFile/pkcs12Reason`` ("this is a PKCS#12 file (.p12, .pfx), not a key file: ..."),
    /// "this looks like base64-encoded PEM; decode it first (for example with base64 -d)", or
    /// names the unsupported algorithm or format.
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
    /// No key store exists at `path` (no VERSION file there), and the store was opened with
    /// `createIfMissing: false` (``RSAKeyStore/init(path:createIfMissing:allowInsecurePermissions:)``),
    /// as every read-only operation should open one: nothing was created.
    case storeNotFound(path: String)
    /// The key being added as an identity is already stored under the application tag `tag`,
    /// not `requestedTag`: a key is stored once, so re-import with `replace` (which moves it
    /// to `requestedTag`) or under its present tag.
    case keyStoredUnderAnotherTag(tag: String, requestedTag: String)

    // MARK: Schemes (OAEP, signatures; caller-supplied values, specific)

    /// The key's modulus is too short for the padding: `modulusByteCount` (k) octets,
    /// at least `minimumByteCount` needed (OAEP: 2 hLen + 2, RFC 8017 §7.1.1 step 1.b;
    /// PSS: hLen + sLen + 2, §9.1.1 step 3; PKCS#1 v1.5 signatures: tLen + 11, §9.2 step 3).
    /// `padding` names the scheme and hashes.
    case keyTooSmallForPadding(modulusByteCount: Int, minimumByteCount: Int, padding: String)
    /// A digest handed to `signature(forDigest:)` or `isValidSignature(_:forDigest:)` whose
    /// length is not the hash's: `byteCount` given, `expected` = hLen.
    case digestLengthMismatch(byteCount: Int, expected: Int)
    /// A PSS salt length that is negative or does not fit: `byteCount` asked for, at most
    /// `maximum` = emLen - hLen - 2 (RFC 8017 §9.1.1 step 3).
    case saltLengthInvalid(byteCount: Int, maximum: Int)
    /// The key's algorithm does not allow the operation: an id-RSASSA-PSS key (RFC 4055
    /// §3.1) asked to encrypt, decrypt, sign with PKCS#1 v1.5, or sign or verify with PSS
    /// parameters other than its own. `reason` names the key's parameters. Public data: the
    /// restriction is in the key's SPKI, so this error reveals nothing secret.
    case keyRestricted(reason: String)

    // MARK: Messages

    /// A container for another key: its header names the recipient's fingerprint `expected`,
    /// which is not the given key's. Checked before any private-key operation.
    case encryptedForAnotherKey(expected: RSAKeyFingerprint)
    /// The message format cannot be used with these options (armor with raw blocks, an OAEP
    /// label in the container, a hash Apple's format does not define...); `reason` says which.
    case messageFormatUnsupported(reason: String)
    /// The input's public structure is unusable (empty input, armor without its END line,
    /// bad base64 in armor, input shorter than the format's minimum); `reason` says which.
    case messageInvalid(reason: String)
    /// The input names no recipient key (raw blocks, Apple's format): decrypting it with a
    /// store needs the key itself.
    case messageNamesNoRecipient
    /// An input file cannot be read; `reason` is the `errno` text ("no such file or directory").
    case inputFileFailed(path: String, reason: String)
    // MARK: Output files

    /// An output path cannot be written (``RSAOutputFile``): `reason` is a lower-case phrase
    /// ("permission denied", "is a directory", "no such file or directory", or the `errno`
    /// text of the failed call). Nothing was created at the path.
    case outputFileFailed(path: String, reason: String)
    /// The output path is the same regular file as the command's input; writing it would
    /// destroy the input, so nothing was written.
    case outputFileIsInput(path: String)
    // MARK: Keychain

    /// The passphrase does not open the store key of a protected store (the Poly1305 tag of
    /// the sealed store key did not verify). Nothing was changed.
    case wrongPassphrase
    /// The store is protected and this operation needs a secret: unlock it with the
    /// passphrase first (``RSAKeyStore/unlock(passphrase:)``).
    case keychainLocked
    /// Protecting, unprotecting or changing the passphrase is not possible in this state
    /// (`reason` says why: "the store is not protected", "the store is already protected"...).
    case keychainProtection(reason: String)
    /// Argon2id parameters libsodium refuses, or a derivation that failed (`reason` says which).
    case invalidKDFParameters(reason: String)
    /// An attribute value is not usable (an empty service, one too long...): `reason` says which.
    case invalidAttribute(reason: String)
    /// The store was opened with access groups (`allowed`, never empty) and the call names,
    /// or would add to, change or delete an item of, another group (`group`): the analogue of
    /// `errSecMissingEntitlement`. Nothing was changed.
    case accessGroupNotAllowed(group: String, allowed: [String])
    /// The caller may not use the store at `path`: a store shared with a Unix group the
    /// caller's user is not in, or a system keychain agent whose rules do not allow the
    /// caller's uid or groups. `reason` names the owner, the group and the caller. Nothing
    /// was read or changed.
    case storeAccessDenied(path: String, reason: String)
    /// A store shared through a Unix group (``RSAKeyStore/createShared(path:unixGroup:accessGroups:)``) has
    /// a folder or file that is open to users outside that group, or owned by another group:
    /// the shared counterpart of ``insecureStorePermissions(path:mode:)``, refused the same
    /// way unless the store is opened with `allowInsecurePermissions: true`.
    case insecureSharedStore(path: String, reason: String)
    // MARK: Certificates, encrypted key files, PKCS#12 (x509)

    /// The bytes are not an X.509 certificate (RFC 5280 §4.1) that GnuTLS can read, or a
    /// file holds no certificate; `reason` says what was found instead.
    case malformedCertificate(reason: String)
    /// A CRL was refused by the store (``RSAKeyStore/addCRL(_:at:)``): its signature does not
    /// verify with the key of the stored certificate of its issuer, it is not yet valid or
    /// stale (RFC 5280 §5.1.2.4-5), or a newer CRL of its issuer is stored; `reason` says which.
    case crlRefused(reason: String)
    /// The input is encrypted (`what` names it: "PKCS#8 EncryptedPrivateKeyInfo",
    /// "PKCS#12 file"...) and no passphrase was given.
    case passphraseNeeded(what: String)
    /// The passphrase does not decrypt `what` (the decryption or the padding check failed).
    case passphraseIncorrect(what: String)
    /// The passphrase cannot be used: `reason` says why (a NUL byte, which C APIs cannot carry).
    case passphraseUnusable(reason: String)
    /// A PKCS#12 file's MAC (RFC 7292 §4) does not match its contents, which the passphrase
    /// does decrypt: the file was altered after it was made.
    case pkcs12IntegrityCheckFailed
    /// A PKCS#12 file that cannot be read or used: `reason` says why (not PKCS#12, no private
    /// key, several private keys, no certificate for the key...).
    case pkcs12Unusable(reason: String)
    /// A distinguished name given as an RFC 4514 string ("CN=host,O=Example") that cannot be
    /// used as a certificate's or request's subject: `reason` says what is wrong and where.
    case invalidDistinguishedName(String, reason: String)
    /// A subjectAltName given as text ("DNS:host", "IP:192.0.2.1", "email:a@example.com",
    /// "URI:https://example.com/") that cannot be used: `reason` says why.
    case invalidSubjectAlternativeName(String, reason: String)

    // MARK: lib

    /// An application identifier (for ``RSAKeyStore/defaultLocation(applicationIdentifier:environment:)``)
    /// is not a reverse-DNS name of letters, digits, '-', '_' and '.' with at least one dot.
    case invalidApplicationIdentifier(String, reason: String)
    // MARK: Tokens (PKCS#11 client)

    /// The token cannot be reached: the module does not load or initialise, no token (or
    /// several) matches, or the key object is gone (`reason` says which). Nothing was changed.
    case tokenUnavailable(reason: String)
    /// The token refused the user PIN (CKR_PIN_INCORRECT and kin). Nothing was changed; the
    /// token counts the failure toward locking the PIN.
    case tokenPINIncorrect
    /// A PKCS#11 call failed: `function` ("C_Sign") returned CK_RV `code`.
    case tokenOperationFailed(function: String, code: UInt)
    /// The private key under `tag` lives on a token: ask ``RSAKeyStore/tokenKey(tag:)`` for it.
    case keyOnToken(tag: String)

    // MARK: The machine's TPM (through tpm2-tss's ESAPI)

    /// The TPM cannot be used: no TPM device, no permission on it, tpm2-tss not installed, the
    /// TCTI unreachable, the owner hierarchy protected by an auth value, or the TPM busy
    /// (`reason` says which and what to install or join). Nothing was changed.
    case tpmUnavailable(reason: String)
    /// The TPM is in dictionary-attack lockout after too many wrong PINs: it refuses every
    /// authorisation until its lockout interval passes or its owner clears the lockout.
    case tpmLockedOut
    /// The TPM can no longer load a stored TPM key (its storage seed changed: the TPM was
    /// cleared, reset or replaced, or the store moved to another machine): the private key is
    /// lost. The store is unchanged.
    case tpmKeyLost(reason: String)

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
        case let .engineUnavailable(reason):
            return "no private-key engine: \(reason)"
        case let .internalError(what):
            return "internal error: \(what)"
        case let .malformedKey(reason):
            return "malformed key: \(reason)"
        case let .itemNotFound(query):
            return "no \(query) found"
        case let .duplicateItem(query):
            return "\(query.withArticle) already exists"
        case let .ambiguousItem(query, groups):
            return "\(query.withArticle) exists in several access groups ("
                + groups.map { "\"\($0)\"" }.joined(separator: ", ") + "); name the group"
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
                + "which lets group or others read it (take their permissions away, or open the store with "
                + "allowInsecurePermissions)"
        case let .damagedItem(tag, path, reason):
            if let tag {
                return "damaged key store item with tag \"\(tag)\" at \(path): \(reason)"
            }
            return "damaged key store item at \(path): \(reason)"
        case let .storeIOError(path, reason):
            return "key store i/o error at \(path): \(reason)"
        case let .storeNotFound(path):
            return "no key store at \(path): it does not exist"
        case let .keyStoredUnderAnotherTag(tag, requestedTag):
            return
                "this key is already stored under tag \"\(tag)\"; re-import with replace to move it to tag "
                + "\"\(requestedTag)\", or keep tag \"\(tag)\""
        case let .keyTooSmallForPadding(modulusByteCount, minimumByteCount, padding):
            return
                "key too small for \(padding): the modulus has \(modulusByteCount) bytes, at least "
                + "\(minimumByteCount) are needed"
        case let .digestLengthMismatch(byteCount, expected):
            return "digest length \(byteCount) bytes does not match the hash (\(expected) bytes)"
        case let .keyRestricted(reason):
            return reason
        case let .saltLengthInvalid(byteCount, maximum):
            return "invalid PSS salt length \(byteCount) bytes: at most \(maximum) fit with this key and hash"
        case let .encryptedForAnotherKey(expected):
            return "encrypted for another key (\(expected.base64String))"
        case let .messageFormatUnsupported(reason):
            return "unsupported message format options: \(reason)"
        case let .messageInvalid(reason):
            return "invalid message: \(reason)"
        case .messageNamesNoRecipient:
            return
                "input is not an rsakit container, so it names no recipient key; raw blocks and Apple's format need "
                + "the key"
        case let .inputFileFailed(path, reason):
            return "cannot read input file '\(path)': \(reason)"
        case let .outputFileFailed(path, reason):
            return "cannot write output file '\(path)': \(reason)"
        case let .outputFileIsInput(path):
            return "output file '\(path)' is the input file; write to another file"
        case .wrongPassphrase:
            return "wrong passphrase"
        case .keychainLocked:
            return "the store is protected by a passphrase and is locked"
        case let .keychainProtection(reason):
            return reason
        case let .invalidKDFParameters(reason):
            return "invalid argon2id parameters: \(reason)"
        case let .invalidAttribute(reason):
            return "invalid attribute: \(reason)"
        case let .accessGroupNotAllowed(group, allowed):
            return "access group \"\(group)\" is not one this store was opened with ("
                + allowed.map { "\"\($0)\"" }.joined(separator: ", ") + ")"
        case let .storeAccessDenied(path, reason):
            return "access to the key store at \(path) denied: \(reason)"
        case let .insecureSharedStore(path, reason):
            return "unsafe shared key store: \(path): \(reason)"
        case let .malformedCertificate(reason):
            return "malformed certificate: \(reason)"
        case let .crlRefused(reason):
            return "CRL refused: \(reason)"
        case let .passphraseNeeded(what):
            return "passphrase required: the \(what) is encrypted"
        case let .passphraseIncorrect(what):
            return "wrong passphrase for the \(what)"
        case let .passphraseUnusable(reason):
            return "unusable passphrase: \(reason)"
        case .pkcs12IntegrityCheckFailed:
            return "integrity check failed: the PKCS#12 MAC does not match its contents (the file was altered)"
        case let .pkcs12Unusable(reason):
            return "unusable PKCS#12 file: \(reason)"
        case let .invalidDistinguishedName(name, reason):
            return "invalid distinguished name \"\(name)\": \(reason)"
        case let .invalidSubjectAlternativeName(name, reason):
            return "invalid subject alternative name \"\(name)\": \(reason)"
        case let .invalidApplicationIdentifier(identifier, reason):
            return "invalid application identifier \"\(identifier)\": \(reason)"
        case let .tokenUnavailable(reason):
            return "token unavailable: \(reason)"
        case .tokenPINIncorrect:
            return "wrong token PIN"
        case let .tokenOperationFailed(function, code):
            // The names of the codes a token gives for a mechanism or parameter it lacks.
            let names: [UInt: String] = [
                0x7: "CKR_ARGUMENTS_BAD", 0x70: "CKR_MECHANISM_INVALID",
                0x71: "CKR_MECHANISM_PARAM_INVALID", 0x162: "CKR_KEY_SIZE_RANGE"
            ]
            return "the token refused \(function) (\(names[code] ?? "CK_RV 0x" + String(code, radix: 16)))"
                + (code == 0x7 || code == 0x70 || code == 0x71
                    ? ": it does not offer this mechanism or these parameters" : "")
        case let .keyOnToken(tag):
            return "the private key under tag '\(tag)' is on a token, not in the store"
        case let .tpmUnavailable(reason):
            return "TPM unavailable: \(reason)"
        case .tpmLockedOut:
            return
                "the TPM is in dictionary-attack lockout after too many wrong PINs: it refuses every PIN until its "
                + "lockout interval passes or its owner clears the lockout"
        case let .tpmKeyLost(reason):
            return "the TPM key is gone: \(reason); the private key cannot be recovered, and the store is unchanged"
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
        case .otherPrimeInvalid(let index):
            return "prime r_\(index) must be greater than 1 and differ from the other primes"
        case .multiPrimeProductMismatch: return "the product of the primes does not equal n"
        case .otherPrimeExponentMismatch(let index): return "d_\(index) is not the inverse of e modulo r_\(index) - 1"
        case .otherPrimeCoefficientMismatch(let index):
            return "t_\(index) is not the inverse of r_1 ... r_\(index - 1) modulo r_\(index)"
        }
    }
}
