public import Foundation
public import IAPTrust
public import X509

/// The outcome of verifying one receipt: the receipt, and every check that failed.
///
/// A verdict is a value, not an error: a forged receipt is an answer, and the caller decides what to do with it.
public struct ReceiptVerdict: Sendable {
    /// The receipt as parsed (whether or not it verified).
    public let receipt: AppReceipt
    /// Every failed check; empty when the receipt is valid.
    public let failures: [VerificationFailure]
    /// Checks that were not made because the caller gave no expected value (for example the bundle id).
    public let skippedChecks: [SkippedCheck]
    /// What the chain rests on when it is trusted: Apple's roots or an Xcode test certificate.
    public let chainKind: ChainKind?
    /// The validated chain, leaf first (or the best chain found when it failed).
    public let chain: [Certificate]
    /// The digest algorithm of the signature: "SHA-1" or "SHA-256".
    public let digestAlgorithm: String?
    /// The time the chain was validated at.
    public let chainValidationTime: Date?

    /// True when every check passed.
    public var isValid: Bool { failures.isEmpty }

    /// The environment the receipt comes from, Xcode when it is signed by an Xcode test certificate.
    public var environment: ReceiptEnvironment? {
        chainKind == .xcodeTest ? .xcode : receipt.environment
    }

    /// Whether the given check failed.
    public func failed(_ code: VerificationFailure.Code) -> Bool {
        failures.contains { $0.code == code }
    }

    /// Whether the given check was not made.
    public func skipped(_ code: SkippedCheck.Code) -> Bool {
        skippedChecks.contains { $0.code == code }
    }
}
