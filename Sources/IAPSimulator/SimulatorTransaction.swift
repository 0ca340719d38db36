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
}
