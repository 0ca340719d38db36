import Crypto
import Foundation
import IAPCatalog
import IAPReceipts
public import IAPSignedData

/// A transaction as the store hands it out: its id and the signed JWS (and the payload it signs).
public struct SimulatorTransaction: Hashable, Sendable {
    public let transactionID: String
    public let jws: String
    public let payload: TransactionPayload
    /// The order id the customer's emailed receipt shows (the API's order lookup takes it); nil for a family-shared
    /// copy.
    public let orderID: String?
}
