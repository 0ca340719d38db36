import Foundation
import IAPCore

/// A value of a configuration file, in IAPKit's own terms: what a `.storekit` file (JSON) or a `Products.plist`
/// (property list) holds once read, with nothing of Foundation's bridging left in it.
///
/// Readers build it under ``Limits``: a shared reference in a binary property list becomes the same node twice (one
/// copy in memory), and the count of values *as if every reference were expanded* is bounded, so no walk over the
/// tree can take more than that many steps, whatever the file's size.
enum ConfigurationNode: Sendable {
    case null
    case bool(Bool)
    case integer(Int)
    case real(Double)
    case string(String)
    case date(Date)
    /// Bytes: no catalog value is data, so only their count is kept.
    case data(count: Int)
    case array([ConfigurationNode])
    /// Keys in file order are not kept: no catalog value depends on them.
    case dictionary([String: ConfigurationNode])

    /// What every reader refuses beyond.
    enum Limits {
        /// The deepest nesting of arrays and dictionaries (a `.storekit` file nests about six deep).
        static let depth = 64
        /// The most values a file may stand for once its shared references are expanded.
        static let expandedValues = 250_000
    }

    /// A value's text when it is a scalar, for settings kept as text.
    var scalarText: String? {
        switch self {
        case .null: nil
        case .bool(let value): value ? "true" : "false"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .string(let value): value
        case .date(let value): value.formatted(.iso8601)
        case .data, .array, .dictionary: nil
        }
    }
}

extension ConfigurationNode {
    /// Converts what Foundation's `JSONSerialization` or `PropertyListSerialization` gave (XML and text property
    /// lists only: they have no shared references), counting values and depth under ``Limits``.
    ///
    /// The casts test for collections first, then scalars: a cast of a Swift collection to a Foundation class (such as
    /// `is NSNull`) would bridge the whole collection. Anything that is no catalog value (a keyed-archiver UID, a set)
    /// is refused.
    init(foundation value: Any, file: String) throws(CatalogError) {
        var budget = Limits.expandedValues
        self = try Self.convert(value, depth: 0, budget: &budget, path: "", file: file)
    }

    private static func convert(
        _ value: Any, depth: Int, budget: inout Int, path: String, file: String
    ) throws(CatalogError) -> ConfigurationNode {
        WorkMeter.tick()
        budget -= 1
        guard budget >= 0 else { throw tooManyValues(file: file) }
        guard depth <= Limits.depth else { throw tooDeep(file: file, path: path) }
        switch value {
        case let dictionary as [String: Any]:
            var converted: [String: ConfigurationNode] = [:]
            converted.reserveCapacity(dictionary.count)
            for (key, child) in dictionary {
                converted[key] = try convert(
                    child, depth: depth + 1, budget: &budget, path: path.isEmpty ? key : "\(path).\(key)", file: file)
            }
            return .dictionary(converted)
        case let array as [Any]:
            var converted: [ConfigurationNode] = []
            converted.reserveCapacity(array.count)
            for (index, child) in array.enumerated() {
                converted.append(
                    try convert(child, depth: depth + 1, budget: &budget, path: "\(path)[\(index)]", file: file))
            }
            return .array(converted)
        case let text as String:
            return .string(text)
        case let flag as Bool where !(value is NSNumber):
            return .bool(flag)
        case let integer as Int where !(value is NSNumber):
            return .integer(integer)
        case let real as Double where !(value is NSNumber):
            return .real(real)
        case let number as NSNumber:
            return number.configurationNode
        case let date as Date:
            return .date(date)
        case let data as Data:
            return .data(count: data.count)
        case is NSNull:
            return .null
        default:
            throw CatalogError(
                .unsupportedValue, file: file, keyPath: path,
                "a value of a kind no catalog uses (\(type(of: value))): only strings, numbers, booleans, dates, data, "
                    + "arrays and dictionaries")
        }
    }

    static func tooManyValues(file: String) -> CatalogError {
        CatalogError(
            .limitExceeded, file: file, keyPath: "",
            "stands for more than \(Limits.expandedValues) values once shared references are expanded")
    }

    static func tooDeep(file: String, path: String) -> CatalogError {
        CatalogError(.limitExceeded, file: file, keyPath: path, "nested deeper than \(Limits.depth) levels")
    }
}

extension NSNumber {
    /// A Foundation number as a node: booleans apart (JSON and property-list booleans have the Objective-C type "c"),
    /// whole numbers that fit as integers, the rest as reals.
    fileprivate var configurationNode: ConfigurationNode {
        let type = String(cString: objCType)
        if type == "c" { return .bool(boolValue) }
        if ["q", "l", "i", "s", "Q", "L", "I", "S", "C"].contains(type), let integer = Int(exactly: int64Value),
            NSNumber(value: integer) == self
        {
            return .integer(integer)
        }
        return .real(doubleValue)
    }
}
