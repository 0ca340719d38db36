import Foundation
import HTTPTypes
import Hummingbird
import IAPCore

/// An overview as `/console/overview` answers it in JSON.
struct OverviewAnswer: ResponseEncodable {
    let overview: Overview

    func encode(to encoder: any Encoder) throws { try overview.encode(to: encoder) }
}

/// The spans the overview offers: the last day, week or month (30 days) of whole UTC days, ending with the day of
/// the moment asked about.
enum OverviewRange: String, Sendable, CaseIterable {
    case day
    case week
    case month

    var days: Int64 {
        switch self {
        case .day: 1
        case .week: 7
        case .month: 30
        }
    }

    /// The span ending with the UTC day that holds `end`.
    func span(ending end: Date) -> (from: Date, to: Date) {
        let last = Overview.day(of: end) + 1
        return (
            Date(millisecondsSince1970: (last - days) * OverviewLine.millisecondsPerDay),
            Date(millisecondsSince1970: last * OverviewLine.millisecondsPerDay)
        )
    }
}

extension ValidationService {
    /// The console's overview of an app (the first one served when none is named) over the last day, week or month
    /// ending with the day of `end` (now by the service's clock when nil); subscriptions counted active at `end`.
    func overview(bundleID: String?, range: OverviewRange, end: Date?) async throws(APIError) -> Overview {
        guard let app = bundleID ?? bundleIDs.first else {
            throw APIError(404, "unknownApp", "this server serves no app")
        }
        guard bundleIDs.contains(app) else { throw APIError(404, "unknownApp", "this server does not serve \(app)") }
        let moment = end ?? now
        let (from, to) = range.span(ending: moment)
        do {
            return try await storage.overview(OverviewQuery(bundleID: app, from: from, to: to, now: min(moment, now)))
        } catch {
            throw APIError.storage(error)
        }
    }
}

extension Overview {
    /// The figures of each day as CSV: one row per day, a revenue and a refunded column per currency seen (in
    /// milli-units, as Apple signs prices), never converted.
    var csv: String {
        let currencies = Set(days.flatMap { Array($0.figures.revenue.keys) + Array($0.figures.refunded.keys) }).sorted()
        var lines = [
            (["day", "purchases", "newSubscriptions", "churned", "refunds"]
                + currencies.map { "revenue \($0)" } + currencies.map { "refunded \($0)" }).joined(separator: ",")
        ]
        for day in days {
            let figures = day.figures
            lines.append(
                ([
                    String(DateFormat.text(day.day).prefix(10)), String(figures.purchases),
                    String(figures.newSubscriptions), String(figures.churned), String(figures.refunds),
                ] + currencies.map { String(figures.revenue[$0] ?? 0) }
                    + currencies.map { String(figures.refunded[$0] ?? 0) }).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
