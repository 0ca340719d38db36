public import Foundation
public import IAPEntitlements
public import IAPSignedData

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

/// What ``Store/purchase(_:quantity:offer:introductoryOfferEligibility:)`` came to: the state, and for a purchase
/// that went through, the verified transaction (compare with a state directly: `outcome == .purchased`).
public struct StorePurchaseResult: Hashable, Sendable {
    public var state: PurchaseState
    /// The transaction the store issued, verified, unlocked and finished (`.purchased` only).
    public var transaction: StoreTransaction?

    public init(state: PurchaseState, transaction: StoreTransaction? = nil) {
        self.state = state
        self.transaction = transaction
    }

    public static func == (outcome: StorePurchaseResult, state: PurchaseState) -> Bool { outcome.state == state }
}

/// A transaction as the store signed it: what an app records or shows after a purchase.
public struct StoreTransaction: Hashable, Sendable {
    public var id: String
    public var originalID: String
    public var productID: String
    public var purchaseDate: Date
    /// When a subscription period ends.
    public var expirationDate: Date?
    /// When the purchase was refunded or revoked, if it was.
    public var revocationDate: Date?
    public var quantity: Int
    public var appAccountToken: UUID?
    /// Whether the customer bought it or a subscription renewed.
    public var transactionReason: TransactionReason?
    /// The kind of offer the purchase used (introductory, promotional, offer code, win-back), if any.
    public var offerType: OfferType?
    /// The offer's identifier (a promotional or win-back offer's id, an offer code's reference name).
    public var offerIdentifier: String?
    /// The signed transaction (JWS) the store handed out, for the app's own server.
    public var signedTransaction: String

    init?(_ payload: TransactionPayload, signedTransaction: String) {
        guard let id = payload.transactionID, let productID = payload.productID, let purchased = payload.purchaseDate
        else { return nil }
        self.id = id
        originalID = payload.originalTransactionID ?? id
        self.productID = productID
        purchaseDate = purchased.date
        expirationDate = payload.expiresDate?.date
        revocationDate = payload.revocationDate?.date
        quantity = payload.quantity ?? 1
        appAccountToken = payload.appAccountToken.flatMap(UUID.init(uuidString:))
        transactionReason = payload.transactionReason
        offerType = payload.offerType
        offerIdentifier = payload.offerIdentifier
        self.signedTransaction = signedTransaction
    }
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
    /// What the device keeps of consumables across validation modes (absent in caches written before it existed).
    public var ledger: ConsumableLedger?

    public init(
        history: PurchaseHistory = PurchaseHistory(), serverSnapshot: EntitlementSnapshot? = nil,
        serverCustomerID: String? = nil, products: [StoreProduct] = [], savedAt: Date,
        ledger: ConsumableLedger? = nil
    ) {
        self.ledger = ledger
        self.history = history
        self.serverSnapshot = serverSnapshot
        self.serverCustomerID = serverCustomerID
        self.products = products
        self.savedAt = savedAt
    }
}
