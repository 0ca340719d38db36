import Foundation
import Hummingbird
import IAPCatalog
import IAPEntitlements

/// What a customer owned when: the entitlement engine asked at every moment the stored records change something (a
/// purchase, an expiry, a revocation), kept where the answer changes. The customers page draws it. Read from the
/// customer's compact history, so a long history costs what a short one does: the moments before its last fold, and
/// all but the latest ``maximumMoments``, are left out (``truncated``).
struct CustomerTimeline: Encodable {
    /// One stretch of time with the same products entitled.
    struct Stretch: Encodable {
        var from: Date
        var entitledProductIds: [String]
        var gained: [String]
        var lost: [String]
    }

    /// The moments looked at are bounded: the latest ones are kept.
    static let maximumMoments = 200

    var stretches: [Stretch]
    /// Whether older moments were left out.
    var truncated: Bool

    init(history: CompactHistory, engine: EntitlementEngine, now: Date) {
        var moments = Set<Date>()
        for record in history.history.records {
            moments.insert(record.purchaseDate)
            if let expires = record.expiresDate { moments.insert(expires) }
            if let revoked = record.revocation?.date { moments.insert(revoked) }
        }
        let start = history.foldedAt ?? .distantPast
        let sorted = moments.filter { $0 <= now && $0 >= start }.sorted()
        truncated = sorted.count > Self.maximumMoments || history.foldedAt != nil
        var stretches: [Stretch] = []
        var previous: Set<String> = []
        for moment in sorted.suffix(Self.maximumMoments) {
            guard let snapshot = engine.snapshot(of: history, at: moment) else { continue }
            let entitled = snapshot.entitledProductIDs
            guard entitled != previous else { continue }
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

/// A customer as the customers page shows it: what they own now, their latest transactions, and the timeline.
struct CustomerView: ResponseEncodable {
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
    /// The service's moment the view is of (the store's clock when simulated): the page says dates relative to it.
    var now: Date
    /// What they bought and spent (by currency, refunds left out), their storefront and last purchase.
    var summary: CustomerSummary?
    var entitledProductIds: [String]
    var entitlements: EntitlementSnapshot
    /// The newest ``shownTransactions``; the rest are at `/v1/customers/{id}/transactions`.
    var transactions: [Transaction]
    /// Whether there are older transactions than those listed.
    var moreTransactions: Bool
    var timeline: CustomerTimeline
    /// The newest webhook deliveries of the customer's events (none when the app has no webhooks).
    var deliveries: [DeliveryList.Item]
    /// The newest notifications about their purchases (``shownNotifications``; the log has every one).
    var notifications: [NotificationLogPage.Item]

    static let shownNotifications = 20

    static let shownTransactions = 100
}

extension ValidationService {
    /// The customers page's view of one customer.
    func customerView(_ customer: CustomerKey) async throws(ServiceError) -> CustomerView {
        let app = try app(bundleID: customer.bundleID)
        let digest: CustomerDigest
        do { digest = try await storage.digest(of: customer) } catch { throw .storage(error) }
        let snapshot = try await snapshot(of: customer, digest, app: app)
        let newest = try await transactions(
            of: customer, after: nil, limit: CustomerView.shownTransactions + 1, newestFirst: true)
        let summary: CustomerSummary?
        do {
            summary = try await storage.customers(
                bundleID: customer.bundleID, after: nil, only: [customer.id], limit: 1
            ).first
        } catch {
            throw .storage(error)
        }
        let notifications = try await notificationLog(
            bundleID: customer.bundleID, outcome: nil, type: nil, subtype: nil, from: nil, to: nil,
            customer: customer.id, before: nil, limit: CustomerView.shownNotifications)
        return CustomerView(
            customerId: customer.id, bundleId: customer.bundleID, now: now, summary: summary,
            entitledProductIds: snapshot.entitledProductIDs.sorted(),
            entitlements: snapshot,
            transactions: newest.prefix(CustomerView.shownTransactions).map(\.record).sorted {
                $0.purchaseDate > $1.purchaseDate
            }.map { record in
                CustomerView.Transaction(
                    transactionId: record.transactionID, originalTransactionId: record.originalTransactionID,
                    productId: record.productID, kind: record.kind?.rawValue, purchaseDate: record.purchaseDate,
                    expiresDate: record.expiresDate, revocationDate: record.revocation?.date,
                    revocationReason: record.revocation?.reason, ownership: "\(record.ownership)",
                    source: "\(record.source)", signedDate: record.signedDate)
            },
            moreTransactions: newest.count > CustomerView.shownTransactions,
            timeline: CustomerTimeline(history: digest.history, engine: app.engine, now: now),
            deliveries: DeliveryList(
                try await deliveries(
                    DeliveryQuery(bundleID: customer.bundleID, customerID: customer.id, limit: 50))
            ).deliveries,
            notifications: notifications.items)
    }
}
