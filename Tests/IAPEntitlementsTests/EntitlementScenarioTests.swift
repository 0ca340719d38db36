import Foundation
import IAPCatalog
import IAPEntitlements
import IAPTestSupport
import Testing

private typealias F = FloristCatalog
private let day = Timeline.day
private let month = Timeline.month

@Suite("Entitlements: one-time purchases")
struct OneTimePurchaseScenarios {
    @Test func nonConsumableBoughtThenRefunded() {
        var t = Timeline()
        let flowers = t.buy(F.flowers, on: day(1))
        t.revoke(flowers, on: day(10))

        #expect(t.snapshot(at: day(0)).nonConsumables.isEmpty, "not bought yet")
        let owned = t.snapshot(at: day(5))
        #expect(owned.nonConsumables.map(\.productID) == [F.flowers])
        #expect(owned.isEntitled(to: F.flowers))
        #expect(owned.revokedTransactions.isEmpty)

        let refunded = t.snapshot(at: day(10))
        #expect(refunded.nonConsumables.isEmpty)
        #expect(refunded.revokedTransactions.map(\.transactionID) == [flowers])
        #expect(refunded.revokedTransactions.first?.revocation.kind == .refund)
    }

    @Test func familySharedThenRevokedAndRebought() {
        var t = Timeline()
        let shared = t.buy(F.flowers, on: day(1), ownership: .familyShared)
        t.revoke(shared, on: day(20), kind: .familyRevoke)

        let sharing = t.snapshot(at: day(2))
        #expect(sharing.nonConsumables.first?.ownership == .familyShared)
        #expect(t.snapshot(at: day(20)).nonConsumables.isEmpty, "the family stopped sharing")

        // The customer buys it after losing it; a copy they paid for wins over a shared one while both exist.
        let own = t.buy(F.flowers, on: day(25))
        let later = t.snapshot(at: day(26))
        #expect(later.nonConsumables.first?.transactionID == own)
        #expect(later.nonConsumables.first?.ownership == .purchased)

        var both = Timeline()
        both.buy(F.flowers, on: day(1), ownership: .familyShared)
        let bought = both.buy(F.flowers, on: day(3))
        #expect(both.snapshot(at: day(4)).nonConsumables.first?.transactionID == bought)
    }

    @Test func restoredCopiesCountOnce() {
        var t = Timeline()
        let first = t.buy(F.chocolates, on: day(1))
        t.buy(F.chocolates, on: day(9), original: first)
        let snapshot = t.snapshot(at: day(10))
        #expect(snapshot.nonConsumables.count == 1)
        #expect(snapshot.nonConsumables.first?.transactionID == first)
    }

    @Test func consumableBalanceWithHistory() {
        var t = Timeline()
        let firstBatch = t.buy(F.installation, on: day(1), quantity: 3)
        t.consume(F.installation, on: day(2))
        t.buy(F.installation, on: day(3), quantity: 2)
        t.revoke(firstBatch, on: day(4))
        t.consume(F.installation, 2, on: day(5))

        #expect(t.snapshot(at: day(2)).balance(of: F.installation) == 2)
        #expect(t.snapshot(at: day(3)).balance(of: F.installation) == 4)
        #expect(t.snapshot(at: day(4)).balance(of: F.installation) == 1)

        let last = t.snapshot(at: day(6)).consumables.first!
        #expect(last.purchased == 5)
        #expect(last.consumed == 3)
        #expect(last.refunded == 3)
        #expect(last.balance == 0)
        #expect(last.shortfall == 1, "the second consumption used one unit that the refund took back")
        #expect(last.history.map(\.kind) == [.purchase, .consumption, .purchase, .refund, .consumption])
        #expect(last.history.map(\.balanceAfter) == [3, 2, 4, 1, 0])
    }

    @Test func refundAfterUseDoesNotCarryADebtIntoTheNextPurchase() {
        var t = Timeline()
        let bought = t.buy(F.installation, on: day(1))
        t.consume(F.installation, on: day(2))
        t.revoke(bought, on: day(3))
        #expect(t.snapshot(at: day(3)).balance(of: F.installation) == 0)
        #expect(t.snapshot(at: day(3)).consumables.first?.shortfall == 1)
        t.buy(F.installation, on: day(4))
        #expect(t.snapshot(at: day(4)).balance(of: F.installation) == 1)
    }

    @Test func proratedRefundTakesBackItsShare() {
        var t = Timeline()
        let bought = t.buy(F.installation, on: day(1), quantity: 4)
        t.revoke(bought, on: day(2), kind: .proratedRefund, percentage: 50_000)
        #expect(t.snapshot(at: day(3)).balance(of: F.installation) == 2)
    }

    @Test func consumptionRecordedTwiceCountsOnce() {
        var t = Timeline()
        t.buy(F.installation, on: day(1), quantity: 2)
        t.consume(F.installation, on: day(2), id: "job-17")
        t.consume(F.installation, on: day(2), id: "job-17")
        #expect(t.snapshot(at: day(3)).balance(of: F.installation) == 1)
    }

    @Test func nonRenewingPassesUseTheCallersDuration() {
        var t = Timeline()
        t.buy(F.monthPass, on: day(0))
        t.buy(F.monthPass, on: day(10))

        let unknown = t.snapshot(at: day(5)).nonRenewingSubscriptions.first!
        #expect(unknown.state == .durationUnknown, "no duration configured: not guessed")
        #expect(!t.snapshot(at: day(5)).isEntitled(to: F.monthPass))

        t.engine.policy.nonRenewingDurations[F.monthPass] = SubscriptionPeriod(value: 1, unit: .month)
        // Stacked: the second month starts when the first ends.
        let stacked = t.snapshot(at: day(45)).nonRenewingSubscriptions.first!
        #expect(stacked.state == .active)
        #expect(stacked.startDate == day(0))
        #expect(stacked.expiresDate == month(2))
        #expect(t.snapshot(at: month(2)).nonRenewingSubscriptions.first?.state == .expired)

        t.engine.policy.stacksNonRenewingPurchases = false
        let overlapping = t.snapshot(at: day(35)).nonRenewingSubscriptions.first!
        #expect(overlapping.state == .active)
        #expect(overlapping.expiresDate == SubscriptionPeriod(value: 1, unit: .month).advance(day(10)))
        #expect(t.snapshot(at: day(45)).nonRenewingSubscriptions.first?.state == .expired)
    }

    @Test func refundedPassStopsGranting() {
        var t = Timeline()
        t.engine.policy.defaultNonRenewingDuration = SubscriptionPeriod(value: 1, unit: .month)
        let pass = t.buy(F.monthPass, on: day(0))
        t.revoke(pass, on: day(3))
        #expect(t.snapshot(at: day(2)).isEntitled(to: F.monthPass))
        #expect(t.snapshot(at: day(3)).nonRenewingSubscriptions.isEmpty)
    }
}

@Suite("Entitlements: auto-renewable subscriptions")
struct SubscriptionScenarios {
    @Test func buyRenewFailGraceRetryRecoverThenCancel() {
        var t = Timeline()
        let original = t.subscribe(F.silver, on: month(0), offer: OfferUse(kind: .introductory, isFreeTrial: true))
        t.renew(original)
        t.renew(original)  // runs month 2 to month 3

        let subscribed = t.vip(at: day(40))!
        #expect(subscribed.state == .subscribed)
        #expect(subscribed.currentProductID == F.silver)
        #expect(subscribed.serviceLevel == 2)
        #expect(subscribed.originalTransactionID == original)
        #expect(subscribed.expiresDate == month(2))
        #expect(!subscribed.introductoryOfferEligible, "the free trial was used")

        // Renewal at month 3 fails: 16 days of grace, then billing retry.
        let graceEnd = month(3).addingTimeInterval(16 * 86_400)
        t.renewalInfo(
            RenewalRecord(
                originalTransactionID: original, productID: F.silver, autoRenewProductID: F.silver,
                willAutoRenew: true, expirationReason: .billingError, isInBillingRetry: true,
                gracePeriodExpiresDate: graceEnd, signedDate: month(3), source: .simulator))
        let grace = t.vip(at: month(3).addingTimeInterval(5 * 86_400))!
        #expect(grace.state == .inGracePeriod)
        #expect(grace.isEntitled)
        #expect(grace.gracePeriodExpiresDate == graceEnd)
        #expect(grace.willAutoRenew == true)

        let retry = t.vip(at: graceEnd)!
        #expect(retry.state == .inBillingRetry)
        #expect(!retry.isEntitled)
        #expect(retry.state.appStoreStatus == 3)

        // Payment goes through on day 25 of the retry: a new period starts then.
        let recovered = t.renew(original, on: month(3).addingTimeInterval(25 * 86_400))
        let back = t.vip(at: month(3).addingTimeInterval(26 * 86_400))!
        #expect(back.state == .subscribed)
        #expect(back.currentTransactionID == recovered)
        // The old renewal info (signed before the recovery) no longer puts the subscription in retry once it ends.
        t.renewalInfo(
            RenewalRecord(
                originalTransactionID: original, productID: F.silver, willAutoRenew: false,
                signedDate: month(3).addingTimeInterval(30 * 86_400), source: .simulator))
        let end = t.records.last!.expiresDate!
        let cancelled = t.vip(at: end)!
        #expect(cancelled.state == .expired)
        #expect(cancelled.expirationReason == .voluntary)
        #expect(cancelled.willAutoRenew == false)
        #expect(!t.snapshot(at: end).isEntitled(to: F.silver))
    }

    @Test func billingRetryGivesUpAfterSixtyDays() {
        var t = Timeline()
        let original = t.subscribe(F.bronze, on: month(0))
        t.renewalInfo(
            RenewalRecord(
                originalTransactionID: original, willAutoRenew: true, isInBillingRetry: true,
                signedDate: month(1), source: .simulator))
        #expect(t.vip(at: month(1).addingTimeInterval(59 * 86_400))?.state == .inBillingRetry)
        let expired = t.vip(at: month(1).addingTimeInterval(60 * 86_400))!
        #expect(expired.state == .expired)
        #expect(expired.expirationReason == .billingError)
    }

    @Test func expiryWithoutRenewalInformationHasAnUnknownReason() {
        var t = Timeline()
        t.subscribe(F.bronze, on: month(0))
        let status = t.vip(at: month(1))!
        #expect(status.state == .expired)
        #expect(status.expirationReason == .unknown)
        #expect(status.state.appStoreStatus == 2)
    }

    @Test func upgradeTakesEffectAtOnceAndTheOldPeriodStopsCounting() {
        var t = Timeline()
        let bronze = t.subscribe(F.bronze, on: day(0))
        let gold = t.subscribe(F.gold, on: day(10), original: bronze)
        t.markUpgraded(bronze)

        let before = t.vip(at: day(5))!
        #expect(before.currentProductID == F.bronze)
        #expect(before.upgradedTransactionIDs.isEmpty)

        let after = t.vip(at: day(12))!
        #expect(after.currentProductID == F.gold)
        #expect(after.currentTransactionID == gold)
        #expect(after.upgradedTransactionIDs == [bronze])
        #expect(t.snapshot(at: day(12)).entitledProductIDs == [F.gold])

        // The bronze period would have run to day 31; once upgraded it does not, even after gold is refunded.
        t.revoke(gold, on: day(15))
        let refunded = t.vip(at: day(20))!
        #expect(refunded.state == .revoked)
        #expect(refunded.currentProductID == F.gold)
        #expect(refunded.state.appStoreStatus == 5)
    }

    @Test func withoutAnUpgradeFlagTheHighestActiveLevelIsCurrent() {
        var t = Timeline()
        t.subscribe(F.bronze, on: day(0))
        let silver = t.subscribe(F.silver, on: day(3))
        let status = t.vip(at: day(4))!
        #expect(status.currentTransactionID == silver)
        #expect(status.serviceLevel == 2)
    }

    @Test func downgradeWaitsForTheRenewal() {
        var t = Timeline()
        let original = t.subscribe(F.gold, on: month(0))
        t.renewalInfo(
            RenewalRecord(
                originalTransactionID: original, productID: F.gold, autoRenewProductID: F.bronze, willAutoRenew: true,
                signedDate: day(5), source: .simulator))
        let pending = t.vip(at: day(6))!
        #expect(pending.currentProductID == F.gold)
        #expect(pending.renewsToProductID == F.bronze)
        #expect(pending.pendingChange == .downgrade)

        t.renew(original, to: F.bronze)
        let after = t.vip(at: month(1).addingTimeInterval(3600))!
        #expect(after.currentProductID == F.bronze)
        #expect(after.pendingChange == nil)
        #expect(after.originalTransactionID == original)
    }

    @Test func crossgradeToTheYearlyPlanOfTheSameLevel() {
        var t = Timeline()
        let original = t.subscribe(F.gold, on: month(0))
        t.renewalInfo(
            RenewalRecord(
                originalTransactionID: original, autoRenewProductID: F.goldYearly, willAutoRenew: true,
                signedDate: day(1), source: .simulator))
        #expect(t.vip(at: day(2))?.pendingChange == .crossgrade)
        t.renew(original, to: F.goldYearly, period: SubscriptionPeriod(value: 1, unit: .year))
        let yearly = t.vip(at: month(6))!
        #expect(yearly.currentProductID == F.goldYearly)
        #expect(yearly.expiresDate == SubscriptionPeriod(value: 1, unit: .year).advance(month(1)))
    }

    @Test func refundRevokesAndResubscribingRestores() {
        var t = Timeline()
        let original = t.subscribe(F.silver, on: month(0))
        let second = t.renew(original)
        t.revoke(second, on: day(40))
        #expect(t.vip(at: day(39))?.state == .subscribed)
        let revoked = t.vip(at: day(40))!
        #expect(revoked.state == .revoked)
        #expect(revoked.revocation?.date == day(40))
        #expect(revoked.willAutoRenew == false)

        let again = t.subscribe(F.silver, on: day(50), offer: OfferUse(kind: .introductory))
        let resubscribed = t.vip(at: day(51))!
        #expect(resubscribed.state == .subscribed)
        #expect(resubscribed.currentTransactionID == again)
        #expect(!resubscribed.introductoryOfferEligible)
    }

    @Test func familySharedSubscriptionAboveOwnOneAndLostWithTheFamily() {
        var t = Timeline()
        t.subscribe(F.bronze, on: day(0))
        let shared = t.subscribe(F.gold, on: day(2), ownership: .familyShared)
        let both = t.vip(at: day(3))!
        #expect(both.currentProductID == F.gold)
        #expect(both.ownership == .familyShared)
        #expect(both.introductoryOfferEligible, "a family member's offer use is theirs, not this customer's")

        t.revoke(shared, on: day(5), kind: .familyRevoke)
        let own = t.vip(at: day(6))!
        #expect(own.currentProductID == F.bronze)
        #expect(own.ownership == .purchased)
    }

    @Test func introductoryEligibilityIsPerGroupAndKeptWithoutUse() {
        var t = Timeline()
        t.subscribe(F.gold, on: day(0))
        #expect(t.vip(at: day(1))?.introductoryOfferEligible == true)
        #expect(t.snapshot(at: day(1)).isEligibleForIntroductoryOffer(inGroup: "another group"))
        t.subscribe(F.bronze, on: day(40), offer: OfferUse(kind: .introductory))
        #expect(t.vip(at: day(41))?.introductoryOfferEligible == false)
        #expect(t.vip(at: day(1))?.introductoryOfferEligible == true, "a later trial does not change the past")
    }

    @Test func withoutACatalogGroupsComeFromTheRecords() {
        var t = Timeline()
        t.engine = EntitlementEngine()
        // No type, no group: a receipt-style record with an expiry is an auto-renewable subscription grouped by its
        // original transaction id; one with neither is reported as unclassified.
        let original = t.subscribe("monthly", on: day(0))
        t.renew(original, to: "annual", period: SubscriptionPeriod(value: 1, unit: .year))
        t.buy("mystery", on: day(3))
        let snapshot = t.snapshot(at: day(40))
        #expect(snapshot.subscriptionGroups.count == 1)
        let group = snapshot.subscriptionGroups[0]
        #expect(group.groupID == nil)
        #expect(group.key == "original:\(original)")
        #expect(group.currentProductID == "annual")
        #expect(group.serviceLevel == nil)
        #expect(snapshot.unclassified.map(\.productID) == ["mystery"])
        #expect(snapshot.reconcile(cachedProductIDs: ["mystery", "old"]).undetermined == ["mystery"])
    }
}

@Suite("Entitlements: gate, reconciliation, duplicates")
struct EntitlementUtilityTests {
    @Test func originalAppVersionGate() {
        var t = Timeline()
        #expect(t.snapshot(at: day(0)).obtainedAppBefore(version: "2.0") == nil)
        t.originalAppVersion = "1.9"
        let snapshot = t.snapshot(at: day(0))
        #expect(snapshot.obtainedAppBefore(version: "2.0") == true)
        #expect(snapshot.obtainedAppBefore(version: "1.10") == true)
        #expect(snapshot.obtainedAppBefore(version: "1.9") == false)
        #expect(snapshot.obtainedAppBefore(version: "1.9.0") == false)
        #expect(snapshot.obtainedAppBefore(version: "1.8") == false)
    }

    @Test(arguments: [
        ("1.0", "1.0.0", false), ("1.9", "1.10", true), ("2", "10", true), ("3.3.1b4", "3.3.1b10", true),
        ("3.3.1b4", "3.3.1", true), ("3.3.1", "3.3.1b4", false), ("1.0a1", "1.0b1", true), ("", "0.1", true),
        ("99999999999999999999999", "1", false), ("1.x", "1.y", true),
    ])
    func appVersionOrder(lhs: String, rhs: String, less: Bool) {
        #expect((AppVersion(lhs) < AppVersion(rhs)) == less)
    }

    @Test func reconcileACachedList() {
        var t = Timeline()
        t.buy(F.flowers, on: day(0))
        let chocolates = t.buy(F.chocolates, on: day(0))
        t.revoke(chocolates, on: day(1))
        t.subscribe(F.gold, on: day(0))
        let result = t.snapshot(at: day(2)).reconcile(cachedProductIDs: [F.chocolates, F.flowers, F.silver])
        #expect(result.grant == [F.gold])
        #expect(result.remove == [F.chocolates, F.silver])
        #expect(result.keep == [F.flowers])
        #expect(result.undetermined.isEmpty)
    }

    @Test func theBetterInformedCopyOfATransactionWinsWhateverTheOrder() {
        let receiptCopy = PurchaseRecord(
            transactionID: "7", productID: F.flowers, purchaseDate: day(0), source: .receipt)
        var signedCopy = receiptCopy
        signedCopy.source = .signedTransaction
        signedCopy.revocation = Revocation(date: day(2), kind: .refund)
        let engine = EntitlementEngine(catalog: F.catalog)
        for records in [[receiptCopy, signedCopy], [signedCopy, receiptCopy]] {
            let snapshot = engine.snapshot(records: records, at: day(3))
            #expect(snapshot.nonConsumables.isEmpty)
            #expect(snapshot.revokedTransactions.count == 1)
        }
    }
}

@Suite("Entitlements: hostile input")
struct HostileInputTests {
    @Test func extremeQuantitiesAndDatesNeverTrap() {
        var t = Timeline()
        t.buy(F.installation, on: day(1), quantity: .max)
        t.buy(F.installation, on: day(2), quantity: .max)
        t.buy(F.installation, on: day(3), quantity: -5)
        t.consume(F.installation, .max, on: day(4))
        t.consume(F.installation, -3, on: day(4))
        let upside = t.buy(F.gold, on: day(5), expires: day(1))  // expires before it starts
        t.markUpgraded(upside)
        t.buy(F.bronze, on: .distantFuture, expires: .distantFuture)
        t.buy(F.silver, on: .distantPast, expires: .distantPast)
        let balance = t.snapshot(at: day(10)).consumables.first!
        #expect(balance.purchased == .max)
        #expect(balance.balance >= 0)
        #expect(t.vip(at: day(10))?.isEntitled == false)
        #expect(t.snapshot(at: .distantFuture).vipIsKnown)
    }

    @Test func randomVersionStringsCompareConsistently() {
        var random = SeededGenerator(seed: 7)
        let alphabet = Array("0123456789.abrc-+ ")
        let versions = (0..<300).map { _ in
            AppVersion(
                String(
                    (0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! }))
        }
        for a in versions.prefix(60) {
            #expect(!(a < a))
            for b in versions.prefix(60) {
                #expect(!(a < b && b < a), "\(a) and \(b)")
                for c in versions.prefix(15) where a < b && b < c { #expect(a < c, "\(a) < \(b) < \(c)") }
            }
        }
    }
}

extension EntitlementSnapshot {
    fileprivate var vipIsKnown: Bool { group(FloristCatalog.vipGroup) != nil }
}
