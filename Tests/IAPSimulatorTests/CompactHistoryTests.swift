import Foundation
import IAPCatalog
import IAPEntitlements
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Testing

/// A compact history answers what the whole history answers, for every moment from its last fold on: checked on
/// histories the local App Store makes (consumables bought, used and refunded; a subscription renewed, upgraded,
/// refunded and lapsed; non-consumables bought, refunded and bought again), folded at several moments and keeping
/// several lengths, and built up by appends between folds as a server builds it.
@Suite struct CompactHistoryTests {
    static let engine = EntitlementEngine(catalog: FloristCatalog.catalog)

    /// A long, varied history of one customer, and the consumptions the app recorded.
    static func history() async throws -> (history: PurchaseHistory, end: Date, start: Date) {
        let harness = try SimulatorHarness()
        let store = harness.store
        try harness.customer("ana")
        let start = try store.now
        var consumptions: [ConsumptionRecord] = []
        _ = try store.purchase(FloristCatalog.bronze, account: "ana")
        for month in 0..<14 {
            for round in 0..<4 {
                let bought = try store.purchase(
                    FloristCatalog.installation, account: "ana", options: PurchaseOptions(quantity: 1 + round % 3))
                if round == 2, month % 3 == 0, let id = bought.transaction?.transactionID {
                    try store.refund(id)
                }
                try store.advance(by: 86_400 * 3)
                consumptions.append(
                    ConsumptionRecord(
                        productID: FloristCatalog.installation, quantity: round % 2 == 0 ? 1 : 2, date: try store.now,
                        id: "use-\(month)-\(round)"))
            }
            if month == 3 { _ = try store.purchase(FloristCatalog.silver, account: "ana") }
            if month == 5 { _ = try store.purchase(FloristCatalog.gold, account: "ana") }
            if month == 4 {
                let flowers = try store.purchase(FloristCatalog.flowers, account: "ana")
                try store.refund(try #require(flowers.transaction).transactionID)
            }
            if month == 6 { _ = try store.purchase(FloristCatalog.flowers, account: "ana") }
            if month == 7, let gold = try store.latestTransaction(account: "ana", productID: FloristCatalog.gold) {
                try store.refund(gold.transactionID)
            }
            if month == 8 { _ = try store.purchase(FloristCatalog.gold, account: "ana") }
            if month == 11 { try store.setAutoRenew(account: "ana", group: FloristCatalog.vipGroup, enabled: false) }
            try store.advance(by: 86_400 * 18)
        }
        _ = try store.purchase(FloristCatalog.monthPass, account: "ana")
        var history = try await store.readSignedData(account: "ana").history
        history.consumptions = consumptions
        return (history, try store.now, start)
    }

    /// The compact snapshot against the whole one: equal, except that lists of a long history start later.
    static func expectSame(
        _ compact: EntitlementSnapshot, _ whole: EntitlementSnapshot, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            compact.nonConsumables == whole.nonConsumables, "\(what): non-consumables", sourceLocation: sourceLocation)
        #expect(
            compact.nonRenewingSubscriptions == whole.nonRenewingSubscriptions, "\(what): passes",
            sourceLocation: sourceLocation)
        #expect(compact.unclassified == whole.unclassified, sourceLocation: sourceLocation)
        var groups = compact.subscriptionGroups
        var wholeGroups = whole.subscriptionGroups
        for index in groups.indices { groups[index].upgradedTransactionIDs.sort() }
        for index in wholeGroups.indices { wholeGroups[index].upgradedTransactionIDs.sort() }
        #expect(groups == wholeGroups, "\(what): subscription groups", sourceLocation: sourceLocation)
        #expect(compact.consumables.count == whole.consumables.count, sourceLocation: sourceLocation)
        for (mine, theirs) in zip(compact.consumables, whole.consumables) {
            let totals: [Int] = [mine.purchased, mine.consumed, mine.refunded, mine.balance, mine.shortfall]
            let wholeTotals: [Int] = [
                theirs.purchased, theirs.consumed, theirs.refunded, theirs.balance, theirs.shortfall,
            ]
            #expect(totals == wholeTotals, "\(what): \(mine.productID)'s totals", sourceLocation: sourceLocation)
            let earlier = mine.earlierEvents ?? 0
            #expect(earlier + mine.history.count == theirs.history.count, sourceLocation: sourceLocation)
            #expect(
                mine.history == Array(theirs.history.suffix(mine.history.count)),
                "\(what): the recent events, balances included", sourceLocation: sourceLocation)
        }
        let earlier = compact.earlierRevocations ?? 0
        #expect(
            earlier + compact.revokedTransactions.count == whole.revokedTransactions.count,
            sourceLocation: sourceLocation)
        if earlier == 0 {
            #expect(
                Set(compact.revokedTransactions) == Set(whole.revokedTransactions), "\(what): revocations",
                sourceLocation: sourceLocation)
        }
    }

    @Test func aFoldedHistoryAnswersWhatTheWholeOneDoes() async throws {
        let (history, end, start) = try await Self.history()
        #expect(history.records.count > 60, "a long history: \(history.records.count) records")
        let span = end.timeIntervalSince(start)
        for fraction in [0.3, 0.6, 1.0] {
            let foldMoment = start.addingTimeInterval(span * fraction)
            for keeping in [0, 1, 3, 20] {
                let compact = Self.engine.compacted(CompactHistory(history), at: foldMoment, keeping: keeping)
                if fraction == 1.0, keeping <= 3 {
                    #expect(compact.keptCount < history.records.count / 2, "folding keeps little: \(compact.keptCount)")
                    #expect(compact.openings[FloristCatalog.installation].map { $0.events > 100 } == true)
                    #expect(compact.foldedRevocationCount >= 5, "refunded consumables and periods fold too")
                    let periods = compact.history.records.filter { $0.kind == .autoRenewable }.count
                    let allPeriods = history.records.filter { $0.kind == .autoRenewable }.count
                    #expect(periods < allPeriods, "ended periods fold: \(periods) of \(allPeriods) kept")
                }
                for later: TimeInterval in [0, 86_400 * 10, 86_400 * 400] {
                    let moment = foldMoment.addingTimeInterval(later)
                    let whole = Self.engine.snapshot(of: history, at: moment)
                    let folded = try #require(Self.engine.snapshot(of: compact, at: moment))
                    Self.expectSame(
                        folded, whole, "folded at \(fraction), keeping \(keeping), +\(Int(later / 86_400)) d")
                }
                #expect(Self.engine.snapshot(of: compact, at: foldMoment.addingTimeInterval(-1)) == nil)
            }
        }
    }

    @Test func appendsBetweenFoldsAnswerWhatTheWholeHistoryDoes() async throws {
        let (history, _, _) = try await Self.history()
        // Arrivals in time order, as a server records them, folding after every ten.
        let records = history.records.sorted {
            ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID)
        }
        var compact = CompactHistory()
        var seen = PurchaseHistory()
        var appended = 0
        var rebuilt = 0
        for (index, record) in records.enumerated() {
            let uses = history.consumptions.filter {
                $0.date < record.purchaseDate && !seen.consumptions.contains($0)
            }
            seen.records.append(record)
            seen.consumptions += uses
            let moment = record.purchaseDate
            if compact.append(records: [record], consumptions: uses) {
                appended += 1
            } else {
                compact = CompactHistory(seen)
                rebuilt += 1
            }
            if index % 10 == 9 { compact = Self.engine.compacted(compact, at: moment, keeping: 2) }
            let whole = Self.engine.snapshot(of: seen, at: moment)
            let folded = try #require(Self.engine.snapshot(of: compact, at: moment))
            Self.expectSame(folded, whole, "after \(index + 1) arrivals")
        }
        #expect(appended > rebuilt * 4, "arrivals in order append: \(appended) appended, \(rebuilt) rebuilt")
    }

    @Test func anArrivalReachingIntoTheFoldedPastIsRefused() {
        let early = Date(timeIntervalSince1970: 1_000_000)
        func consumable(_ id: String, _ date: Date) -> PurchaseRecord {
            PurchaseRecord(
                transactionID: id, originalTransactionID: id, productID: FloristCatalog.installation,
                kind: .consumable, quantity: 1, purchaseDate: date, source: .signedTransaction)
        }
        let history = PurchaseHistory(
            records: (0..<10).map { consumable("\($0)", early.addingTimeInterval(Double($0))) })
        var compact = Self.engine.compacted(CompactHistory(history), at: early.addingTimeInterval(100), keeping: 2)
        #expect(
            compact.openings[FloristCatalog.installation]?.last?.date == early.addingTimeInterval(7),
            "eight of ten folded, two kept")
        let late = compact.append(records: [consumable("late", early.addingTimeInterval(3))])
        #expect(!late, "dated inside what was folded")
        let new = compact.append(records: [consumable("new", early.addingTimeInterval(200))])
        #expect(new)
        let snapshot = Self.engine.snapshot(of: compact, at: early.addingTimeInterval(300))
        #expect(snapshot?.balance(of: FloristCatalog.installation) == 11)
        #expect(snapshot?.consumables.first?.earlierEvents == 8)
    }

    /// On a frozen clock every purchase has the same date: the order events count in still puts each new one after
    /// those folded, so they append.
    @Test func arrivalsAtTheSameMomentAsTheFoldStillAppend() {
        let moment = Date(timeIntervalSince1970: 1_000_000)
        func consumable(_ id: Int) -> PurchaseRecord {
            PurchaseRecord(
                transactionID: String(2_000_000_000_000_000 + id), productID: FloristCatalog.installation,
                kind: .consumable, quantity: 1, purchaseDate: moment, source: .signedTransaction)
        }
        let history = PurchaseHistory(records: (0..<30).map(consumable))
        var compact = Self.engine.compacted(CompactHistory(history), at: moment, keeping: 5)
        let appended = compact.append(records: [consumable(30)])
        #expect(appended, "a later transaction id at the same moment counts after the folded ones")
        let earlier = compact.append(records: [consumable(3)])
        #expect(!earlier, "an earlier id at the same moment would count among them")
        #expect(Self.engine.snapshot(of: compact, at: moment)?.balance(of: FloristCatalog.installation) == 31)
    }
}
