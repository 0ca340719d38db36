public import Foundation
public import IAPEntitlements

/// One customer of one app: whose purchases these are, as the server keys them.
///
/// The id is the app account token the app gave (a UUID string), or, for a customer the app never named, the original
/// transaction id of their first purchase.
public struct CustomerKey: Hashable, Sendable {
    public var bundleID: String
    public var id: String

    public init(bundleID: String, id: String) {
        self.bundleID = bundleID
        self.id = id
    }
}

/// One version of a transaction as the server keeps it: the newest signed version of each transaction id wins.
public struct StoredTransaction: Hashable, Sendable {
    public var transactionID: String
    public var originalTransactionID: String
    public var bundleID: String
    public var productID: String
    /// When this version was signed (for a receipt entry, the receipt's creation date): a version never replaces a
    /// newer one.
    public var signedDate: Date
    /// The signed transaction (compact JWS), or the base64 receipt it came from.
    public var document: String
    /// The customer the document itself names (its app account token), if any.
    public var appAccountToken: String?
    /// What the entitlement engine reads.
    public var record: PurchaseRecord

    public init(
        transactionID: String, originalTransactionID: String, bundleID: String, productID: String, signedDate: Date,
        document: String, appAccountToken: String?, record: PurchaseRecord
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.bundleID = bundleID
        self.productID = productID
        self.signedDate = signedDate
        self.document = document
        self.appAccountToken = appAccountToken
        self.record = record
    }
}

/// The newest signed renewal information of one subscription (one original transaction id).
public struct StoredRenewal: Hashable, Sendable {
    public var bundleID: String
    public var originalTransactionID: String
    public var signedDate: Date
    public var document: String
    public var record: RenewalRecord

    public init(
        bundleID: String, originalTransactionID: String, signedDate: Date, document: String, record: RenewalRecord
    ) {
        self.bundleID = bundleID
        self.originalTransactionID = originalTransactionID
        self.signedDate = signedDate
        self.document = document
        self.record = record
    }
}

/// An App Store Server Notification as received: kept whole, so state can be rebuilt from the log.
public struct StoredNotification: Hashable, Sendable {
    public var uuid: String
    public var bundleID: String
    public var type: String
    public var subtype: String?
    public var signedDate: Date
    public var receivedAt: Date
    /// The request body exactly as it arrived (`{"signedPayload": ...}`).
    public var body: String
    /// The original transaction the notification is about, when it carries a transaction.
    public var originalTransactionID: String?
    /// What the server did with it (nil for notifications stored before the log kept it).
    public var effect: NotificationEffect?
    /// How many times the App Store sent it again after the first (each a duplicate, recorded once).
    public var repeats: Int

    public init(
        uuid: String, bundleID: String, type: String, subtype: String?, signedDate: Date, receivedAt: Date,
        body: String,
        originalTransactionID: String? = nil, effect: NotificationEffect? = nil, repeats: Int = 0
    ) {
        self.uuid = uuid
        self.bundleID = bundleID
        self.type = type
        self.subtype = subtype
        self.signedDate = signedDate
        self.receivedAt = receivedAt
        self.body = body
        self.originalTransactionID = originalTransactionID
        self.effect = effect
        self.repeats = repeats
    }
}

/// What one verified document (or notification) adds: transactions and renewal information of one app.
public struct PurchaseBatch: Hashable, Sendable {
    /// Who claims these purchases. Nil (a notification) keeps the current owner of each original transaction id, or
    /// makes one from the transaction's app account token, else its original transaction id.
    public var claimant: String?
    public var transactions: [StoredTransaction]
    public var renewals: [StoredRenewal]
    /// What happens when the claimant claims a purchase another customer holds.
    public var policy: TransferPolicy

    public init(
        claimant: String?, transactions: [StoredTransaction], renewals: [StoredRenewal] = [],
        policy: TransferPolicy = .refuse
    ) {
        self.claimant = claimant
        self.transactions = transactions
        self.renewals = renewals
        self.policy = policy
    }

    /// The customer id a transaction gets when nobody claimed it.
    static func implicitOwner(of transaction: StoredTransaction) -> String {
        transaction.appAccountToken ?? transaction.originalTransactionID
    }
}

/// What an app does when a customer claims a purchase another customer holds (a restore on another account, the same
/// Apple ID signed in to a second account of the app).
public enum TransferPolicy: String, Hashable, Sendable, CaseIterable {
    /// Refused (409 `transactionClaimed`); nothing is recorded. The default.
    case refuse
    /// The purchase stays with its owner; the claimant's request succeeds without it.
    case keep
    /// The purchase moves to the claimant, with a `transfer` event.
    case transfer
}

/// What a login did.
public struct LoginOutcome: Hashable, Sendable {
    /// Whether an anonymous customer was merged in.
    public var merged: Bool
    /// The original transactions that moved.
    public var moved: [String]

    public init(merged: Bool, moved: [String]) {
        self.merged = merged
        self.moved = moved
    }
}

/// What recording a batch did.
public enum RecordOutcome: Hashable, Sendable {
    /// Recorded; the customers who own the batch's purchases now (one, for a claimed batch), and the compact history
    /// of the first of them once the batch is in, kept up to date in the same transaction (so the answer to a
    /// purchase costs no second trip to the database, and does not grow with the customer's history).
    case recorded(owners: [String], digest: CustomerDigest)
    /// Refused, nothing recorded: the original transaction is already claimed by another customer.
    case claimedByAnother(originalTransactionID: String, owner: String)
}

extension RecordOutcome {
    /// The owners, when the batch was recorded.
    public var owners: [String]? {
        if case .recorded(let owners, _) = self { owners } else { nil }
    }
}

/// A customer's history as the storage keeps it up to date for the engine: compact (`CompactHistory` of IAPEntitlements), with the
/// version a replacement must name so it never overwrites a newer one.
public struct CustomerDigest: Hashable, Sendable {
    public var history: CompactHistory
    public var version: Int64

    public init(history: CompactHistory, version: Int64) {
        self.history = history
        self.version = version
    }
}

/// Everything stored about one customer, ready for the engine.
public struct CustomerRecords: Hashable, Sendable {
    public var transactions: [StoredTransaction]
    public var renewals: [StoredRenewal]
    public var consumptions: [ConsumptionRecord]

    public init(
        transactions: [StoredTransaction] = [], renewals: [StoredRenewal] = [], consumptions: [ConsumptionRecord] = []
    ) {
        self.transactions = transactions
        self.renewals = renewals
        self.consumptions = consumptions
    }

    /// The history the entitlement engine reads.
    public var history: PurchaseHistory {
        PurchaseHistory(
            records: transactions.map(\.record), renewals: renewals.map(\.record), consumptions: consumptions)
    }
}

/// Counts for health checks and metrics.
public struct StorageCounts: Hashable, Sendable, Codable {
    public var transactions: Int
    public var notifications: Int
    public var customers: Int

    public init(transactions: Int, notifications: Int, customers: Int) {
        self.transactions = transactions
        self.notifications = notifications
        self.customers = customers
    }
}

/// Who sells for an app's local App Store on a database, how many times they said they were alive since they took
/// it (a holder whose beat stays still for a few seconds has stopped), and what its last beat said (the holder's
/// text: the store's clock and authority; empty before the first).
public struct SimulatorLease: Sendable, Equatable {
    public var holder: String
    public var beat: Int64
    public var note: String

    public init(holder: String, beat: Int64, note: String = "") {
        self.holder = holder
        self.beat = beat
        self.note = note
    }
}
