public import Foundation
import IAPCore

/// What the console's overview asks of the storage: one app, a span of time, and the moment subscriptions are
/// counted active at (the end of the span, or now when the span runs past it).
public struct OverviewQuery: Hashable, Sendable {
    public var bundleID: String
    /// The start of the span's first UTC day.
    public var from: Date
    /// The end of the span's last UTC day.
    public var to: Date
    public var now: Date

    /// The span is whole UTC days: from the start of `from`'s day to the end of the day before `to` (a `to` at
    /// midnight ends the day before it; any later moment ends its own day).
    public init(bundleID: String, from: Date, to: Date, now: Date) {
        let day = OverviewLine.millisecondsPerDay
        self.bundleID = bundleID
        self.from = Date(millisecondsSince1970: Overview.day(of: from) * day)
        self.to = Date(millisecondsSince1970: (Overview.day(of: to.addingTimeInterval(-0.001)) + 1) * day)
        self.now = now
    }

    /// When subscriptions are counted active, and until when they are counted as having ended.
    public var moment: Date { min(to, now) }
}

/// Figures for one slice of an overview (the whole span, a product, a storefront or a day). Money stays in the
/// currency it was paid in, in milli-units as Apple signs it: never converted.
public struct OverviewFigures: Hashable, Sendable, Codable {
    /// Transactions bought in the span (renewals included), refunded or not.
    public var purchases = 0
    /// First periods of subscriptions (free trials included).
    public var newSubscriptions = 0
    /// Subscriptions whose last period ended in the span (until now), not renewed since.
    public var churned = 0
    /// What was paid for the purchases, by currency.
    public var revenue: [String: Int64] = [:]
    /// Transactions refunded (or revoked) in the span, and what had been paid for them, by currency.
    public var refunds = 0
    public var refunded: [String: Int64] = [:]
    /// Subscriptions active at the overview's moment, and how many of them in a free trial (nil for a day).
    public var activeSubscriptions: Int?
    public var activeTrials: Int?

    public init() {}
}

/// One day (UTC) of an overview's span.
public struct OverviewDay: Hashable, Sendable, Codable {
    public var day: Date
    public var figures: OverviewFigures
}

/// The console's overview of one app over a span: totals, by product, by storefront and by day.
public struct Overview: Hashable, Sendable, Codable {
    public var bundleId: String
    public var from: Date
    public var to: Date
    /// The moment subscriptions are counted active at.
    public var at: Date
    /// Customers who paid for something in the span (a purchase with a price, not refunded).
    public var payingCustomers: Int
    public var totals: OverviewFigures
    public var products: [String: OverviewFigures]
    public var storefronts: [String: OverviewFigures]
    /// Every day of the span, oldest first, including days with nothing.
    public var days: [OverviewDay]
}

/// One grouped fact the storage found for an overview: the storage reads them (grouped in SQL, one per transaction in
/// memory) and ``Overview/init(_:lines:payingCustomers:)`` adds them up, so both storages count the same way.
struct OverviewLine: Sendable {
    enum Kind: Sendable {
        /// Bought in the span (`first`: a subscription's first period).
        case purchase(first: Bool)
        /// Refunded or revoked in the span.
        case refund
        /// The last period of a subscription ended in the span.
        case churn
        /// Active at the moment (`trials` of them in a free trial).
        case active(trials: Int)
    }
    var kind: Kind
    /// Days since 1970 (UTC) of the fact; nil for `active`.
    var day: Int64?
    var productID: String
    var storefront: String
    var currency: String
    var count: Int
    var amount: Int64

    static let millisecondsPerDay: Int64 = 86_400_000

    /// The most one purchase counts for in the console's sums: a billion of its currency (10^12 milliunits; a store
    /// that signs anything, the local App Store in development, lets a client claim any price). Negative prices count
    /// nothing. `SQLStorage.summedPrice` is the same rule in SQL.
    static let largestSummedPrice: Int64 = 1_000_000_000_000

    static func summed(_ price: Int64?) -> Int64 { min(max(price ?? 0, 0), largestSummedPrice) }
}

extension Overview {
    /// Adds up `lines` into an overview of `query`'s span.
    init(_ query: OverviewQuery, lines: [OverviewLine], payingCustomers: Int) {
        var totals = OverviewFigures()
        totals.activeSubscriptions = 0
        totals.activeTrials = 0
        var products: [String: OverviewFigures] = [:]
        var storefronts: [String: OverviewFigures] = [:]
        var days: [Int64: OverviewFigures] = [:]
        func add(_ line: OverviewLine, to figures: inout OverviewFigures, active: Bool) {
            switch line.kind {
            case .purchase(let first):
                figures.purchases += line.count
                if first { figures.newSubscriptions += line.count }
                if !line.currency.isEmpty { figures.revenue[line.currency, default: 0].saturatingAdd(line.amount) }
            case .refund:
                figures.refunds += line.count
                if !line.currency.isEmpty { figures.refunded[line.currency, default: 0].saturatingAdd(line.amount) }
            case .churn:
                figures.churned += line.count
            case .active(let trials):
                guard active else { return }
                figures.activeSubscriptions = (figures.activeSubscriptions ?? 0) + line.count
                figures.activeTrials = (figures.activeTrials ?? 0) + trials
            }
        }
        for line in lines {
            add(line, to: &totals, active: true)
            add(line, to: &products[line.productID, default: Self.withActive()], active: true)
            let storefront = line.storefront.isEmpty ? "unknown" : line.storefront
            add(line, to: &storefronts[storefront, default: Self.withActive()], active: true)
            if let day = line.day { add(line, to: &days[day, default: OverviewFigures()], active: false) }
        }
        let first = Self.day(of: query.from)
        let last = Self.day(of: query.to.addingTimeInterval(-0.001))
        self.init(
            bundleId: query.bundleID, from: query.from, to: query.to, at: query.moment,
            payingCustomers: payingCustomers, totals: totals, products: products, storefronts: storefronts,
            days: first > last
                ? []
                : (first...last).map { day in
                    OverviewDay(
                        day: Date(millisecondsSince1970: day * OverviewLine.millisecondsPerDay),
                        figures: days[day] ?? OverviewFigures())
                })
    }

    private static func withActive() -> OverviewFigures {
        var figures = OverviewFigures()
        figures.activeSubscriptions = 0
        figures.activeTrials = 0
        return figures
    }

    /// Days since 1970 (UTC) of a moment.
    /// The UTC day a moment in milliseconds falls on, as SQL divides (towards zero: the same for any moment after
    /// 1970), for the day stored with each transaction.
    static func day(ofMilliseconds milliseconds: Int64) -> Int64 { milliseconds / OverviewLine.millisecondsPerDay }

    static func day(of date: Date) -> Int64 {
        let milliseconds = date.millisecondsSince1970
        return milliseconds >= 0
            ? milliseconds / OverviewLine.millisecondsPerDay
            : -((-milliseconds - 1) / OverviewLine.millisecondsPerDay) - 1
    }
}

/// One customer in the console's list: what they bought and spent (by currency, refunds left out), where, and when
/// last.
public struct CustomerSummary: Hashable, Sendable, Codable {
    public var customerId: String
    public var purchases: Int
    public var spent: [String: Int64]
    public var storefront: String?
    public var lastPurchase: Date?

    public init(customerId: String, purchases: Int, spent: [String: Int64], storefront: String?, lastPurchase: Date?) {
        self.customerId = customerId
        self.purchases = purchases
        self.spent = spent
        self.storefront = storefront
        self.lastPurchase = lastPurchase
    }
}
