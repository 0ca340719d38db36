// Entitlement snapshot speed for a customer with 200 purchase records, against the least any engine must do with
// them (sort them by date), measured in the same run.
//
// Run from the Benchmarks folder, pinned to one core:
//   taskset -c 1 swift package --disable-sandbox benchmark --target EntitlementBenchmarks
import Benchmark
import Foundation
import IAPCatalog
import IAPEntitlements
import IAPReceipts

let start = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01
let month = SubscriptionPeriod(value: 1, unit: .month)

/// The florist's catalog: two keepsakes, a consumable service, a pass, and a VIP group of three levels.
let catalog = Catalog(
    products: [
        CatalogProduct(id: "flowers", kind: .nonConsumable),
        CatalogProduct(id: "chocolates", kind: .nonConsumable),
        CatalogProduct(id: "installation", kind: .consumable),
        CatalogProduct(id: "pass", kind: .nonRenewable),
        CatalogProduct(
            id: "gold", kind: .autoRenewable, subscription: SubscriptionInfo(groupID: "VIP", level: 1, period: month)),
        CatalogProduct(
            id: "silver", kind: .autoRenewable, subscription: SubscriptionInfo(groupID: "VIP", level: 2, period: month)),
        CatalogProduct(
            id: "bronze", kind: .autoRenewable, subscription: SubscriptionInfo(groupID: "VIP", level: 3, period: month)),
    ],
    subscriptionGroups: [SubscriptionGroup(id: "VIP", name: "VIP", productIDs: ["gold", "silver", "bronze"])])

/// 200 records over ten years: 120 monthly VIP periods moving between levels (with upgrades and two refunds),
/// 50 consumable purchases (some refunded), 20 one-time purchases (some shared by family, some refunded), 10 passes;
/// plus 60 consumption records and one renewal record.
func customer() -> (records: [PurchaseRecord], consumptions: [ConsumptionRecord], renewals: [RenewalRecord]) {
    var records: [PurchaseRecord] = []
    var id = 5_000_000
    func next() -> String { id += 1; return String(id) }
    let levels = ["bronze", "silver", "gold"]
    for period in 0..<120 {
        let purchase = month.advance(start, by: period)
        var record = PurchaseRecord(
            transactionID: next(), originalTransactionID: "5000001", productID: levels[(period / 10) % 3],
            purchaseDate: purchase, expiresDate: month.advance(purchase), source: .signedTransaction)
        if period % 10 == 9, period < 119, (period / 10) % 3 != 2 { record.isUpgraded = true }
        if period == 40 || period == 80 {
            record.revocation = Revocation(date: purchase.addingTimeInterval(86_400), kind: .refund)
        }
        if period == 0 { record.offer = OfferUse(kind: .introductory, isFreeTrial: true) }
        records.append(record)
    }
    for index in 0..<50 {
        var record = PurchaseRecord(
            transactionID: next(), productID: "installation", quantity: 1 + index % 3,
            purchaseDate: start.addingTimeInterval(Double(index) * 6 * 86_400), source: .receipt)
        if index % 7 == 0 {
            record.revocation = Revocation(date: record.purchaseDate.addingTimeInterval(3600), kind: .refund)
        }
        records.append(record)
    }
    for index in 0..<20 {
        var record = PurchaseRecord(
            transactionID: next(), productID: index % 2 == 0 ? "flowers" : "chocolates",
            purchaseDate: start.addingTimeInterval(Double(index) * 30 * 86_400),
            ownership: index % 3 == 0 ? .familyShared : .purchased, source: .signedTransaction)
        if index % 5 == 0 {
            record.revocation = Revocation(date: record.purchaseDate.addingTimeInterval(86_400), kind: .familyRevoke)
        }
        records.append(record)
    }
    for index in 0..<10 {
        records.append(
            PurchaseRecord(
                transactionID: next(), productID: "pass",
                purchaseDate: start.addingTimeInterval(Double(index) * 40 * 86_400),
                source: .simulator))
    }
    let consumptions = (0..<60).map {
        ConsumptionRecord(
            productID: "installation", date: start.addingTimeInterval(Double($0) * 5 * 86_400), id: "job-\($0)")
    }
    let renewals = [
        RenewalRecord(
            originalTransactionID: "5000001", autoRenewProductID: "silver", willAutoRenew: true,
            signedDate: month.advance(start, by: 119), source: .signedTransaction)
    ]
    var random = Seeded(state: 42)
    return (records.shuffled(using: &random), consumptions, renewals)
}

struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 100,
        maxDuration: .seconds(4),
        maxIterations: 1_000_000
    )

    let (records, consumptions, renewals) = customer()
    precondition(records.count == 200)
    let engine = EntitlementEngine(
        catalog: catalog, policy: EntitlementPolicy(nonRenewingDurations: ["pass": month]))
    let moment = month.advance(start, by: 119).addingTimeInterval(86_400)
    let check = engine.snapshot(records: records, renewals: renewals, consumptions: consumptions, at: moment)
    precondition(check.group("VIP")?.state == .subscribed && check.consumables.count == 1)

    Benchmark("Baseline: sort the 200 records by purchase date") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(records.sorted { $0.purchaseDate < $1.purchaseDate })
        }
    }

    Benchmark("Entitlement snapshot, 200 records + 60 consumptions, with catalog") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(engine.snapshot(records: records, renewals: renewals, consumptions: consumptions, at: moment))
        }
    }

    Benchmark("Entitlement snapshot, 200 records, no catalog") { benchmark in
        let bare = EntitlementEngine()
        for _ in benchmark.scaledIterations {
            blackHole(bare.snapshot(records: records, renewals: renewals, consumptions: consumptions, at: moment))
        }
    }

    // A real customer: the 187 five-minute sandbox periods of the shared corpus's largest receipt, when present.
    let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/testdata/receipts/tpinapp-receipt-sandbox-legacy.der")
    if let data = try? Data(contentsOf: corpus), let receipt = try? SignedReceipt(bytes: Array(data)).receipt {
        let real = PurchaseRecord.records(from: receipt)
        Benchmark("Entitlement snapshot, real 187-record sandbox receipt (records ready)") { benchmark in
            let bare = EntitlementEngine()
            for _ in benchmark.scaledIterations {
                blackHole(bare.snapshot(records: real, at: receipt.creationDate!))
            }
        }
    }
}
