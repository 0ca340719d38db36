public import Foundation

/// A consumable's balance with the history that produced it.
public struct ConsumableBalance: Hashable, Sendable, Codable {
    public var productID: String
    /// Units bought (including ones later refunded).
    public var purchased: Int
    /// Units the app recorded as consumed.
    public var consumed: Int
    /// Units refunded.
    public var refunded: Int
    /// What is left to use: never below zero.
    public var balance: Int
    /// Units consumed or refunded when nothing was left (a refund after use, a consumption never bought): the
    /// customer's debt, which the balance does not carry forward.
    public var shortfall: Int
    /// Every purchase, consumption and refund in time order, with the balance after it.
    public var history: [ConsumableEvent]
}

/// One step of a consumable's history.
public struct ConsumableEvent: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable { case purchase, consumption, refund }
    public var date: Date
    public var kind: Kind
    public var quantity: Int
    public var transactionID: String?
    public var balanceAfter: Int
}
