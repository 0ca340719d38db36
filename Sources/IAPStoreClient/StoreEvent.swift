import Foundation
import Logging

/// Something the ``Store`` did or saw, in a stable vocabulary (the seeds' notifications): logged through swift-log
/// with the kind under the `event` metadata key, and delivered to every ``Store/events()`` listener.
public struct StoreEvent: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        /// The product configuration's products came back from the store.
        case productsLoaded
        /// The store could not give products; the cached list answers.
        case productsUnavailable
        /// The fallback cache answers until the store does (an offline start).
        case cacheLoaded
        /// Verified state replaced the cached one.
        case reconciled
        /// The store could not be asked; the cache keeps answering.
        case reconcileFailed
        /// The app's user logged in (``Store/logIn(_:)``); the detail is their app account token.
        case loggedIn
        /// The app's user logged out (``Store/logOut()``): the device is a new anonymous customer.
        case loggedOut
        case purchaseStarted
        case purchaseSucceeded
        case purchasePending
        case purchaseCancelled
        case purchaseFailed
        /// A document from the store did not verify; nothing was unlocked.
        case verificationFailed
        /// A verified transaction arrived through updates (a renewal, a purchase elsewhere, a family purchase).
        case transactionUpdated
        /// A transaction was finished with the store after it was unlocked.
        case transactionFinished
        /// A transaction was unlocked but the store could not be reached to finish it (three tries): it stays
        /// unfinished and comes back through updates at the next launch.
        case finishFailed
        case restored
        case restoreFailed
        /// A refund or revocation took access away.
        case refunded
        /// The customer asked for a refund; the decision comes later through updates.
        case refundRequested
        /// A transaction bought with an offer code arrived and was unlocked; the detail is the offer's identifier.
        case offerCodeRedeemed
        /// The offer-code sheet was shown (and, over the local App Store, closed; StoreKit's documentation does not
        /// say whether it returns before the sheet closes). It says nothing of a redemption: a code redeemed grants a
        /// transaction through updates (``offerCodeRedeemed``).
        case offerCodeSheetShown
        /// The store refused an offer code (over the local App Store; StoreKit's sheet shows refusals itself).
        case offerCodeFailed
        /// Units of a consumable were used up.
        case consumed
        /// The storefront changed; the products are reloaded.
        case storefrontChanged
        /// The customer started a purchase on the App Store; the store completes it.
        case purchaseIntentReceived
    }

    public var kind: Kind
    public var productID: String?
    public var transactionID: String?
    /// A short description for people (the error's reason for failures).
    public var detail: String?

    public init(_ kind: Kind, productID: String? = nil, transactionID: String? = nil, detail: String? = nil) {
        self.kind = kind
        self.productID = productID
        self.transactionID = transactionID
        self.detail = detail
    }
}

extension StoreEvent.Kind {
    /// The level the Store logs this kind of event at: failures as warnings, the rest as information.
    var logLevel: Logger.Level {
        switch self {
        case .purchaseFailed, .finishFailed, .verificationFailed, .reconcileFailed, .restoreFailed,
            .productsUnavailable:
            .warning
        default: .info
        }
    }
}
