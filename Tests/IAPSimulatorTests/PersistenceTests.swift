import Foundation
import IAPCatalog
import IAPCore
import IAPSignedData
import IAPTestSupport
import Testing

@testable import IAPSimulator

/// A store saved as rows and restored continues as the same store: what it holds reads back the same, and what
/// happens next happens exactly as it would have without the restart.
@Suite struct PersistenceTests {
    /// The rows a database would hold after applying each save in turn.
    struct RowStore {
        var state: String?
        var transactions: [String: SimulatorStateRows.Row] = [:]
        var notifications: [String: SimulatorStateRows.Row] = [:]
        var saves = 0
        var rowsWritten = 0

        mutating func save(_ store: AppStoreSimulator) {
            guard let rows = store.changedRows() else { return }
            apply(rows)
        }

        mutating func apply(_ rows: SimulatorStateRows) {
            saves += 1
            state = rows.state
            for row in rows.transactions { transactions[row.key] = row.json == nil ? nil : row }
            for row in rows.notifications { notifications[row.key] = row.json == nil ? nil : row }
            rowsWritten += rows.transactions.count + rows.notifications.count
        }

        var rows: SimulatorStateRows {
            SimulatorStateRows(
                state: state ?? "", transactions: Array(transactions.values), notifications: Array(notifications.values)
            )
        }
    }

    static let bundleID = SimulatorHarness.bundleID
    static func configuration() -> SimulatorConfiguration {
        SimulatorConfiguration(bundleID: bundleID, start: SimulatorHarness.start)
    }

    static func store() throws -> AppStoreSimulator {
        try AppStoreSimulator(
            catalog: FloristCatalog.catalog, configuration: configuration(), pki: SimulatorTestKeys.pki)
    }

    static func restored(_ rows: SimulatorStateRows) throws -> AppStoreSimulator {
        try AppStoreSimulator(
            restoring: rows, catalog: FloristCatalog.catalog, configuration: configuration(), pki: SimulatorTestKeys.pki
        )
    }

    /// Everything a client can read of a store, as comparable values (signatures aside: they differ run to run).
    static func view(_ store: AppStoreSimulator) throws -> [String] {
        var lines = ["now \(try store.now.timeIntervalSince1970)"]
        for account in store.accountIDs {
            for transaction in try store.transactions(account: account) {
                // When a document was signed differs: a restored store signs again what the original had cached.
                var payload = transaction.payload
                payload.signedDate = nil
                lines.append("\(account) \(transaction.transactionID) \(payload)")
            }
            lines.append("\(account) entitled \(try store.currentEntitlements(account: account).map(\.transactionID))")
        }
        lines += store.pendingPurchases.map { "pending \($0)" }
        for notification in store.notifications {
            lines.append(
                "notification \(notification.uuid) \(notification.type) \(notification.subtype?.rawValue ?? "-") "
                    + "\(notification.payload.data?.signedTransactionInfo != nil) "
                    + "\(store.sendAttempts(notificationUUID: notification.uuid))")
        }
        return lines
    }

    /// What happens to a store after the restart, done to the original and to the restored one alike.
    static func carryOn(_ store: AppStoreSimulator, pendingID: String) throws {
        _ = try store.approve(pendingID)
        try store.advance(by: SubscriptionPeriod(value: 1, unit: .month), count: 2)
        _ = try store.purchase(FloristCatalog.flowers, account: "ana")
        _ = try store.purchase(FloristCatalog.installation, account: "carol")
        try store.setAutoRenew(account: "ana", group: FloristCatalog.vipGroup, enabled: false)
        try store.advance(by: SubscriptionPeriod(value: 1, unit: .month), count: 2)
    }

    @Test func aRestoredStoreContinuesAsTheSameStore() throws {
        let store = try Self.store()
        var database = RowStore()
        try store.createAccount("ana")
        let device = try store.addDevice(account: "ana")
        try store.createAccount("bob", askToBuy: true)
        try store.createAccount("carol", storefront: "FRA")
        database.save(store)
        _ = try store.purchase(FloristCatalog.flowers, account: "ana", device: device)
        let gold = try store.purchase(FloristCatalog.gold, account: "ana", device: device)
        _ = try store.purchase(FloristCatalog.monthPass, account: "carol")
        let asked = try store.purchase(FloristCatalog.installation, account: "bob")
        database.save(store)
        try store.advance(by: SubscriptionPeriod(value: 1, unit: .month))
        let consumable = try #require(try store.latestTransaction(account: "ana", productID: FloristCatalog.flowers))
        try store.refund(consumable.transactionID)
        try store.requestRefund(try #require(gold.transaction).transactionID)
        let first = try #require(store.notifications.first)
        store.recordSendAttempt(notificationUUID: first.uuid, result: "SUCCESS")
        database.save(store)
        #expect(store.changedRows() == nil, "nothing changed since the last save")
        guard case .pending(let pending) = asked else {
            Issue.record("bob's purchase should wait for approval: \(asked)")
            return
        }

        let restored = try Self.restored(database.rows)
        #expect(try Self.view(restored) == Self.view(store), "the restored store holds what the original held")
        try Self.carryOn(store, pendingID: pending.id)
        try Self.carryOn(restored, pendingID: pending.id)
        #expect(
            try Self.view(restored) == Self.view(store),
            "renewals, purchases, approvals and notifications after the restart match, ids and UUIDs included")
        #expect(try store.transactions(account: "ana").count >= 5)
    }

    @Test func aSaveWritesOnlyTheRowsThatChanged() throws {
        let store = try Self.store()
        var database = RowStore()
        try store.createAccount("ana")
        for _ in 0..<50 { _ = try store.purchase(FloristCatalog.installation, account: "ana") }
        database.save(store)
        let written = database.rowsWritten
        _ = try store.purchase(FloristCatalog.installation, account: "ana")
        let rows = try #require(store.changedRows())
        #expect(rows.transactions.count == 1, "one new transaction, not the fifty before it")
        #expect(rows.notifications.count <= 1)
        #expect(written >= 50)
    }

    /// A save encodes only the accounts that changed and keeps the others' JSON: the state it answers is still the
    /// whole document, byte for byte, after changes to one account or many, and after a restart.
    @Test func theSavedStateIsTheWholeDocumentWhicheverAccountsChanged() throws {
        let store = try Self.store()
        var database = RowStore()
        func saveAndCompare(_ store: AppStoreSimulator, _ what: Comment) throws {
            let rows = try #require(store.changedRows(), what)
            database.apply(rows)
            #expect(rows.state == store.encodedStateInFull(), what)
        }
        try store.createAccount("ana")
        try store.createAccount("bob", askToBuy: true)
        try saveAndCompare(store, "two new accounts")
        _ = try store.purchase(FloristCatalog.flowers, account: "ana")
        try saveAndCompare(store, "one account's purchase")
        try store.createAccount("carol", storefront: "FRA")
        _ = try store.addDevice(account: "bob")
        _ = try store.purchase(FloristCatalog.gold, account: "carol")
        try store.advance(by: SubscriptionPeriod(value: 2, unit: .month))
        try saveAndCompare(store, "a device, a subscription and its renewals")
        try store.clearTransactions(account: nil)
        try saveAndCompare(store, "every account cleared")
        let restored = try Self.restored(database.rows)
        try saveAndCompare(restored, "the first save after a restart")
        _ = try restored.purchase(FloristCatalog.installation, account: "bob")
        try saveAndCompare(restored, "a change after a restart")
    }

    @Test func clearedTransactionsAreRowsToRemove() throws {
        let store = try Self.store()
        var database = RowStore()
        try store.createAccount("ana")
        _ = try store.purchase(FloristCatalog.installation, account: "ana")
        database.save(store)
        #expect(database.transactions.count == 1)
        try store.clearTransactions(account: "ana")
        database.save(store)
        #expect(database.transactions.isEmpty)
        let restored = try Self.restored(database.rows)
        #expect(try restored.transactions(account: "ana").isEmpty)
    }

    @Test func aRestoredStoreCountsOnFromTheConfiguredFirstIDWhenItIsFurther() throws {
        let store = try Self.store()
        var database = RowStore()
        try store.createAccount("ana")
        _ = try store.purchase(FloristCatalog.installation, account: "ana")
        database.save(store)
        var configuration = Self.configuration()
        configuration.firstTransactionID = 9_000_000_000_000_000
        let restored = try AppStoreSimulator(
            restoring: database.rows, catalog: FloristCatalog.catalog, configuration: configuration,
            pki: SimulatorTestKeys.pki)
        let next = try restored.purchase(FloristCatalog.flowers, account: "ana")
        #expect(next.transaction?.transactionID == "9000000000000000")
    }

    @Test func aStateOfAnotherFormatOrDamagedIsRefusedWithACode() throws {
        let store = try Self.store()
        try store.createAccount("ana")
        let rows = try #require(store.changedRows())
        var future = rows
        future.state = rows.state.replacingOccurrences(of: #""format":1"#, with: #""format":99"#)
        let refusal = #expect(throws: SimulatorError.self) { try Self.restored(future) }
        #expect(refusal?.code == .unreadableState)
        var damaged = rows
        damaged.state = "{"
        #expect(throws: SimulatorError.self) { try Self.restored(damaged) }
    }

    /// Apple's notification history reaches back 180 days: older notifications go, from memory and from the rows.
    @Test func notificationsOlderThanTheHistoryApplesKeepsAreLetGo() throws {
        // As a server runs it: notifications kept, not every record.
        let store = try AppStoreSimulator(
            catalog: FloristCatalog.catalog, configuration: Self.configuration(), pki: SimulatorTestKeys.pki,
            keepsRecords: false, keepsNotifications: true)
        var database = RowStore()
        for account in ["ana", "bob", "cy"] {
            try store.createAccount(account)
            _ = try store.purchase(FloristCatalog.gold, account: account)
        }
        database.save(store)
        try store.advance(by: SubscriptionPeriod(value: 3, unit: .year))
        database.save(store)
        let kept = store.notifications
        #expect(store.statistics.notifications > 100, "three years of renewals for three customers")
        #expect(kept.count < store.statistics.notifications, "older ones were let go")
        let now = try store.now
        let oldest = try #require(kept.first?.date)
        #expect(now.timeIntervalSince(oldest) < 400 * 86_400, "what is kept is recent: \(oldest)")
        #expect(database.notifications.count == kept.count, "their rows went too")
        let restored = try AppStoreSimulator(
            restoring: database.rows, catalog: FloristCatalog.catalog, configuration: Self.configuration(),
            pki: SimulatorTestKeys.pki, keepsRecords: false, keepsNotifications: true)
        #expect(restored.notifications.map(\.uuid) == kept.map(\.uuid))
    }
}
