public import Foundation

/// A refunded or revoked transaction.
public struct RevokedTransaction: Hashable, Sendable, Codable {
    public var productID: String
    public var transactionID: String
    public var purchaseDate: Date
    public var revocation: Revocation
}
