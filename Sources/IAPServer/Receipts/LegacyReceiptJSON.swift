import Foundation
import IAPCore
import IAPEntitlements
import IAPReceipts
import IAPSignedData

/// The JSON of Apple's retired `verifyReceipt` service, written the way Apple wrote it: numbers and booleans of
/// transactions as strings, every date three times (`name` as `2020-07-22 17:39:08 Etc/GMT`, `name_ms` as epoch
/// milliseconds, `name_pst` in Cupertino's time zone).
enum LegacyReceiptJSON {
    /// The fields of one transaction, from whichever source gave them.
    struct Transaction {
        var quantity: Int
        var productID: String
        var transactionID: String
        var originalTransactionID: String
        var purchaseDate: Date?
        var originalPurchaseDate: Date?
        var expiresDate: Date?
        var webOrderLineItemID: String?
        var isTrialPeriod: Bool
        var isInIntroOfferPeriod: Bool
        var isUpgraded: Bool
        var cancellationDate: Date?
        /// "1" the customer cancelled for an issue with the app, "0" another reason.
        var cancellationReason: String?
        var promotionalOfferID: String?
        var subscriptionGroupID: String?
        /// "PURCHASED" or "FAMILY_SHARED", when the source says.
        var ownershipType: String?

        /// An in-app entry of the receipt itself.
        init(_ entry: InAppPurchase) {
            quantity = entry.quantity
            productID = entry.productID
            transactionID = entry.transactionID
            originalTransactionID = entry.originalTransactionID ?? entry.transactionID
            purchaseDate = entry.purchaseDate
            originalPurchaseDate = entry.originalPurchaseDate
            expiresDate = entry.expiresDate
            webOrderLineItemID = entry.webOrderLineItemID?.description
            isTrialPeriod = entry.isTrialPeriod
            isInIntroOfferPeriod = entry.isInIntroOfferPeriod
            isUpgraded = false
            cancellationDate = entry.cancellationDate
            promotionalOfferID = entry.promotionalOfferID
        }

        /// A transaction the server stored (from a receipt, a signed transaction or a notification).
        init(_ record: PurchaseRecord) {
            quantity = record.quantity
            productID = record.productID
            transactionID = record.transactionID
            originalTransactionID = record.originalTransactionID
            purchaseDate = record.purchaseDate
            originalPurchaseDate = record.originalPurchaseDate
            expiresDate = record.expiresDate
            webOrderLineItemID = record.webOrderLineItemID
            isTrialPeriod = record.offer?.isFreeTrial == true
            isInIntroOfferPeriod = record.offer?.kind == .introductory && record.offer?.isFreeTrial == false
            isUpgraded = record.isUpgraded
            cancellationDate = record.revocation?.date
            cancellationReason = record.revocation.map { $0.reason == "appIssue" ? "1" : "0" }
            promotionalOfferID = record.offer?.kind == .promotional ? record.offer?.identifier : nil
            subscriptionGroupID = record.subscriptionGroupID
            ownershipType =
                record.source == .receipt ? nil : (record.ownership == .familyShared ? "FAMILY_SHARED" : "PURCHASED")
        }

        var json: JSONValue {
            var object = JSONObject()
            object["quantity"] = .string(String(quantity))
            object["product_id"] = .string(productID)
            object["transaction_id"] = .string(transactionID)
            object["original_transaction_id"] = .string(originalTransactionID)
            LegacyReceiptJSON.put(purchaseDate, "purchase_date", in: &object)
            LegacyReceiptJSON.put(originalPurchaseDate, "original_purchase_date", in: &object)
            LegacyReceiptJSON.put(expiresDate, "expires_date", in: &object)
            if let webOrderLineItemID { object["web_order_line_item_id"] = .string(webOrderLineItemID) }
            object["is_trial_period"] = .string(String(isTrialPeriod))
            object["is_in_intro_offer_period"] = .string(String(isInIntroOfferPeriod))
            if isUpgraded { object["is_upgraded"] = .string("true") }
            LegacyReceiptJSON.put(cancellationDate, "cancellation_date", in: &object)
            if let cancellationReason { object["cancellation_reason"] = .string(cancellationReason) }
            if let promotionalOfferID { object["promotional_offer_id"] = .string(promotionalOfferID) }
            if let subscriptionGroupID { object["subscription_group_identifier"] = .string(subscriptionGroupID) }
            if let ownershipType { object["in_app_ownership_type"] = .string(ownershipType) }
            return .object(object)
        }
    }

    /// The `receipt` member: the receipt as it was decoded, with `request_date` the moment it was checked.
    static func receipt(_ receipt: AppReceipt, requestDate: Date) -> JSONValue {
        var object = JSONObject()
        object["receipt_type"] = .string(receipt.environment?.rawValue ?? "Production")
        object["adam_id"] = .number(JSONNumber(appItemID(receipt)))
        object["app_item_id"] = .number(JSONNumber(appItemID(receipt)))
        object["bundle_id"] = .string(receipt.bundleID)
        object["application_version"] = .string(receipt.appVersion)
        object["download_id"] = .number(JSONNumber(Int64(0)))
        object["version_external_identifier"] = .number(JSONNumber(Int64(0)))
        put(receipt.creationDate, "receipt_creation_date", in: &object)
        put(requestDate, "request_date", in: &object)
        put(receipt.originalPurchaseDate, "original_purchase_date", in: &object)
        if let original = receipt.originalAppVersion { object["original_application_version"] = .string(original) }
        put(receipt.expirationDate, "expiration_date", in: &object)
        object["in_app"] = .array(receipt.inAppPurchases.map { Transaction($0).json })
        return .object(object)
    }

    /// One `pending_renewal_info` entry.
    static func pendingRenewal(_ renewal: RenewalRecord) -> JSONValue {
        var object = JSONObject()
        if let product = renewal.autoRenewProductID { object["auto_renew_product_id"] = .string(product) }
        object["original_transaction_id"] = .string(renewal.originalTransactionID)
        if let product = renewal.productID { object["product_id"] = .string(product) }
        if let willRenew = renewal.willAutoRenew { object["auto_renew_status"] = .string(willRenew ? "1" : "0") }
        if let reason = renewal.expirationReason, let intent = expirationIntent(reason) {
            object["expiration_intent"] = .string(intent)
        }
        object["is_in_billing_retry_period"] = .string(renewal.isInBillingRetry ? "1" : "0")
        put(renewal.gracePeriodExpiresDate, "grace_period_expires_date", in: &object)
        if let pending = renewal.priceIncreasePending { object["price_consent_status"] = .string(pending ? "0" : "1") }
        return .object(object)
    }

    /// An answer carrying only a status (and, beyond Apple's fields, why), as Apple answers refused receipts.
    static func status(_ status: Int, environment: String?, code: String, message: String) -> [UInt8] {
        var object = JSONObject()
        object["status"] = .number(JSONNumber(Int64(status)))
        if let environment { object["environment"] = .string(environment) }
        if (21100...21199).contains(status) || status == 21005 || status == 21009 {
            object["is-retryable"] = .bool(true)
        }
        object["iapkit_error"] = .object(JSONObject([("code", .string(code)), ("message", .string(message))]))
        return JSONValue.object(object).jsonBytes()
    }

    private static func expirationIntent(_ reason: ExpirationReason) -> String? {
        switch reason {
        case .voluntary: "1"
        case .billingError: "2"
        case .priceIncreaseDeclined: "3"
        case .productUnavailable: "4"
        case .other: "5"
        case .unknown: nil
        }
    }

    private static func appItemID(_ receipt: AppReceipt) -> Int64 {
        receipt.appItemID.flatMap { Int64($0.description) } ?? 0
    }

    /// Writes a date as Apple did: `name`, `name_ms` and `name_pst`; nothing when there is no date.
    static func put(_ date: Date?, _ name: String, in object: inout JSONObject) {
        guard let date else { return }
        object[name] = .string(text(date, in: utc) + " Etc/GMT")
        object[name + "_ms"] = .string(String(date.millisecondsSince1970))
        object[name + "_pst"] = .string(text(date, in: cupertino) + " America/Los_Angeles")
    }

    private static let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0)!
    private static let cupertino = TimeZone(identifier: "America/Los_Angeles") ?? TimeZone(secondsFromGMT: -8 * 3600)!

    /// `yyyy-MM-dd HH:mm:ss` in a time zone, whole seconds.
    static func text(_ date: Date, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        // The whole seconds of the milliseconds written beside it, so `_ms` and the text never disagree.
        let millis = date.millisecondsSince1970
        let whole = Date(timeIntervalSince1970: Double(millis / 1000 - (millis % 1000 < 0 ? 1 : 0)))
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: whole)
        func two(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : String(value)
        }
        return
            "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
    }
}
