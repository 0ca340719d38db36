package import Foundation
import IAPCore

/// Dates in answers: ISO 8601 in UTC with milliseconds, as the App Store's dates have them
/// (`2026-11-23T17:56:44.108Z`). Written by hand: Foundation's format style took a tenth of an answer's time.
package enum DateFormat {
    /// An ISO 8601 date-time (`2027-01-31T09:00:00Z`, with or without fractional seconds, any offset); nil otherwise.
    package static func parse(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
    }

    package static func text(_ date: Date) -> String {
        var bytes: [UInt8] = []
        append(date, to: &bytes, quoted: false)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `2027-01-31T09:00:00.000Z` (UTC, milliseconds), in quotes when asked, at the end of `bytes`.
    static func append(_ date: Date, to bytes: inout [UInt8], quoted: Bool) {
        let millis = date.millisecondsSince1970
        let (days, dayMillis) = floorDivision(millis, 86_400_000)
        let (year, month, day) = CivilCalendar.date(fromDays: Int(days))
        func digits(_ value: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            var value = value
            // A value wider than `count` digits (a year past 9999) is written whole.
            while divisor * 10 <= value { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor))
                value %= divisor
                divisor /= 10
            }
        }
        if quoted { bytes.append(UInt8(ascii: "\"")) }
        if year < 0 { bytes.append(UInt8(ascii: "-")) }
        digits(Int64(abs(year)), 4)
        bytes.append(UInt8(ascii: "-"))
        digits(Int64(month), 2)
        bytes.append(UInt8(ascii: "-"))
        digits(Int64(day), 2)
        bytes.append(UInt8(ascii: "T"))
        digits(dayMillis / 3_600_000, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(dayMillis / 60_000 % 60, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(dayMillis / 1000 % 60, 2)
        bytes.append(UInt8(ascii: "."))
        digits(dayMillis % 1000, 3)
        bytes.append(UInt8(ascii: "Z"))
        if quoted { bytes.append(UInt8(ascii: "\"")) }
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
        return (quotient, value - quotient * divisor)
    }
}
