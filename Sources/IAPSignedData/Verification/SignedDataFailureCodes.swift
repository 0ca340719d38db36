public import IAPTrust

extension VerificationFailure.Code {
    /// A document nested in another (a notification's transaction) is not a compact JWS or its payload is not the
    /// expected JSON (the reason says which). A document given directly that does not parse throws instead.
    public static let malformedDocument: Self = "malformedDocument"
    /// `alg` is not ES256 (for example `none`, `HS256`, `RS256`).
    public static let algorithmNotAllowed: Self = "algorithmNotAllowed"
    /// The header names another source for the key (`jwk`, `jku`, `x5u`) or demands extensions (`crit`).
    public static let headerMemberNotAllowed: Self = "headerMemberNotAllowed"
    /// The header has no `x5c` certificate chain.
    public static let certificateChainMissing: Self = "certificateChainMissing"
    /// The payload has no signed date (or, for app transactions, receipt creation date) to validate the chain at.
    public static let signedDateMissing: Self = "signedDateMissing"
    /// The leaf's key is not a P-256 key, so it cannot have made an ES256 signature.
    public static let unsupportedKeyType: Self = "unsupportedKeyType"
    /// The payload's app Apple id is not the configured one (or is missing in Production).
    public static let appAppleIDMismatch: Self = "appAppleIdMismatch"
    /// The renewal information's original transaction is not the transaction it was given with.
    public static let renewalInfoMismatch: Self = "renewalInfoMismatch"
}
