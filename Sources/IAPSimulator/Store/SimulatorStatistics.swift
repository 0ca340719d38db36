import Foundation
import IAPEntitlements
import IAPSignedData

/// What the simulator counted: events and every signature it made.
public struct SimulatorStatistics: Hashable, Sendable, Codable {
    public var events = 0
    public var transactions = 0
    public var notifications = 0
    /// ES256 signatures (transactions, renewal infos, notifications, app transactions).
    public var jwsSignatures = 0
    /// RSA signatures (receipts).
    public var receiptSignatures = 0

    public var signatures: Int { jwsSignatures + receiptSignatures }
}
