import Crypto
public import Foundation
import IAPCatalog
import IAPReceipts
import IAPSignedData

/// A purchase waiting for someone: a parent's approval (ask to buy) or the customer's action (interrupted purchase).
public struct PendingPurchase: Hashable, Sendable, Codable {
    public enum Reason: String, Hashable, Sendable, Codable {
        case askToBuy, interrupted
    }

    public let id: String
    public let reason: Reason
    public let accountID: String
    public let productID: String
    public let requestedAt: Date
}
