import Crypto
import Foundation
import IAPCatalog
import IAPEntitlements

/// What happened to a customer's purchases, as the app's backend hears it through its webhooks.
public enum OutboundEventType: String, Hashable, Sendable, Codable, CaseIterable {
    /// The first period of an auto-renewable subscription.
    case initialPurchase
    /// A later period of the same product.
    case renewal
    /// A later period of another product of the group (an upgrade, downgrade or crossgrade taking effect).
    case productChange
    /// The customer turned auto-renew off: the subscription ends with the period.
    case cancellation
    /// The customer turned auto-renew back on.
    case uncancellation
    /// A renewal payment failed; Apple keeps trying (billing retry).
    case billingIssue
    /// A renewal payment failed and the customer keeps access until the grace period ends.
    case gracePeriod
    /// The subscription ended (the renewal information states why).
    case expiration
    /// Apple refunded a purchase: it stops granting from the revocation date.
    case refund
    /// A refund was reversed: the purchase grants again.
    case refundReversed
    /// The family organizer's purchase stopped being shared with this family member.
    case familyRevocation
    /// A purchase moved to this customer from another.
    case transfer
    /// The current period was extended (a renewal-date extension).
    case `extension`
    /// A non-renewing subscription.
    case nonRenewingPurchase
    /// A consumable.
    case consumablePurchase
    /// A non-consumable.
    case nonConsumablePurchase
}

/// The JSON body of one event. Dates are ISO 8601 with milliseconds; `price` is in milli-units of `currency`, as
/// Apple signs it (never converted), present when the signed data has it.
struct OutboundEventBody: Encodable {
    struct Period: Encodable {
        var start: Date
        var end: Date?
    }
    var id: String
    var type: OutboundEventType
    var bundleId: String
    var customerId: String
    var productId: String?
    var transactionId: String?
    var originalTransactionId: String?
    var environment: String?
    /// When the change happened by the App Store's account (a purchase date, a revocation date, a signed date).
    var occurredAt: Date
    /// When the server recorded it.
    var recordedAt: Date
    var period: Period?
    var price: Int64?
    var currency: String?
    var storefront: String?
    var ownership: String?
    /// Why a subscription expired, or what a refund said.
    var reason: String?
    /// The customer this purchase came from (a transfer).
    var fromCustomerId: String?
    /// The moment (by the service's clock) the entitlements describe: the sender adds them as of then (nothing
    /// signed later counts), off the write that stored the event.
    var entitlementsAt: Date
}

/// What the sender adds to a stored event body before sending it: the customer's entitlements as of the change.
struct EventEntitlements: Encodable {
    var entitledProductIds: [String]
    var entitlements: EntitlementSnapshot

    /// The moment a stored body names (its last member, as the server writes it), read without decoding the rest
    /// (a JSON decode of the whole body cost a twentieth of a delivery).
    static func moment(in body: String) -> Date? {
        let key = #""entitlementsAt":""#
        guard let start = body.range(of: key, options: .backwards)?.upperBound,
            let end = body[start...].firstIndex(of: "\"")
        else { return nil }
        return DateFormat.parse(String(body[start..<end]))
    }

    /// `body` (a JSON object) with these two members added at its end.
    func appended(to body: String) -> String {
        guard body.hasSuffix("}"), let bytes = try? StreamingJSONEncoder().encode(self), bytes.count > 2 else {
            return body
        }
        let members = String(decoding: bytes.dropFirst().dropLast(), as: UTF8.self)
        return String(body.dropLast()) + (body.hasSuffix("{}") ? "" : ",") + members + "}"
    }
}

/// Turns what a write changed into events: the same change gives the same events (and ids) whether it came in a
/// post or in Apple's notification, and a document that changes nothing gives none.
struct EventDerivation: Sendable {
    let catalog: Catalog?
    /// The moment the entitlements are described at (the service's: a simulator's clock when simulated).
    let clock: @Sendable () -> Date
    /// The real moment events are stamped with (deliveries are scheduled by it).
    let wallClock: @Sendable () -> Date

    func events(_ change: RecordedChange) -> [OutboxEvent] {
        let now = change.recordedAt ?? wallClock()
        let moment = change.entitlementsAt ?? clock()
        var bodies: [OutboundEventBody] = []
        func add(
            _ type: OutboundEventType, _ transaction: StoredTransaction?, productID: String?,
            originalTransactionID: String?, occurredAt: Date, reason: String? = nil, from: String? = nil,
            subject: String
        ) {
            let record = transaction?.record
            bodies.append(
                OutboundEventBody(
                    id: Self.eventID(bundleID: change.customer.bundleID, type: type.rawValue, subject: subject),
                    type: type, bundleId: change.customer.bundleID, customerId: change.customer.id,
                    productId: productID, transactionId: transaction?.transactionID,
                    originalTransactionId: originalTransactionID, environment: record?.environment,
                    occurredAt: occurredAt, recordedAt: now,
                    period: record.map { .init(start: $0.purchaseDate, end: $0.expiresDate) },
                    price: record?.price, currency: record?.currency, storefront: record?.storefront,
                    ownership: record?.ownership.rawValue, reason: reason, fromCustomerId: from,
                    entitlementsAt: moment))
        }
        for replacement in change.transactions {
            let after = replacement.after
            let record = after.record
            let version = "\(after.transactionID)@\(Self.digest(after.document))"
            func transactionEvent(_ type: OutboundEventType, at date: Date, reason: String? = nil) {
                add(
                    type, after, productID: after.productID, originalTransactionID: after.originalTransactionID,
                    occurredAt: date, reason: reason, subject: version)
            }
            guard let before = replacement.before?.record else {
                transactionEvent(
                    purchaseType(of: after, previousProduct: change.previousProducts[after.transactionID]),
                    at: record.purchaseDate)
                if let revocation = record.revocation {
                    transactionEvent(revocationType(revocation), at: revocation.date, reason: revocation.reason)
                }
                continue
            }
            switch (before.revocation, record.revocation) {
            case (nil, let revocation?):
                transactionEvent(revocationType(revocation), at: revocation.date, reason: revocation.reason)
            case (.some, nil):
                transactionEvent(.refundReversed, at: after.signedDate)
            default:
                if let old = before.expiresDate, let new = record.expiresDate, new > old {
                    transactionEvent(.extension, at: after.signedDate)
                }
            }
        }
        for replacement in change.renewals {
            let after = replacement.after
            let renewal = after.record
            let before = replacement.before?.record
            let version = "renewal:\(after.originalTransactionID)@\(Self.digest(after.document))"
            let latest = change.transactions.last { $0.after.originalTransactionID == after.originalTransactionID }?
                .after
            func renewalEvent(_ type: OutboundEventType, reason: String? = nil) {
                add(
                    type, latest, productID: renewal.productID ?? latest?.productID,
                    originalTransactionID: after.originalTransactionID, occurredAt: after.signedDate, reason: reason,
                    subject: version)
            }
            if let before, before.willAutoRenew == true, renewal.willAutoRenew == false,
                renewal.expirationReason == nil
            {
                renewalEvent(.cancellation)
            }
            if let before, before.willAutoRenew == false, renewal.willAutoRenew == true {
                renewalEvent(.uncancellation)
            }
            if renewal.isInBillingRetry, before?.isInBillingRetry != true {
                renewalEvent(.billingIssue)
            }
            if let grace = renewal.gracePeriodExpiresDate, grace != before?.gracePeriodExpiresDate,
                grace > (before?.gracePeriodExpiresDate ?? .distantPast)
            {
                renewalEvent(.gracePeriod)
            }
            if let reason = renewal.expirationReason, before?.expirationReason == nil {
                renewalEvent(.expiration, reason: reason.rawValue)
            }
        }
        for transfer in change.transfers {
            // Not made from a document version: the moment makes its id (a purchase moved back and forth is two
            // transfers), and each is derived once, in the write that moved it.
            add(
                .transfer, nil, productID: transfer.productID, originalTransactionID: transfer.originalTransactionID,
                occurredAt: now, reason: transfer.reason, from: transfer.from,
                subject: "transfer:\(transfer.originalTransactionID):\(transfer.from)@\(now.timeIntervalSince1970)")
        }
        return bodies.map { body in
            let json = (try? StreamingJSONEncoder().encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            return OutboxEvent(
                id: body.id, bundleID: body.bundleId, customerID: body.customerId, type: body.type.rawValue,
                createdAt: now, body: json)
        }
    }

    /// A new transaction's event: by product kind, and for a subscription whether it is the first period, another of
    /// the same product, or of another product.
    private func purchaseType(of transaction: StoredTransaction, previousProduct: String?) -> OutboundEventType {
        let kind =
            transaction.record.kind ?? catalog?.products.first { $0.id == transaction.productID }?.kind
            ?? (transaction.record.expiresDate == nil ? .nonConsumable : .autoRenewable)
        switch kind {
        case .consumable: return .consumablePurchase
        case .nonConsumable: return .nonConsumablePurchase
        case .nonRenewable: return .nonRenewingPurchase
        case .autoRenewable:
            if transaction.transactionID == transaction.originalTransactionID { return .initialPurchase }
            if let previousProduct, previousProduct != transaction.productID { return .productChange }
            return .renewal
        }
    }

    private func revocationType(_ revocation: Revocation) -> OutboundEventType {
        revocation.kind == .familyRevoke ? .familyRevocation : .refund
    }

    /// An event's id: a digest of the app, the type and the version of the document that made it, so the same change
    /// derived twice (by two instances, or by a post and a notification carrying the same version) is stored once.
    static func eventID(bundleID: String, type: String, subject: String) -> String {
        "evt_" + hex(SHA256.hash(data: Data("\(bundleID)\u{0}\(type)\u{0}\(subject)".utf8)).prefix(16))
    }

    private static func digest(_ document: String) -> String {
        hex(SHA256.hash(data: Data(document.utf8)).prefix(12))
    }

    /// Lowercase hex (`String(format:)` per byte cost more than the hash).
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
