import Foundation

/// A value from a parsed configuration file, with the key path that leads to it, so every error names file and key.
struct ConfigurationValue {
    let value: Any?
    let path: String
    let file: String

    func error(_ code: CatalogError.Code, _ message: String) -> CatalogError {
        CatalogError(code, file: file, keyPath: path, message)
    }

    subscript(key: String) -> ConfigurationValue {
        let child = (value as? [String: Any])?[key]
        return ConfigurationValue(value: child, path: path.isEmpty ? key : "\(path).\(key)", file: file)
    }

    var isPresent: Bool { value != nil && !(value is NSNull) }

    func string() throws(CatalogError) -> String {
        guard isPresent else { throw error(.missingKey, "required") }
        guard let text = value as? String else { throw error(.invalidValue, "must be a string") }
        return text
    }

    func optionalString() throws(CatalogError) -> String? {
        isPresent ? try string() : nil
    }

    func bool(default defaultValue: Bool) throws(CatalogError) -> Bool {
        guard isPresent else { return defaultValue }
        guard let number = value as? NSNumber, isBoolean(number) else {
            throw error(.invalidValue, "must be true or false")
        }
        return number.boolValue
    }

    func int(default defaultValue: Int? = nil) throws(CatalogError) -> Int {
        guard isPresent else {
            if let defaultValue { return defaultValue }
            throw error(.missingKey, "required")
        }
        guard let number = value as? NSNumber, !isBoolean(number), let integer = Int(exactly: number.doubleValue)
        else { throw error(.invalidValue, "must be a whole number") }
        return integer
    }

    /// A price written as a decimal string ("4.99"), kept exactly.
    func price() throws(CatalogError) -> Decimal? {
        guard isPresent else { return nil }
        let text: String
        if let string = value as? String {
            text = string
        } else if let number = value as? NSNumber, !isBoolean(number) {
            text = number.stringValue
        } else {
            throw error(.invalidValue, "must be a price such as \"4.99\"")
        }
        guard let price = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !price.isNaN, price >= 0,
            text.allSatisfy({ $0.isNumber || $0 == "." })
        else { throw error(.invalidValue, "\"\(text)\" is not a price such as \"4.99\"") }
        return price
    }

    func period() throws(CatalogError) -> SubscriptionPeriod {
        let text = try string()
        guard let period = SubscriptionPeriod(iso8601: text) else {
            throw error(.invalidValue, "\"\(text)\" is not a period such as P1W, P1M or P1Y")
        }
        return period
    }

    func array() throws(CatalogError) -> [ConfigurationValue] {
        guard isPresent else { return [] }
        guard let elements = value as? [Any] else { throw error(.invalidValue, "must be an array") }
        return elements.enumerated().map { ConfigurationValue(value: $1, path: "\(path)[\($0)]", file: file) }
    }
}

/// Whether Foundation's number came from a JSON or property-list boolean (both bridge to NSNumber; booleans have the
/// Objective-C type "c").
private func isBoolean(_ number: NSNumber) -> Bool {
    String(cString: number.objCType) == "c"
}
