package import Foundation
package import Hummingbird

/// Query values read strictly: a value that is there but malformed is a 400 with the code `invalidQuery` naming the
/// parameter, never read as a default.
extension Request {
    /// An integer in `range`, or nil when the parameter is absent.
    package func integerQuery(_ name: String, in range: ClosedRange<Int>) throws(APIError) -> Int? {
        guard let text = uri.queryParameters.get(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw .badRequest(
                "invalidQuery", "'\(name)' must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// `true` or `false`, or nil when the parameter is absent.
    package func booleanQuery(_ name: String) throws(APIError) -> Bool? {
        guard let text = uri.queryParameters.get(name) else { return nil }
        switch text.lowercased() {
        case "true": return true
        case "false": return false
        default: throw .badRequest("invalidQuery", "'\(name)' must be true or false")
        }
    }

    /// An ISO 8601 date-time, or nil when the parameter is absent.
    package func dateQuery(_ name: String) throws(APIError) -> Date? {
        guard let text = uri.queryParameters.get(name) else { return nil }
        guard let date = DateFormat.parse(text) else {
            throw .badRequest("invalidQuery", "'\(name)' must be an ISO 8601 date-time")
        }
        return date
    }

    /// A text value of at most `limit` bytes without control characters (an id, a type), or nil when the parameter is
    /// absent or empty.
    package func textQuery(_ name: String, limit: Int = 200) throws(APIError) -> String? {
        guard let text = uri.queryParameters.get(name), !text.isEmpty else { return nil }
        guard text.utf8.count <= limit,
            !text.hasControlCharacters
        else {
            throw .badRequest("invalidQuery", "'\(name)' must be at most \(limit) bytes, without control characters")
        }
        return String(text)
    }
}

extension StringProtocol {
    /// Whether any character is a control character (a NUL among them, which PostgreSQL refuses in text): ids and
    /// filters a client sends are refused with one.
    package var hasControlCharacters: Bool {
        unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
