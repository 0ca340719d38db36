public import Foundation
import IAPCore
import IAPEntitlements

/// Restoring purchases, refunds, offer codes and subscription management: calls to the store, each reported as an
/// event.
extension Store {
    /// Restores purchases (`AppStore.sync()`), then reconciles, asking the App Store for a new receipt when the one on
    /// disk is missing or does not verify. Throws when the store cannot be asked.
    public func restore() async throws(StoreError) {
        do { _ = try await backend.sync() } catch {
            emit(StoreEvent(.restoreFailed, detail: error.reason))
            throw error
        }
        await reconcile(refreshingReceipt: true)
        guard origin == .verified else {
            let error = StoreError(.networkError, "the store could not confirm the restored purchases")
            emit(StoreEvent(.restoreFailed, detail: error.reason))
            throw error
        }
        emit(StoreEvent(.restored, detail: "\(entitlements.entitledProductIDs.count) products owned"))
    }

    /// Asks the store to refund a transaction; the decision arrives later through updates.
    public func requestRefund(transactionID: String) async throws(StoreError) -> RefundRequestStatus {
        let status = try await backend.requestRefund(transactionID: transactionID)
        emit(StoreEvent(.refundRequested, transactionID: transactionID, detail: status.rawValue))
        return status
    }

    /// Redeems an offer code. As in StoreKit, the transaction it grants arrives through the updates, where it is
    /// verified, unlocked and finished like any other.
    public func redeemOfferCode(_ code: String) async throws(StoreError) {
        do {
            try await backend.redeemOfferCode(code)
        } catch {
            emit(StoreEvent(.offerCodeFailed, detail: error.reason))
            throw error
        }
        emit(StoreEvent(.offerCodeRedeemed, detail: code))
    }

    /// Where the customer manages subscriptions.
    public func manageSubscriptions() async throws(StoreError) -> URL { try await backend.manageSubscriptions() }
}
