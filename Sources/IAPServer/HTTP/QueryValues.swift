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
}
