public import Foundation
import IAPEntitlements
import IAPSignedData

/// One thing that happened in the simulated store, in order: what a timeline shows.
public struct SimulatorEvent: Hashable, Sendable {
    /// What kind of thing happened.
    public enum Kind: String, Hashable, Sendable, Codable {
        case accountCreated, deviceAdded, familyJoined, familyLeft
        case purchased, renewed, upgraded, downgradeScheduled, crossgradeScheduled, changeCancelled
        case askToBuyRequested, askToBuyApproved, askToBuyDeclined, interrupted, interruptionResolved
        case userCancelled, failed, finished, synced
        case autoRenewDisabled, autoRenewEnabled
        case billingIssue, billingFailed, gracePeriodExpired, billingRecovered, billingResolved
        case expired, refunded, refundReversed, revoked, refundRequested, refundDeclined, consumptionReported
        case priceIncreased, priceIncreaseConsented, offerRedeemed
        case transactionDeleted, transactionsCleared, clockAdvanced
        case renewalExtended, appAccountTokenSet, testNotificationRequested
    }

    /// Position in the simulator's event log (from 0).
    public let sequence: Int
    public let date: Date
    public let kind: Kind
    public let accountID: String?
    public let productID: String?
    public let transactionID: String?
    /// A sentence a person can read.
    public let summary: String
}
