public import Foundation

/// A non-renewing subscription's status, with the duration the caller defined.
public struct NonRenewingStatus: Hashable, Sendable, Codable {
    public enum State: String, Hashable, Sendable, Codable {
        case active, expired
        /// No duration was configured for the product and the records state no end: it cannot be told.
        case durationUnknown
    }
    public var productID: String
    public var state: State
    /// The start of the unbroken run of purchased time that contains the moment (or the last one).
    public var startDate: Date?
    /// When the purchased time runs out.
    public var expiresDate: Date?
    public var transactionIDs: [String]
}
