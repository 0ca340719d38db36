/// The text of one JSON string, for the package's other JSON readers (the server's reader of its stored records), so
/// that escapes, surrogate pairs and UTF-8 are resolved in one place: ``JSONScanner``.
package enum JSONString {
    /// The text of the JSON string in `quoted`, its quotes included: escapes resolved, checked as UTF-8. Nil when
    /// `quoted` is not exactly one valid JSON string.
    package static func text(_ quoted: UnsafeBufferPointer<UInt8>) -> String? {
        guard quoted.first == UInt8(ascii: "\"") else { return nil }
        var scanner = JSONScanner(quoted)
        guard case .string(let text)? = try? scanner.value(), scanner.index == quoted.count else { return nil }
        return text
    }
}
