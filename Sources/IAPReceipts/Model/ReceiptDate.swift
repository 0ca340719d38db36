public import Foundation
import IAPCore

/// Reads and writes the RFC 3339 dates receipts carry, without Foundation's formatters (slow, and locale-dependent
/// on Linux).
///
/// Accepted: `2015-09-22T08:55:28Z`, with fractional seconds (`.123`), with offsets `+0300` (Xcode) or `+03:00`.
/// The empty string is "no date". Anything else, including impossible dates like `0000-00-00`, is refused.
public enum ReceiptDate {
    /// Parses a date; `nil` for the empty string; throws for anything that is not a valid date.
    public static func parse(_ bytes: some Collection<UInt8>) throws(ReceiptParsingError) -> Date? {
        let parsed: Result<Date?, ReceiptParsingError>? = bytes.withContiguousStorageIfAvailable { parse(buffer: $0) }
        return try (parsed ?? Array(bytes).withUnsafeBufferPointer { parse(buffer: $0) }).get()
    }

    private static func parse(buffer text: UnsafeBufferPointer<UInt8>) -> Result<Date?, ReceiptParsingError> {
        do throws(ReceiptParsingError) {
            return .success(try parseText(text))
        } catch {
            return .failure(error)
        }
    }

    private static func parseText(_ text: UnsafeBufferPointer<UInt8>) throws(ReceiptParsingError) -> Date? {
        if text.isEmpty { return nil }
        var cursor = 0

        func number(_ digits: Int) throws(ReceiptParsingError) -> Int {
            guard cursor + digits <= text.count else { throw invalid(text) }
            var value = 0
            for offset in 0..<digits {
                let byte = text[cursor + offset]
                guard byte >= 0x30, byte <= 0x39 else { throw invalid(text) }
                value = value * 10 + Int(byte - 0x30)
            }
            cursor += digits
            return value
        }
        func expect(_ character: UInt8) throws(ReceiptParsingError) {
            guard cursor < text.count, text[cursor] == character else { throw invalid(text) }
            cursor += 1
        }

        let year = try number(4)
        try expect(UInt8(ascii: "-"))
        let month = try number(2)
        try expect(UInt8(ascii: "-"))
        let day = try number(2)
        guard cursor < text.count, text[cursor] == UInt8(ascii: "T") || text[cursor] == UInt8(ascii: " ") else {
            throw invalid(text)
        }
        cursor += 1
        let hour = try number(2)
        try expect(UInt8(ascii: ":"))
        let minute = try number(2)
        try expect(UInt8(ascii: ":"))
        let second = try number(2)
        var fraction = 0.0
        if cursor < text.count, text[cursor] == UInt8(ascii: ".") || text[cursor] == UInt8(ascii: ",") {
            cursor += 1
            var scale = 0.1
            let start = cursor
            while cursor < text.count, text[cursor] >= 0x30, text[cursor] <= 0x39, cursor - start < 9 {
                fraction += Double(text[cursor] - 0x30) * scale
                scale /= 10
                cursor += 1
            }
            guard cursor > start else { throw invalid(text) }
        }
        var offsetSeconds = 0
        guard cursor < text.count else { throw invalid(text) }
        switch text[cursor] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            cursor += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = text[cursor] == UInt8(ascii: "-") ? -1 : 1
            cursor += 1
            let hours = try number(2)
            if cursor < text.count, text[cursor] == UInt8(ascii: ":") { cursor += 1 }
            let minutes = try number(2)
            guard hours < 24, minutes < 60 else { throw invalid(text) }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        default:
            throw invalid(text)
        }
        guard cursor == text.count,
            (1...9999).contains(year), (1...12).contains(month),
            (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second <= 60
        else { throw invalid(text) }

        let days = CivilCalendar.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Formats a date the way App Store receipts do: `yyyy-MM-ddTHH:mm:ssZ` in UTC, whole seconds (rounded down).
    public static func format(_ date: Date) -> String {
        let total = Int(date.timeIntervalSince1970.rounded(.down))
        var days = total / 86_400
        var secondsOfDay = total % 86_400
        if secondsOfDay < 0 {
            secondsOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        guard (0...9999).contains(year) else {
            return String(year) + "-" + twoDigits(month) + "-" + twoDigits(day) + "T" + twoDigits(secondsOfDay / 3600)
                + ":" + twoDigits(secondsOfDay / 60 % 60) + ":" + twoDigits(secondsOfDay % 60) + "Z"
        }
        // One string written in place: this runs once per document in bulk output.
        return String(unsafeUninitializedCapacity: 20) { text in
            func put(_ value: Int, _ width: Int, at start: Int) {
                var value = value
                for index in stride(from: start + width - 1, through: start, by: -1) {
                    text[index] = UInt8(truncatingIfNeeded: 0x30 + value % 10)
                    value /= 10
                }
            }
            put(year, 4, at: 0)
            text[4] = UInt8(ascii: "-")
            put(month, 2, at: 5)
            text[7] = UInt8(ascii: "-")
            put(day, 2, at: 8)
            text[10] = UInt8(ascii: "T")
            put(secondsOfDay / 3600, 2, at: 11)
            text[13] = UInt8(ascii: ":")
            put(secondsOfDay / 60 % 60, 2, at: 14)
            text[16] = UInt8(ascii: ":")
            put(secondsOfDay % 60, 2, at: 17)
            text[19] = UInt8(ascii: "Z")
            return 20
        }
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0" + String(value) : String(value) }

    private static func invalid(_ text: UnsafeBufferPointer<UInt8>) -> ReceiptParsingError {
        let shown = String(decoding: text.prefix(40), as: UTF8.self)
        return ReceiptParsingError(.invalidDate, "\"\(shown)\" is not an RFC 3339 date")
    }

    private static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
