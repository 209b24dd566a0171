// The constraints a CA puts on the path below it (RFC 5280 §6.1.4): pathLenConstraint,
// counted by RSAKit, and nameConstraints, checked CA by CA through GnuTLS. GnuTLS's
// whole-path verification reports both as one "signer constraints" failure, and counts
// self-issued certificates against pathLenConstraint, which RFC 5280 §6.1.4 (l) does not
// (NIST PKITS 4.6.15, 4.6.17: a CA's key rollover inside a pathLenConstraint of 0).

extension RSATrust {
    /// The index of the first CA (from the leaf up) whose pathLenConstraint the path
    /// exceeds, nil when none does: RFC 5280 §6.1.4 (l), (m), where the intermediates that
    /// count against a CA's constraint are the non-self-issued certificates strictly between
    /// it and the leaf.
    /// - Parameter path: leaf first, the anchor last when the path has one.
    static func pathLengthViolation(_ path: [X509Certificate]) -> Int? {
        guard path.count > 2 else { return nil }
        for index in 2..<path.count {
            guard let limit = path[index].basicConstraints?.pathLengthConstraint else { continue }
            let intermediatesBelow = (1..<index).filter { !path[$0].isSelfIssued }.count
            if intermediatesBelow > limit { return index }
        }
        return nil
    }

    /// The index of the first certificate (from the leaf up) that a CA above it in the path
    /// forbids by its nameConstraints, nil when none does: RFC 5280 §6.1.4 (g), §6.1.3 (b),
    /// (c), where a CA's constraints apply to the leaf and to every non-self-issued
    /// certificate below it; each pair is judged by GnuTLS
    /// (``GnuTLSCertificate/nameConstraintsPermit(_:)``). A constraint GnuTLS cannot read
    /// counts as violated.
    /// - Parameters:
    ///   - path: leaf first, the anchor last when the path has one.
    ///   - native: the same certificates' GnuTLS handles.
    static func nameConstraintsViolation(_ path: [X509Certificate], native: [GnuTLSCertificate]) -> Int? {
        for index in 0..<(path.count - 1) where index == 0 || !path[index].isSelfIssued {
            for above in (index + 1)..<path.count {
                let permitted: Bool?
                do {
                    permitted = try native[above].nameConstraintsPermit(native[index])
                } catch {
                    permitted = false
                }
                if permitted == false { return index }
            }
        }
        return nil
    }
}
