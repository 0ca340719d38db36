import Crypto
import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Testing

private typealias F = FloristCatalog
private let day = SimulatorHarness.day
private let start = SimulatorHarness.start

private func date(_ text: String) -> Date { try! Date(text + "T00:00:00Z", strategy: .iso8601) }

@Suite("Simulator: subscriptions")
struct SubscriptionFlowTests {
    /// A year of a monthly subscription: a free week, renewals, a failure recovered in the grace period, one recovered
    /// after it, and one never recovered; the engine agrees with the simulator every other day.
    @Test func aYearOfMonthlyRenewalsWithRetryGraceRecoveryAndExpiry() async throws {
        let h = try SimulatorHarness()
        let device = try h.customer("ana")
        let first = try #require(try h.store.purchase(F.gold, account: "ana").transaction)
        #expect(first.payload.offerType == .introductory)
        #expect(first.payload.offerDiscountType == .freeTrial)
        #expect(first.payload.expiresDate?.date == date("2026-01-08"))

        func run(until end: String) async throws {
            while try h.store.now < date(end) {
                try h.store.advance(by: min(2 * day, date(end).timeIntervalSince(try h.store.now)))
                try await h.expectAgreement("ana")
            }
        }
        try await run(until: "2026-03-01")
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.expiresDate == date("2026-03-08"))

        // March: the card fails; grace until the 24th; access stops; fixed on the 30th: a new period from then.
        try h.store.setBillingIssue(account: "ana", failing: true)
        try await run(until: "2026-03-10")
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.state == .inGracePeriod)
        try await run(until: "2026-03-30")
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.state == .inBillingRetry)
        #expect(try h.store.view(account: "ana").entitledProductIDs.isEmpty)
        try h.store.setBillingIssue(account: "ana", failing: false)
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.expiresDate == date("2026-04-30"))
        try await h.expectAgreement("ana")

        // July: fails on the 30th, fixed on August 5th, inside the grace period: the renewal date stays.
        try await run(until: "2026-07-01")
        try h.store.setBillingIssue(account: "ana", failing: true)
        try await run(until: "2026-08-05")
        try h.store.setBillingIssue(account: "ana", failing: false)
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.expiresDate == date("2026-08-30"))
        try await h.expectAgreement("ana")

        // October: fails on the 30th and is never fixed: retry gives up 60 days later.
        try await run(until: "2026-10-01")
        try h.store.setBillingIssue(account: "ana", failing: true)
        try await run(until: "2027-01-01")
        let final = try #require(try h.store.view(account: "ana").subscriptions[F.vipGroup])
        #expect(final.state == .expired)
        #expect(final.expiresDate == date("2026-10-30"))

        #expect(
            h.notificationNames() == [
                "SUBSCRIBED/INITIAL_BUY", "DID_RENEW", "DID_RENEW", "DID_FAIL_TO_RENEW/GRACE_PERIOD",
                "GRACE_PERIOD_EXPIRED", "DID_RENEW/BILLING_RECOVERY", "DID_RENEW", "DID_RENEW", "DID_RENEW",
                "DID_FAIL_TO_RENEW/GRACE_PERIOD", "DID_RENEW/BILLING_RECOVERY", "DID_RENEW", "DID_RENEW",
                "DID_FAIL_TO_RENEW/GRACE_PERIOD", "GRACE_PERIOD_EXPIRED", "EXPIRED/BILLING_RETRY",
            ])
        #expect(Set(h.store.notifications.map(\.uuid)).count == h.store.notifications.count)
        // The receipt has every period.
        let receipt = try h.store.receipt(account: "ana", device: device).receipt.receipt
        #expect(receipt.inAppPurchases.count == 10)
        #expect(Set(receipt.inAppPurchases.compactMap(\.originalTransactionID)) == [first.transactionID])
    }

    @Test func withoutGraceAFailureStopsAccessAtOnce() async throws {
        let h = try SimulatorHarness(grace: false)
        try h.customer("ana")
        _ = try h.store.purchase(F.silver, account: "ana")
        try h.store.setBillingIssue(account: "ana", failing: true)
        try h.store.advance(by: 10 * day)
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.state == .inBillingRetry)
        try await h.expectAgreement("ana")
        #expect(h.notificationNames().last == "DID_FAIL_TO_RENEW")
    }

    @Test func upgradeIsImmediateDowngradeAndCrossgradeWaitForRenewal() async throws {
        let h = try SimulatorHarness()
        let device = try h.customer("ana")
        let bronze = try #require(try h.store.purchase(F.bronze, account: "ana").transaction)
        try h.store.advance(by: 3 * day)
        let gold = try #require(try h.store.purchase(F.gold, account: "ana").transaction)
        #expect(gold.payload.originalTransactionID == bronze.transactionID)
        #expect(gold.payload.purchaseDate?.date == start + 3 * day)
        #expect(gold.payload.offerType == nil, "the trial was used on bronze")
        let upgradedBronze = try h.store.transactions(account: "ana").first { $0.transactionID == bronze.transactionID }
        #expect(upgradedBronze?.payload.isUpgraded == true)
        #expect(try h.store.view(account: "ana").entitledProductIDs == [F.gold])
        try await h.expectAgreement("ana")
        #expect(try await h.snapshotFromReceipt("ana", device: device).entitledProductIDs == [F.gold])

        // Downgrade to silver: gold until the period ends, then silver.
        _ = try h.store.purchase(F.silver, account: "ana")
        var view = try #require(try h.store.view(account: "ana").subscriptions[F.vipGroup])
        #expect(view.productID == F.gold)
        #expect(view.renewsToProductID == F.silver)
        try await h.expectAgreement("ana")
        try h.store.advance(to: view.expiresDate + 1)
        view = try #require(try h.store.view(account: "ana").subscriptions[F.vipGroup])
        #expect(view.productID == F.silver)
        try await h.expectAgreement("ana")

        // Upgrade to gold yearly, then crossgrade to gold monthly (same level) at the next renewal.
        _ = try h.store.purchase(F.goldYearly, account: "ana")
        _ = try h.store.purchase(F.gold, account: "ana")
        view = try #require(try h.store.view(account: "ana").subscriptions[F.vipGroup])
        #expect(view.productID == F.goldYearly)
        #expect(view.renewsToProductID == F.gold)
        try await h.expectAgreement("ana")
        // Changing one's mind: buying the current product cancels the pending change.
        _ = try h.store.purchase(F.goldYearly, account: "ana")
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.renewsToProductID == F.goldYearly)
        #expect(
            h.notificationNames() == [
                "SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_PREF/UPGRADE", "DID_CHANGE_RENEWAL_PREF/DOWNGRADE",
                "DID_RENEW", "DID_CHANGE_RENEWAL_PREF/UPGRADE", "DID_CHANGE_RENEWAL_PREF/DOWNGRADE",
                "DID_CHANGE_RENEWAL_PREF",
            ])
    }

    @Test func autoRenewOffExpiresThenResubscribeKeepsTheOriginal() async throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        let first = try #require(try h.store.purchase(F.gold, account: "ana").transaction)
        try h.store.setAutoRenew(account: "ana", group: F.vipGroup, enabled: false)
        try await h.expectAgreement("ana")
        try h.store.advance(by: 8 * day)
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.state == .expired)
        try await h.expectAgreement("ana")
        #expect(try h.store.products([F.gold], account: "ana").first?.isEligibleForIntroductoryOffer == false)
        let again = try #require(try h.store.purchase(F.gold, account: "ana").transaction)
        #expect(again.payload.originalTransactionID == first.transactionID)
        #expect(again.payload.offerType == nil)
        try await h.expectAgreement("ana")
        #expect(
            h.notificationNames() == [
                "SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY",
                "SUBSCRIBED/RESUBSCRIBE",
            ])
    }

    @Test func priceIncreaseNeedsConsentOrTheSubscriptionEnds() async throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        try h.customer("ben")
        _ = try h.store.purchase(F.silver, account: "ana")
        _ = try h.store.purchase(F.silver, account: "ben")
        try h.store.advance(by: 10 * day)
        try h.store.changePrice(F.silver, to: 7.99, requiresConsent: true)
        try h.store.consentToPriceIncrease(account: "ben", group: F.vipGroup)
        try h.store.advance(by: 40 * day)
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.state == .expired)
        #expect(try h.store.view(account: "ben").subscriptions[F.vipGroup]?.state == .subscribed)
        try await h.expectAgreement("ana")
        try await h.expectAgreement("ben")
        let renewed = try h.store.transactions(account: "ben").last
        #expect(renewed?.payload.price == 7990)
        #expect(
            h.notificationNames("ana") == [
                "SUBSCRIBED/INITIAL_BUY", "DID_RENEW", "PRICE_INCREASE/PENDING", "EXPIRED/PRICE_INCREASE",
            ])
        #expect(
            h.notificationNames("ben") == [
                "SUBSCRIBED/INITIAL_BUY", "DID_RENEW", "PRICE_INCREASE/PENDING", "PRICE_INCREASE/ACCEPTED", "DID_RENEW",
            ])
    }

    @Test func refundEndsTheSubscriptionAndConsumableRefundsAreProrated() async throws {
        let h = try SimulatorHarness()
        try h.customer("ana")
        let gold = try #require(try h.store.purchase(F.gold, account: "ana").transaction)
        try h.store.advance(by: 3 * day)
        try h.store.refund(gold.transactionID)
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.state == .revoked)
        try await h.expectAgreement("ana")
        #expect(
            (#expect(throws: SimulatorError.self) { try h.store.refund(gold.transactionID) })?.code == .invalidState)

        let installs = try #require(
            try h.store.purchase(F.installation, account: "ana", options: PurchaseOptions(quantity: 4)).transaction)
        try h.store.requestRefund(installs.transactionID, reason: .unsatisfiedWithPurchase)
        let request = try #require(h.store.notifications.last)
        #expect(request.type == .consumptionRequest)
        #expect(request.payload.data?.consumptionRequestReason == .unsatisfiedWithPurchase)
        let bad = #expect(throws: SimulatorError.self) {
            try h.store.reportConsumption(installs.transactionID, ConsumptionReport(consumptionStatus: 9))
        }
        #expect(bad?.code == .invalidArgument)
        try h.store.reportConsumption(
            installs.transactionID, ConsumptionReport(consumptionStatus: 2, refundPreference: 1))
        #expect(h.store.consumptionReport(for: installs.transactionID)?.consumptionStatus == 2)
        try h.store.decideRefund(installs.transactionID, grant: true, percentage: 50_000)
        let refunded = try h.store.transactions(account: "ana").first { $0.transactionID == installs.transactionID }
        #expect(refunded?.payload.revocationType == .refundProrated)
        #expect(refunded?.payload.revocationPercentage == 50_000)
        #expect(try h.store.view(account: "ana").consumablePurchased[F.installation] == 2)
        try await h.expectAgreement("ana")

        let more = try #require(try h.store.purchase(F.installation, account: "ana").transaction)
        try h.store.requestRefund(more.transactionID)
        try h.store.decideRefund(more.transactionID, grant: false)
        #expect(h.notificationNames().suffix(3) == ["ONE_TIME_CHARGE", "CONSUMPTION_REQUEST", "REFUND_DECLINED"])
    }

    @Test func deleteAndClearTransactions() async throws {
        let h = try SimulatorHarness()
        let device = try h.customer("ana")
        let flowers = try #require(try h.store.purchase(F.flowers, account: "ana").transaction)
        _ = try h.store.purchase(F.chocolates, account: "ana")
        try h.store.deleteTransaction(flowers.transactionID)
        #expect(try h.store.view(account: "ana").entitledProductIDs == [F.chocolates])
        #expect(try h.store.receipt(account: "ana", device: device).receipt.receipt.inAppPurchases.count == 1)
        try await h.expectAgreement("ana")
        _ = try h.store.purchase(F.gold, account: "ana")
        try h.store.clearTransactions()
        #expect(try h.store.transactions(account: "ana").isEmpty)
        #expect(try h.store.view(account: "ana").entitledProductIDs.isEmpty)
        try h.store.advance(by: 60 * day)
        #expect(h.notificationNames().last == "SUBSCRIBED/INITIAL_BUY", "nothing renews after clearing")
        #expect(try h.store.receipt(account: "ana", device: device).receipt.receipt.inAppPurchases.isEmpty)
    }

    @Test func acceleratedTimeRatesFollowXcodesTables() async throws {
        let h = try SimulatorHarness(timeRate: .monthlyRenewalEveryThirtySeconds)
        try h.customer("ana")
        try h.customer("ben")
        let monthly = try #require(try h.store.purchase(F.silver, account: "ana").transaction)
        // The intro week lasts 10 seconds at this rate.
        #expect(monthly.payload.expiresDate?.date == start + 10)
        let yearly = try #require(try h.store.purchase(F.goldYearly, account: "ben").transaction)
        #expect(yearly.payload.expiresDate?.date == start + 10)
        try h.store.advance(by: 10 + 30 * 4)
        #expect(try h.store.transactions(account: "ana").count == 6, "the trial and renewals at 10, 40, 70, 100, 130 s")
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.expiresDate == start + 10 + 30 * 5)
        #expect(try h.store.view(account: "ben").subscriptions[F.vipGroup]?.expiresDate == start + 10 + 360)
        try await h.expectAgreement("ana")
        // Grace is 16 seconds, retry 60 seconds at this rate.
        try h.store.setBillingIssue(account: "ana", failing: true)
        try h.store.advance(by: 30)
        let view = try #require(try h.store.view(account: "ana").subscriptions[F.vipGroup])
        #expect(view.gracePeriodExpiresDate == view.expiresDate + 16)
        try h.store.advance(by: 61)
        #expect(try h.store.view(account: "ana").subscriptions[F.vipGroup]?.state == .expired)
        #expect(
            TimeRate.oneRenewalEveryFiveMinutes.advance(start, by: SubscriptionPeriod(value: 1, unit: .year)) == start
                + 300)
        #expect(TimeRate.realTime.gracePeriod(for: SubscriptionPeriod(value: 1, unit: .week)) == 6 * day)
        #expect(TimeRate.named("monthlyRenewalEveryHour") == .monthlyRenewalEveryHour)
    }

    @Test func runawayClockMovesStopWithAnError() throws {
        let h = try SimulatorHarness(timeRate: .oneRenewalEveryTwoSeconds) { $0.maximumEventsPerAdvance = 200 }
        try h.customer("ana")
        _ = try h.store.purchase(F.gold, account: "ana")
        let error = #expect(throws: SimulatorError.self) { try h.store.advance(by: 86_400) }
        #expect(error?.code == .invalidArgument)
        #expect(try h.store.now < start + 86_400)
        #expect(try h.store.transactions(account: "ana").count == 201)
        let late = #expect(throws: SimulatorError.self) { try h.store.advance(to: Date(timeIntervalSince1970: 5e9)) }
        #expect(late?.code == .invalidArgument)
    }

    @Test func aRunningClockCatchesUpWithTheWallClock() throws {
        final class Wall: @unchecked Sendable { var now = Date(timeIntervalSince1970: 0) }
        let wall = Wall()
        let store = try AppStoreSimulator(
            catalog: FloristCatalog.catalog,
            configuration: SimulatorConfiguration(timeRate: .oneRenewalEveryFiveMinutes, start: start),
            pki: SimulatorTestKeys.pki, clock: .running(wallClock: { wall.now }))
        try store.createAccount("ana")
        _ = try store.purchase(F.gold, account: "ana")
        wall.now += 301
        #expect(try store.now == start + 301)
        #expect(try store.transactions(account: "ana").count == 2, "renewed at 5 minutes")
        try store.advance(by: 3600)
        #expect(try store.now == start + 301 + 3600)
        #expect((#expect(throws: SimulatorError.self) { try store.advance(to: start) })?.code == .timeGoesForward)
    }

    @Test func aRunningClockPausesResumesAndChangesSpeed() throws {
        final class Wall: @unchecked Sendable { var now = Date(timeIntervalSince1970: 0) }
        let wall = Wall()
        let store = try AppStoreSimulator(
            catalog: FloristCatalog.catalog, configuration: SimulatorConfiguration(start: start),
            pki: SimulatorTestKeys.pki, clock: .running(wallClock: { wall.now }))
        #expect(store.clockSetting == .init(paused: false, speed: 1))
        wall.now += 10
        try store.setClock(paused: true)
        wall.now += 1000
        #expect(try store.now == start + 10, "paused: the wall clock moves, the store's does not")
        try store.advance(by: 50)
        #expect(try store.now == start + 60, "a paused clock still moves when told")
        try store.setClock(paused: false, speed: 3600)
        wall.now += 2
        #expect(try store.now == start + 60 + 7200, "an hour a second")
        try store.createAccount("ana")
        _ = try store.purchase(F.silver, account: "ana")
        wall.now += 24 * 30 + 12  // a month and a half at an hour a second
        #expect(try store.transactions(account: "ana").count == 2, "the renewal came due while the clock ran fast")
        try store.setClock(speed: 1)
        let settled = try store.now
        wall.now += 5
        #expect(try store.now == settled + 5)
        #expect(store.clockSetting == .init(paused: false, speed: 1))
        for bad in [0, -1, .infinity, .nan, AppStoreSimulator.maximumClockSpeed * 2] {
            #expect((#expect(throws: SimulatorError.self) { try store.setClock(speed: bad) })?.code == .invalidArgument)
        }
        // Left running at full speed past the last date, the clock waits there, and a pause still takes hold.
        try store.setClock(speed: AppStoreSimulator.maximumClockSpeed)
        wall.now += 1_000_000
        #expect(try store.now == SimulatorConfiguration.latestDate)
        try store.setClock(paused: true)
        #expect(store.clockSetting?.paused == true)
        #expect(try store.transactions(account: "ana").count > 2)

        let frozen = try AppStoreSimulator(catalog: FloristCatalog.catalog, pki: SimulatorTestKeys.pki)
        #expect(frozen.clockSetting == nil)
        #expect((#expect(throws: SimulatorError.self) { try frozen.setClock(paused: true) })?.code == .invalidArgument)
    }
}
