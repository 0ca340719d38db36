import Foundation
import IAPCatalog
import IAPEntitlements
import IAPTestSupport

/// A customer's purchase history written as a story: buy, renew, refund, consume... then ask the engine.
struct Timeline {
    var records: [PurchaseRecord] = []
    var renewals: [RenewalRecord] = []
    var consumptions: [ConsumptionRecord] = []
    var originalAppVersion: String?
    var engine = EntitlementEngine(catalog: FloristCatalog.catalog)
    private var nextTransaction = 1000

    /// 2026-01-01 00:00 UTC.
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    static func day(_ n: Double) -> Date { start.addingTimeInterval(n * 86_400) }

    static func month(_ n: Int) -> Date { SubscriptionPeriod(value: 1, unit: .month).advance(start, by: n) }

    func snapshot(at date: Date) -> EntitlementSnapshot {
        engine.snapshot(
            records: records, renewals: renewals, consumptions: consumptions,
            originalAppVersion: originalAppVersion, at: date)
    }

    func vip(at date: Date) -> SubscriptionGroupStatus? { snapshot(at: date).group(FloristCatalog.vipGroup) }

    @discardableResult
    mutating func buy(
        _ product: String, on date: Date, quantity: Int = 1, expires: Date? = nil, original: String? = nil,
        ownership: Ownership = .purchased, offer: OfferUse? = nil
    ) -> String {
        nextTransaction += 1
        let id = String(nextTransaction)
        records.append(
            PurchaseRecord(
                transactionID: id, originalTransactionID: original, productID: product, quantity: quantity,
                purchaseDate: date, expiresDate: expires, ownership: ownership, offer: offer, source: .simulator))
        return id
    }

    /// Starts a monthly (or `period`) subscription; returns the transaction id, which is also the original id.
    @discardableResult
    mutating func subscribe(
        _ product: String, on date: Date, period: SubscriptionPeriod = SubscriptionPeriod(value: 1, unit: .month),
        original: String? = nil, ownership: Ownership = .purchased, offer: OfferUse? = nil
    ) -> String {
        buy(product, on: date, expires: period.advance(date), original: original, ownership: ownership, offer: offer)
    }

    /// The next period of the subscription `original`, starting when its last period ended (or at `on`).
    @discardableResult
    mutating func renew(
        _ original: String, to product: String? = nil, on date: Date? = nil,
        period: SubscriptionPeriod = SubscriptionPeriod(value: 1, unit: .month)
    ) -> String {
        let last = records.last { $0.originalTransactionID == original }!
        let start = date ?? last.expiresDate!
        return subscribe(product ?? last.productID, on: start, period: period, original: original)
    }

    mutating func revoke(_ transaction: String, on date: Date, kind: Revocation.Kind = .refund, percentage: Int? = nil)
    {
        let index = records.firstIndex { $0.transactionID == transaction }!
        records[index].revocation = Revocation(date: date, kind: kind, percentage: percentage)
    }

    mutating func markUpgraded(_ transaction: String) {
        let index = records.firstIndex { $0.transactionID == transaction }!
        records[index].isUpgraded = true
    }

    mutating func consume(_ product: String, _ quantity: Int = 1, on date: Date, id: String? = nil) {
        consumptions.append(ConsumptionRecord(productID: product, quantity: quantity, date: date, id: id))
    }

    mutating func renewalInfo(_ renewal: RenewalRecord) { renewals.append(renewal) }
}
