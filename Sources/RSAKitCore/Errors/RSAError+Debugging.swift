// String(reflecting:) of an error: the case and its values in Swift syntax, for logs and
// debuggers; `description` stays the sentence for people.

extension RSAError: CustomDebugStringConvertible {
    /// The case and its associated values in Swift syntax, for debugging:
    /// `RSAError.messageTooLong(byteCount: 300, maximum: 245)`,
    /// `RSAError.itemNotFound(RSAKeychainItemQuery(itemClass: .genericPassword, service: "s", account: "a"))`,
    /// `RSAError.decryptionFailed`. Strings are quoted and escaped as Swift literals. Like
    /// ``description`` it never holds secret bytes: no case carries any.
    public var debugDescription: String {
        switch self {
        // Cases without values (a Mirror shows no name for them).
        case .decryptionFailed: return "RSAError.decryptionFailed"
        case .messageRepresentativeOutOfRange: return "RSAError.messageRepresentativeOutOfRange"
        case .keyGenerationCancelled: return "RSAError.keyGenerationCancelled"
        case .messageNamesNoRecipient: return "RSAError.messageNamesNoRecipient"
        case .wrongPassphrase: return "RSAError.wrongPassphrase"
        case .keychainLocked: return "RSAError.keychainLocked"
        case .tokenPINIncorrect: return "RSAError.tokenPINIncorrect"
        case .pkcs12IntegrityCheckFailed: return "RSAError.pkcs12IntegrityCheckFailed"
        default: break
        }
        // A case with values: the Mirror's child is labelled with the case name and holds
        // the values, a tuple labelled as the case declares them (".0" where unlabelled).
        guard let payload = Mirror(reflecting: self).children.first, let name = payload.label else {
            return "RSAError(\(String(reflecting: description)))"
        }
        let values = Mirror(reflecting: payload.value)
        let fields: [String]
        if values.displayStyle == .tuple {
            fields = values.children.map { child in
                let label = child.label.flatMap { $0.hasPrefix(".") ? nil : $0 }
                return (label.map { "\($0): " } ?? "") + Self.debugText(child.value, label: label)
            }
        } else {
            fields = [Self.debugText(payload.value, label: nil)]
        }
        return "RSAError.\(name)(\(fields.joined(separator: ", ")))"
    }

    /// One associated value in Swift syntax: optionals unwrapped or `nil`, permission bits in
    /// octal, fingerprints as their quoted strings, anything else by
    /// `String(reflecting:)`.
    private static func debugText(_ value: Any, label: String?) -> String {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return "nil" }
            return debugText(wrapped, label: label)
        }
        switch value {
        case let mode as UInt32 where label == "mode":
            return "0o" + String(mode, radix: 8)
        case let fingerprint as RSAKeyFingerprint:
            return String(reflecting: fingerprint.base64String)
        default:
            return String(reflecting: value)
        }
    }
}

extension KeyValidationFailure: CustomDebugStringConvertible {
    /// The case in Swift syntax, for debugging: `KeyValidationFailure.primesEqual`,
    /// `KeyValidationFailure.otherPrimeInvalid(index: 3)`.
    public var debugDescription: String {
        let name: String
        switch self {
        case .modulusEven: name = "modulusEven"
        case .modulusTooSmall: name = "modulusTooSmall"
        case .publicExponentEven: name = "publicExponentEven"
        case .publicExponentTooSmall: name = "publicExponentTooSmall"
        case .publicExponentNotLessThanModulus: name = "publicExponentNotLessThanModulus"
        case .primeTooSmall: name = "primeTooSmall"
        case .primesEqual: name = "primesEqual"
        case .primeProductMismatch: name = "primeProductMismatch"
        case .privateExponentMismatch: name = "privateExponentMismatch"
        case .firstCRTExponentMismatch: name = "firstCRTExponentMismatch"
        case .secondCRTExponentMismatch: name = "secondCRTExponentMismatch"
        case .crtCoefficientMismatch: name = "crtCoefficientMismatch"
        case .tooManyPrimes(let count): name = "tooManyPrimes(count: \(count))"
        case .otherPrimeInvalid(let index): name = "otherPrimeInvalid(index: \(index))"
        case .multiPrimeProductMismatch: name = "multiPrimeProductMismatch"
        case .otherPrimeExponentMismatch(let index): name = "otherPrimeExponentMismatch(index: \(index))"
        case .otherPrimeCoefficientMismatch(let index): name = "otherPrimeCoefficientMismatch(index: \(index))"
        }
        return "KeyValidationFailure." + name
    }
}
