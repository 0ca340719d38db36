public import IAPCore

/// A scenario that cannot be read or run: a stable code, and a reason that says where.
public struct ScenarioError: CodedError, Sendable {
    /// The stable name of what is wrong with the scenario.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file cannot be read, is too large, or is not YAML of a scenario's shape.
        public static let unreadable = Code(rawValue: "unreadable")
        /// A value is not of its kind (a date, a duration, a UUID, an environment, a time rate, a key).
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// A step lacks a value it needs.
        public static let missingValue = Code(rawValue: "missingValue")
        /// A name refers to nothing: a product, a group, a label, a pending purchase, a key.
        public static let unknownName = Code(rawValue: "unknownName")
        /// The file is larger, nests deeper, uses more aliases or stands for more values (aliases expanded) than a
        /// scenario ever needs.
        public static let limitExceeded = Code(rawValue: "limitExceeded")
        /// A mapping key that is a list or a mapping: scenario keys are plain text.
        public static let complexKey = Code(rawValue: "complexKey")
        /// A mapping gives the same key twice.
        public static let duplicateKey = Code(rawValue: "duplicateKey")
        /// The simulator could not be started with the scenario's configuration.
        public static let simulatorUnavailable = Code(rawValue: "simulatorUnavailable")
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}
