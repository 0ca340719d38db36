import Crypto
import Foundation
import IAPCatalog
import IAPReceipts
import IAPSignedData

/// What a purchase came to.
public enum PurchaseOutcome: Hashable, Sendable {
    /// The store charged the customer (or the customer already owned it); the transaction is unfinished until the app
    /// finishes it.
    case purchased(SimulatorTransaction)
    /// Waiting for approval or for the customer; resolve it with the simulator.
    case pending(PendingPurchase)
    /// The customer dismissed the sheet; nothing happened.
    case userCancelled

    /// The transaction, when there is one.
    public var transaction: SimulatorTransaction? {
        if case .purchased(let transaction) = self { transaction } else { nil }
    }
}
