// The payload models of Apple's signed data (APP_STORE_FORMATS.md sections 2 and 3). Each lists its known fields once,
// in its field table; decoding and encoding both go through that table.

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
