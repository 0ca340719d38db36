public import Foundation

/// What the App Store says about the next renewal of one subscription (one original transaction id).
///
/// Built from a signed renewal info, a verifyReceipt `pending_renewal_info` entry, or the simulator. It describes the
/// subscription as of ``signedDate``; the engine applies it to the period that follows the last known transaction.
public struct RenewalRecord: Hashable, Sendable, Codable {
    public var originalTransactionID: String
    /// The product of the current period.
    public var productID: String?
    /// The product the subscription renews to (differs from ``productID`` after a downgrade or crossgrade).
    public var autoRenewProductID: String?
    /// `true` when auto-renew is on, `false` when the customer turned it off, `nil` when not stated.
    public var willAutoRenew: Bool?
    /// Why the subscription expired, once it did.
    public var expirationReason: ExpirationReason?
    /// Apple is still trying to collect payment.
    public var isInBillingRetry: Bool
    /// Until when the customer keeps access while Apple retries (billing grace period).
    public var gracePeriodExpiresDate: Date?
    /// When the next renewal is due.
    public var renewalDate: Date?
    /// The customer has not (yet) agreed to a price increase: `true` pending, `false` agreed, `nil` none.
    public var priceIncreasePending: Bool?
    public var signedDate: Date?
    public var source: PurchaseSource

    public init(
        originalTransactionID: String,
        productID: String? = nil,
        autoRenewProductID: String? = nil,
        willAutoRenew: Bool? = nil,
        expirationReason: ExpirationReason? = nil,
        isInBillingRetry: Bool = false,
        gracePeriodExpiresDate: Date? = nil,
        renewalDate: Date? = nil,
        priceIncreasePending: Bool? = nil,
        signedDate: Date? = nil,
        source: PurchaseSource
    ) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.autoRenewProductID = autoRenewProductID
        self.willAutoRenew = willAutoRenew
        self.expirationReason = expirationReason
        self.isInBillingRetry = isInBillingRetry
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.renewalDate = renewalDate
        self.priceIncreasePending = priceIncreasePending
        self.signedDate = signedDate
        self.source = source
    }
}

/// Why a subscription ended (renewal info `expirationIntent`, plus what the engine can tell by itself).
public enum ExpirationReason: String, Hashable, Sendable, Codable {
    /// The customer turned auto-renew off (expirationIntent 1).
    case voluntary
    /// Payment failed and billing retry ended without recovery (2).
    case billingError
    /// The customer did not agree to a price increase (3).
    case priceIncreaseDeclined
    /// The product was not available at renewal (4).
    case productUnavailable
    /// Apple gave another reason (5) or one this version does not know.
    case other
    /// Nothing says why: no renewal information was given.
    case unknown
}
