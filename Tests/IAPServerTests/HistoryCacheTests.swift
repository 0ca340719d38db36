import Foundation
import IAPEntitlements
import Testing

@testable import IAPServer

/// The histories a server remembers on PostgreSQL are bounded by the records they hold, not by how many there are.
@Suite struct HistoryCacheTests {
    static func digest(records count: Int) -> CustomerDigest {
        var history = PurchaseHistory()
        history.records = (0..<count).map { index in
            PurchaseRecord(
                transactionID: "t\(index)", productID: "p.coins",
                purchaseDate: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), source: .signedTransaction)
        }
        return CustomerDigest(history: CompactHistory(history), version: 0)
    }

    static func key(_ id: String) -> CustomerKey { CustomerKey(bundleID: "com.example.app", id: id) }

    func offered(_ cache: HistoryCache, _ id: String) -> HistoryCache.Offer? {
        cache.offer(bundleID: "com.example.app", originalTransactionID: "o-\(id)", claimant: id, implicitOwner: id)
    }

    @Test func manyShortHistoriesFitWhereAFewLongOnesWould() {
        let cache = HistoryCache(records: 100)
        for index in 0..<100 { cache.remember(Self.digest(records: 1), of: Self.key("c\(index)"), at: 1) }
        #expect(cache.held == (100, 100), "a hundred one-purchase customers fill a budget of 100 records")
        // A long history makes room for itself by giving up short ones, never more than it needs.
        cache.remember(Self.digest(records: 30), of: Self.key("long"), at: 7)
        #expect(cache.held == (71, 100))
        #expect(offered(cache, "long")?.version == 7)
        #expect(offered(cache, "long")?.digest.history.keptCount == 30)
    }

    @Test func rememberingACustomerAgainReplacesTheirWeight() {
        let cache = HistoryCache(records: 50)
        cache.remember(Self.digest(records: 10), of: Self.key("ana"), at: 1)
        cache.remember(Self.digest(records: 20), of: Self.key("ana"), at: 2)
        #expect(cache.held == (1, 20))
        #expect(offered(cache, "ana")?.version == 2)
        // A history heavier than the whole budget is not kept, and the one it replaces is gone (it is stale).
        cache.remember(Self.digest(records: 51), of: Self.key("ana"), at: 3)
        #expect(cache.held == (0, 0))
        #expect(offered(cache, "ana") == nil)
        // An empty history still weighs one.
        cache.remember(Self.digest(records: 0), of: Self.key("bo"), at: 1)
        #expect(cache.held == (1, 1))
    }

    /// A read and a write of one customer that finish out of order leave the later version remembered.
    @Test func anOlderVersionNeverReplacesANewerOne() {
        let cache = HistoryCache(records: 50)
        cache.remember(Self.digest(records: 3), of: Self.key("ana"), at: 5)
        cache.remember(Self.digest(records: 2), of: Self.key("ana"), at: 4)
        #expect(offered(cache, "ana")?.version == 5)
        #expect(offered(cache, "ana")?.digest.history.keptCount == 3)
        #expect(cache.held == (1, 3))
        cache.remember(Self.digest(records: 4), of: Self.key("ana"), at: 6)
        #expect(offered(cache, "ana")?.version == 6)
    }
}
