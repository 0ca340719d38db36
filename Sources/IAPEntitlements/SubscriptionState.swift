import Foundation

/// Where a subscription group stands.
public enum SubscriptionState: String, Hashable, Sendable, Codable {
    /// A period is running (App Store Server API status 1).
    case subscribed
    /// Renewal failed, Apple is retrying, and the customer keeps access until the grace period ends (status 4).
    case inGracePeriod
    /// Renewal failed and Apple is retrying; no access (status 3).
    case inBillingRetry
    /// The last period ended (status 2); ``SubscriptionGroupStatus/expirationReason`` says why.
    case expired
    /// The last period was refunded or revoked (status 5).
    case revoked

    /// The App Store Server API's number for this state.
    public var appStoreStatus: Int {
        switch self {
        case .subscribed: 1
        case .expired: 2
        case .inBillingRetry: 3
        case .inGracePeriod: 4
        case .revoked: 5
        }
    }

    /// Whether the customer may use the subscription in this state.
    public var grantsAccess: Bool { self == .subscribed || self == .inGracePeriod }
}
