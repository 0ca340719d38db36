import Foundation
import IAPEntitlements

/// Apple's `verifyReceipt` answer, as far as the device needs it: the status, the receipt's purchases, the latest
/// transactions and the pending renewal info (every value a string, as Apple writes them).
struct LegacyReceiptAnswer: Decodable {
    struct IAPKitError: Decodable {
        var code: String
        var message: String?
    }

    struct Receipt: Decodable {
        var originalApplicationVersion: String?
        var inApp: [Entry]?

        enum CodingKeys: String, CodingKey {
            case originalApplicationVersion = "original_application_version"
            case inApp = "in_app"
        }
    }

    /// One in-app purchase in Apple's words.
    struct Entry: Decodable {
        var productID: String?
        var transactionID: String?
        var originalTransactionID: String?
        var quantity: String?
        var purchaseDateMS: String?
        var originalPurchaseDateMS: String?
        var expiresDateMS: String?
        var cancellationDateMS: String?
        var cancellationReason: String?
        var isTrialPeriod: String?
        var isInIntroOfferPeriod: String?
        var isUpgraded: String?
        var promotionalOfferID: String?
        var subscriptionGroupID: String?
        var ownershipType: String?

        enum CodingKeys: String, CodingKey {
            case productID = "product_id"
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case quantity
            case purchaseDateMS = "purchase_date_ms"
            case originalPurchaseDateMS = "original_purchase_date_ms"
            case expiresDateMS = "expires_date_ms"
            case cancellationDateMS = "cancellation_date_ms"
            case cancellationReason = "cancellation_reason"
            case isTrialPeriod = "is_trial_period"
            case isInIntroOfferPeriod = "is_in_intro_offer_period"
            case isUpgraded = "is_upgraded"
            case promotionalOfferID = "promotional_offer_id"
            case subscriptionGroupID = "subscription_group_identifier"
            case ownershipType = "in_app_ownership_type"
        }

        /// The entry as a record; nil without a transaction id, product id or purchase date.
        var record: PurchaseRecord? {
            guard let transactionID, let productID, let purchase = LegacyReceiptAnswer.date(purchaseDateMS) else {
                return nil
            }
            let offer: OfferUse? =
                if isTrialPeriod == "true" || isInIntroOfferPeriod == "true" {
                    OfferUse(kind: .introductory, isFreeTrial: isTrialPeriod == "true")
                } else if let promotionalOfferID {
                    OfferUse(kind: .promotional, identifier: promotionalOfferID)
                } else {
                    nil
                }
            return PurchaseRecord(
                transactionID: transactionID, originalTransactionID: originalTransactionID, productID: productID,
                subscriptionGroupID: subscriptionGroupID, quantity: quantity.flatMap { Int($0) } ?? 1,
                purchaseDate: purchase, originalPurchaseDate: LegacyReceiptAnswer.date(originalPurchaseDateMS),
                expiresDate: LegacyReceiptAnswer.date(expiresDateMS),
                ownership: ownershipType == "FAMILY_SHARED" ? .familyShared : .purchased,
                revocation: LegacyReceiptAnswer.date(cancellationDateMS).map {
                    Revocation(date: $0, kind: .unspecified, reason: cancellationReason)
                },
                isUpgraded: isUpgraded == "true", offer: offer, source: .receipt)
        }
    }

    struct PendingRenewal: Decodable {
        var originalTransactionID: String?
        var productID: String?
        var autoRenewProductID: String?
        var autoRenewStatus: String?
        var isInBillingRetryPeriod: String?
        var gracePeriodExpiresDateMS: String?

        enum CodingKeys: String, CodingKey {
            case originalTransactionID = "original_transaction_id"
            case productID = "product_id"
            case autoRenewProductID = "auto_renew_product_id"
            case autoRenewStatus = "auto_renew_status"
            case isInBillingRetryPeriod = "is_in_billing_retry_period"
            case gracePeriodExpiresDateMS = "grace_period_expires_date_ms"
        }

        var record: RenewalRecord? {
            guard let originalTransactionID else { return nil }
            return RenewalRecord(
                originalTransactionID: originalTransactionID, productID: productID,
                autoRenewProductID: autoRenewProductID, willAutoRenew: autoRenewStatus.map { $0 == "1" },
                isInBillingRetry: isInBillingRetryPeriod == "1",
                gracePeriodExpiresDate: LegacyReceiptAnswer.date(gracePeriodExpiresDateMS), source: .receipt)
        }
    }

    var status: Int
    var receipt: Receipt?
    var latestReceiptInfo: [Entry]?
    var pendingRenewalInfo: [PendingRenewal]?
    var iapkitError: IAPKitError?

    var message: String? { iapkitError.map { "\($0.code): \($0.message ?? "")" } }

    enum CodingKeys: String, CodingKey {
        case status, receipt
        case latestReceiptInfo = "latest_receipt_info"
        case pendingRenewalInfo = "pending_renewal_info"
        case iapkitError = "iapkit_error"
    }

    static func date(_ milliseconds: String?) -> Date? {
        milliseconds.flatMap { Int64($0) }.map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }
}
