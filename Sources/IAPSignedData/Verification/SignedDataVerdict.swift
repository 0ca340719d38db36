public import Foundation
public import IAPTrust
public import X509

/// The outcome of verifying one signed document: what it says, and every check that failed.
///
/// A verdict is a value, not an error: a forged document is an answer. The payload is decoded even when the document
/// does not verify, for reports; use ``verifiedPayload`` to act on it.
public struct SignedDataVerdict<Payload: Sendable>: Sendable {
    /// The decoded payload, when the document could be decoded (whether or not it verified).
    public let payload: Payload?
    /// The JWS header, when the document could be parsed.
    public let header: JWSHeader?
    /// Every failed check, in the order the checks run; empty when the document is valid. Failures of documents nested
    /// in a notification are included, each with its `VerificationFailure/field`.
    public let failures: [VerificationFailure]
    /// Checks that were not made, and why.
    public let skippedChecks: [SkippedCheck]
    /// What the chain rests on when it is trusted.
    public let chainKind: ChainKind?
    /// The validated chain, leaf first (or the best chain found when it failed).
    public let chain: [Certificate]
    /// The time the chain was validated at (the payload's signed date).
    public let chainValidationTime: Date?
    /// The verdicts of signed documents nested in this one (a notification's transaction and renewal information).
    public let nested: [NestedVerdict]

    /// True when every check passed, including those of nested documents.
    public var isValid: Bool { failures.isEmpty && payload != nil }

    /// The payload when, and only when, every check passed.
    public var verifiedPayload: Payload? { isValid ? payload : nil }

    /// Whether the given check failed.
    public func failed(_ code: VerificationFailure.Code) -> Bool {
        failures.contains { $0.code == code }
    }

    /// Whether the given check was not made.
    public func skipped(_ code: SkippedCheck.Code) -> Bool {
        skippedChecks.contains { $0.code == code }
    }

    func mapPayload<Other: Sendable>(_ transform: (Payload) -> Other) -> SignedDataVerdict<Other> {
        SignedDataVerdict<Other>(
            payload: payload.map(transform), header: header, failures: failures, skippedChecks: skippedChecks,
            chainKind: chainKind, chain: chain, chainValidationTime: chainValidationTime, nested: nested)
    }
}

/// The verdict on a signed document nested in another, with the field that held it.
public struct NestedVerdict: Sendable {
    /// Where the document was, e.g. `data.signedTransactionInfo`.
    public let field: String
    /// Its verdict.
    public let verdict: SignedDataVerdict<SignedPayload>
}

extension SignedDataVerdict where Payload == NotificationPayload {
    /// The notification's transaction, when it and the notification verified.
    public var verifiedTransaction: TransactionPayload? {
        guard isValid else { return nil }
        for item in nested { if case .transaction(let payload)? = item.verdict.payload { return payload } }
        return nil
    }

    /// The notification's renewal information, when it, its transaction and the notification verified.
    public var verifiedRenewalInfo: RenewalInfoPayload? {
        guard isValid else { return nil }
        for item in nested { if case .renewalInfo(let payload)? = item.verdict.payload { return payload } }
        return nil
    }

    /// The notification's app transaction (for app-level notifications), when everything verified.
    public var verifiedAppTransaction: AppTransactionPayload? {
        guard isValid else { return nil }
        for item in nested { if case .appTransaction(let payload)? = item.verdict.payload { return payload } }
        return nil
    }
}
