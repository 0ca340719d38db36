public import Foundation
import IAPCore
import IAPEntitlements
import IAPSignedData

/// Restoring purchases, refunds, offer codes and subscription management: calls to the store, each reported as an
/// event.
extension Store {
    /// Restores purchases: the customer signs in to the App Store (`AppStore.sync()`, a system prompt on a device, so
    /// call it only from the customer's own action, such as a Restore Purchases button), then the Store reconciles
    /// with what the App Store sent, the app receipt included. Throws when the store cannot be asked.
    public func restore() async throws(StoreError) {
        do { try await backend.sync() } catch {
            emit(StoreEvent(.restoreFailed, detail: error.reason))
            throw error
        }
        await reconcile()
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

    /// Shows the offer-code sheet. A code the store accepts grants a transaction that arrives through the updates,
    /// where it is verified, unlocked and finished like any other, and announced as ``StoreEvent/Kind/offerCodeRedeemed``.
    /// On a device the customer types the code into StoreKit's sheet, which shows a refused code itself and tells the
    /// app nothing (`code` is not used). In tests `code` is what the customer types: `SimulatorBackend` and
    /// `HTTPStoreBackend` throw for a refused one, and the StoreKit stand-in shows it in the sheet, as StoreKit does.
    public func redeemOfferCode(_ code: String? = nil) async throws(StoreError) {
        do {
            try await backend.redeemOfferCode(code)
        } catch {
            emit(StoreEvent(.offerCodeFailed, detail: error.reason))
            throw error
        }
        emit(StoreEvent(.offerCodeSheetShown))
    }

    /// Announces a transaction bought with an offer code, once: StoreKit's sheet says nothing of a redemption, the
    /// transaction it grants does. Not its renewals, its refund or a redelivery; nor a code a current subscriber
    /// redeemed, which applies at the next renewal (a renewal at an offer code's price cannot be told from the
    /// others of the offer's periods).
    func announceOfferCode(_ transaction: StoreTransaction?) {
        guard let transaction, transaction.offerType == .offerCode, transaction.transactionReason != .renewal,
            transaction.revocationDate == nil, announcedOfferCodes.insert(transaction.id).inserted
        else { return }
        emit(
            StoreEvent(
                .offerCodeRedeemed, productID: transaction.productID, transactionID: transaction.id,
                detail: transaction.offerIdentifier))
    }

    /// Where the customer manages subscriptions.
    public func manageSubscriptions() async throws(StoreError) -> URL { try await backend.manageSubscriptions() }
}
