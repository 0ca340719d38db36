public import Foundation
import IAPEntitlements
import IAPSignedData

/// Something the simulator signed, kept in issue order when the configuration asks for it.
public struct SimulatorArtifact: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, Codable {
        case transaction, renewalInfo, notification, appTransaction, receipt
    }

    public let kind: Kind
    /// A name unique within the simulator: kind, sequence and the id it concerns (`transaction-0003-2000000000000001`).
    public let name: String
    public let date: Date
    public let accountID: String?
    /// A JWS (as UTF-8) or a receipt's DER bytes.
    public let bytes: [UInt8]
}
