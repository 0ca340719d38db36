public import Foundation

/// A purchase whose product type cannot be known.
public struct UnclassifiedPurchase: Hashable, Sendable, Codable {
    public var productID: String
    public var transactionID: String
    public var purchaseDate: Date
    public var quantity: Int
}
