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

    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        self = try Self.decodeJSON(jsonBytes)
    }

    public static let fieldTable = PayloadFieldTable<AppTransactionPayload>([
        .init("receiptType", { $0.receiptType }, { $0.receiptType = $1 }),
        .init("appAppleId", { $0.appAppleID }, { $0.appAppleID = $1 }),
        .init("bundleId", { $0.bundleID }, { $0.bundleID = $1 }),
        .init("applicationVersion", { $0.applicationVersion }, { $0.applicationVersion = $1 }),
        .init("versionExternalIdentifier", { $0.versionExternalIdentifier }, { $0.versionExternalIdentifier = $1 }),
        .init("receiptCreationDate", { $0.receiptCreationDate }, { $0.receiptCreationDate = $1 }),
        .init("originalPurchaseDate", { $0.originalPurchaseDate }, { $0.originalPurchaseDate = $1 }),
        .init("originalApplicationVersion", { $0.originalApplicationVersion }, { $0.originalApplicationVersion = $1 }),
        .init("deviceVerification", { $0.deviceVerification }, { $0.deviceVerification = $1 }),
        .init("deviceVerificationNonce", { $0.deviceVerificationNonce }, { $0.deviceVerificationNonce = $1 }),
        .init("preorderDate", { $0.preorderDate }, { $0.preorderDate = $1 }),
        .init("appTransactionId", { $0.appTransactionID }, { $0.appTransactionID = $1 }),
        .init("originalPlatform", { $0.originalPlatform }, { $0.originalPlatform = $1 }),
        .init("signedDate", { $0.signedDate }, { $0.signedDate = $1 }),
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

    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        self = try Self.decodeJSON(jsonBytes)
    }

    public static let fieldTable = PayloadFieldTable<NotificationPayload>([
        .init("notificationType", { $0.notificationType }, { $0.notificationType = $1 }),
        .init("subtype", { $0.subtype }, { $0.subtype = $1 }),
        .init("notificationUUID", { $0.notificationUUID }, { $0.notificationUUID = $1 }),
        .init("data", { $0.data }, { $0.data = $1 }),
        .init("summary", { $0.summary }, { $0.summary = $1 }),
        .init("externalPurchaseToken", { $0.externalPurchaseToken }, { $0.externalPurchaseToken = $1 }),
        .init("appData", { $0.appData }, { $0.appData = $1 }),
        .init("version", { $0.version }, { $0.version = $1 }),
        .init("signedDate", { $0.signedDate }, { $0.signedDate = $1 }),
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

    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        self = try Self.decodeJSON(jsonBytes)
    }

    public static let fieldTable = PayloadFieldTable<NotificationData>([
        .init("environment", { $0.environment }, { $0.environment = $1 }),
        .init("appAppleId", { $0.appAppleID }, { $0.appAppleID = $1 }),
        .init("bundleId", { $0.bundleID }, { $0.bundleID = $1 }),
        .init("bundleVersion", { $0.bundleVersion }, { $0.bundleVersion = $1 }),
        .init("signedTransactionInfo", { $0.signedTransactionInfo }, { $0.signedTransactionInfo = $1 }),
        .init("signedRenewalInfo", { $0.signedRenewalInfo }, { $0.signedRenewalInfo = $1 }),
        .init("status", { $0.status }, { $0.status = $1 }),
        .init("consumptionRequestReason", { $0.consumptionRequestReason }, { $0.consumptionRequestReason = $1 }),
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

    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        self = try Self.decodeJSON(jsonBytes)
    }

    public static let fieldTable = PayloadFieldTable<NotificationSummary>([
        .init("environment", { $0.environment }, { $0.environment = $1 }),
        .init("appAppleId", { $0.appAppleID }, { $0.appAppleID = $1 }),
        .init("bundleId", { $0.bundleID }, { $0.bundleID = $1 }),
        .init("productId", { $0.productID }, { $0.productID = $1 }),
        .init("requestIdentifier", { $0.requestIdentifier }, { $0.requestIdentifier = $1 }),
        .init("storefrontCountryCodes", { $0.storefrontCountryCodes }, { $0.storefrontCountryCodes = $1 }),
        .init("succeededCount", { $0.succeededCount }, { $0.succeededCount = $1 }),
        .init("failedCount", { $0.failedCount }, { $0.failedCount = $1 }),
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

    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        self = try Self.decodeJSON(jsonBytes)
    }

    public static let fieldTable = PayloadFieldTable<ExternalPurchaseToken>([
        .init("externalPurchaseId", { $0.externalPurchaseID }, { $0.externalPurchaseID = $1 }),
        .init("tokenCreationDate", { $0.tokenCreationDate }, { $0.tokenCreationDate = $1 }),
        .init("appAppleId", { $0.appAppleID }, { $0.appAppleID = $1 }),
        .init("bundleId", { $0.bundleID }, { $0.bundleID = $1 }),
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

    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        self = try Self.decodeJSON(jsonBytes)
    }

    public static let fieldTable = PayloadFieldTable<NotificationAppData>([
        .init("appAppleId", { $0.appAppleID }, { $0.appAppleID = $1 }),
        .init("bundleId", { $0.bundleID }, { $0.bundleID = $1 }),
        .init("environment", { $0.environment }, { $0.environment = $1 }),
        .init("signedAppTransactionInfo", { $0.signedAppTransactionInfo }, { $0.signedAppTransactionInfo = $1 }),
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

    public init(jsonBytes: some Collection<UInt8>) throws(SignedDataParsingError) {
        self = try Self.decodeJSON(jsonBytes)
    }

    public static let fieldTable = PayloadFieldTable<RealtimeRequestPayload>([
        .init("originalTransactionId", { $0.originalTransactionID }, { $0.originalTransactionID = $1 }),
        .init("appAppleId", { $0.appAppleID }, { $0.appAppleID = $1 }),
        .init("productId", { $0.productID }, { $0.productID = $1 }),
        .init("userLocale", { $0.userLocale }, { $0.userLocale = $1 }),
        .init("requestIdentifier", { $0.requestIdentifier }, { $0.requestIdentifier = $1 }),
        .init("environment", { $0.environment }, { $0.environment = $1 }),
        .init("signedDate", { $0.signedDate }, { $0.signedDate = $1 }),
    ])
}
