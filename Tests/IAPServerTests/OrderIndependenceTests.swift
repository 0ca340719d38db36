import Foundation
import IAPEntitlements
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import Testing

@Suite("A simulated year, delivered in order and shuffled")
struct OrderIndependenceTests {
    static let customers = ["ana", "ben", "cy", "dee"]

    /// A year of four customers (renewals, an upgrade, auto-renew off, refunds, a billing problem), with every
    /// notification the simulator sent, and the server's view of each customer after applying them.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func aShuffledYearEndsInTheOrderedState(seed: UInt64) async throws {
        let year = TimeInterval(400 * 86_400)
        let ordered = try ServerHarness(maximumNotificationAge: year)
        let inbox = SimulatorInbox(ordered.store)
        let store = ordered.store
        var tokens: [String: UUID] = [:]
        for name in Self.customers {
            let token = UUID(uuidString: "00000000-0000-4000-8000-00000000000\(Self.customers.firstIndex(of: name)!)")!
            tokens[name] = token
            try store.createAccount(name, appAccountToken: token)
        }
        _ = try store.purchase(FloristCatalog.gold, account: "ana")
        _ = try store.purchase(FloristCatalog.bronze, account: "ben")
        _ = try store.purchase(FloristCatalog.flowers, account: "cy")
        let chocolates = try #require(try store.purchase(FloristCatalog.chocolates, account: "cy").transaction)
        _ = try store.purchase(FloristCatalog.silver, account: "dee")
        for day in 1...365 {
            try store.advance(by: 86_400)
            switch day {
            case 40: _ = try store.purchase(FloristCatalog.gold, account: "ben")  // an upgrade within the group
            case 90: try store.setAutoRenew(account: "ana", group: FloristCatalog.vipGroup, enabled: false)
            case 120: try store.refund(chocolates.transactionID)
            case 200: try store.setBillingIssue(account: "dee", failing: true)
            case 230: try store.setBillingIssue(account: "dee", failing: false)
            case 300:
                let latest = try store.transactions(account: "ben").max {
                    $0.payload.purchaseDate?.date ?? .distantPast < $1.payload.purchaseDate?.date ?? .distantPast
                }
                if let latest { try store.refund(latest.transactionID) }
            default: break
            }
        }
        let notifications = inbox.take()
        #expect(notifications.count > 30)

        // The same notifications: in the order sent to one server, shuffled (and each sent twice) to another.
        let shuffledServer = try ServerHarness(storage: MemoryStorage(), maximumNotificationAge: year)
        var generator = SeededGenerator(seed: seed)
        let shuffled = (notifications + notifications).shuffled(using: &generator)
        for notification in notifications {
            let body = String(decoding: notification.requestBody, as: UTF8.self)
            _ = try await ordered.service.receiveNotification(signedPayload: notification.signedPayload, body: body)
        }
        var duplicates = 0
        for notification in shuffled {
            let body = String(decoding: notification.requestBody, as: UTF8.self)
            if try await shuffledServer.service.receiveNotification(
                signedPayload: notification.signedPayload, body: body) == .duplicate
            {
                duplicates += 1
            }
        }
        #expect(duplicates == notifications.count)

        // The shuffled server's clock is its own simulator's; align both on the ordered one's end of the year.
        try shuffledServer.store.advance(to: try store.now)
        for name in Self.customers {
            let id = tokens[name]!.uuidString
            let a = try await ordered.service.customer(id, bundleID: nil)
            let b = try await shuffledServer.service.customer(id, bundleID: nil)
            #expect(a == b)
            let inOrder = try await ordered.service.entitlements(of: a)
            let outOfOrder = try await shuffledServer.service.entitlements(of: b)
            #expect(inOrder == outOfOrder, "\(name)")
            let recordsA = try await ordered.service.records(of: a)
            let recordsB = try await shuffledServer.service.records(of: b)
            #expect(recordsA.transactions.map(\.document).sorted() == recordsB.transactions.map(\.document).sorted())
            #expect(recordsA.renewals.map(\.document).sorted() == recordsB.renewals.map(\.document).sorted())
            // And both agree with the simulator itself.
            #expect(inOrder.entitledProductIDs == (try store.view(account: name)).entitledProductIDs, "\(name)")
        }
    }
}
