// The payload models of Apple's signed data (APP_STORE_FORMATS.md sections 2 and 3). Each lists its known fields once,
// in its field table; decoding and encoding both go through that table.

/// The decoded payload of a signed transaction (`JWSTransactionDecodedPayload`): one purchase, renewal or restore.
///
/// Every field is optional because Apple omits those that do not apply (and its test data omits most).
public struct TransactionPayload: PayloadModel, JSONFieldValue {
    /// The transaction identifier.
    public var transactionID: String?
    /// The identifier of the original purchase (the same across renewals).
    public var originalTransactionID: String?
    /// The subscription purchase event identifier across devices.
    public var webOrderLineItemID: String?
    /// The app's bundle identifier.
    public var bundleID: String?
    /// The product identifier.
    public var productID: String?
    /// The subscription group, for subscriptions.
    public var subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer (or the renewal happened).
    public var purchaseDate: EpochMilliseconds?
    /// When the original transaction happened.
    public var originalPurchaseDate: EpochMilliseconds?
    /// When the subscription period expires or renews.
    public var expiresDate: EpochMilliseconds?
    /// How many consumables were bought.
    public var quantity: Int?
    /// The product type.
    public var type: ProductType?
    /// The UUID the app attached to the purchase, as written.
    public var appAccountToken: String?
    /// Purchased, or shared by a family member.
    public var inAppOwnershipType: OwnershipType?
    /// When the App Store signed this document.
    public var signedDate: EpochMilliseconds?
    /// Why the transaction was refunded or revoked.
    public var revocationReason: RevocationReason?
    /// When the transaction was refunded or revoked.
    public var revocationDate: EpochMilliseconds?
    /// Whether the customer upgraded to another subscription in the group.
    public var isUpgraded: Bool?
    /// The kind of offer used.
    public var offerType: OfferType?
    /// The offer's identifier (promotional offers, offer codes, win-back offers).
    public var offerIdentifier: String?
    /// Where the transaction happened.
    public var environment: AppStoreEnvironment?
    /// The storefront's three-letter country code.
    public var storefront: String?
    /// The App Store's storefront identifier.
    public var storefrontID: String?
    /// Purchase or renewal.
    public var transactionReason: TransactionReason?
    /// The ISO 4217 currency of the price.
    public var currency: String?
    /// The price in milli-units of the currency (10990 is 10.99).
    public var price: Int64?
    /// How the offer is paid.
    public var offerDiscountType: OfferDiscountType?
    /// The offer's duration (ISO 8601, e.g. P1M).
    public var offerPeriod: String?
    /// The app transaction this purchase belongs to.
    public var appTransactionID: String?
    /// How the transaction was revoked.
    public var revocationType: RevocationType?
    /// For prorated refunds, the refunded share in thousandths of a percent.
    public var revocationPercentage: Int?
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

    public static let fieldTable = PayloadFieldTable<TransactionPayload>([
        .init("transactionId", { $0.transactionID }, { $0.transactionID = $1 }),
        .init("originalTransactionId", { $0.originalTransactionID }, { $0.originalTransactionID = $1 }),
        .init("webOrderLineItemId", { $0.webOrderLineItemID }, { $0.webOrderLineItemID = $1 }),
        .init("bundleId", { $0.bundleID }, { $0.bundleID = $1 }),
        .init("productId", { $0.productID }, { $0.productID = $1 }),
        .init(
            "subscriptionGroupIdentifier", { $0.subscriptionGroupIdentifier }, { $0.subscriptionGroupIdentifier = $1 }),
        .init("purchaseDate", { $0.purchaseDate }, { $0.purchaseDate = $1 }),
        .init("originalPurchaseDate", { $0.originalPurchaseDate }, { $0.originalPurchaseDate = $1 }),
        .init("expiresDate", { $0.expiresDate }, { $0.expiresDate = $1 }),
        .init("quantity", { $0.quantity }, { $0.quantity = $1 }),
        .init("type", { $0.type }, { $0.type = $1 }),
        .init("appAccountToken", { $0.appAccountToken }, { $0.appAccountToken = $1 }),
        .init("inAppOwnershipType", { $0.inAppOwnershipType }, { $0.inAppOwnershipType = $1 }),
        .init("signedDate", { $0.signedDate }, { $0.signedDate = $1 }),
        .init("revocationReason", { $0.revocationReason }, { $0.revocationReason = $1 }),
        .init("revocationDate", { $0.revocationDate }, { $0.revocationDate = $1 }),
        .init("isUpgraded", { $0.isUpgraded }, { $0.isUpgraded = $1 }),
        .init("offerType", { $0.offerType }, { $0.offerType = $1 }),
        .init("offerIdentifier", { $0.offerIdentifier }, { $0.offerIdentifier = $1 }),
        .init("environment", { $0.environment }, { $0.environment = $1 }),
        .init("storefront", { $0.storefront }, { $0.storefront = $1 }),
        .init("storefrontId", { $0.storefrontID }, { $0.storefrontID = $1 }),
        .init("transactionReason", { $0.transactionReason }, { $0.transactionReason = $1 }),
        .init("currency", { $0.currency }, { $0.currency = $1 }),
        .init("price", { $0.price }, { $0.price = $1 }),
        .init("offerDiscountType", { $0.offerDiscountType }, { $0.offerDiscountType = $1 }),
        .init("offerPeriod", { $0.offerPeriod }, { $0.offerPeriod = $1 }),
        .init("appTransactionId", { $0.appTransactionID }, { $0.appTransactionID = $1 }),
        .init("revocationType", { $0.revocationType }, { $0.revocationType = $1 }),
        .init("revocationPercentage", { $0.revocationPercentage }, { $0.revocationPercentage = $1 }),
        .init("deviceVerification", { $0.deviceVerification }, { $0.deviceVerification = $1 }),
        .init("deviceVerificationNonce", { $0.deviceVerificationNonce }, { $0.deviceVerificationNonce = $1 }),
    ])
}
