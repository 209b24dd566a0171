// The async form of trust evaluation. An evaluation may fetch: OCSP responses, CRLs from
// distribution points and missing issuers (each under its own timeout), so it can wait for
// seconds on the network; an async caller must not spend a cooperative-pool thread on it.
import RSAKitCore

extension RSATrust {
    /// The async form of ``evaluate()`` (Apple's `SecTrustEvaluateAsyncWithError`): the same
    /// evaluation, with its revocation and issuer fetches, run in RSAKit's bounded pool of
    /// threads (at most the processor count plus two, however many calls wait), never on the
    /// cooperative pool.
    ///
    /// Cancelling the awaiting task before the evaluation starts throws `CancellationError`;
    /// once started it runs to its end (each fetch is bounded by its own timeout, see
    /// ``RSARevocationPolicy``), and the cancellation is reported after it.
    /// - Returns: the evaluation, as ``evaluate()`` returns it (never throws for an untrusted
    ///   chain: see ``RSATrustEvaluation/result``).
    /// - Throws: `CancellationError` only.
    public func evaluateAsync() async throws -> RSATrustEvaluation {
        try await RSABlockingWork.run { [self] flag in
            let evaluation = evaluate()
            try flag.check()
            return evaluation
        }
    }
}
