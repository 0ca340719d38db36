public import Foundation
public import IAPEntitlements

/// Where a purchase of one product stands (StoreHelper's states).
public enum PurchaseState: Hashable, Sendable {
    case notStarted
    /// The purchase sheet is up or the store is working.
    case inProgress
    /// Verified, unlocked and finished.
    case purchased
    /// Waiting for a parent's approval (ask to buy) or the customer's action (strong customer authentication); the
    /// outcome arrives through transaction updates.
    case pending
    /// The customer dismissed the sheet.
    case cancelled
    /// The store refused or failed; the error says why.
    case failed(StoreError)
    /// The store handed out something that did not verify: nothing was unlocked, nothing finished.
    case failedVerification(StoreError)
}

/// Where the ``Store``'s current answers come from.
public enum EntitlementOrigin: Hashable, Sendable {
    /// Nothing known yet.
    case none
    /// The fallback cache saved at the date given: what was verified before, not yet confirmed since launch.
    case cache(savedAt: Date)
    /// Verified since launch (the last full reconciliation, or a later verified transaction).
    case verified
}

/// A non-consumable's purchase as the engine sees it.
public struct PurchaseInfo: Hashable, Sendable {
    public var productID: String
    public var transactionID: String
    public var purchaseDate: Date
    /// Set when the purchase was refunded or revoked; access ended then.
    public var revocationDate: Date?
    public var ownership: Ownership
    /// Whether the customer has it now.
    public var isActive: Bool
}

/// What the ``Store`` saves so an offline start can answer: the verified history (or the server's last verdict) and the
/// products last loaded.
public struct StoreCache: Hashable, Sendable, Codable {
    public var history: PurchaseHistory
    /// The validation server's last snapshot (server validation only).
    public var serverSnapshot: EntitlementSnapshot?
    /// The customer id the validation server knows this customer by (server validation only).
    public var serverCustomerID: String?
    public var products: [StoreProduct]
    public var savedAt: Date

    public init(
        history: PurchaseHistory = PurchaseHistory(), serverSnapshot: EntitlementSnapshot? = nil,
        serverCustomerID: String? = nil, products: [StoreProduct] = [], savedAt: Date
    ) {
        self.history = history
        self.serverSnapshot = serverSnapshot
        self.serverCustomerID = serverCustomerID
        self.products = products
        self.savedAt = savedAt
    }
}
