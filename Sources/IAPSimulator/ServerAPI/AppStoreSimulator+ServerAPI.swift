public import Foundation
public import IAPSignedData

/// What the App Store Server API asks of the App Store, answered from the simulator's state (`iapkit serve` serves it
/// under `/inApps`). A refusal Apple has a code for carries it in ``SimulatorError/appStoreErrorCode``.
extension AppStoreSimulator {
    /// The account a transaction id, original transaction id or app transaction id belongs to.
    public func account(anyTransactionID id: String) throws(SimulatorError) -> String {
        try withCore { (core) throws(SimulatorError) in try core.account(anyTransactionID: id) }
    }

    /// One transaction by id, signed (the API's "get transaction info"; an app transaction id is refused).
    public func transactionInfo(_ id: String) throws(SimulatorError) -> SimulatorTransaction {
        try withCore { (core) throws(SimulatorError) in try core.transactionInfo(id) }
    }

    /// Every transaction of the customer, signed, in issue order; finished consumables only when asked for (the v2
    /// history has them, the v1 history does not).
    public func history(anyTransactionID id: String, includeFinishedConsumables: Bool = true) throws(SimulatorError)
        -> [SimulatorTransaction]
    {
        try withCore { (core) throws(SimulatorError) in
            try core.history(anyTransactionID: id, includeFinishedConsumables: includeFinishedConsumables)
        }
    }

    /// Every subscription the customer sees (own and family-shared), with status, latest transaction and renewal info,
    /// by group as the App Store Server API answers them; `statuses` (1...5) keeps only those, empty keeps all.
    public func subscriptionStatuses(anyTransactionID id: String, statuses: Set<Int> = [])
        throws(SimulatorError) -> [AppStoreServerAPI.SubscriptionGroupIdentifierItem]
    {
        let entries = try withCore { (core) throws(SimulatorError) in
            try core.subscriptionStatuses(anyTransactionID: id)
        }.filter { statuses.isEmpty || statuses.contains($0.item.status) }
        var groups: [String] = []
        for entry in entries where !groups.contains(entry.groupID) { groups.append(entry.groupID) }
        return groups.map { group in
            AppStoreServerAPI.SubscriptionGroupIdentifierItem(
                subscriptionGroupIdentifier: group, lastTransactions: entries.filter { $0.groupID == group }.map(\.item)
            )
        }
    }

    /// The customer's refunded transactions, oldest refund first.
    public func refundedTransactions(anyTransactionID id: String) throws(SimulatorError) -> [SimulatorTransaction] {
        try withCore { (core) throws(SimulatorError) in try core.refundedTransactions(anyTransactionID: id) }
    }

    /// The order id the customer's emailed receipt shows for a transaction (nil for a family-shared copy).
    public func orderID(of transactionID: String) throws(SimulatorError) -> String? {
        try withCore { (core) throws(SimulatorError) in SimulatorCore.orderID(of: try core.transaction(transactionID)) }
    }

    /// The transactions of an order, or nil when there is no such order.
    public func order(_ orderID: String) throws(SimulatorError) -> [SimulatorTransaction]? {
        try withCore { (core) throws(SimulatorError) in try core.order(orderID) }
    }

    /// Extends one subscription's renewal date, as the App Store Server API's request asks.
    public func extendRenewalDate(
        originalTransactionID id: String, _ request: AppStoreServerAPI.ExtendRenewalDateRequest
    ) throws(SimulatorError) -> AppStoreServerAPI.ExtendRenewalDateResponse {
        try withCore { (core) throws(SimulatorError) in
            try core.extendRenewalDate(originalTransactionID: id, request)
        }.response
    }

    /// Extends every active subscription to a product, in the given storefronts (alpha-3) or everywhere.
    public func extendRenewalDates(
        productID: String, storefronts: [String]? = nil, _ request: AppStoreServerAPI.ExtendRenewalDateRequest
    ) throws(SimulatorError) -> AppStoreServerAPI.MassExtendRenewalDateStatusResponse {
        try withCore { (core) throws(SimulatorError) in
            try core.extendRenewalDates(productID: productID, storefronts: storefronts, request)
        }.response
    }

    /// Where a mass extension stands, or nil when there was no such request.
    public func massExtensionStatus(productID: String, requestIdentifier: String)
        -> AppStoreServerAPI.MassExtendRenewalDateStatusResponse?
    {
        (try? withCore { core in core.massExtensionStatus(productID: productID, requestIdentifier: requestIdentifier) })?
            .flatMap { $0 }?.response
    }

    /// The developer's consumption information for a refund request, by any transaction id the API accepts.
    public func sendConsumptionInformation(_ id: String, _ report: ConsumptionReport) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in
            let transaction = try core.transaction(apiID: id)
            try core.reportConsumption(String(transaction.id), report)
        }
    }

    /// Sets the app account token of a purchase given by its original transaction id.
    public func setAppAccountToken(originalTransactionID id: String, _ token: UUID) throws(SimulatorError) {
        try withCore { (core) throws(SimulatorError) in try core.setAppAccountToken(originalTransactionID: id, token) }
    }

    /// The customer's app transaction, signed, without device verification.
    public func appTransaction(anyTransactionID id: String) throws(SimulatorError) -> String {
        try withCore { (core) throws(SimulatorError) in try core.serverAppTransaction(anyTransactionID: id) }
    }

    /// Sends a TEST notification through every sink; returns the token that looks it up.
    public func requestTestNotification() throws(SimulatorError) -> String {
        try withCore { (core) throws(SimulatorError) in try core.requestTestNotification() }
    }

    /// A test notification with its send attempts.
    public func testNotification(token: String) throws(SimulatorError) -> NotificationHistoryEntry {
        try withCore { (core) throws(SimulatorError) in try core.testNotification(token: token) }
    }

    /// The kept notifications a history request matches, oldest first, with their send attempts.
    public func notificationHistory(_ query: NotificationHistoryFilter) throws(SimulatorError)
        -> [NotificationHistoryEntry]
    {
        try withCore { (core) throws(SimulatorError) in try core.notificationHistory(query) }
    }

    /// The attempts recorded so far to deliver a notification to the developer's server, oldest first.
    public func sendAttempts(notificationUUID: String) -> [NotificationSendAttempt] {
        (try? withCore(catchingUp: false) { (core, _) in core.serverAPI.sendAttempts[notificationUUID] ?? [] }) ?? []
    }

    /// Records an attempt to deliver a notification to the developer's server (`SUCCESS`, `TIMED_OUT`, ...); the
    /// notification history reports it. Apple keeps six attempts at most; later ones are not recorded.
    public func recordSendAttempt(notificationUUID: String, result: String) {
        try? withCore(catchingUp: false) { (core, _) in
            core.recordSendAttempt(notificationUUID: notificationUUID, result: result)
        }
    }
}
