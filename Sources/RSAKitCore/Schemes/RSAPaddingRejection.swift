/// How RSAES-PKCS1-v1_5 decryption answers a ciphertext whose padding is wrong.
///
/// - ``explicit``: throw `RSAError.decryptionFailed`. Right for a tool that decrypts files
///   or data at rest (`rsakit decrypt`, ``RSAMessage``): the user must learn that the data is
///   not what was encrypted, and nobody is sending crafted ciphertexts and watching.
/// - ``implicit``: return a synthetic message instead, derived deterministically from the
///   private exponent and the ciphertext (draft-irtf-cfrg-rsa-guidance, "Implicit Rejection
///   for RSA PKCS#1 v1.5"; OpenSSL 3.2's `rsa_pkcs1_implicit_rejection`). Right for a
///   protocol that answers a peer after decrypting (a TLS-RSA-style key transport, a server
///   that decrypts what clients send): an error, or its timing, tells an attacker which
///   ciphertexts had valid padding, which is Bleichenbacher's and Marvin's oracle. With
///   implicit rejection there is no error to observe: the caller treats the result as the
///   message, and the protocol fails later, the same way for a wrong message as for a
///   synthetic one. Use it only where the protocol then authenticates the message (a key
///   that must match a MAC, a session that must complete); a file tool that cannot tell
///   garbage from plaintext must not use it.
///
/// Both forms still throw for what is public: a ciphertext that is not exactly k bytes, or
/// whose integer is not below n (RFC 8017 §7.2.2 steps 1 and 2.b).
public enum RSAPaddingRejection: String, Sendable, Hashable, CaseIterable {
    /// Throw `RSAError.decryptionFailed` for a bad padding (RFC 8017 §7.2.2 step 3, "output
    /// 'decryption error'").
    case explicit
    /// Return the synthetic message of draft-irtf-cfrg-rsa-guidance §7 for a bad padding:
    /// between 0 and k - 11 bytes, the same for the same key and ciphertext every time.
    case implicit
}
