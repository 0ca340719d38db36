public import Foundation

/// How the product a subscription renews to compares with the current one.
public enum PlanChange: String, Hashable, Sendable, Codable {
    case upgrade
    /// To a lower service level, at the next renewal.
    case downgrade
    /// To another product of the same level, at the next renewal.
    case crossgrade
    /// To another product whose level is unknown (no catalog).
    case otherProduct
}

/// One subscription group's status.
public struct SubscriptionGroupStatus: Hashable, Sendable, Codable {
    /// The group's id from the catalog or the records; `nil` when neither names it.
    public var groupID: String?
    /// ``groupID``, or `original:<original transaction id>` for a group nothing names.
    public var key: String
    public var state: SubscriptionState
    /// The product that grants access now, or that granted it last: the highest service level among the active
    /// periods.
    public var currentProductID: String?
    /// The current product's service level in the catalog (1 is the highest).
    public var serviceLevel: Int?
    public var currentTransactionID: String?
    public var originalTransactionID: String?
    public var ownership: Ownership?
    /// When the current (or last) period started and ends.
    public var periodStart: Date?
    public var expiresDate: Date?
    public var gracePeriodExpiresDate: Date?
    /// Set when ``state`` is ``SubscriptionState/expired``.
    public var expirationReason: ExpirationReason?
    /// Set when ``state`` is ``SubscriptionState/revoked``.
    public var revocation: Revocation?
    /// `nil` when no renewal information was given.
    public var willAutoRenew: Bool?
    /// The product the next period will be, when it renews.
    public var renewsToProductID: String?
    /// Set when the next period changes product (a downgrade or crossgrade waiting for the renewal).
    public var pendingChange: PlanChange?
    /// Whether an introductory offer (free trial, intro price) is still available in this group.
    public var introductoryOfferEligible: Bool
    /// Transactions that stopped counting because the customer upgraded.
    public var upgradedTransactionIDs: [String]

    /// Whether the group grants access now.
    public var isEntitled: Bool { state.grantsAccess }
}
