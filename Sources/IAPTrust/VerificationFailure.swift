public import IAPCore

/// One failed check in a verification verdict.
///
/// Verifiers return every failed check rather than stopping at the first, so a caller (or a person reading a report)
/// sees the whole picture. Failures compare equal by ``code`` alone: tests and clients match on codes, while
/// ``reason`` is free text for people.
public struct VerificationFailure: CodedError, Sendable {
    /// The stable, machine-readable name of a check that failed.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        public var description: String { rawValue }
    }

    /// The check that failed.
    public let code: Code
    /// A human-readable explanation, naming the values involved where that helps.
    public let reason: String
    /// Where the failing document was when it was nested in another (`data.signedTransactionInfo` in a
    /// notification); nil for the document itself.
    public let field: String?

    public init(_ code: Code, _ reason: String, field: String? = nil) {
        self.code = code
        self.reason = reason
        self.field = field
    }

    /// This failure as part of the document that held it in `field`.
    public func nested(in field: String) -> VerificationFailure {
        VerificationFailure(code, reason, field: self.field.map { "\(field).\($0)" } ?? field)
    }

    public var description: String { (field.map { "\($0): " } ?? "") + "\(code): \(reason)" }

}

extension VerificationFailure.Code {
    /// No chain from the presented certificates to a configured trusted root (checked by key and signature).
    public static let chainUntrusted: Self = "chainUntrusted"
    /// A certificate of the chain had expired at the validation time.
    public static let certificateExpired: Self = "certificateExpired"
    /// A certificate of the chain was not yet valid at the validation time.
    public static let certificateNotYetValid: Self = "certificateNotYetValid"
    /// The leaf lacks Apple's receipt-signing marker extension (1.2.840.113635.100.6.11.1).
    public static let leafMarkerMissing: Self = "leafMarkerMissing"
    /// The intermediate lacks Apple's WWDR marker extension (1.2.840.113635.100.6.2.1).
    public static let intermediateMarkerMissing: Self = "intermediateMarkerMissing"
    /// The signing certificate claims to be a certificate authority.
    public static let leafIsCertificateAuthority: Self = "leafIsCertificateAuthority"
    /// The chain is not leaf, intermediate, root.
    public static let unexpectedChainLength: Self = "unexpectedChainLength"
    /// The data is signed by Xcode's StoreKit test certificate, which this verifier was not configured to accept.
    public static let xcodeSignedNotAllowed: Self = "xcodeSignedNotAllowed"
    /// The environment the document names (Production, Sandbox, Xcode) is not one the caller expects.
    public static let environmentMismatch: Self = "environmentMismatch"
    /// The signing certificate named by the signature is not among the presented certificates.
    public static let signerCertificateNotFound: Self = "signerCertificateNotFound"
    /// The signature does not verify with the signing certificate's key.
    public static let signatureInvalid: Self = "signatureInvalid"
    /// The bundle id is not the one the caller expects.
    public static let bundleIDMismatch: Self = "bundleIdMismatch"
    /// A presented certificate is not a well-formed X.509 certificate.
    public static let malformedCertificate: Self = "malformedCertificate"
    /// More certificates than any App Store document carries (Apple's: 3; Xcode's: 1), refused before any chain is
    /// built: a large set of look-alike certificates would make the path search explode.
    public static let tooManyCertificates: Self = "tooManyCertificates"
}
