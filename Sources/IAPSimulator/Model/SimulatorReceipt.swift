import Crypto
import Foundation
import IAPCatalog
public import IAPReceipts
import IAPSignedData

/// An app receipt as the store hands it out: the DER PKCS#7 bytes and what they say.
public struct SimulatorReceipt: Hashable, Sendable {
    public let bytes: [UInt8]
    public let receipt: SignedReceipt
}
