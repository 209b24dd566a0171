// The constraints a CA puts on the path below it (RFC 5280 §6.1.4), judged by RSAKit:
// pathLenConstraint and nameConstraints. GnuTLS 3.7.9 reports both as one "signer
// constraints" failure, counts self-issued certificates against pathLenConstraint, which
// RFC 5280 §6.1.4 (l) does not (NIST PKITS 4.6.15, 4.6.17), and misjudges directoryName and
// URI constraints (PKITS 4.13, ten cases); so its verdict on them is set aside.

import RSAKitCore

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
    /// certificate below it, and each CA's subtrees are applied in turn (the intersection of
    /// the permitted subtrees, the union of the excluded ones). Judged by RSAKit
    /// (``NameConstraints``); a constraint or a name that cannot be read counts as violated.
    /// - Parameter path: leaf first, the anchor last when the path has one.
    static func nameConstraintsViolation(_ path: [X509Certificate]) -> Int? {
        var constraints: [Int: NameConstraints] = [:]
        for index in 1..<max(1, path.count) {
            do {
                if let found = try path[index].nameConstraints() { constraints[index] = found }
            } catch {
                return index
            }
        }
        guard !constraints.isEmpty else { return nil }
        for index in 0..<(path.count - 1) where index == 0 || !path[index].isSelfIssued {
            let applying = constraints.filter { $0.key > index }
            guard !applying.isEmpty else { continue }
            guard let names = try? path[index].constrainedNames() else { return index }
            if applying.values.contains(where: { !$0.permits(names) }) { return index }
        }
        return nil
    }
}
