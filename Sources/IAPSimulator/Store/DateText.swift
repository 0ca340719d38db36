package import Foundation

/// Dates as the simulator's sentences and the scenario timeline write them: UTC, to the minute (seconds when any).
package enum DateText {
    package static func utc(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let base = String(format: "%04d-%02d-%02d %02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!)
        return c.second == 0 ? base : base + String(format: ":%02d", c.second!)
    }
}
