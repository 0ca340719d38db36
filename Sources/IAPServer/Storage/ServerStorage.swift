public import Foundation
public import IAPCore
public import IAPEntitlements

/// Where the server keeps what it verified. Every backend (memory, SQLite, PostgreSQL) passes the same conformance
/// suite; each method is atomic (all of it happens, or none).
///
/// The rules every backend keeps:
/// - a transaction id is stored once; a newer signed version replaces an older one, never the reverse (equal dates:
///   the greater document wins, so the end state does not depend on arrival order);
/// - an original transaction id has one owner; a claim by another customer is refused, except that an owner the
///   server made up (nobody had claimed it) gives way to the first real claim;
/// - a notification UUID is recorded once per app, with what it carried, in the same step;
/// - a consumption is recorded once per idempotency key and customer;
/// - a customer's digest answers what their records answer (IAPEntitlements' `CompactHistory`), after every write.
public protocol ServerStorage: Sendable {
    /// Records a batch claimed by a customer (or by nobody, see ``PurchaseBatch/claimant``), with the events
    /// `announcer` makes of what it changed, in the same transaction.
    func record(_ batch: PurchaseBatch, announcing announcer: EventAnnouncer?) async throws(StorageError)
        -> RecordOutcome

    /// Records a notification and applies what it carried, once: false (and nothing changes) when its UUID is known.
    /// The events `announcer` makes of what changed are stored in the same transaction.
    /// `queued` events go into the outbox in the same transaction (only when the notification is new).
    func record(
        notification: StoredNotification, applying batch: PurchaseBatch, announcing announcer: EventAnnouncer?,
        queueing queued: [QueuedEvent]
    ) async throws(StorageError) -> Bool

    /// The customer of `bundleID` whose id is `id`, or who owns the original transaction id `id`.
    func customer(matching id: String, bundleID: String) async throws(StorageError) -> CustomerKey?

    /// Everything stored for a customer.
    func records(of customer: CustomerKey) async throws(StorageError) -> CustomerRecords

    /// One page of a customer's stored transactions in id order (numeric ids by value: shorter first, then as text),
    /// those after `cursor` (before it, newest first), at most `limit`.
    func transactions(of customer: CustomerKey, after cursor: String?, limit: Int, newestFirst: Bool)
        async throws(StorageError) -> [StoredTransaction]

    /// A customer's compact history, kept up to date by every write (built from every record the first time).
    func digest(of customer: CustomerKey) async throws(StorageError) -> CustomerDigest

    /// Replaces a customer's compact history with a folded one, unless it changed since `version` was read: false
    /// then, and nothing changes.
    func replaceDigest(_ history: CompactHistory, of customer: CustomerKey, version: Int64) async throws(StorageError)
        -> Bool

    /// Records a consumption under its id (the idempotency key): false when that id was already recorded.
    func record(consumption: ConsumptionRecord, for customer: CustomerKey) async throws(StorageError) -> Bool

    /// A stored notification of an app by UUID.
    func notification(uuid: String, bundleID: String) async throws(StorageError) -> StoredNotification?

    /// How much is stored.
    func counts() async throws(StorageError) -> StorageCounts

    /// The largest numeric transaction id stored for an app, if any: where a local App Store restarted on this
    /// database must continue counting, so its new transactions never collide with stored ones.
    func largestTransactionID(bundleID: String) async throws(StorageError) -> UInt64?

    /// Saves what a local App Store serving `bundleID` changed, all at once: its state document replaced, its
    /// transaction and notification rows inserted, replaced, or (rows without JSON) deleted. With `holder`, only while
    /// `holder` holds the store's lease (checked in the same transaction, so a save and a take-over never overlap):
    /// false, and nothing written, when another server took it.
    func saveSimulatorState(_ rows: SimulatorStateRows, bundleID: String, holder: String?)
        async throws(StorageError) -> Bool

    /// Everything saved of the local App Store serving `bundleID`, or nil when nothing was.
    func simulatorState(bundleID: String) async throws(StorageError) -> SimulatorStateRows?

    /// Takes the lease on `bundleID`'s local App Store for `holder` when nobody holds it, or when the lease is still
    /// exactly `stale` (a holder seen earlier that has not beaten since: stopped); answers the lease as it stands
    /// after, which `holder` holds when its holder is `holder`. One local App Store sells for an app on a database.
    func takeSimulatorLease(bundleID: String, holder: String, replacing stale: SimulatorLease?)
        async throws(StorageError) -> SimulatorLease

    /// Says `holder` is alive (its lease's beat moves on), with a `note` for the servers that do not sell (the store's
    /// clock and authority); false when the lease is not its own.
    func beatSimulatorLease(bundleID: String, holder: String, note: String) async throws(StorageError) -> Bool

    /// The lease on `bundleID`'s local App Store as it stands, nil when nobody holds it.
    func simulatorLease(bundleID: String) async throws(StorageError) -> SimulatorLease?

    /// Gives up the lease `holder` holds (a server that stops), so the next server takes it at once.
    func releaseSimulatorLease(bundleID: String, holder: String) async throws(StorageError)

    /// Logs `source` in as the customer `target`: `target` is marked as a customer who logged in, and when `source`
    /// is an anonymous customer (one who never logged in) its purchases and consumptions move to `target` and its id
    /// becomes an alias of `target` (naming either finds `target`), with a `transfer` event per purchase moved. From a
    /// customer who logged in before (switching accounts), nothing moves.
    func logIn(_ source: CustomerKey, as target: String, announcing announcer: EventAnnouncer?)
        async throws(StorageError) -> LoginOutcome

    // MARK: The console

    /// One app's figures over a span: purchases, new subscriptions, revenue and refunds by currency, churn, and the
    /// subscriptions active at its moment, in total, by product, by storefront and by day.
    func overview(_ query: OverviewQuery) async throws(StorageError) -> Overview

    /// An app's customers in id order, a page of at most `limit` after `after` (nil: from the first), or only those
    /// named in `only`; each with what they bought and spent.
    func customers(bundleID: String, after: String?, only: [String]?, limit: Int) async throws(StorageError)
        -> [CustomerSummary]

    /// The notification log: one app's recorded notifications, newest first, narrowed by the query's filters.
    func notifications(_ query: NotificationQuery) async throws(StorageError) -> [NotificationLogEntry]

    // MARK: The outbox

    /// Announces up to `limit` writes left unannounced by an announcer that ``EventAnnouncer/defers``, oldest first,
    /// each customer's in the order written: their events stored, the writes marked announced, in one transaction.
    /// Answers how many writes it announced (0: none was waiting). Storage that announces every write inside it (the
    /// memory storage) has none.
    func announceDeferred(by announcer: EventAnnouncer, limit: Int) async throws(StorageError) -> Int

    /// Leases up to `limit` deliveries due at `now` to `instance` until `leaseUntil`: of each customer's pending
    /// deliveries to an endpoint only the earliest (so a customer's events arrive in order), none another instance
    /// holds a live lease on. On PostgreSQL, instances leasing at once skip each other's rows (`FOR UPDATE SKIP
    /// LOCKED`).
    func leaseDeliveries(now: Date, leaseUntil: Date, instance: String, limit: Int) async throws(StorageError)
        -> [LeasedDelivery]

    /// Records what the sender saw: each attempt kept, the delivery delivered, pending again, or given up; the lease
    /// released.
    func finishDeliveries(_ reports: [DeliveryReport]) async throws(StorageError)

    /// Deliveries, newest event first, with their attempts.
    func deliveries(_ query: DeliveryQuery) async throws(StorageError) -> [DeliveryRecord]

    /// Makes an event's deliveries (to `endpoint`, or every endpoint) pending and due at `now`, whatever their state:
    /// how many there were.
    func retryDelivery(eventID: String, endpoint: String?, now: Date) async throws(StorageError) -> Int

    /// Closes connections; in-flight calls finish first.
    func shutdown() async throws(StorageError)
    /// Whether the storage can be read and written now: what `GET /ready` reports. Memory always can.
    func reachable() async -> Bool
}

extension ServerStorage {
    /// Saves what a local App Store changed, lease or not (a store that is the only one on its database).
    public func saveSimulatorState(_ rows: SimulatorStateRows, bundleID: String) async throws(StorageError) {
        _ = try await saveSimulatorState(rows, bundleID: bundleID, holder: nil)
    }

    public func announceDeferred(by announcer: EventAnnouncer, limit: Int) async throws(StorageError) -> Int { 0 }

    /// Records a batch, announcing nothing.
    public func record(_ batch: PurchaseBatch) async throws(StorageError) -> RecordOutcome {
        try await record(batch, announcing: nil)
    }

    /// Records a notification, announcing nothing.
    public func record(notification: StoredNotification, applying batch: PurchaseBatch) async throws(StorageError)
        -> Bool
    {
        try await record(notification: notification, applying: batch, announcing: nil, queueing: [])
    }

    /// Records a notification with the events of what it changed, queueing nothing else.
    public func record(
        notification: StoredNotification, applying batch: PurchaseBatch, announcing announcer: EventAnnouncer?
    ) async throws(StorageError) -> Bool {
        try await record(notification: notification, applying: batch, announcing: announcer, queueing: [])
    }
}

/// A storage failure: the database could not be reached or answered an error. Never caused by what a client sent.
public struct StorageError: CodedError, Sendable {
    public let code: String
    public let reason: String

    public init(code: String, reason: String) {
        self.code = code
        self.reason = reason
    }

    static func unavailable(_ error: any Error) -> StorageError {
        StorageError(code: "storageUnavailable", reason: "the database failed: \(String(describing: error))")
    }
}
