import Foundation
import IAPCatalog
import IAPEntitlements
import IAPTestSupport
import PropertyBased
import Testing

private typealias F = FloristCatalog

/// PropertyBased's generators driven by a fixed seed, so every run checks the same cases (the library's own
/// `propertyCheck` draws a fresh seed each run). Set `IAPKIT_PROPERTY_CASES` to check more.
private func forAll<Value>(
    seed: UInt64, _ input: Generator<Value, some Sequence>, _ body: (Value, Comment) -> Void
) {
    let count = ProcessInfo.processInfo.environment["IAPKIT_PROPERTY_CASES"].flatMap { Int($0) } ?? 300
    var rng = FixedSeedGenerator(seed: seed)!
    for index in 0..<count {
        body(input.run(using: &rng), "case \(index) of seed \(seed)")
    }
}

private struct FixedSeedGenerator: SeededRandomNumberGenerator {
    var currentSeed: UInt64
    init?(seed: UInt64) { currentSeed = seed }
    init() { currentSeed = 0x5EED }
    mutating func next() -> UInt64 {
        var generator = SeededGenerator(seed: currentSeed)
        defer { currentSeed &+= 0x9E37_79B9_7F4A_7C15 }
        return generator.next()
    }
}

/// A random customer: each code becomes one event of a history over about 200 days.
private struct RandomHistory: CustomStringConvertible {
    var timeline = Timeline()
    var moments: [Date] = []

    init(codes: [Int], moments: [Int]) {
        let oneTime = [F.flowers, F.chocolates]
        let vip = [F.gold, F.goldYearly, F.silver, F.bronze]
        var originals: [String] = []
        for code in codes {
            var random = SeededGenerator(seed: UInt64(bitPattern: Int64(code)))
            let date = Timeline.day(Double(Int.random(in: 0...180, using: &random)))
            let later = date.addingTimeInterval(Double(Int.random(in: 1...60, using: &random)) * 86_400)
            let revoke = Int.random(in: 0..<4, using: &random) == 0
            switch Int.random(in: 0..<8, using: &random) {
            case 0:
                let ownership: Ownership = Bool.random(using: &random) ? .purchased : .familyShared
                let id = timeline.buy(oneTime.randomElement(using: &random)!, on: date, ownership: ownership)
                if revoke { timeline.revoke(id, on: later, kind: ownership == .familyShared ? .familyRevoke : .refund) }
            case 1:
                let id = timeline.buy(F.installation, on: date, quantity: Int.random(in: 1...5, using: &random))
                if revoke {
                    timeline.revoke(
                        id, on: later, kind: Bool.random(using: &random) ? .refund : .proratedRefund,
                        percentage: Int.random(in: 0...100_000, using: &random))
                }
            case 2:
                timeline.consume(
                    F.installation, Int.random(in: 1...3, using: &random), on: date,
                    id: Bool.random(using: &random) ? "c\(Int.random(in: 0..<5, using: &random))" : nil)
            case 3, 4:
                let original =
                    originals.isEmpty || Bool.random(using: &random) ? nil : originals.randomElement(using: &random)
                let id = timeline.subscribe(
                    vip.randomElement(using: &random)!, on: date, original: original,
                    ownership: Int.random(in: 0..<5, using: &random) == 0 ? .familyShared : .purchased,
                    offer: Bool.random(using: &random) ? OfferUse(kind: .introductory) : nil)
                if original == nil { originals.append(id) }
                if revoke { timeline.revoke(id, on: later) }
                if Int.random(in: 0..<5, using: &random) == 0 { timeline.markUpgraded(id) }
            case 5:
                guard let original = originals.randomElement(using: &random) else { continue }
                timeline.renewalInfo(
                    RenewalRecord(
                        originalTransactionID: original, autoRenewProductID: vip.randomElement(using: &random),
                        willAutoRenew: Bool.random(using: &random), isInBillingRetry: Bool.random(using: &random),
                        gracePeriodExpiresDate: Bool.random(using: &random) ? later : nil, signedDate: date,
                        source: .simulator))
            case 6:
                let id = timeline.buy(F.monthPass, on: date)
                if revoke { timeline.revoke(id, on: later) }
            default:
                let id = timeline.buy(
                    "unknown.\(Int.random(in: 0..<3, using: &random))", on: date,
                    expires: Bool.random(using: &random) ? later : nil)
                if revoke { timeline.revoke(id, on: later) }
            }
        }
        timeline.engine.policy.defaultNonRenewingDuration = SubscriptionPeriod(value: 1, unit: .month)
        self.moments = moments.map { Timeline.day(Double($0)) }
    }

    var description: String { "\(timeline.records.count) records, \(timeline.consumptions.count) consumptions" }
}

private let histories = Gen.int(in: 0...Int.max).array(of: 0...40).map { codes in
    RandomHistory(codes: codes, moments: codes.prefix(4).map { $0 % 260 } + [250])
}

@Suite("Entitlements: invariants over random histories")
struct EntitlementPropertyTests {
    @Test func balancesAreNeverNegativeAndAddUp() {
        forAll(seed: 1, histories) { history, comment in
            for moment in history.moments {
                for balance in history.timeline.snapshot(at: moment).consumables {
                    #expect(balance.balance >= 0, comment)
                    #expect(balance.history.allSatisfy { $0.balanceAfter >= 0 }, comment)
                    #expect(balance.history.last?.balanceAfter == balance.balance, comment)
                    #expect(
                        balance.balance == balance.purchased - balance.consumed - balance.refunded + balance.shortfall,
                        comment)
                }
            }
        }
    }

    @Test func refundedPurchasesNeverGrant() {
        forAll(seed: 2, histories) { history, comment in
            for moment in history.moments {
                let snapshot = history.timeline.snapshot(at: moment)
                let revoked = Set(history.timeline.records.filter { $0.isRevoked(at: moment) }.map(\.transactionID))
                #expect(Set(snapshot.revokedTransactions.map(\.transactionID)) == revoked, comment)
                #expect(revoked.isDisjoint(with: snapshot.nonConsumables.map(\.transactionID)), comment)
                #expect(revoked.isDisjoint(with: snapshot.nonRenewingSubscriptions.flatMap(\.transactionIDs)), comment)
                #expect(revoked.isDisjoint(with: snapshot.unclassified.map(\.transactionID)), comment)
                for group in snapshot.subscriptionGroups where group.isEntitled {
                    #expect(!revoked.contains(group.currentTransactionID ?? ""), comment)
                }
                // Taking the revoked records away never takes an entitlement away.
                var without = history.timeline
                without.records.removeAll { revoked.contains($0.transactionID) }
                #expect(
                    snapshot.entitledProductIDs.isSubset(of: without.snapshot(at: moment).entitledProductIDs), comment)
            }
        }
    }

    @Test func theOrderRecordsArriveInDoesNotMatter() {
        forAll(seed: 3, histories) { history, comment in
            var shuffled = history.timeline
            var random = SeededGenerator(seed: UInt64(history.timeline.records.count))
            shuffled.records = (shuffled.records + shuffled.records.prefix(3)).shuffled(using: &random)
            shuffled.renewals.shuffle(using: &random)
            shuffled.consumptions.shuffle(using: &random)
            for moment in history.moments {
                #expect(shuffled.snapshot(at: moment) == history.timeline.snapshot(at: moment), comment)
            }
        }
    }

    @Test func atMostOneCurrentProductPerGroupAndItIsTheHighestActive() {
        forAll(seed: 4, histories) { history, comment in
            for moment in history.moments {
                let snapshot = history.timeline.snapshot(at: moment)
                let vip = Set(FloristCatalog.catalog.group(F.vipGroup)!.productIDs)
                #expect(snapshot.entitledProductIDs.intersection(vip).count <= 1, comment)
                #expect(snapshot.subscriptionGroups.filter { $0.groupID != nil }.count <= 1, comment)
                guard let group = snapshot.group(F.vipGroup), group.state == .subscribed else { continue }
                let upgraded = Set(group.upgradedTransactionIDs)
                let active = history.timeline.records.filter {
                    vip.contains($0.productID) && $0.purchaseDate <= moment && moment < $0.expiresDate!
                        && !$0.isRevoked(at: moment) && !upgraded.contains($0.transactionID)
                }
                #expect(active.contains { $0.transactionID == group.currentTransactionID }, comment)
                let level = { FloristCatalog.catalog.product($0)!.subscription!.level }
                #expect(active.allSatisfy { level($0.productID) >= group.serviceLevel! }, comment)
            }
        }
    }
}
