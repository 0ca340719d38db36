public import Foundation
public import IAPSignedData

/// One subscription as the App Store Server API's "get all subscription statuses" lists it.
public struct SubscriptionStatusEntry: Hashable, Sendable {
    public let groupID: String
    /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    public let status: Int
    /// The original transaction id the customer knows the subscription by (a family member's own copy's id).
    public let originalTransactionID: String
    /// The latest transaction, signed.
    public let signedTransactionInfo: String
    /// The renewal info, signed.
    public let signedRenewalInfo: String
}

/// A request to extend renewal dates (`ExtendRenewalDateRequest`, and the mass form without its product).
public struct RenewalExtensionRequest: Hashable, Sendable {
    /// 1...90 days.
    public var extendByDays: Int
    /// 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
    public var reasonCode: Int
    /// The developer's id for the request (at most 128 characters); asking again with it answers the same.
    public var requestIdentifier: String

    public init(extendByDays: Int, reasonCode: Int, requestIdentifier: String) {
        self.extendByDays = extendByDays
        self.reasonCode = reasonCode
        self.requestIdentifier = requestIdentifier
    }
}

/// The answer to one subscription's renewal extension (`ExtendRenewalDateResponse`).
public struct RenewalExtensionResult: Hashable, Sendable, Codable {
    public let originalTransactionID: String
    public let webOrderLineItemID: String?
    public let success: Bool
    /// The new expiration date.
    public let effectiveDate: Date?
}

/// Where a mass renewal extension stands (`MassExtendRenewalDateStatusResponse`).
public struct MassRenewalExtensionStatus: Hashable, Sendable, Codable {
    public let requestIdentifier: String
    public let productID: String
    public let complete: Bool
    public let completeDate: Date?
    public let succeededCount: Int
    public let failedCount: Int
}

/// One attempt to deliver a notification to the developer's server, as the notification history reports it.
public struct NotificationSendAttempt: Hashable, Sendable, Codable {
    public let date: Date
    /// Apple's `sendAttemptResult`: `SUCCESS`, `TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, ...
    public let result: String

    public init(date: Date, result: String) {
        self.date = date
        self.result = result
    }
}

/// The filters of a notification history request (`NotificationHistoryRequest`).
public struct NotificationHistoryFilter: Hashable, Sendable {
    public var startDate: Date
    /// Exclusive.
    public var endDate: Date
    public var type: NotificationType?
    public var subtype: NotificationSubtype?
    /// Any transaction id of one customer: only that customer's notifications.
    public var transactionID: String?
    /// Only notifications that never reached the developer's server.
    public var onlyFailures: Bool

    public init(
        startDate: Date, endDate: Date, type: NotificationType? = nil, subtype: NotificationSubtype? = nil,
        transactionID: String? = nil, onlyFailures: Bool = false
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.type = type
        self.subtype = subtype
        self.transactionID = transactionID
        self.onlyFailures = onlyFailures
    }
}

/// A notification with its send attempts.
public struct NotificationHistoryEntry: Hashable, Sendable {
    public let notification: SimulatorNotification
    public let sendAttempts: [NotificationSendAttempt]
}
