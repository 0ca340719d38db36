import Foundation
import IAPCatalog
import IAPEntitlements
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Testing

private typealias F = FloristCatalog
private let day: TimeInterval = 86_400

@Suite("Simulator: refund reversals and proration")
struct RefundReversalFlowTests {
    /// What the engine says when it reads every transaction the developer was sent in notifications, in `order`.
    func snapshotFromNotifications(_ h: SimulatorHarness, reversed: Bool) async throws -> EntitlementSnapshot {
        var history = PurchaseHistory()
        let notifications = reversed ? Array(h.store.notifications.reversed()) : h.store.notifications
        for notification in notifications {
            let verdict = try await h.jwsVerifier.verify(notification.signedPayload, as: .notification)
            #expect(verdict.isValid, "\(verdict.failures)")
            history.add(verified: verdict)
        }
        return h.engine.snapshot(of: history, at: try h.store.now)
    }

    @Test func aReversedRefundGivesANonConsumableBack() async throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        let flowers = try #require(try h.store.purchase(F.flowers, account: "ana").transaction)
        try h.store.advance(by: day)
        try h.store.refund(flowers.transactionID)
        #expect(try !h.store.view(account: "ana").entitledProductIDs.contains(F.flowers))
        try await h.expectAgreement("ana")

        try h.store.advance(by: day)
        try h.store.reverseRefund(flowers.transactionID)
        #expect(try h.store.view(account: "ana").entitledProductIDs.contains(F.flowers))
        #expect(h.notificationNames("ana").suffix(2) == ["REFUND", "REFUND_REVERSED"])
        let reversal = try #require(h.store.notifications.last)
        #expect(reversal.type == .refundReversed)
        try await h.expectAgreement("ana")
        // Every signed copy the developer received (purchase, refund, reversal), in either order: the reversal wins.
        #expect(try await snapshotFromNotifications(h, reversed: false).isEntitled(to: F.flowers))
        #expect(try await snapshotFromNotifications(h, reversed: true).isEntitled(to: F.flowers))

        let again = #expect(throws: SimulatorError.self) { try h.store.reverseRefund(flowers.transactionID) }
        #expect(again?.code == .invalidState)
    }

    @Test func aReversedRefundInsideThePeriodGivesTheSubscriptionBack() async throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        let gold = try #require(try h.store.purchase(F.gold, account: "ana").transaction)
        try h.store.advance(by: 3 * day)
        try h.store.refund(gold.transactionID)
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.state == .revoked)
        try h.store.advance(by: day)
        try h.store.reverseRefund(gold.transactionID)
        let view = try #require(try h.store.view(account: "ana").subscriptions[F.vipGroup])
        #expect(view.state == .subscribed)
        #expect(!view.willAutoRenew, "the refund turned auto-renew off; the reversal does not turn it on")
        try await h.expectAgreement("ana")
        // It then ends at its expiry, as any subscription whose auto-renew is off.
        try h.store.advance(by: 40 * day)
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.state == .expired)
        try await h.expectAgreement("ana")
    }

    @Test func aProratedRefundOfAnOddQuantityLeavesWhatTheEngineSays() async throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        let installs = try #require(
            try h.store.purchase(F.installation, account: "ana", options: PurchaseOptions(quantity: 3)).transaction)
        try h.store.refund(installs.transactionID, percentage: 50_000)
        // Half of 3 is 1.5 units refunded: the one rule rounds the refund down, so 2 are left, here and in the engine.
        #expect(try h.store.view(account: "ana").consumablePurchased[F.installation] == 2)
        try await h.expectAgreement("ana")
        let snapshot = try await h.snapshotFromSignedData("ana")
        #expect(snapshot.balance(of: F.installation) == 2)
    }
}
