public import Foundation
import IAPCore
public import IAPSignedData
import NIOHTTP1

// MARK: - Answers

/// The customer's subscriptions by group (`StatusResponse`), every document verified.
public struct SubscriptionStatuses: Sendable {
    /// One subscription group of the customer.
    public struct Group: Sendable {
        public var groupID: String
        public var lastTransactions: [LastTransaction]
    }

    /// One subscription in a group: its status, latest transaction and renewal info.
    public struct LastTransaction: Sendable {
        /// 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
        public var status: Int
        public var originalTransactionID: String
        public var transaction: TransactionPayload
        public var renewalInfo: RenewalInfoPayload
        /// The signed forms, as received.
        public var signedTransactionInfo: String
        public var signedRenewalInfo: String
    }

    public var environment: String?
    public var bundleID: String?
    public var appAppleID: Int64?
    public var groups: [Group]
}

/// The answer to an order lookup (`OrderLookupResponse`): status 0 with the order's transactions, or 1 (no such
/// order).
public struct OrderLookup: Sendable {
    public var status: Int
    public var transactions: [TransactionPayload]
    /// Whether the order id was found.
    public var isValid: Bool { status == 0 }
}

/// The answer to a renewal extension (`ExtendRenewalDateResponse`).
public struct RenewalExtension: Sendable, Hashable {
    public var originalTransactionID: String
    public var webOrderLineItemID: String?
    public var success: Bool
    /// The new expiration date.
    public var effectiveDate: Date?
}

/// Where a mass renewal extension stands (`MassExtendRenewalDateStatusResponse`).
public struct MassExtensionStatus: Sendable, Hashable {
    public var requestIdentifier: String
    public var complete: Bool
    public var completeDate: Date?
    public var succeededCount: Int
    public var failedCount: Int
}

/// A notification the App Store sent (or tried to send), verified, with its send attempts.
public struct SentNotification: Sendable {
    /// One attempt to deliver it.
    public struct Attempt: Sendable, Hashable {
        public var date: Date
        /// `SUCCESS`, `TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, ...
        public var result: String
    }

    public var signedPayload: String
    public var payload: NotificationPayload
    public var sendAttempts: [Attempt]
}

/// The filters of a notification history request: Apple's `NotificationHistoryRequest` (IAPSignedData's
/// `AppStoreServerAPI`), made from dates with `init(startDate:endDate:...)`.
public typealias NotificationHistoryQuery = AppStoreServerAPI.NotificationHistoryRequest

/// Consumption information for a refund request: Apple's `ConsumptionRequest` (IAPSignedData's `AppStoreServerAPI`).
public typealias ConsumptionInformation = AppStoreServerAPI.ConsumptionRequest

// MARK: - Endpoints

extension ServerAPIClient {
    /// `GET /inApps/v1/subscriptions/{transactionId}`: the customer's subscriptions, optionally only some statuses.
    public func subscriptionStatuses(_ transactionID: String, statuses: [Int] = []) async throws(ServerAPIError)
        -> SubscriptionStatuses
    {
        let answer = try await decode(
            AppStoreServerAPI.StatusResponse.self, .GET, "/inApps/v1/subscriptions/\(Self.segment(transactionID))",
            query: statuses.map { URLQueryItem(name: "status", value: String($0)) })
        var groups: [SubscriptionStatuses.Group] = []
        for group in answer.data {
            var last: [SubscriptionStatuses.LastTransaction] = []
            for item in group.lastTransactions {
                let transaction = try await verifiedTransaction(item.signedTransactionInfo)
                let renewal = try await verified("renewal info") { () async throws(SignedDataParsingError) in
                    try await verifier.verifyRenewalInfo(item.signedRenewalInfo, for: transaction)
                }
                last.append(
                    .init(
                        status: item.status, originalTransactionID: item.originalTransactionId,
                        transaction: transaction, renewalInfo: renewal,
                        signedTransactionInfo: item.signedTransactionInfo, signedRenewalInfo: item.signedRenewalInfo))
            }
            groups.append(.init(groupID: group.subscriptionGroupIdentifier, lastTransactions: last))
        }
        return SubscriptionStatuses(
            environment: answer.environment, bundleID: answer.bundleId, appAppleID: answer.appAppleId, groups: groups)
    }

    /// `GET /inApps/v1/lookup/{orderId}`: the transactions of an order id from a customer's emailed receipt.
    public func lookUpOrder(_ orderID: String) async throws(ServerAPIError) -> OrderLookup {
        let answer = try await decode(
            AppStoreServerAPI.OrderLookupResponse.self, .GET, "/inApps/v1/lookup/\(Self.segment(orderID))")
        return OrderLookup(
            status: answer.status, transactions: try await verifiedTransactions(answer.signedTransactions ?? []))
    }

    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`: extends one subscription's renewal date.
    /// - Parameters:
    ///   - originalTransactionID: the subscription's original transaction id.
    ///   - days: 1...90.
    ///   - reasonCode: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
    ///   - requestIdentifier: your id for the request; sending it again does not extend twice.
    public func extendRenewalDate(
        originalTransactionID: String, days: Int, reasonCode: Int, requestIdentifier: String
    ) async throws(ServerAPIError) -> RenewalExtension {
        let answer = try await decode(
            AppStoreServerAPI.ExtendRenewalDateResponse.self, .PUT,
            "/inApps/v1/subscriptions/extend/\(Self.segment(originalTransactionID))",
            body: try Self.json(
                AppStoreServerAPI.ExtendRenewalDateRequest(
                    extendByDays: days, extendReasonCode: reasonCode, requestIdentifier: requestIdentifier)))
        return RenewalExtension(
            originalTransactionID: answer.originalTransactionId, webOrderLineItemID: answer.webOrderLineItemId,
            success: answer.success, effectiveDate: answer.effectiveDate.map(Self.date))
    }

    /// `POST /inApps/v1/subscriptions/extend/mass`: extends every active subscription to a product (in some
    /// storefronts, alpha-3 codes, or all); returns the request identifier to ask about it.
    public func extendRenewalDatesForAllActiveSubscribers(
        productID: String, days: Int, reasonCode: Int, requestIdentifier: String,
        storefrontCountryCodes: [String]? = nil
    ) async throws(ServerAPIError) -> String {
        return try await decode(
            AppStoreServerAPI.MassExtendRenewalDateResponse.self, .POST, "/inApps/v1/subscriptions/extend/mass",
            body: try Self.json(
                AppStoreServerAPI.MassExtendRenewalDateRequest(
                    extendByDays: days, extendReasonCode: reasonCode, requestIdentifier: requestIdentifier,
                    productId: productID, storefrontCountryCodes: storefrontCountryCodes))
        ).requestIdentifier
    }

    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`: where a mass extension stands.
    public func massExtensionStatus(productID: String, requestIdentifier: String) async throws(ServerAPIError)
        -> MassExtensionStatus
    {
        let answer = try await decode(
            AppStoreServerAPI.MassExtendRenewalDateStatusResponse.self, .GET,
            "/inApps/v1/subscriptions/extend/mass/\(Self.segment(productID))/\(Self.segment(requestIdentifier))")
        return MassExtensionStatus(
            requestIdentifier: answer.requestIdentifier, complete: answer.complete,
            completeDate: answer.completeDate.map(Self.date), succeededCount: answer.succeededCount ?? 0,
            failedCount: answer.failedCount ?? 0)
    }

    /// `PUT /inApps/v2/transactions/consumption/{transactionId}`: consumption information for a refund request.
    public func sendConsumptionInformation(_ transactionID: String, _ information: ConsumptionInformation)
        async throws(ServerAPIError)
    {
        _ = try await send(
            .PUT, "/inApps/v2/transactions/consumption/\(Self.segment(transactionID))",
            body: try Self.json(information))
    }

    /// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`: sets a purchase's app account token.
    public func setAppAccountToken(originalTransactionID: String, _ token: UUID) async throws(ServerAPIError) {
        _ = try await send(
            .PUT, "/inApps/v1/transactions/\(Self.segment(originalTransactionID))/appAccountToken",
            body: try Self.json(
                AppStoreServerAPI.UpdateAppAccountTokenRequest(appAccountToken: token.uuidString.lowercased())))
    }

    /// `GET /inApps/v1/transactions/appTransactions/{transactionId}`: the customer's app transaction, verified.
    public func appTransactionInfo(_ transactionID: String) async throws(ServerAPIError) -> AppTransactionPayload {
        let answer = try await decode(
            AppStoreServerAPI.AppTransactionInfoResponse.self, .GET,
            "/inApps/v1/transactions/appTransactions/\(Self.segment(transactionID))")
        return try await verified("app transaction") { () async throws(SignedDataParsingError) in
            try await verifier.verifyAppTransaction(answer.signedAppTransactionInfo)
        }
    }

    /// `POST /inApps/v1/transactions/{transactionId}/finish`: marks a transaction finished.
    public func finishTransaction(_ transactionID: String) async throws(ServerAPIError) {
        _ = try await send(.POST, "/inApps/v1/transactions/\(Self.segment(transactionID))/finish")
    }

    /// `POST /inApps/v1/notifications/test`: asks for a TEST notification; returns the token that looks it up.
    public func requestTestNotification() async throws(ServerAPIError) -> String {
        return try await decode(
            AppStoreServerAPI.SendTestNotificationResponse.self, .POST, "/inApps/v1/notifications/test"
        ).testNotificationToken
    }

    /// `GET /inApps/v1/notifications/test/{token}`: the test notification, verified, with its send attempts.
    public func testNotificationStatus(_ token: String) async throws(ServerAPIError) -> SentNotification {
        let answer = try await decode(
            AppStoreServerAPI.NotificationHistoryResponseItem.self, .GET,
            "/inApps/v1/notifications/test/\(Self.segment(token))")
        return try await sentNotification(answer)
    }

    /// `POST /inApps/v1/notifications/history`: one page of the notifications that match, verified.
    public func notificationHistoryPage(_ query: NotificationHistoryQuery, paginationToken: String? = nil)
        async throws(ServerAPIError) -> ServerAPIPage<SentNotification>
    {
        let answer = try await decode(
            AppStoreServerAPI.NotificationHistoryResponse.self, .POST, "/inApps/v1/notifications/history",
            query: paginationToken.map { [URLQueryItem(name: "paginationToken", value: $0)] } ?? [],
            body: try Self.json(query))
        var items: [SentNotification] = []
        for item in answer.notificationHistory { items.append(try await sentNotification(item)) }
        return ServerAPIPage(
            items: items, documents: answer.notificationHistory.map(\.signedPayload), next: answer.paginationToken,
            hasMore: answer.hasMore)
    }

    /// Every notification that matches, page by page as it is read.
    public func notificationHistory(_ query: NotificationHistoryQuery) -> ServerAPIListing<SentNotification> {
        ServerAPIListing { (token) throws(ServerAPIError) in
            try await notificationHistoryPage(query, paginationToken: token)
        }
    }

    // MARK: - Helpers

    private func sentNotification(_ answer: AppStoreServerAPI.NotificationHistoryResponseItem)
        async throws(ServerAPIError) -> SentNotification
    {
        let payload = try await verified("notification") { () async throws(SignedDataParsingError) in
            try await verifier.verifyNotification(answer.signedPayload)
        }
        return SentNotification(
            signedPayload: answer.signedPayload, payload: payload,
            sendAttempts: (answer.sendAttempts ?? []).map {
                .init(date: Self.date($0.attemptDate), result: $0.sendAttemptResult)
            })
    }

    static func json(_ value: some Encodable) throws(ServerAPIError) -> [UInt8] {
        do { return Array(try JSONEncoder().encode(value)) } catch {
            throw ServerAPIError(.malformedAnswer, "the request could not be encoded: \(error)")
        }
    }

    static func date(_ milliseconds: Int64) -> Date { Date(millisecondsSince1970: milliseconds) }
}
