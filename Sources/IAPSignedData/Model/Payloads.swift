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

    public static let fieldTable = PayloadFieldTable<TransactionPayload>([
        .init("transactionId", \.transactionID),
        .init("originalTransactionId", \.originalTransactionID),
        .init("webOrderLineItemId", \.webOrderLineItemID),
        .init("bundleId", \.bundleID),
        .init("productId", \.productID),
        .init("subscriptionGroupIdentifier", \.subscriptionGroupIdentifier),
        .init("purchaseDate", \.purchaseDate),
        .init("originalPurchaseDate", \.originalPurchaseDate),
        .init("expiresDate", \.expiresDate),
        .init("quantity", \.quantity),
        .init("type", \.type),
        .init("appAccountToken", \.appAccountToken),
        .init("inAppOwnershipType", \.inAppOwnershipType),
        .init("signedDate", \.signedDate),
        .init("revocationReason", \.revocationReason),
        .init("revocationDate", \.revocationDate),
        .init("isUpgraded", \.isUpgraded),
        .init("offerType", \.offerType),
        .init("offerIdentifier", \.offerIdentifier),
        .init("environment", \.environment),
        .init("storefront", \.storefront),
        .init("storefrontId", \.storefrontID),
        .init("transactionReason", \.transactionReason),
        .init("currency", \.currency),
        .init("price", \.price),
        .init("offerDiscountType", \.offerDiscountType),
        .init("offerPeriod", \.offerPeriod),
        .init("appTransactionId", \.appTransactionID),
        .init("revocationType", \.revocationType),
        .init("revocationPercentage", \.revocationPercentage),
        .init("deviceVerification", \.deviceVerification),
        .init("deviceVerificationNonce", \.deviceVerificationNonce),
    ])
}

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

    public static let fieldTable = PayloadFieldTable<RenewalInfoPayload>([
        .init("expirationIntent", \.expirationIntent),
        .init("originalTransactionId", \.originalTransactionID),
        .init("autoRenewProductId", \.autoRenewProductID),
        .init("productId", \.productID),
        .init("autoRenewStatus", \.autoRenewStatus),
        .init("isInBillingRetryPeriod", \.isInBillingRetryPeriod),
        .init("priceIncreaseStatus", \.priceIncreaseStatus),
        .init("gracePeriodExpiresDate", \.gracePeriodExpiresDate),
        .init("offerType", \.offerType),
        .init("offerIdentifier", \.offerIdentifier),
        .init("signedDate", \.signedDate),
        .init("environment", \.environment),
        .init("recentSubscriptionStartDate", \.recentSubscriptionStartDate),
        .init("renewalDate", \.renewalDate),
        .init("currency", \.currency),
        .init("renewalPrice", \.renewalPrice),
        .init("offerDiscountType", \.offerDiscountType),
        .init("offerPeriod", \.offerPeriod),
        .init("eligibleWinBackOfferIds", \.eligibleWinBackOfferIDs),
        .init("appAccountToken", \.appAccountToken),
        .init("appTransactionId", \.appTransactionID),
        .init("deviceVerification", \.deviceVerification),
        .init("deviceVerificationNonce", \.deviceVerificationNonce),
    ])
}

/// The decoded payload of a signed app transaction: the customer's purchase of the app itself.
public struct AppTransactionPayload: PayloadModel, JSONFieldValue {
    /// The environment (Apple calls it the receipt type).
    public var receiptType: AppStoreEnvironment?
    /// The app's Apple id (absent in Xcode and sandbox).
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: String?
    /// The app version that asked for the document.
    public var applicationVersion: String?
    /// The App Store's identifier of that version.
    public var versionExternalIdentifier: Int64?
    /// When the App Store made the document.
    public var receiptCreationDate: EpochMilliseconds?
    /// When the customer first got the app.
    public var originalPurchaseDate: EpochMilliseconds?
    /// The app version the customer first got.
    public var originalApplicationVersion: String?
    /// Base64 hash binding the document to a device.
    public var deviceVerification: String?
    /// The UUID used in the device verification hash.
    public var deviceVerificationNonce: String?
    /// When the customer pre-ordered the app.
    public var preorderDate: EpochMilliseconds?
    /// The identifier of this app transaction.
    public var appTransactionID: String?
    /// The platform the app was first bought on.
    public var originalPlatform: Platform?
    /// When the App Store signed this document (recent documents only).
    public var signedDate: EpochMilliseconds?
    /// Members this model has no property for, in their original order.
    public var additionalFields = JSONObject()

    public init() {}

    public static let fieldTable = PayloadFieldTable<AppTransactionPayload>([
        .init("receiptType", \.receiptType),
        .init("appAppleId", \.appAppleID),
        .init("bundleId", \.bundleID),
        .init("applicationVersion", \.applicationVersion),
        .init("versionExternalIdentifier", \.versionExternalIdentifier),
        .init("receiptCreationDate", \.receiptCreationDate),
        .init("originalPurchaseDate", \.originalPurchaseDate),
        .init("originalApplicationVersion", \.originalApplicationVersion),
        .init("deviceVerification", \.deviceVerification),
        .init("deviceVerificationNonce", \.deviceVerificationNonce),
        .init("preorderDate", \.preorderDate),
        .init("appTransactionId", \.appTransactionID),
        .init("originalPlatform", \.originalPlatform),
        .init("signedDate", \.signedDate),
    ])
}

/// The decoded payload of an App Store Server Notification V2 (`responseBodyV2DecodedPayload`).
///
/// The transaction and renewal information it carries are themselves signed: ``SignedDataVerifier`` verifies them with
/// the same rules.
public struct NotificationPayload: PayloadModel, JSONFieldValue {
    /// What happened.
    public var notificationType: NotificationType?
    /// The detail of what happened.
    public var subtype: NotificationSubtype?
    /// The notification's unique identifier; the same notification can arrive twice.
    public var notificationUUID: String?
    /// The app, environment and signed documents the notification is about.
    public var data: NotificationData?
    /// For `RENEWAL_EXTENSION` / `SUMMARY`: the outcome of a mass extension.
    public var summary: NotificationSummary?
    /// For `EXTERNAL_PURCHASE_TOKEN`: the token.
    public var externalPurchaseToken: ExternalPurchaseToken?
    /// For app-level notifications such as `RESCIND_CONSENT`.
    public var appData: NotificationAppData?
    /// The notification format version, "2.0".
    public var version: String?
    /// When the App Store signed this notification.
    public var signedDate: EpochMilliseconds?
    /// Members this model has no property for, in their original order.
    public var additionalFields = JSONObject()

    public init() {}

    public static let fieldTable = PayloadFieldTable<NotificationPayload>([
        .init("notificationType", \.notificationType),
        .init("subtype", \.subtype),
        .init("notificationUUID", \.notificationUUID),
        .init("data", \.data),
        .init("summary", \.summary),
        .init("externalPurchaseToken", \.externalPurchaseToken),
        .init("appData", \.appData),
        .init("version", \.version),
        .init("signedDate", \.signedDate),
    ])
}

/// The `data` of a notification: which app and environment, and the signed documents.
public struct NotificationData: PayloadModel, JSONFieldValue {
    /// The environment the notification is for.
    public var environment: AppStoreEnvironment?
    /// The app's Apple id.
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: String?
    /// The app's build version.
    public var bundleVersion: String?
    /// The transaction, as a compact JWS.
    public var signedTransactionInfo: String?
    /// The subscription renewal information, as a compact JWS.
    public var signedRenewalInfo: String?
    /// The subscription's status.
    public var status: SubscriptionStatus?
    /// For `CONSUMPTION_REQUEST`: why the customer asked for a refund.
    public var consumptionRequestReason: ConsumptionRequestReason?
    /// Members this model has no property for, in their original order.
    public var additionalFields = JSONObject()

    public init() {}

    public static let fieldTable = PayloadFieldTable<NotificationData>([
        .init("environment", \.environment),
        .init("appAppleId", \.appAppleID),
        .init("bundleId", \.bundleID),
        .init("bundleVersion", \.bundleVersion),
        .init("signedTransactionInfo", \.signedTransactionInfo),
        .init("signedRenewalInfo", \.signedRenewalInfo),
        .init("status", \.status),
        .init("consumptionRequestReason", \.consumptionRequestReason),
    ])
}

/// The `summary` of a notification about a mass subscription-renewal-date extension.
public struct NotificationSummary: PayloadModel, JSONFieldValue {
    /// The environment of the extension.
    public var environment: AppStoreEnvironment?
    /// The app's Apple id.
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: String?
    /// The extended product.
    public var productID: String?
    /// The identifier the developer gave the extension request.
    public var requestIdentifier: String?
    /// The storefronts the extension covers.
    public var storefrontCountryCodes: [String]?
    /// Subscriptions extended.
    public var succeededCount: Int64?
    /// Subscriptions that could not be extended.
    public var failedCount: Int64?
    /// Members this model has no property for, in their original order.
    public var additionalFields = JSONObject()

    public init() {}

    public static let fieldTable = PayloadFieldTable<NotificationSummary>([
        .init("environment", \.environment),
        .init("appAppleId", \.appAppleID),
        .init("bundleId", \.bundleID),
        .init("productId", \.productID),
        .init("requestIdentifier", \.requestIdentifier),
        .init("storefrontCountryCodes", \.storefrontCountryCodes),
        .init("succeededCount", \.succeededCount),
        .init("failedCount", \.failedCount),
    ])
}

/// The `externalPurchaseToken` of a notification about a purchase made outside the App Store.
public struct ExternalPurchaseToken: PayloadModel, JSONFieldValue {
    /// The token's identifier; sandbox tokens start with "SANDBOX".
    public var externalPurchaseID: String?
    /// When the token was made.
    public var tokenCreationDate: EpochMilliseconds?
    /// The app's Apple id.
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: String?
    /// Members this model has no property for, in their original order.
    public var additionalFields = JSONObject()

    public init() {}

    public static let fieldTable = PayloadFieldTable<ExternalPurchaseToken>([
        .init("externalPurchaseId", \.externalPurchaseID),
        .init("tokenCreationDate", \.tokenCreationDate),
        .init("appAppleId", \.appAppleID),
        .init("bundleId", \.bundleID),
    ])
}

/// The `appData` of an app-level notification (for example `RESCIND_CONSENT`).
public struct NotificationAppData: PayloadModel, JSONFieldValue {
    /// The app's Apple id.
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: String?
    /// The environment the notification is for.
    public var environment: AppStoreEnvironment?
    /// The app transaction, as a compact JWS.
    public var signedAppTransactionInfo: String?
    /// Members this model has no property for, in their original order.
    public var additionalFields = JSONObject()

    public init() {}

    public static let fieldTable = PayloadFieldTable<NotificationAppData>([
        .init("appAppleId", \.appAppleID),
        .init("bundleId", \.bundleID),
        .init("environment", \.environment),
        .init("signedAppTransactionInfo", \.signedAppTransactionInfo),
    ])
}

/// The decoded payload of a signed real-time request from the App Store (retention messaging).
public struct RealtimeRequestPayload: PayloadModel, JSONFieldValue {
    /// The subscription's original transaction.
    public var originalTransactionID: String?
    /// The app's Apple id.
    public var appAppleID: Int64?
    /// The product.
    public var productID: String?
    /// The customer's locale, e.g. en-US.
    public var userLocale: String?
    /// The request's identifier.
    public var requestIdentifier: String?
    /// The environment.
    public var environment: AppStoreEnvironment?
    /// When the App Store signed the request.
    public var signedDate: EpochMilliseconds?
    /// Members this model has no property for, in their original order.
    public var additionalFields = JSONObject()

    public init() {}

    public static let fieldTable = PayloadFieldTable<RealtimeRequestPayload>([
        .init("originalTransactionId", \.originalTransactionID),
        .init("appAppleId", \.appAppleID),
        .init("productId", \.productID),
        .init("userLocale", \.userLocale),
        .init("requestIdentifier", \.requestIdentifier),
        .init("environment", \.environment),
        .init("signedDate", \.signedDate),
    ])
}
