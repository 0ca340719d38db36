public import Foundation

/// A consumable's balance with the history that produced it.
public struct ConsumableBalance: Hashable, Sendable, Codable {
    public var productID: String
    /// Units bought (including ones later refunded).
    public var purchased: Int
    /// Units the app recorded as consumed.
    public var consumed: Int
    /// Units refunded.
    public var refunded: Int
    /// What is left to use: never below zero.
    public var balance: Int
    /// Units consumed or refunded when nothing was left (a refund after use, a consumption never bought): the
    /// customer's debt, which the balance does not carry forward.
    public var shortfall: Int
    /// The purchases, consumptions and refunds in time order, with the balance after each: every one, or, for a long
    /// history kept compact, the most recent ones after ``earlierEvents`` others that the totals include.
    public var history: [ConsumableEvent]
    /// How many events came before ``history`` (absent when it holds every one).
    public var earlierEvents: Int?

    public init(
        productID: String, purchased: Int, consumed: Int, refunded: Int, balance: Int, shortfall: Int,
        history: [ConsumableEvent], earlierEvents: Int? = nil
    ) {
        self.productID = productID
        self.purchased = purchased
        self.consumed = consumed
        self.refunded = refunded
        self.balance = balance
        self.shortfall = shortfall
        self.history = history
        self.earlierEvents = earlierEvents
    }
}

/// The totals of a consumable's events folded away by a ``CompactHistory``: where its balance starts from.
public struct ConsumableOpening: Hashable, Sendable, Codable {
    public var purchased = 0
    public var consumed = 0
    public var refunded = 0
    public var balance = 0
    public var shortfall = 0
    /// How many events were folded.
    public var events = 0
    /// Where the last folded event stands in the order events count: a later arrival must come after it.
    public var last: ConsumableEventKey?

    public init() {}
}

/// Where a consumable event stands in the order events count: by date, a purchase before a consumption before a
/// refund on the same date, then by transaction id and quantity.
public struct ConsumableEventKey: Hashable, Sendable, Codable, Comparable {
    public var date: Date
    public var order: Int
    public var transactionID: String
    public var quantity: Int

    public init(_ event: ConsumableEvent) {
        date = event.date
        order = event.kind == .purchase ? 0 : event.kind == .consumption ? 1 : 2
        transactionID = event.transactionID ?? ""
        quantity = event.quantity
    }

    public static func < (a: Self, b: Self) -> Bool {
        (a.date, a.order, a.transactionID, a.quantity) < (b.date, b.order, b.transactionID, b.quantity)
    }
}

/// One step of a consumable's history.
public struct ConsumableEvent: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable { case purchase, consumption, refund }
    public var date: Date
    public var kind: Kind
    public var quantity: Int
    public var transactionID: String?
    public var balanceAfter: Int

    public init(date: Date, kind: Kind, quantity: Int, transactionID: String?, balanceAfter: Int) {
        self.date = date
        self.kind = kind
        self.quantity = quantity
        self.transactionID = transactionID
        self.balanceAfter = balanceAfter
    }
}
