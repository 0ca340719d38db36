import Foundation
import IAPCore

/// A value from a parsed configuration file, with the key path that leads to it, so every error names file and key.
struct ConfigurationValue {
    /// The value, or nil where the key is absent.
    let value: ConfigurationNode?
    let path: String
    let file: String

    func error(_ code: CatalogError.Code, _ message: String) -> CatalogError {
        CatalogError(code, file: file, keyPath: path, message)
    }

    subscript(key: String) -> ConfigurationValue {
        WorkMeter.tick()
        guard case .dictionary(let entries) = value else {
            return ConfigurationValue(value: nil, path: path.isEmpty ? key : "\(path).\(key)", file: file)
        }
        let child = entries[key]
        return ConfigurationValue(value: child, path: path.isEmpty ? key : "\(path).\(key)", file: file)
    }

    /// Whether the key is there with a value other than null.
    var isPresent: Bool {
        switch value {
        case nil, .null?: false
        default: true
        }
    }

    func string() throws(CatalogError) -> String {
        guard isPresent else { throw error(.missingKey, "required") }
        guard case .string(let text) = value else { throw error(.invalidValue, "must be a string") }
        return text
    }

    func optionalString() throws(CatalogError) -> String? {
        isPresent ? try string() : nil
    }

    func bool(default defaultValue: Bool) throws(CatalogError) -> Bool {
        guard isPresent else { return defaultValue }
        guard case .bool(let flag) = value else { throw error(.invalidValue, "must be true or false") }
        return flag
    }

    func int(default defaultValue: Int? = nil) throws(CatalogError) -> Int {
        guard isPresent else {
            if let defaultValue { return defaultValue }
            throw error(.missingKey, "required")
        }
        switch value {
        case .integer(let integer)?: return integer
        case .real(let real)?: if let integer = Int(exactly: real) { return integer }
        default: break
        }
        throw error(.invalidValue, "must be a whole number")
    }

    /// A price written as a decimal string ("4.99"), kept exactly.
    func price() throws(CatalogError) -> Decimal? {
        guard isPresent else { return nil }
        let text: String
        switch value {
        case .string(let string)?: text = string
        case .integer(let integer)?: text = String(integer)
        case .real(let real)?: text = String(real)
        default: throw error(.invalidValue, "must be a price such as \"4.99\"")
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
        guard case .array(let elements) = value else { throw error(.invalidValue, "must be an array") }
        WorkMeter.tick(elements.count)
        return elements.enumerated().map { ConfigurationValue(value: $1, path: "\(path)[\($0)]", file: file) }
    }
}
