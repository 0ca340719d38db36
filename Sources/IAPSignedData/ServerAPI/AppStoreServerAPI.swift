public import Foundation
import IAPCore

/// The JSON of Apple's App Store Server API, one Codable type per shape, under Apple's names: what IAPServerAPI's
/// client sends and reads, what the local App Store (IAPSimulator) produces, and what its `/inApps`
/// (IAPSimulatorServer) reads and writes. Dates are epoch milliseconds, as Apple writes them. The signed documents
/// these carry are this module's payload models.
public enum AppStoreServerAPI {
    // MARK: - Transactions

    /// `GET /inApps/v1/transactions/{transactionId}`.
    public struct TransactionInfoResponse: Codable, Hashable, Sendable {
        public var signedTransactionInfo: String
        public init(signedTransactionInfo: String) { self.signedTransactionInfo = signedTransactionInfo }
    }

    /// `GET /inApps/v{1,2}/history/{transactionId}`: one page of a customer's transactions.
    public struct HistoryResponse: Codable, Hashable, Sendable {
        /// Where the next page starts.
        public var revision: String
        public var hasMore: Bool
        public var bundleId: String?
        public var appAppleId: Int64?
        public var environment: String?
        public var signedTransactions: [String]

        public init(
            revision: String, hasMore: Bool, bundleId: String?, appAppleId: Int64?, environment: String?,
            signedTransactions: [String]
        ) {
            self.revision = revision
            self.hasMore = hasMore
            self.bundleId = bundleId
            self.appAppleId = appAppleId
            self.environment = environment
            self.signedTransactions = signedTransactions
        }
    }

    /// `GET /inApps/v2/refund/lookup/{transactionId}`: one page of a customer's refunded transactions.
    public struct RefundHistoryResponse: Codable, Hashable, Sendable {
        public var signedTransactions: [String]
        public var revision: String
        public var hasMore: Bool

        public init(signedTransactions: [String], revision: String, hasMore: Bool) {
            self.signedTransactions = signedTransactions
            self.revision = revision
            self.hasMore = hasMore
        }
    }

    /// `GET /inApps/v1/lookup/{orderId}`: status 0 with the order's transactions, 1 for no such order.
    public struct OrderLookupResponse: Codable, Hashable, Sendable {
        public var status: Int
        public var signedTransactions: [String]?

        public init(status: Int, signedTransactions: [String]?) {
            self.status = status
            self.signedTransactions = signedTransactions
        }
    }

    /// `GET /inApps/v1/transactions/appTransactions/{transactionId}`.
    public struct AppTransactionInfoResponse: Codable, Hashable, Sendable {
        public var signedAppTransactionInfo: String
        public init(signedAppTransactionInfo: String) { self.signedAppTransactionInfo = signedAppTransactionInfo }
    }

    /// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`.
    public struct UpdateAppAccountTokenRequest: Codable, Hashable, Sendable {
        /// A UUID.
        public var appAccountToken: String
        public init(appAccountToken: String) { self.appAccountToken = appAccountToken }
    }

    // MARK: - Subscriptions

    /// `GET /inApps/v1/subscriptions/{transactionId}`: the customer's subscriptions by group.
    public struct StatusResponse: Codable, Hashable, Sendable {
        public var environment: String?
        public var bundleId: String?
        public var appAppleId: Int64?
        public var data: [SubscriptionGroupIdentifierItem]

        public init(
            environment: String?, bundleId: String?, appAppleId: Int64?, data: [SubscriptionGroupIdentifierItem]
        ) {
            self.environment = environment
            self.bundleId = bundleId
            self.appAppleId = appAppleId
            self.data = data
        }
    }

    /// One subscription group of a ``StatusResponse``.
    public struct SubscriptionGroupIdentifierItem: Codable, Hashable, Sendable {
        public var subscriptionGroupIdentifier: String
        public var lastTransactions: [LastTransactionsItem]

        public init(subscriptionGroupIdentifier: String, lastTransactions: [LastTransactionsItem]) {
            self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
            self.lastTransactions = lastTransactions
        }
    }

    /// One subscription in a group: its status, latest transaction and renewal info.
    public struct LastTransactionsItem: Codable, Hashable, Sendable {
        /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
        public var status: Int
        public var originalTransactionId: String
        public var signedTransactionInfo: String
        public var signedRenewalInfo: String

        public init(
            status: Int, originalTransactionId: String, signedTransactionInfo: String, signedRenewalInfo: String
        ) {
            self.status = status
            self.originalTransactionId = originalTransactionId
            self.signedTransactionInfo = signedTransactionInfo
            self.signedRenewalInfo = signedRenewalInfo
        }
    }

    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
    public struct ExtendRenewalDateRequest: Codable, Hashable, Sendable {
        /// 1...90.
        public var extendByDays: Int
        /// 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
        public var extendReasonCode: Int
        /// The developer's id for the request; sending it again does not extend twice.
        public var requestIdentifier: String

        public init(extendByDays: Int, extendReasonCode: Int, requestIdentifier: String) {
            self.extendByDays = extendByDays
            self.extendReasonCode = extendReasonCode
            self.requestIdentifier = requestIdentifier
        }
    }

    /// The answer to an ``ExtendRenewalDateRequest``; absent values are written as `null`, as Apple writes them.
    public struct ExtendRenewalDateResponse: Codable, Hashable, Sendable {
        public var originalTransactionId: String
        public var webOrderLineItemId: String?
        public var success: Bool
        /// The new expiration date, epoch milliseconds.
        public var effectiveDate: Int64?

        public init(originalTransactionId: String, webOrderLineItemId: String?, success: Bool, effectiveDate: Int64?) {
            self.originalTransactionId = originalTransactionId
            self.webOrderLineItemId = webOrderLineItemId
            self.success = success
            self.effectiveDate = effectiveDate
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(originalTransactionId, forKey: .originalTransactionId)
            try container.encode(webOrderLineItemId, forKey: .webOrderLineItemId)
            try container.encode(success, forKey: .success)
            try container.encode(effectiveDate, forKey: .effectiveDate)
        }
    }

    /// `POST /inApps/v1/subscriptions/extend/mass`.
    public struct MassExtendRenewalDateRequest: Codable, Hashable, Sendable {
        public var extendByDays: Int
        public var extendReasonCode: Int
        public var requestIdentifier: String
        public var productId: String
        /// Alpha-3 storefront codes; every storefront when absent.
        public var storefrontCountryCodes: [String]?

        public init(
            extendByDays: Int, extendReasonCode: Int, requestIdentifier: String, productId: String,
            storefrontCountryCodes: [String]?
        ) {
            self.extendByDays = extendByDays
            self.extendReasonCode = extendReasonCode
            self.requestIdentifier = requestIdentifier
            self.productId = productId
            self.storefrontCountryCodes = storefrontCountryCodes
        }
    }

    /// The answer to a ``MassExtendRenewalDateRequest``.
    public struct MassExtendRenewalDateResponse: Codable, Hashable, Sendable {
        public var requestIdentifier: String
        public init(requestIdentifier: String) { self.requestIdentifier = requestIdentifier }
    }

    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`; an absent date is `null`.
    public struct MassExtendRenewalDateStatusResponse: Codable, Hashable, Sendable {
        public var requestIdentifier: String
        public var complete: Bool
        /// Epoch milliseconds.
        public var completeDate: Int64?
        public var succeededCount: Int?
        public var failedCount: Int?

        public init(
            requestIdentifier: String, complete: Bool, completeDate: Int64?, succeededCount: Int?, failedCount: Int?
        ) {
            self.requestIdentifier = requestIdentifier
            self.complete = complete
            self.completeDate = completeDate
            self.succeededCount = succeededCount
            self.failedCount = failedCount
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(requestIdentifier, forKey: .requestIdentifier)
            try container.encode(complete, forKey: .complete)
            try container.encode(completeDate, forKey: .completeDate)
            try container.encodeIfPresent(succeededCount, forKey: .succeededCount)
            try container.encodeIfPresent(failedCount, forKey: .failedCount)
        }
    }

    // MARK: - Consumption

    /// `PUT /inApps/v2/transactions/consumption/{transactionId}` (`ConsumptionRequest`, API 1.19): consumption
    /// information for a refund request. (The v1 request, every field a number, is the local App Store's
    /// `ConsumptionReport`: IAPKit's client sends only v2.)
    public struct ConsumptionRequest: Sendable, Hashable, Codable {
        /// How the purchase was delivered.
        public enum DeliveryStatus: String, Sendable, Hashable, Codable {
            case delivered = "DELIVERED"
            case qualityIssue = "UNDELIVERED_QUALITY_ISSUE"
            case wrongItem = "UNDELIVERED_WRONG_ITEM"
            case serverOutage = "UNDELIVERED_SERVER_OUTAGE"
            case other = "UNDELIVERED_OTHER"
        }

        /// What the developer would like Apple to decide.
        public enum RefundPreference: String, Sendable, Hashable, Codable {
            case decline = "DECLINE"
            case grantFull = "GRANT_FULL"
            case grantProrated = "GRANT_PRORATED"
        }

        public var customerConsented: Bool
        public var sampleContentProvided: Bool
        public var deliveryStatus: DeliveryStatus
        /// Milli-percent consumed (100000 is all).
        public var consumptionPercentage: Int?
        public var refundPreference: RefundPreference?

        public init(
            customerConsented: Bool = true, sampleContentProvided: Bool = false,
            deliveryStatus: DeliveryStatus = .delivered,
            consumptionPercentage: Int? = nil, refundPreference: RefundPreference? = nil
        ) {
            self.customerConsented = customerConsented
            self.sampleContentProvided = sampleContentProvided
            self.deliveryStatus = deliveryStatus
            self.consumptionPercentage = consumptionPercentage
            self.refundPreference = refundPreference
        }
    }

    // MARK: - Notifications

    /// `POST /inApps/v1/notifications/test`.
    public struct SendTestNotificationResponse: Codable, Hashable, Sendable {
        public var testNotificationToken: String
        public init(testNotificationToken: String) { self.testNotificationToken = testNotificationToken }
    }

    /// `POST /inApps/v1/notifications/history`: the filters (dates are epoch milliseconds).
    public struct NotificationHistoryRequest: Codable, Hashable, Sendable {
        public var startDate: Int64
        public var endDate: Int64
        public var notificationType: String?
        public var notificationSubtype: String?
        /// Any transaction id of one customer.
        public var transactionId: String?
        public var onlyFailures: Bool?

        public init(
            startDate: Int64, endDate: Int64, notificationType: String? = nil, notificationSubtype: String? = nil,
            transactionId: String? = nil, onlyFailures: Bool? = nil
        ) {
            self.startDate = startDate
            self.endDate = endDate
            self.notificationType = notificationType
            self.notificationSubtype = notificationSubtype
            self.transactionId = transactionId
            self.onlyFailures = onlyFailures
        }

        /// The filters from dates (`endDate` exclusive).
        public init(
            startDate: Date, endDate: Date, notificationType: String? = nil, notificationSubtype: String? = nil,
            transactionId: String? = nil, onlyFailures: Bool? = nil
        ) {
            self.init(
                startDate: startDate.millisecondsSince1970, endDate: endDate.millisecondsSince1970,
                notificationType: notificationType, notificationSubtype: notificationSubtype,
                transactionId: transactionId, onlyFailures: onlyFailures)
        }
    }

    /// One page of the notification history; `paginationToken` continues it.
    public struct NotificationHistoryResponse: Codable, Hashable, Sendable {
        public var paginationToken: String?
        public var hasMore: Bool
        public var notificationHistory: [NotificationHistoryResponseItem]

        public init(paginationToken: String?, hasMore: Bool, notificationHistory: [NotificationHistoryResponseItem]) {
            self.paginationToken = paginationToken
            self.hasMore = hasMore
            self.notificationHistory = notificationHistory
        }
    }

    /// A notification with its send attempts (also `GET /inApps/v1/notifications/test/{token}`'s answer,
    /// `CheckTestNotificationResponse`).
    public struct NotificationHistoryResponseItem: Codable, Hashable, Sendable {
        public var signedPayload: String
        public var sendAttempts: [SendAttemptItem]?

        public init(signedPayload: String, sendAttempts: [SendAttemptItem]?) {
            self.signedPayload = signedPayload
            self.sendAttempts = sendAttempts
        }
    }

    /// One attempt to deliver a notification.
    public struct SendAttemptItem: Codable, Hashable, Sendable {
        /// Epoch milliseconds.
        public var attemptDate: Int64
        /// `SUCCESS`, `TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, ...
        public var sendAttemptResult: String

        public init(attemptDate: Int64, sendAttemptResult: String) {
            self.attemptDate = attemptDate
            self.sendAttemptResult = sendAttemptResult
        }
    }

    // MARK: - Errors

    /// Apple's error body.
    public struct ErrorPayload: Codable, Hashable, Sendable {
        public var errorCode: Int
        public var errorMessage: String?

        public init(errorCode: Int, errorMessage: String?) {
            self.errorCode = errorCode
            self.errorMessage = errorMessage
        }
    }
}
