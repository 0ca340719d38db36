/// A check a verifier did not make, and why: the caller configured no expected value, the document has nothing to
/// check, or an earlier failure made the check moot. Verdicts list them so "valid" never hides "not checked".
public struct SkippedCheck: Hashable, Sendable, CustomStringConvertible {
    /// The stable name of a check that was not made.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        public var description: String { rawValue }

        /// The bundle id.
        public static let bundleID: Self = "bundleId"
        /// The app version (receipts).
        public static let appVersion: Self = "appVersion"
        /// The device hash (receipts).
        public static let deviceHash: Self = "deviceHash"
        /// The environment.
        public static let environment: Self = "environment"
        /// The certificate chain and the signature (signed data whose chain cannot be checked).
        public static let chainAndSignature: Self = "chainAndSignature"
        /// The signature alone (its algorithm is refused).
        public static let signature: Self = "signature"
    }

    /// The check that was not made.
    public let code: Code
    /// Why, for a person.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }
}
