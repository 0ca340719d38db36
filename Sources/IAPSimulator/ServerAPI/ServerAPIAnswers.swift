public import Foundation
import IAPCore
public import IAPSignedData

/// An answered renewal extension as the store keeps it, so the same request identifier answers the same again.
struct RenewalExtensionResult: Hashable, Sendable, Codable {
    let originalTransactionID: String
    let webOrderLineItemID: String?
    let success: Bool
    /// The new expiration date.
    let effectiveDate: Date?

    /// As the App Store Server API answers it.
    var response: AppStoreServerAPI.ExtendRenewalDateResponse {
        AppStoreServerAPI.ExtendRenewalDateResponse(
            originalTransactionId: originalTransactionID, webOrderLineItemId: webOrderLineItemID, success: success,
            effectiveDate: effectiveDate?.millisecondsSince1970)
    }
}

/// A mass renewal extension as the store keeps it.
struct MassRenewalExtensionStatus: Hashable, Sendable, Codable {
    let requestIdentifier: String
    let productID: String
    let complete: Bool
    let completeDate: Date?
    let succeededCount: Int
    let failedCount: Int

    /// As the App Store Server API answers it.
    var response: AppStoreServerAPI.MassExtendRenewalDateStatusResponse {
        AppStoreServerAPI.MassExtendRenewalDateStatusResponse(
            requestIdentifier: requestIdentifier, complete: complete,
            completeDate: completeDate?.millisecondsSince1970, succeededCount: succeededCount,
            failedCount: failedCount)
    }
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
