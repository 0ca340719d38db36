import Foundation
import IAPStoreClient
import IAPStoreClientTesting

// What StoreKit shows in a sheet over a window scene. A headless store has no scene: where the simulated customer can
// still make the sheet's choice (refund request, offer code), the stand-in plays it; where there is nothing but a
// screen (managing subscriptions), it throws `StoreKitError.unsupported`. Apple's variants take a `UIWindowScene` or
// an `NSViewController`; these take none, so code that passes a scene is compiled for Apple platforms only.

extension Transaction {
    /// What a refund request came to.
    public enum RefundRequestStatus: Sendable, Hashable {
        /// The request reached the App Store; the decision arrives later through `Transaction.updates`.
        case success
        /// The customer dismissed the sheet.
        case userCancelled
    }

    /// Why a refund request could not be made.
    public enum RefundRequestError: Error, Sendable, Hashable {
        /// The customer already asked for a refund of this transaction.
        case duplicateRequest
        /// The request failed.
        case failed
    }

    /// Asks for a refund of this transaction as the refund sheet does: the session's customer submits it, or
    /// dismisses it when the next sheet action is `.cancel`.
    public func beginRefundRequest() async throws -> Transaction.RefundRequestStatus {
        try await Self.beginRefundRequest(for: id)
    }

    /// Asks for a refund of a transaction as the refund sheet does (see ``beginRefundRequest()``).
    public static func beginRefundRequest(for transactionID: UInt64) async throws -> Transaction.RefundRequestStatus {
        let session = try StoreKitSession.current()
        guard await session.customer.nextSheet() != .cancel else { return .userCancelled }
        do {
            _ = try await session.backend.requestRefund(transactionID: String(transactionID))
        } catch {
            throw error.code.rawValue == "duplicateRefundRequest"
                ? RefundRequestError.duplicateRequest : RefundRequestError.failed
        }
        return .success
    }
}

extension AppStore {
    /// The subscription management sheet. There is no screen to show it on: throws `StoreKitError.unsupported`
    /// (where the customer manages subscriptions is `https://apps.apple.com/account/subscriptions`).
    public static func showManageSubscriptions() async throws {
        _ = try StoreKitSession.current()
        throw StoreKitError.unsupported
    }

    /// The offer-code sheet: the customer enters the code the session was told they would
    /// (``StoreKitSession/customerWillEnterOfferCode(_:)``), or closes the sheet when there is none. As with
    /// StoreKit, the transaction a code grants arrives through `Transaction.updates`, and a code the store refuses is
    /// shown in the sheet, not thrown: the app is not told (the session's ``StoreKitSession/offerCodeRefusals`` are).
    public static func presentOfferCodeRedeemSheet() async throws {
        let session = try StoreKitSession.current()
        guard let code = session.takeOfferCode() else { return }
        do { try await session.backend.redeemOfferCode(code) } catch {
            session.offerCodeRefused(code, error.code.rawValue)
        }
    }
}
