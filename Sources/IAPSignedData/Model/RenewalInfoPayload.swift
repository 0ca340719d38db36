// The payload models of Apple's signed data (APP_STORE_FORMATS.md sections 2 and 3). Each lists its known fields once,
// in its field table; decoding and encoding both go through that table.

/// The decoded payload of signed renewal information (`JWSRenewalInfoDecodedPayload`): what happens to a subscription
/// at the end of its period.
///
/// Renewal information names no bundle id: on its own it proves nothing about which app it is for. Believe it only
/// together with a verified transaction of the same ``originalTransactionID`` (see
/// ``SignedDataVerifier/verifyRenewalInfo(_:for:)``).
public struct RenewalInfoPayload: PayloadModel, JSONFieldValue {
    /// Why the subscription expired.
    public var expirationIntent: ExpirationIntent?
    /// The original transaction of the subscription.
    public var originalTransactionID: String?
    /// The product the subscription renews to.
    public var autoRenewProductID: String?
    /// The product the customer is subscribed to now.
    public var productID: String?
    /// Whether the subscription renews.
    public var autoRenewStatus: AutoRenewStatus?
    /// Whether the App Store is trying to renew after a billing error.
    public var isInBillingRetryPeriod: Bool?
    /// Whether the customer consented to a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// When the billing grace period ends.
    public var gracePeriodExpiresDate: EpochMilliseconds?
    /// The offer applied at the next renewal.
    public var offerType: OfferType?
    /// The identifier of that offer.
    public var offerIdentifier: String?
    /// When the App Store signed this document.
    public var signedDate: EpochMilliseconds?
    /// Where the subscription lives.
    public var environment: AppStoreEnvironment?
    /// The start of the latest run of paid periods without a gap of more than 60 days.
    public var recentSubscriptionStartDate: EpochMilliseconds?
    /// When the subscription renews next.
    public var renewalDate: EpochMilliseconds?
    /// The ISO 4217 currency of the renewal price.
    public var currency: String?
    /// The renewal price in milli-units.
    public var renewalPrice: Int64?
    /// How the next renewal's offer is paid.
    public var offerDiscountType: OfferDiscountType?
    /// The duration of the next renewal's offer.
    public var offerPeriod: String?
    /// Win-back offers the customer may redeem.
    public var eligibleWinBackOfferIDs: [String]?
    /// The UUID the app attached to the purchase, as written.
    public var appAccountToken: String?
    /// The app transaction this subscription belongs to.
    public var appTransactionID: String?
    /// On-device only: base64 hash binding the document to a device.
    public var deviceVerification: String?
    /// On-device only: the UUID used in the device verification hash.
    public var deviceVerificationNonce: String?
    /// Members this model has no property for, in their original order.
    public var additionalFields = JSONObject()

    public init() {}

    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        self = try Self.decodeJSON(jsonBytes)
    }

    public static let fieldTable = PayloadFieldTable<RenewalInfoPayload>([
        .init("expirationIntent", { $0.expirationIntent }, { $0.expirationIntent = $1 }),
        .init("originalTransactionId", { $0.originalTransactionID }, { $0.originalTransactionID = $1 }),
        .init("autoRenewProductId", { $0.autoRenewProductID }, { $0.autoRenewProductID = $1 }),
        .init("productId", { $0.productID }, { $0.productID = $1 }),
        .init("autoRenewStatus", { $0.autoRenewStatus }, { $0.autoRenewStatus = $1 }),
        .init("isInBillingRetryPeriod", { $0.isInBillingRetryPeriod }, { $0.isInBillingRetryPeriod = $1 }),
        .init("priceIncreaseStatus", { $0.priceIncreaseStatus }, { $0.priceIncreaseStatus = $1 }),
        .init("gracePeriodExpiresDate", { $0.gracePeriodExpiresDate }, { $0.gracePeriodExpiresDate = $1 }),
        .init("offerType", { $0.offerType }, { $0.offerType = $1 }),
        .init("offerIdentifier", { $0.offerIdentifier }, { $0.offerIdentifier = $1 }),
        .init("signedDate", { $0.signedDate }, { $0.signedDate = $1 }),
        .init("environment", { $0.environment }, { $0.environment = $1 }),
        .init(
            "recentSubscriptionStartDate", { $0.recentSubscriptionStartDate }, { $0.recentSubscriptionStartDate = $1 }),
        .init("renewalDate", { $0.renewalDate }, { $0.renewalDate = $1 }),
        .init("currency", { $0.currency }, { $0.currency = $1 }),
        .init("renewalPrice", { $0.renewalPrice }, { $0.renewalPrice = $1 }),
        .init("offerDiscountType", { $0.offerDiscountType }, { $0.offerDiscountType = $1 }),
        .init("offerPeriod", { $0.offerPeriod }, { $0.offerPeriod = $1 }),
        .init("eligibleWinBackOfferIds", { $0.eligibleWinBackOfferIDs }, { $0.eligibleWinBackOfferIDs = $1 }),
        .init("appAccountToken", { $0.appAccountToken }, { $0.appAccountToken = $1 }),
        .init("appTransactionId", { $0.appTransactionID }, { $0.appTransactionID = $1 }),
        .init("deviceVerification", { $0.deviceVerification }, { $0.deviceVerification = $1 }),
        .init("deviceVerificationNonce", { $0.deviceVerificationNonce }, { $0.deviceVerificationNonce = $1 }),
    ])
}
