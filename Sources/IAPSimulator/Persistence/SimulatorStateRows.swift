import Foundation
import IAPSignedData

/// The state document: what a ``SimulatorCore`` holds apart from transactions, notifications and what it rebuilds.
struct PersistedCore: Codable {
    /// Bumped when the document changes shape; a document of another format is refused, not misread.
    static let currentFormat = 1

    var format: Int
    var now: Date
    var dial: AppStoreSimulator.ClockDial
    var ids: IdentifierSource
    var accounts: [Account]
    var families: [String: [String]]
    var lines: [SubscriptionLine]
    var lineIndex: [String: [String: Int]]
    var pending: [PendingRequest]
    var failures: [SimulatorOperation: SimulatorError.Code]
    var prices: [String: Decimal]
    var refundRequests: [UInt64: RefundRequest]
    var spentOfferNonces: Set<String>
    /// Without the send attempts, which are kept with their notifications.
    var serverAPI: ServerAPIRecords
    var messaging: RetentionMessagingRecords
    var statistics: SimulatorStatistics
}

/// A kept notification with its send attempts; its decoded payload is read back from the signed one.
struct PersistedNotification: Codable {
    var uuid: String
    var type: NotificationType
    var subtype: NotificationSubtype?
    var date: Date
    var accountID: String?
    var transactionID: String?
    var signedPayload: String
    var sendAttempts: [NotificationSendAttempt]
}

extension SimulatorCore {
    /// The state document for this core and `dial`; `withAccounts: false` leaves its accounts empty (the saver adds
    /// them as it keeps them encoded).
    func persisted(dial: AppStoreSimulator.ClockDial, withAccounts: Bool = true) -> PersistedCore {
        var api = serverAPI
        api.sendAttempts = [:]
        return PersistedCore(
            format: PersistedCore.currentFormat, now: now, dial: dial, ids: ids,
            accounts: withAccounts ? accountOrder.compactMap { accounts[$0] } : [], families: families, lines: lines,
            lineIndex: lineIndex, pending: pendingOrder.compactMap { pending[$0] }, failures: failures,
            prices: prices, refundRequests: refundRequests, spentOfferNonces: spentOfferNonces, serverAPI: api,
            messaging: messaging, statistics: statistics)
    }

    /// Puts a stored state back: the document, then the transactions and notifications; the renewal queue is
    /// rebuilt from the subscription lines.
    mutating func restore(
        _ state: PersistedCore, transactions stored: [TransactionState],
        notifications kept: [(order: Int64, notification: PersistedNotification)]
    ) throws(SimulatorError) {
        now = state.now
        let firstID = ids.nextTransactionID
        ids = state.ids
        ids.nextTransactionID = max(ids.nextTransactionID, firstID)
        var seen = Set<String>()
        let unique = state.accounts.filter { seen.insert($0.id).inserted }
        accounts = AccountTable(unique)
        // Every account is new to the saver's encoded accounts.
        accounts.markAllChanged()
        accountOrder = unique.map(\.id)
        families = state.families
        lines = state.lines
        lineIndex = state.lineIndex
        pending = Dictionary(state.pending.map { ($0.pending.id, $0) }, uniquingKeysWith: { a, _ in a })
        pendingOrder = state.pending.map(\.pending.id)
        failures = state.failures
        prices.merge(state.prices) { _, stored in stored }
        refundRequests = state.refundRequests
        spentOfferNonces = state.spentOfferNonces
        serverAPI = state.serverAPI
        messaging = state.messaging
        statistics = state.statistics
        transactions = TransactionTable(stored)
        _ = transactions.takeChanged()
        notifications = []
        notificationOrders = []
        for (order, notification) in kept {
            guard let jws = try? CompactJWS(notification.signedPayload),
                let payload = try? jws.decodePayload(as: NotificationPayload.self)
            else {
                throw SimulatorError(
                    .invalidArgument, "stored notification \(notification.uuid) does not hold a signed payload")
            }
            notifications.append(
                SimulatorNotification(
                    uuid: notification.uuid, type: notification.type, subtype: notification.subtype,
                    date: notification.date, accountID: notification.accountID,
                    transactionID: notification.transactionID, signedPayload: notification.signedPayload,
                    payload: payload))
            notificationOrders.append(order)
            if !notification.sendAttempts.isEmpty {
                serverAPI.sendAttempts[notification.uuid] = notification.sendAttempts
            }
        }
        changedNotifications = []
        removedNotifications = []
        queue.removeAll()
        for number in lines.indices { reschedule(number) }
    }

    /// Every transaction and notification, as if each had just changed (after a save that failed).
    mutating func markAllChanged() {
        transactions.markAllChanged()
        changedNotifications = Set(notifications.map(\.uuid))
    }

    /// The rows of the transactions and notifications changed since the last call, as values to encode (outside the
    /// lock): a nil transaction or notification is one that is gone.
    mutating func takeChangedRows() -> (
        transactions: [(id: UInt64, transaction: TransactionState?)],
        notifications: [(uuid: String, order: Int64, notification: PersistedNotification?)]
    ) {
        let changedTransactions = transactions.takeChanged().sorted().map { ($0, transactions[$0]) }
        var changed: [(String, Int64, PersistedNotification?)] = removedNotifications.sorted().map { ($0, 0, nil) }
        removedNotifications = []
        if !changedNotifications.isEmpty {
            // By index, reading the uuid alone: copying every kept notification made each save cost more as they grew.
            for index in notifications.indices where changedNotifications.contains(notifications[index].uuid) {
                let notification = notifications[index]
                changed.append(
                    (
                        notification.uuid, notificationOrders[index],
                        PersistedNotification(
                            uuid: notification.uuid, type: notification.type, subtype: notification.subtype,
                            date: notification.date, accountID: notification.accountID,
                            transactionID: notification.transactionID, signedPayload: notification.signedPayload,
                            sendAttempts: serverAPI.sendAttempts[notification.uuid] ?? [])
                    ))
            }
            changedNotifications = []
        }
        return (changedTransactions, changed)
    }
}
