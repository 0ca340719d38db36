public import Foundation
import IAPCatalog
import IAPCore
import IAPReceipts
import IAPSignedData
import Synchronization

/// What the simulator made and counted: events, artifacts, notifications, statistics, accounts.
extension AppStoreSimulator {
    /// The device's app receipt as of now (re-signed only after a change).
    public func receipt(account: String, device: UUID) throws(SimulatorError) -> SimulatorReceipt {
        try withCore { (core) throws(SimulatorError) in try core.receipt(account: account, device: device) }
    }

    /// A signed app transaction for the device, with a device verification for `nonce`.
    public func appTransaction(account: String, device: UUID, nonce: UUID? = nil) throws(SimulatorError) -> String {
        try withCore { (core) throws(SimulatorError) in
            try core.appTransaction(account: account, device: device, nonce: nonce)
        }
    }

    /// The signed renewal info of the account's subscription in a group (its own, or else the one its family shares).
    public func renewalInfo(account: String, group: String) throws(SimulatorError) -> String {
        try withCore { (core) throws(SimulatorError) in
            _ = try core.account(account)
            guard
                let visible = core.visibleLines(account: account).first(where: { core.lines[$0.line].groupID == group })
            else { throw SimulatorError(.invalidState, "\(account) has no subscription in group '\(group)'") }
            return try core.signedRenewalInfo(line: visible.line, forAccount: account)
        }
    }

    /// The signed renewal info of every subscription the account sees (its own and family-shared ones), as the
    /// App Store Server API's subscription statuses give them.
    public func renewalInfos(account: String) throws(SimulatorError) -> [String] {
        try withCore { (core) throws(SimulatorError) in
            try core.checkInjectedFailure(.subscriptionStatus)
            _ = try core.account(account)
            var result: [String] = []
            for visible in core.visibleLines(account: account) {
                result.append(try core.signedRenewalInfo(line: visible.line, forAccount: account))
            }
            return result
        }
    }

    /// The simulator's own view of what the account has now.
    public func view(account: String) throws(SimulatorError) -> SimulatorEntitlements {
        try withCore { (core) throws(SimulatorError) in try core.view(account: account) }
    }

    /// Every event so far (when records are kept).
    public var events: [SimulatorEvent] { state.withLock { $0.core.events } }
    /// Every signed artifact so far, in issue order (when records are kept).
    public var artifacts: [SimulatorArtifact] { state.withLock { $0.core.artifacts } }
    /// Every notification so far (when records are kept).
    public var notifications: [SimulatorNotification] { state.withLock { $0.core.notifications } }
    /// What the simulator counted.
    public var statistics: SimulatorStatistics { state.withLock { $0.core.statistics } }
    /// Account ids in creation order.
    public var accountIDs: [String] { state.withLock { $0.core.accountOrder } }

    /// The devices of an account, in the order they were added.
    public func devices(account: String) throws(SimulatorError) -> [UUID] {
        try withCore { (core) throws(SimulatorError) in try core.account(account).devices.map(\.id) }
    }

    /// The account's storefront (ISO 3166-1 alpha-3), nil for an unknown account. A plain read: unlike the other
    /// calls it neither moves the clock nor tells ``onChange(_:)`` observers, so an observer may call it.
    public func storefront(ofAccount account: String) -> String? {
        state.withLock { try? $0.core.account(account).storefront.countryCode }
    }

    /// The account's storefront now and after each change (`Storefront.updates` of its devices): the current one at
    /// once, then each new one. A slow reader sees the last two: a change is never lost, though the one it moved from
    /// may be (so a reader takes the first element as where changes count from, and each element that differs from the
    /// one before as a change). The stream ends when the account is cleared or deleted, and stops watching the store
    /// when its reader goes away.
    public func storefrontUpdates(account: String) throws(SimulatorError) -> AsyncStream<String> {
        let (stream, sink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(2))
        let last = Mutex<String?>(nil)
        // Sends the storefront when it differs from the last one sent; false once the account is gone.
        let report: @Sendable (AppStoreSimulator) -> Bool = { simulator in
            guard let now = simulator.storefront(ofAccount: account) else { return false }
            last.withLock { last in
                if last != now {
                    last = now
                    sink.yield(now)
                }
            }
            return true
        }
        let id = onChange { [weak self] in
            guard let self, report(self) else { return sink.finish() }
        }
        sink.onTermination = { [weak self] _ in self?.removeChangeObserver(id) }
        guard report(self) else {
            sink.finish()
            throw SimulatorError(.unknownAccount, "no account '\(account)'")
        }
        return stream
    }

    /// How an account is set up: its storefront, whether a parent approves its purchases, whether its card fails,
    /// and its family.
    public func settings(account: String) throws(SimulatorError) -> SimulatorAccountSettings {
        try withCore { (core) throws(SimulatorError) in
            let account = try core.account(account)
            return SimulatorAccountSettings(
                storefront: account.storefront.countryCode, askToBuy: account.askToBuy,
                billingFails: account.billingFails, familyID: account.familyID,
                appAccountToken: account.appAccountToken)
        }
    }
}

extension AppStoreSimulator {
    /// The App Store's numeric id of a storefront (`143441` for `USA`), as the store's signed documents carry it;
    /// the country code itself for a storefront IAPKit has no id for.
    public static func storefrontID(of countryCode: String) -> String {
        SimulatorCore.storefrontIDs[countryCode.uppercased()] ?? countryCode
    }
}
