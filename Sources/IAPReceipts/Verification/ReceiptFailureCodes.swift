public import IAPTrust

extension VerificationFailure.Code {
    /// The signed attributes' messageDigest is not the digest of the content.
    public static let messageDigestMismatch: Self = "messageDigestMismatch"
    /// Signed attributes without a content-type attribute naming id-data (RFC 5652 requires one).
    public static let contentTypeMismatch: Self = "contentTypeMismatch"
    /// A digest or signature algorithm other than RSA PKCS#1 v1.5 with SHA-1 or SHA-256, or one not declared.
    public static let unsupportedSignatureAlgorithm: Self = "unsupportedSignatureAlgorithm"
    /// Not exactly one signer.
    public static let unexpectedSignerCount: Self = "unexpectedSignerCount"
    /// The receipt has no creation date, so there is no time to validate its chain at.
    public static let creationDateMissing: Self = "creationDateMissing"
    /// The app version is not the one the caller expects.
    public static let appVersionMismatch: Self = "appVersionMismatch"
    /// SHA-1(device id ‖ opaque value ‖ bundle id) is not the receipt's hash: the receipt is from another device.
    public static let deviceHashMismatch: Self = "deviceHashMismatch"
    /// The receipt's expiration date has passed.
    public static let receiptExpired: Self = "receiptExpired"
}
