public import Foundation

/// How an account of the simulated store is set up (``AppStoreSimulator/settings(account:)``).
public struct SimulatorAccountSettings: Hashable, Sendable {
    /// ISO 3166-1 alpha-3 (`USA`).
    public let storefront: String
    /// Purchases wait for a parent's approval.
    public let askToBuy: Bool
    /// Renewals fail, as with an expired card.
    public let billingFails: Bool
    public let familyID: String?
    /// The token its purchases carry by default.
    public let appAccountToken: UUID?
}
