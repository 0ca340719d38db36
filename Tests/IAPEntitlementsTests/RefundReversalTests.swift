import Foundation
import IAPCatalog
import IAPEntitlements
import IAPTestSupport
import Testing

private typealias F = FloristCatalog

/// REFUND_REVERSED gives access back: of two statements about one transaction by the same kind of source, the later
/// one wins, whatever order they arrive in. And the one proration rule never traps.
struct RefundReversalTests {
    static let day: TimeInterval = 86_400
    static let start = Date(timeIntervalSince1970: 1_767_225_600)
    let engine = EntitlementEngine(catalog: FloristCatalog.catalog)

    /// The signed copy of the flowers purchase as stated on `day`, refunded on day 2 when `refunded`.
    func copy(statedOn day: Double, refunded: Bool) -> PurchaseRecord {
        PurchaseRecord(
            transactionID: "2000000000000001", productID: F.flowers, kind: .nonConsumable,
            purchaseDate: Self.start,
            revocation: refunded ? Revocation(date: Self.start.addingTimeInterval(2 * Self.day), kind: .refund) : nil,
            source: .signedTransaction, signedDate: Self.start.addingTimeInterval(day * Self.day))
    }

    @Test func theLaterStatementWinsInEveryOrder() {
        let purchase = copy(statedOn: 0, refunded: false)
        let refund = copy(statedOn: 2, refunded: true)
        let reversal = copy(statedOn: 5, refunded: false)
        let moment = Self.start.addingTimeInterval(10 * Self.day)
        for order in [[purchase, refund], [refund, purchase]] {
            #expect(!engine.snapshot(records: order, at: moment).isEntitled(to: F.flowers), "refunded")
        }
        let all = [purchase, refund, reversal]
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            let snapshot = engine.snapshot(records: order.map { all[$0] }, at: moment)
            #expect(snapshot.isEntitled(to: F.flowers), "reversed, order \(order)")
            #expect(snapshot.revokedTransactions.isEmpty)
        }
    }

    @Test func aRevocationStillWinsOverAnUndatedOrOtherSourceCopy() {
        // A receipt copy (another kind of source) that knows nothing of the refund does not undo it.
        var receiptCopy = copy(statedOn: 9, refunded: false)
        receiptCopy.source = .receipt
        let refund = copy(statedOn: 2, refunded: true)
        let moment = Self.start.addingTimeInterval(10 * Self.day)
        #expect(!engine.snapshot(records: [receiptCopy, refund], at: moment).isEntitled(to: F.flowers))
        var undated = copy(statedOn: 0, refunded: false)
        undated.signedDate = nil
        #expect(!engine.snapshot(records: [undated, refund], at: moment).isEntitled(to: F.flowers))
    }

    @Test func prorationIsIntegerArithmeticRoundedDown() {
        #expect(EntitlementEngine.proratedUnits(of: 3, milliPercent: 50_000) == 1)
        #expect(EntitlementEngine.proratedUnits(of: 10, milliPercent: 33_333) == 3)
        #expect(EntitlementEngine.proratedUnits(of: 4, milliPercent: 100_000) == 4)
        #expect(EntitlementEngine.proratedUnits(of: 4, milliPercent: 250_000) == 4, "clamped to everything")
        #expect(EntitlementEngine.proratedUnits(of: -5, milliPercent: 50_000) == 0)
        #expect(EntitlementEngine.proratedUnits(of: Int.max, milliPercent: 50_000) == Int.max / 2)
        #expect(EntitlementEngine.proratedUnits(of: Int.max, milliPercent: 100_000) == Int.max)
        #expect(EntitlementEngine.proratedUnits(of: Int.max, milliPercent: Int.min) == 0)
    }

    @Test func aProratedRefundOfTheLargestQuantityDoesNotTrap() {
        let record = PurchaseRecord(
            transactionID: "1", productID: F.installation, kind: .consumable, quantity: Int.max,
            purchaseDate: Self.start,
            revocation: Revocation(
                date: Self.start.addingTimeInterval(Self.day), kind: .proratedRefund, percentage: 50_000),
            source: .signedTransaction)
        let snapshot = engine.snapshot(records: [record], at: Self.start.addingTimeInterval(2 * Self.day))
        #expect(snapshot.balance(of: F.installation) == Int.max - Int.max / 2)
    }
}
