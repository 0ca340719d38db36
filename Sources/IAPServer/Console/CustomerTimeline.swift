import Foundation
import IAPCatalog
import IAPEntitlements

/// What a customer owned when: the entitlement engine asked at every moment the stored records change something (a
/// purchase, an expiry, a revocation), kept where the answer changes. The customers page draws it.
struct CustomerTimeline: Encodable {
    /// One stretch of time with the same products entitled.
    struct Stretch: Encodable {
        var from: Date
        var entitledProductIds: [String]
        var gained: [String]
        var lost: [String]
    }

    /// The moments looked at are bounded: the latest ones are kept.
    static let maximumMoments = 500

    var stretches: [Stretch]
    /// Whether older moments were left out.
    var truncated: Bool

    init(history: PurchaseHistory, engine: EntitlementEngine, now: Date) {
        var moments = Set<Date>()
        for record in history.records {
            moments.insert(record.purchaseDate)
            if let expires = record.expiresDate { moments.insert(expires) }
            if let revoked = record.revocation?.date { moments.insert(revoked) }
        }
        let sorted = moments.filter { $0 <= now }.sorted()
        truncated = sorted.count > Self.maximumMoments
        var stretches: [Stretch] = []
        var previous: Set<String> = []
        for moment in sorted.suffix(Self.maximumMoments) {
            let entitled = engine.snapshot(of: history, at: moment).entitledProductIDs
            guard entitled != previous || stretches.isEmpty else { continue }
            stretches.append(
                Stretch(
                    from: moment, entitledProductIds: entitled.sorted(),
                    gained: entitled.subtracting(previous).sorted(),
                    lost: previous.subtracting(entitled).sorted()))
            previous = entitled
        }
        self.stretches = stretches
    }
}

/// A customer as the customers page shows it: what they own now, every stored transaction, and the timeline.
struct CustomerView: Encodable {
    struct Transaction: Encodable {
        var transactionId: String
        var originalTransactionId: String
        var productId: String
        var kind: String?
        var purchaseDate: Date
        var expiresDate: Date?
        var revocationDate: Date?
        var revocationReason: String?
        var ownership: String
        var source: String
        var signedDate: Date?
    }

    var customerId: String
    var bundleId: String
    var entitledProductIds: [String]
    var entitlements: EntitlementSnapshot
    var transactions: [Transaction]
    var timeline: CustomerTimeline
}

extension ValidationService {
    /// The customers page's view of one customer.
    func customerView(_ customer: CustomerKey) async throws(APIError) -> CustomerView {
        let app = try app(bundleID: customer.bundleID)
        let records = try await records(of: customer)
        let history = records.history
        let snapshot = app.engine.snapshot(of: history, at: now)
        return CustomerView(
            customerId: customer.id, bundleId: customer.bundleID,
            entitledProductIds: snapshot.entitledProductIDs.sorted(),
            entitlements: snapshot,
            transactions: history.records.sorted { $0.purchaseDate > $1.purchaseDate }.map { record in
                CustomerView.Transaction(
                    transactionId: record.transactionID, originalTransactionId: record.originalTransactionID,
                    productId: record.productID, kind: record.kind?.rawValue, purchaseDate: record.purchaseDate,
                    expiresDate: record.expiresDate, revocationDate: record.revocation?.date,
                    revocationReason: record.revocation?.reason, ownership: "\(record.ownership)",
                    source: "\(record.source)", signedDate: record.signedDate)
            },
            timeline: CustomerTimeline(history: history, engine: app.engine, now: now))
    }
}
