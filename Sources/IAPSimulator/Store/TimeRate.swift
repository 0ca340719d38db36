public import Foundation
public import IAPCatalog

/// How long subscription periods, grace periods and billing retry last in a simulation: real time, or one of the
/// accelerated rates Xcode's StoreKit testing offers.
///
/// Xcode's accelerated rates are tables, not one multiplier: "monthly renewal every 30 seconds" renews a weekly
/// subscription every 10 seconds and an annual one every 6 minutes. The tables below are Apple's (StoreKitTest
/// `SKTestSession.TimeRate`). Apple documents the grace and retry durations of real time (grace 6 days for weekly
/// subscriptions, 16 days otherwise; retry 60 days) and of the fixed rates (grace as long as a period); for the others
/// IAPKit scales the real-time durations by the rate's monthly compression (so "every 30 seconds" gives a 16-second
/// grace period and a 60-second retry), and for fixed rates the retry lasts two periods. Those two are IAPKit's
/// choices, not Apple's documented values.
public struct TimeRate: Hashable, Sendable, CustomStringConvertible {
    /// Seconds per renewal for weekly, monthly, two-month, three-month, six-month and annual subscriptions.
    struct Table: Hashable, Sendable {
        var weekly, monthly, bimonthly, quarterly, semiannual, annual: TimeInterval
    }

    enum Kind: Hashable, Sendable {
        case realTime
        case perPeriod(Table)
        case fixed(TimeInterval)
    }

    /// The rate's name as StoreKitTest spells it (`realTime`, `monthlyRenewalEveryThirtySeconds`, ...).
    public let name: String
    let kind: Kind

    public var description: String { name }

    public static let realTime = TimeRate(name: "realTime", kind: .realTime)
    public static let monthlyRenewalEveryHour = TimeRate(
        name: "monthlyRenewalEveryHour",
        kind: .perPeriod(
            Table(weekly: 900, monthly: 3600, bimonthly: 7200, quarterly: 10_800, semiannual: 21_600, annual: 43_200)))
    public static let monthlyRenewalEveryThirtyMinutes = TimeRate(
        name: "monthlyRenewalEveryThirtyMinutes",
        kind: .perPeriod(
            Table(weekly: 600, monthly: 1800, bimonthly: 3600, quarterly: 5400, semiannual: 10_800, annual: 21_600)))
    public static let monthlyRenewalEveryFiveMinutes = TimeRate(
        name: "monthlyRenewalEveryFiveMinutes",
        kind: .perPeriod(
            Table(weekly: 180, monthly: 300, bimonthly: 600, quarterly: 900, semiannual: 1800, annual: 3600)))
    public static let monthlyRenewalEveryThirtySeconds = TimeRate(
        name: "monthlyRenewalEveryThirtySeconds",
        kind: .perPeriod(Table(weekly: 10, monthly: 30, bimonthly: 60, quarterly: 90, semiannual: 180, annual: 360)))
    public static let oneRenewalEveryFifteenMinutes = TimeRate(name: "oneRenewalEveryFifteenMinutes", kind: .fixed(900))
    public static let oneRenewalEveryFiveMinutes = TimeRate(name: "oneRenewalEveryFiveMinutes", kind: .fixed(300))
    public static let oneRenewalEveryMinute = TimeRate(name: "oneRenewalEveryMinute", kind: .fixed(60))
    public static let oneRenewalEveryTwoSeconds = TimeRate(name: "oneRenewalEveryTwoSeconds", kind: .fixed(2))

    /// Every rate, real time first.
    public static let all: [TimeRate] = [
        .realTime, .monthlyRenewalEveryHour, .monthlyRenewalEveryThirtyMinutes, .monthlyRenewalEveryFiveMinutes,
        .monthlyRenewalEveryThirtySeconds, .oneRenewalEveryFifteenMinutes, .oneRenewalEveryFiveMinutes,
        .oneRenewalEveryMinute, .oneRenewalEveryTwoSeconds,
    ]

    /// The rate with this StoreKitTest name, or nil.
    public static func named(_ name: String) -> TimeRate? { all.first { $0.name == name } }

    private static let day: TimeInterval = 86_400

    /// The moment `count` periods of `period` after `start`.
    public func advance(_ start: Date, by period: SubscriptionPeriod, count: Int = 1) -> Date {
        switch kind {
        case .realTime: period.advance(start, by: count)
        case .perPeriod(let table): start + Self.seconds(of: period, in: table) * Double(count)
        case .fixed(let seconds): start + seconds * Double(count)
        }
    }

    /// How long the billing grace period lasts after a failed renewal of a subscription with this period.
    public func gracePeriod(for period: SubscriptionPeriod) -> TimeInterval {
        let realGrace = (period.unit == .week || period.unit == .day ? 6 : 16) * Self.day
        switch kind {
        case .realTime: return realGrace
        case .perPeriod(let table): return realGrace * table.monthly / (30 * Self.day)
        case .fixed(let seconds): return seconds
        }
    }

    /// How long Apple keeps retrying a failed renewal before the subscription expires.
    public func billingRetryDuration(for period: SubscriptionPeriod) -> TimeInterval {
        switch kind {
        case .realTime: return 60 * Self.day
        case .perPeriod(let table): return 60 * Self.day * table.monthly / (30 * Self.day)
        case .fixed(let seconds): return 2 * seconds
        }
    }

    /// Seconds for a period under a table: the table's entry for the six usual periods, the monthly entry scaled by
    /// the period's real length for the others (days, several weeks, several years).
    private static func seconds(of period: SubscriptionPeriod, in table: Table) -> TimeInterval {
        switch (period.unit, period.value) {
        case (.week, 1): return table.weekly
        case (.month, 1): return table.monthly
        case (.month, 2): return table.bimonthly
        case (.month, 3): return table.quarterly
        case (.month, 6): return table.semiannual
        case (.year, 1): return table.annual
        case (.day, let days): return table.monthly * Double(days) / 30
        case (.week, let weeks): return table.weekly * Double(weeks)
        case (.month, let months): return table.monthly * Double(months)
        case (.year, let years): return table.annual * Double(years)
        }
    }
}
