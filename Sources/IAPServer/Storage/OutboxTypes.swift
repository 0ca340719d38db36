public import Foundation

/// A version a write stored, with the one it replaced (nil: the first version stored).
public struct Replacement<Value: Hashable & Sendable>: Hashable, Sendable {
    public var before: Value?
    public var after: Value

    public init(before: Value?, after: Value) {
        self.before = before
        self.after = after
    }
}

/// What one write changed for one customer: the transaction and renewal versions it stored, in the order written. Only versions that replaced a stored one (or were new) are listed:
/// a document posted again, or an older version arriving late, changes nothing and is not here.
public struct RecordedChange: Hashable, Sendable {
    public var customer: CustomerKey
    public var transactions: [Replacement<StoredTransaction>]
    /// For a new transaction of a subscription that is not its first, the product of the stored transaction before
    /// it in the same subscription (by transaction id), keyed by the new transaction's id: tells a renewal from a
    /// change of plan.
    public var previousProducts: [String: String]
    public var renewals: [Replacement<StoredRenewal>]
    /// Purchases that moved to this customer from another (a transfer policy, or a login merging an anonymous
    /// customer in).
    public var transfers: [Transfer]
    /// When the write happened, for a change announced after it (nil: it is happening now).
    public var recordedAt: Date?
    /// The moment, by the service's clock, the entitlements sent with its events describe (nil: now).
    public var entitlementsAt: Date?

    public init(
        customer: CustomerKey, transactions: [Replacement<StoredTransaction>], previousProducts: [String: String],
        renewals: [Replacement<StoredRenewal>], transfers: [Transfer] = [], recordedAt: Date? = nil,
        entitlementsAt: Date? = nil
    ) {
        self.customer = customer
        self.transactions = transactions
        self.previousProducts = previousProducts
        self.renewals = renewals
        self.transfers = transfers
        self.recordedAt = recordedAt
        self.entitlementsAt = entitlementsAt
    }

    public var isEmpty: Bool { transactions.isEmpty && renewals.isEmpty && transfers.isEmpty }
}

/// A purchase (an original transaction) that moved from one customer to another.
public struct Transfer: Hashable, Sendable {
    public var originalTransactionID: String
    /// The product of its latest stored transaction.
    public var productID: String?
    public var from: String
    /// Why: `restore` (a claim under the transfer policy) or `login` (an anonymous customer merged in).
    public var reason: String

    public init(originalTransactionID: String, productID: String?, from: String, reason: String) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.from = from
        self.reason = reason
    }
}

/// An event for an app's backend, as the outbox keeps it: the body is final (signed and sent as it is).
public struct OutboxEvent: Hashable, Sendable {
    /// Stable for one change: the same change derived twice has the same id, and is stored once.
    public var id: String
    public var bundleID: String
    public var customerID: String
    public var type: String
    public var createdAt: Date
    /// The JSON sent to the webhooks.
    public var body: String
    /// When to stop trying (nil: the sender's retry window after ``createdAt``): Apple's deadline for an answer to a
    /// consumption request.
    public var giveUpAt: Date?

    public init(
        id: String, bundleID: String, customerID: String, type: String, createdAt: Date, body: String,
        giveUpAt: Date? = nil
    ) {
        self.id = id
        self.bundleID = bundleID
        self.customerID = customerID
        self.type = type
        self.createdAt = createdAt
        self.body = body
        self.giveUpAt = giveUpAt
    }
}

/// An event for the outbox made outside a write's changes (an answer to Apple's consumption request), with where it
/// goes.
public struct QueuedEvent: Hashable, Sendable {
    public var event: OutboxEvent
    public var endpoints: [String]

    public init(event: OutboxEvent, endpoints: [String]) {
        self.event = event
        self.endpoints = endpoints
    }
}

/// What turns a write into outbox events, passed to the storage with the write: the storage calls it inside the
/// write's transaction, so an event is stored exactly when its change is (never one without the other).
///
/// An announcer that `defers` lets SQL storage leave a write that only adds new transactions unannounced: the rows
/// are marked in the write (a column of the row itself, so the write pays almost nothing), and their events are
/// derived after it, by ``ServerStorage/announceDeferred(by:limit:)`` (the webhook sender calls it before each lease)
/// or by the next write that changes the same customer's purchases in any other way (which announces them first, so
/// the customer's events keep their order).
public struct EventAnnouncer: Sendable {
    /// The webhook endpoints of an app (none: the app announces nothing, and its writes pay nothing for events).
    public var endpoints: @Sendable (_ bundleID: String) -> [String]
    /// The events a change makes.
    public var events: @Sendable (RecordedChange) -> [OutboxEvent]
    /// Whether writes of new transactions only may be announced after they commit.
    public var defers: Bool
    /// The moment of a write (the real one) and the moment its entitlements are described at (the service's clock),
    /// kept with a deferred write.
    public var moments: @Sendable () -> (recordedAt: Date, entitlementsAt: Date)

    public init(
        endpoints: @escaping @Sendable (String) -> [String],
        events: @escaping @Sendable (RecordedChange) -> [OutboxEvent],
        defers: Bool = false,
        moments: @escaping @Sendable () -> (recordedAt: Date, entitlementsAt: Date) = { (Date(), Date()) }
    ) {
        self.endpoints = endpoints
        self.events = events
        self.defers = defers
        self.moments = moments
    }
}

/// Where one event stands with one endpoint.
public enum DeliveryState: String, Hashable, Sendable, Codable {
    /// Not delivered yet: due at its next attempt.
    case pending
    /// The endpoint answered 2xx.
    case delivered
    /// Given up: every attempt failed until the retry window closed. A retry from the console makes it pending.
    case failed
}

/// One event leased to one sender for one endpoint: nobody else sends it until the lease ends.
public struct LeasedDelivery: Hashable, Sendable {
    public var event: OutboxEvent
    public var endpoint: String
    /// Attempts made before this one.
    public var attempts: Int
    /// Where the event stands in the outbox (the key its deliveries are found by in SQL storage; 0 in memory).
    public var sequence: Int64 = 0
}

/// One try at sending an event to an endpoint.
public struct DeliveryAttempt: Hashable, Sendable, Codable {
    public var number: Int
    public var startedAt: Date
    /// The endpoint's status, when it answered.
    public var status: Int?
    /// Why the attempt failed, when it did.
    public var error: String?
    public var milliseconds: Int
    /// The server instance that made it.
    public var instance: String

    public init(number: Int, startedAt: Date, status: Int?, error: String?, milliseconds: Int, instance: String) {
        self.number = number
        self.startedAt = startedAt
        self.status = status
        self.error = error
        self.milliseconds = milliseconds
        self.instance = instance
    }
}

/// What a sender reports for a leased delivery.
public struct DeliveryReport: Hashable, Sendable {
    public var delivery: LeasedDelivery
    public var attempt: DeliveryAttempt
    /// Delivered, pending again (with ``nextAttempt``), or failed for good.
    public var state: DeliveryState
    public var nextAttempt: Date?

    public init(delivery: LeasedDelivery, attempt: DeliveryAttempt, state: DeliveryState, nextAttempt: Date?) {
        self.delivery = delivery
        self.attempt = attempt
        self.state = state
        self.nextAttempt = nextAttempt
    }
}

/// An event with one endpoint, as the console shows it.
public struct DeliveryRecord: Hashable, Sendable {
    public var event: OutboxEvent
    public var endpoint: String
    public var state: DeliveryState
    public var nextAttempt: Date?
    public var deliveredAt: Date?
    public var attempts: [DeliveryAttempt]

    public init(
        event: OutboxEvent, endpoint: String, state: DeliveryState, nextAttempt: Date?, deliveredAt: Date?,
        attempts: [DeliveryAttempt]
    ) {
        self.event = event
        self.endpoint = endpoint
        self.state = state
        self.nextAttempt = nextAttempt
        self.deliveredAt = deliveredAt
        self.attempts = attempts
    }
}

/// Which deliveries the console asks for.
public struct DeliveryQuery: Hashable, Sendable {
    public var bundleID: String?
    public var customerID: String?
    public var state: DeliveryState?
    /// The event's type (`purchase`, `renewal`, ...).
    public var eventType: String?
    /// Events created at or after.
    public var from: Date?
    /// Events created before.
    public var to: Date?
    public var limit: Int

    public init(
        bundleID: String? = nil, customerID: String? = nil, state: DeliveryState? = nil, eventType: String? = nil,
        from: Date? = nil, to: Date? = nil, limit: Int = 100
    ) {
        self.bundleID = bundleID
        self.customerID = customerID
        self.state = state
        self.eventType = eventType
        self.from = from
        self.to = to
        self.limit = limit
    }

    /// Whether an event of a delivery in `state` passes the filters.
    func admits(_ event: OutboxEvent, state: DeliveryState) -> Bool {
        (bundleID == nil || event.bundleID == bundleID) && (customerID == nil || event.customerID == customerID)
            && (self.state == nil || state == self.state) && (eventType == nil || event.type == eventType)
            && (from.map { event.createdAt >= $0 } ?? true) && (to.map { event.createdAt < $0 } ?? true)
    }
}
