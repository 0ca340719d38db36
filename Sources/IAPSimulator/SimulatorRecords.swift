public import Foundation
public import IAPEntitlements
public import IAPSignedData

/// One thing that happened in the simulated store, in order: what a timeline shows.
public struct StoreEvent: Hashable, Sendable {
    /// What kind of thing happened.
    public enum Kind: String, Hashable, Sendable, Codable {
        case accountCreated, deviceAdded, familyJoined, familyLeft
        case purchased, renewed, upgraded, downgradeScheduled, crossgradeScheduled, changeCancelled
        case askToBuyRequested, askToBuyApproved, askToBuyDeclined, interrupted, interruptionResolved
        case userCancelled, failed, finished, synced
        case autoRenewDisabled, autoRenewEnabled
        case billingIssue, billingFailed, gracePeriodExpired, billingRecovered, billingResolved
        case expired, refunded, refundReversed, revoked, refundRequested, refundDeclined, consumptionReported
        case priceIncreased, priceIncreaseConsented, offerRedeemed
        case transactionDeleted, transactionsCleared, clockAdvanced
    }

    /// Position in the simulator's event log (from 0).
    public let sequence: Int
    public let date: Date
    public let kind: Kind
    public let accountID: String?
    public let productID: String?
    public let transactionID: String?
    /// A sentence a person can read.
    public let summary: String
}

/// An App Store Server Notification V2 the simulator issued: the signed payload, the request body a webhook gets,
/// and the decoded payload.
public struct IssuedNotification: Hashable, Sendable {
    public let uuid: String
    public let type: NotificationType
    public let subtype: NotificationSubtype?
    public let date: Date
    public let accountID: String
    public let transactionID: String?
    /// The compact JWS (`signedPayload`).
    public let signedPayload: String
    public let payload: NotificationPayload

    /// The HTTP request body Apple posts: `{"signedPayload":"..."}`.
    public var requestBody: [UInt8] {
        JSONValue.object(JSONObject([("signedPayload", .string(signedPayload))])).jsonBytes()
    }
}

/// Something the simulator signed, kept in issue order when the configuration asks for it.
public struct IssuedArtifact: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, Codable {
        case transaction, renewalInfo, notification, appTransaction, receipt
    }

    public let kind: Kind
    /// A name unique within the simulator: kind, sequence and the id it concerns (`transaction-0003-2000000000000001`).
    public let name: String
    public let date: Date
    public let accountID: String?
    /// A JWS (as UTF-8) or a receipt's DER bytes.
    public let bytes: [UInt8]
}

/// What the simulator counted: events and every signature it made.
public struct SimulatorStatistics: Hashable, Sendable {
    public var events = 0
    public var transactions = 0
    public var notifications = 0
    /// ES256 signatures (transactions, renewal infos, notifications, app transactions).
    public var jwsSignatures = 0
    /// RSA signatures (receipts).
    public var receiptSignatures = 0

    public var signatures: Int { jwsSignatures + receiptSignatures }
}

/// The simulator's own view of what a customer has, computed from its state (not from its artifacts): what the
/// entitlement engine should conclude from the artifacts.
public struct CustomerView: Hashable, Sendable {
    /// Products that grant access now.
    public var entitledProductIDs: Set<String>
    /// Consumables bought and not refunded (refunds prorated), by product; what the app consumed is not the store's.
    public var consumablePurchased: [String: Int]
    /// Subscriptions by group id.
    public var subscriptions: [String: SubscriptionView]
}

/// One subscription group as the simulator sees it.
public struct SubscriptionView: Hashable, Sendable {
    public var state: SubscriptionState
    public var productID: String
    public var expiresDate: Date
    public var willAutoRenew: Bool
    /// The product the next renewal brings, while the subscription runs with auto-renew on.
    public var renewsToProductID: String?
    public var gracePeriodExpiresDate: Date?
    public var isFamilyShared: Bool
    public var originalTransactionID: String
}
