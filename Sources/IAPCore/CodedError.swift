/// An error or failure with a stable machine-readable code and a human reason, equal by code alone.
///
/// IAPKit's errors are structs rather than enums so new codes never break callers (the shape of swift-asn1's and
/// swift-certificates' errors). Tests and clients match on ``code``; ``reason`` is for people.
public protocol CodedError: Error, Hashable, CustomStringConvertible {
    associatedtype Code: Hashable & CustomStringConvertible
    /// The stable name of what went wrong.
    var code: Code { get }
    /// What went wrong, for a person, naming the values involved where that helps.
    var reason: String { get }
}

extension CodedError {
    public var description: String { "\(code): \(reason)" }
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
