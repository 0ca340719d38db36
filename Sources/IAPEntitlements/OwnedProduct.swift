public import Foundation

/// A non-consumable the customer owns.
public struct OwnedProduct: Hashable, Sendable, Codable {
    public var productID: String
    /// The transaction that grants it (the customer's own purchase before a family-shared one, then the earliest).
    public var transactionID: String
    public var originalTransactionID: String
    public var purchaseDate: Date
    public var ownership: Ownership
    public var source: PurchaseSource
}
