/// The environment a receipt says it comes from (attribute 0, undocumented by Apple).
public struct ReceiptEnvironment: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The receipt type exactly as written: `Production`, `ProductionSandbox`, `Sandbox`, `Xcode`, or anything new.
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let production = ReceiptEnvironment(rawValue: "Production")
    public static let sandbox = ReceiptEnvironment(rawValue: "Sandbox")
    public static let productionSandbox = ReceiptEnvironment(rawValue: "ProductionSandbox")
    public static let xcode = ReceiptEnvironment(rawValue: "Xcode")

    /// The environment in the words Apple's other APIs use: `Production`, `Sandbox` (for both sandbox spellings),
    /// `Xcode`, or the raw value when it is none of these.
    public var normalized: String {
        switch self {
        case .production: "Production"
        case .sandbox, .productionSandbox: "Sandbox"
        case .xcode: "Xcode"
        default: rawValue
        }
    }

    public var isSandbox: Bool { self == .sandbox || self == .productionSandbox }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
