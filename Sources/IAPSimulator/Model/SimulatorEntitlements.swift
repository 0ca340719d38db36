public import Foundation
public import IAPEntitlements
import IAPSignedData

/// The simulator's own view of what a customer has, computed from its state (not from its artifacts): what the
/// entitlement engine should conclude from the artifacts.
public struct SimulatorEntitlements: Hashable, Sendable {
    /// Products that grant access now.
    public var entitledProductIDs: Set<String>
    /// Consumables bought and not refunded (refunds prorated), by product; what the app consumed is not the store's.
    public var consumablePurchased: [String: Int]
    /// Subscriptions by group id.
    public var subscriptions: [String: SimulatorSubscription]
}

/// One subscription group as the simulator sees it.
public struct SimulatorSubscription: Hashable, Sendable {
    public var state: SubscriptionState
    public var productID: String
    public var expiresDate: Date
    public var willAutoRenew: Bool
    /// The product the next renewal brings, while the subscription runs with auto-renew on.
    public var renewsToProductID: String?
    public var gracePeriodExpiresDate: Date?
    public var isFamilyShared: Bool
    public var originalTransactionID: String
}
