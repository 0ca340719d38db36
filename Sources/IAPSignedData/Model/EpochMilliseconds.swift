public import Foundation
import IAPCore

/// A moment as Apple's signed data writes it: milliseconds since 1970, possibly fractional (Xcode writes
/// `1697679936049.7297`) and possibly before 1970 (Xcode's app transactions say year 1).
///
/// The value is kept as written, so a decoded payload encodes back to the same number; compare at millisecond
/// precision with ``wholeMilliseconds``.
public struct EpochMilliseconds: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let millisecondsSince1970: Double

    public init(millisecondsSince1970: Double) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    public init(_ date: Date) {
        self.millisecondsSince1970 = Double(date.millisecondsSince1970)
    }

    /// The moment as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: millisecondsSince1970 / 1000) }

    /// The largest magnitude read from a document: 2^53 ms (about 285,000 years either side of 1970), the range in
    /// which a double holds every whole millisecond.
    public static let maximumMagnitude: Double = 9_007_199_254_740_992

    /// The whole milliseconds, rounded down; values beyond ``maximumMagnitude`` (only a caller can make one, documents
    /// are refused) are clamped to it, so the conversion never traps.
    public var wholeMilliseconds: Int64 {
        guard !millisecondsSince1970.isNaN else { return 0 }
        let clamped = min(max(millisecondsSince1970, -Self.maximumMagnitude), Self.maximumMagnitude)
        return Int64(clamped.rounded(.down))
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.millisecondsSince1970 < rhs.millisecondsSince1970 }

    public var description: String { date.formatted(.iso8601) }
}

extension EpochMilliseconds: JSONFieldValue {
    static func read(_ scanner: inout JSONScanner, field: String) throws -> EpochMilliseconds {
        let value = try scanner.double(field)
        guard abs(value) <= maximumMagnitude else {
            throw scanner.typeError(field, "a date within 285,000 years of 1970")
        }
        return EpochMilliseconds(millisecondsSince1970: value)
    }
    var jsonValue: JSONValue { .number(JSONNumber(millisecondsSince1970)) }
}

extension Int: JSONFieldValue {
    static func read(_ scanner: inout JSONScanner, field: String) throws -> Int {
        let value = try scanner.int64(field)
        guard let narrowed = Int(exactly: value) else { throw scanner.typeError(field, "a smaller number") }
        return narrowed
    }
    var jsonValue: JSONValue { .number(JSONNumber(Int64(self))) }
}
