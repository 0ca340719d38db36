public import IAPCore

/// Why a product configuration could not be read: which file, which key, and what is wrong with it.
public struct CatalogError: CodedError, Sendable {
    /// The stable name of what went wrong.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file could not be read.
        public static let unreadableFile = Code(rawValue: "unreadableFile")
        /// The file is not JSON (a `.storekit` file) or not a property list (`Products.plist`).
        public static let malformedFile = Code(rawValue: "malformedFile")
        /// A required key is missing.
        public static let missingKey = Code(rawValue: "missingKey")
        /// A key holds a value of the wrong type or an impossible value (a price that is not a number, a period
        /// that is not ISO 8601).
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// Two products share an identifier.
        public static let duplicateProduct = Code(rawValue: "duplicateProduct")
        /// A format version this reader does not know (it reads 1 to 5; `bplist00` for binary property lists).
        public static let unsupportedVersion = Code(rawValue: "unsupportedVersion")
        /// A property-list value of a kind no catalog uses: a set, a keyed-archiver UID.
        public static let unsupportedValue = Code(rawValue: "unsupportedValue")
        /// The file is larger, nests deeper or stands for more values (shared references expanded) than a catalog
        /// ever needs.
        public static let limitExceeded = Code(rawValue: "limitExceeded")
    }

    public let code: Code
    /// The file, the key path inside it, and what is wrong.
    public let reason: String
    /// The key path inside the file, e.g. `subscriptionGroups[0].subscriptions[1].recurringSubscriptionPeriod`.
    public let keyPath: String

    public init(_ code: Code, file: String, keyPath: String, _ message: String) {
        self.code = code
        self.keyPath = keyPath
        self.reason = "\(file)\(keyPath.isEmpty ? "" : " at \(keyPath)"): \(message)"
    }
}
