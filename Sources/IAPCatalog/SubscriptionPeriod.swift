public import Foundation

/// A subscription or offer period as App Store configurations write it, in ISO 8601: `P3D`, `P1W`, `P1M`, `P2M`,
/// `P3M`, `P6M`, `P1Y`.
public struct SubscriptionPeriod: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The calendar unit of a period.
    public enum Unit: String, Hashable, Sendable, Codable {
        case day, week, month, year
    }

    public let value: Int
    public let unit: Unit

    public init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Parses `P<n><D|W|M|Y>`; nil for anything else.
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 3, bytes.first == UInt8(ascii: "P"),
            let number = Int(String(decoding: bytes[1..<(bytes.count - 1)], as: UTF8.self)), number > 0, number <= 1000
        else { return nil }
        switch bytes.last {
        case UInt8(ascii: "D"): unit = .day
        case UInt8(ascii: "W"): unit = .week
        case UInt8(ascii: "M"): unit = .month
        case UInt8(ascii: "Y"): unit = .year
        default: return nil
        }
        value = number
    }

    /// The ISO 8601 form, e.g. `P1M`.
    public var iso8601: String {
        let letter =
            switch unit {
            case .day: "D"
            case .week: "W"
            case .month: "M"
            case .year: "Y"
            }
        return "P\(value)\(letter)"
    }

    public var description: String { iso8601 }

    /// The moment `count` periods after `date`, in UTC calendar arithmetic (a month after January 31 is the last day of
    /// February, as the App Store does).
    public func advance(_ date: Date, by count: Int = 1) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var components = DateComponents()
        switch unit {
        case .day: components.day = value * count
        case .week: components.day = 7 * value * count
        case .month: components.month = value * count
        case .year: components.year = value * count
        }
        return calendar.date(byAdding: components, to: date) ?? date
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let period = SubscriptionPeriod(iso8601: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a period"))
        }
        self = period
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }
}
