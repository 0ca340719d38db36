/// A string-valued enumeration from Apple's formats that keeps values it does not know.
///
/// Apple adds values (notification types, environments) without notice; a payload with a new one decodes, and the
/// value is kept as written.
public protocol OpenStringEnumeration: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, Codable
where RawValue == String {
    init(rawValue: String)
}

extension OpenStringEnumeration {
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var description: String { rawValue }
    static func read(_ scanner: inout JSONScanner, field: String) throws -> Self {
        Self(rawValue: try scanner.string(field))
    }
    var jsonValue: JSONValue { .string(rawValue) }
}

/// An integer-valued enumeration from Apple's formats that keeps values it does not know.
public protocol OpenIntegerEnumeration: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByIntegerLiteral, Codable
where RawValue == Int {
    init(rawValue: Int)
}

extension OpenIntegerEnumeration {
    public init(integerLiteral value: Int) { self.init(rawValue: value) }
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Int.self))
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var description: String { String(rawValue) }
    static func read(_ scanner: inout JSONScanner, field: String) throws -> Self {
        Self(rawValue: try Int.read(&scanner, field: field))
    }
    var jsonValue: JSONValue { .number(JSONNumber(Int64(rawValue))) }
}

/// The environment a signed document comes from.
public struct AppStoreEnvironment: OpenStringEnumeration, JSONFieldValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let sandbox: Self = "Sandbox"
    public static let production: Self = "Production"
    public static let xcode: Self = "Xcode"
    public static let localTesting: Self = "LocalTesting"
}

/// What kind of product a transaction is for (`type`).
public struct ProductType: OpenStringEnumeration, JSONFieldValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let autoRenewable: Self = "Auto-Renewable Subscription"
    public static let nonConsumable: Self = "Non-Consumable"
    public static let consumable: Self = "Consumable"
    public static let nonRenewing: Self = "Non-Renewing Subscription"
}

/// Whether the customer bought the product or has it through Family Sharing (`inAppOwnershipType`).
public struct OwnershipType: OpenStringEnumeration, JSONFieldValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let purchased: Self = "PURCHASED"
    public static let familyShared: Self = "FAMILY_SHARED"
}

/// Why a transaction happened (`transactionReason`).
public struct TransactionReason: OpenStringEnumeration, JSONFieldValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let purchase: Self = "PURCHASE"
    public static let renewal: Self = "RENEWAL"
}

/// How an offer is paid (`offerDiscountType`).
public struct OfferDiscountType: OpenStringEnumeration, JSONFieldValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let freeTrial: Self = "FREE_TRIAL"
    public static let payAsYouGo: Self = "PAY_AS_YOU_GO"
    public static let payUpFront: Self = "PAY_UP_FRONT"
    public static let oneTime: Self = "ONE_TIME"
}

/// How a transaction was revoked (`revocationType`).
public struct RevocationType: OpenStringEnumeration, JSONFieldValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let refundFull: Self = "REFUND_FULL"
    public static let refundProrated: Self = "REFUND_PRORATED"
    public static let familyRevoke: Self = "FAMILY_REVOKE"
}

/// Why a customer asked for a refund of a consumable (`consumptionRequestReason`).
public struct ConsumptionRequestReason: OpenStringEnumeration, JSONFieldValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let unintendedPurchase: Self = "UNINTENDED_PURCHASE"
    public static let fulfillmentIssue: Self = "FULFILLMENT_ISSUE"
    public static let unsatisfiedWithPurchase: Self = "UNSATISFIED_WITH_PURCHASE"
    public static let legal: Self = "LEGAL"
    public static let other: Self = "OTHER"
}

/// The platform an app was first bought on (`originalPlatform`).
public struct Platform: OpenStringEnumeration, JSONFieldValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let iOS: Self = "iOS"
    public static let macOS: Self = "macOS"
    public static let tvOS: Self = "tvOS"
    public static let visionOS: Self = "visionOS"
}

/// What an App Store Server Notification V2 is about (`notificationType`).
public struct NotificationType: OpenStringEnumeration, JSONFieldValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let subscribed: Self = "SUBSCRIBED"
    public static let didChangeRenewalPref: Self = "DID_CHANGE_RENEWAL_PREF"
    public static let didChangeRenewalStatus: Self = "DID_CHANGE_RENEWAL_STATUS"
    public static let offerRedeemed: Self = "OFFER_REDEEMED"
    public static let didRenew: Self = "DID_RENEW"
    public static let expired: Self = "EXPIRED"
    public static let didFailToRenew: Self = "DID_FAIL_TO_RENEW"
    public static let gracePeriodExpired: Self = "GRACE_PERIOD_EXPIRED"
    public static let priceIncrease: Self = "PRICE_INCREASE"
    public static let refund: Self = "REFUND"
    public static let refundDeclined: Self = "REFUND_DECLINED"
    public static let consumptionRequest: Self = "CONSUMPTION_REQUEST"
    public static let renewalExtended: Self = "RENEWAL_EXTENDED"
    public static let revoke: Self = "REVOKE"
    public static let test: Self = "TEST"
    public static let renewalExtension: Self = "RENEWAL_EXTENSION"
    public static let refundReversed: Self = "REFUND_REVERSED"
    public static let externalPurchaseToken: Self = "EXTERNAL_PURCHASE_TOKEN"
    public static let oneTimeCharge: Self = "ONE_TIME_CHARGE"
    public static let rescindConsent: Self = "RESCIND_CONSENT"
    public static let metadataUpdate: Self = "METADATA_UPDATE"
    public static let migration: Self = "MIGRATION"
    public static let priceChange: Self = "PRICE_CHANGE"
}

/// The detail of a notification (`subtype`).
public struct NotificationSubtype: OpenStringEnumeration, JSONFieldValue {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let initialBuy: Self = "INITIAL_BUY"
    public static let resubscribe: Self = "RESUBSCRIBE"
    public static let downgrade: Self = "DOWNGRADE"
    public static let upgrade: Self = "UPGRADE"
    public static let autoRenewEnabled: Self = "AUTO_RENEW_ENABLED"
    public static let autoRenewDisabled: Self = "AUTO_RENEW_DISABLED"
    public static let voluntary: Self = "VOLUNTARY"
    public static let billingRetry: Self = "BILLING_RETRY"
    public static let priceIncrease: Self = "PRICE_INCREASE"
    public static let gracePeriod: Self = "GRACE_PERIOD"
    public static let pending: Self = "PENDING"
    public static let accepted: Self = "ACCEPTED"
    public static let billingRecovery: Self = "BILLING_RECOVERY"
    public static let productNotForSale: Self = "PRODUCT_NOT_FOR_SALE"
    public static let summary: Self = "SUMMARY"
    public static let failure: Self = "FAILURE"
    public static let unreported: Self = "UNREPORTED"
}

/// The kind of offer a transaction or renewal uses (`offerType`).
public struct OfferType: OpenIntegerEnumeration, JSONFieldValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let introductory: Self = 1
    public static let promotional: Self = 2
    public static let offerCode: Self = 3
    public static let winBack: Self = 4
}

/// Why Apple revoked a transaction (`revocationReason`).
public struct RevocationReason: OpenIntegerEnumeration, JSONFieldValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let other: Self = 0
    public static let appIssue: Self = 1
}

/// Why a subscription expired (`expirationIntent`).
public struct ExpirationIntent: OpenIntegerEnumeration, JSONFieldValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let customerCancelled: Self = 1
    public static let billingError: Self = 2
    public static let priceIncreaseDeclined: Self = 3
    public static let productUnavailable: Self = 4
    public static let other: Self = 5
}

/// Whether a subscription renews (`autoRenewStatus`).
public struct AutoRenewStatus: OpenIntegerEnumeration, JSONFieldValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let off: Self = 0
    public static let on: Self = 1
}

/// Whether the customer consented to a price increase (`priceIncreaseStatus`).
public struct PriceIncreaseStatus: OpenIntegerEnumeration, JSONFieldValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let notResponded: Self = 0
    public static let consented: Self = 1
}

/// A subscription's state in notification `data.status` and the Server API.
public struct SubscriptionStatus: OpenIntegerEnumeration, JSONFieldValue {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let active: Self = 1
    public static let expired: Self = 2
    public static let billingRetry: Self = 3
    public static let gracePeriod: Self = 4
    public static let revoked: Self = 5
}
