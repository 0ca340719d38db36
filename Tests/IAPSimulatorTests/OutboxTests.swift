import Foundation
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Synchronization
import Testing

private typealias F = FloristCatalog

/// Notifications and transaction updates leave the simulator after it has released its state: a sink may call back
/// into it, as a server's notification endpoint does, and deliveries keep the state's order.
@Suite("Simulator: the outbox")
struct OutboxTests {
    /// What a sink saw: each notification, with what the simulator answered when the sink asked it back.
    final class Log: Sendable {
        let entries = Mutex<[(type: String, entitled: Set<String>, transactionCount: Int)]>([])
    }

    @Test func aSinkThatCallsBackIntoTheSimulatorSeesTheNewState() async throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        let log = Log()
        let store = h.store
        store.addNotificationSink { notification in
            guard let account = notification.accountID else { return }
            // Reading and acting on the simulator from inside the sink: this re-entered a held lock before.
            let view = try? store.view(account: account)
            let count = (try? store.transactions(account: account).count) ?? -1
            log.entries.withLock {
                $0.append((notification.type.rawValue, view?.entitledProductIDs ?? [], count))
            }
            // A sink that starts another purchase: its notification is delivered after this one, not inside it.
            if notification.type == .subscribed {
                _ = try? store.purchase(F.chocolates, account: account)
            }
        }

        _ = try h.store.purchase(F.flowers, account: "ana")
        _ = try h.store.purchase(F.gold, account: "ana")

        let entries = log.entries.withLock { $0 }
        #expect(entries.map(\.type) == ["ONE_TIME_CHARGE", "SUBSCRIBED", "ONE_TIME_CHARGE"])
        #expect(entries.map(\.type) == h.store.notifications.map(\.type.rawValue), "delivered in issue order")
        // Each sink call saw the state that includes the transaction it was told about.
        #expect(entries[0].entitled.contains(F.flowers))
        #expect(entries[0].transactionCount == 1)
        #expect(entries[1].entitled.isSuperset(of: [F.flowers, F.gold]))
        #expect(entries[1].transactionCount == 2)
        #expect(entries[2].entitled.contains(F.chocolates))
        #expect(entries[2].transactionCount == 3)
    }

    @Test func notificationsMadeBeforeAClockErrorAreStillDelivered() async throws {
        let h = try SimulatorHarness { $0.maximumEventsPerAdvance = 3 }
        try h.customer("ana")
        let seen = Mutex(0)
        h.store.addNotificationSink { _ in seen.withLock { $0 += 1 } }
        _ = try h.store.purchase(F.gold, account: "ana")
        #expect(throws: SimulatorError.self) { try h.store.advance(by: 400 * SimulatorHarness.day) }
        #expect(seen.withLock { $0 } == h.store.notifications.count)
        #expect(h.store.notifications.count > 1)
    }

    @Test func concurrentCallersDeliverEveryNotificationOnceInOrder() async throws {
        let h = try SimulatorHarness()
        let accounts = (0..<8).map { "customer\($0)" }
        for account in accounts { try h.customer(account) }
        let seen = Mutex<[String]>([])
        h.store.addNotificationSink { notification in seen.withLock { $0.append(notification.uuid) } }
        await withTaskGroup(of: Void.self) { group in
            for account in accounts {
                group.addTask {
                    for product in [F.flowers, F.chocolates, F.installation] {
                        _ = try? h.store.purchase(product, account: account)
                    }
                }
            }
        }
        #expect(seen.withLock { $0 } == h.store.notifications.map(\.uuid))
        #expect(h.store.notifications.count == 24)
    }
}
