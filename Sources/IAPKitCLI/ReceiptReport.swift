import Foundation
import IAPReceipts
import IAPTrust

/// The JSON view of a receipt that `iapkit receipt inspect --json` prints: every field, with `null` for absent ones.
struct ReceiptReport: Encodable {
    let file: String
    let receipt: AppReceipt

    enum Keys: String, CodingKey {
        case file, environment, receiptType, appItemId, bundleId, appVersion, originalAppVersion, creationDate
        case expirationDate, originalPurchaseDate, opaqueValue, sha1Hash, inAppPurchases, unknownAttributes
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(file, forKey: .file)
        try c.encode(receipt.environment?.normalized, forKey: .environment)
        try c.encode(receipt.environment?.rawValue, forKey: .receiptType)
        try c.encode(receipt.appItemID?.description, forKey: .appItemId)
        try c.encode(receipt.bundleID, forKey: .bundleId)
        try c.encode(receipt.appVersion, forKey: .appVersion)
        try c.encode(receipt.originalAppVersion, forKey: .originalAppVersion)
        try c.encode(receipt.creationDate.map(ReceiptDate.format), forKey: .creationDate)
        try c.encode(receipt.expirationDate.map(ReceiptDate.format), forKey: .expirationDate)
        try c.encode(receipt.originalPurchaseDate.map(ReceiptDate.format), forKey: .originalPurchaseDate)
        try c.encode(receipt.opaqueValue.hexString, forKey: .opaqueValue)
        try c.encode(receipt.sha1Hash.hexString, forKey: .sha1Hash)
        try c.encode(receipt.inAppPurchases.map(PurchaseReport.init), forKey: .inAppPurchases)
        try c.encode(receipt.unknownAttributes.map(AttributeReport.init), forKey: .unknownAttributes)
    }
}

struct PurchaseReport: Encodable {
    let purchase: InAppPurchase

    enum Keys: String, CodingKey {
        case productId, transactionId, originalTransactionId, quantity, productType, purchaseDate, originalPurchaseDate
        case expiresDate, cancellationDate, webOrderLineItemId, isTrialPeriod, isInIntroOfferPeriod, promotionalOfferId
        case unknownAttributes
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(purchase.productID, forKey: .productId)
        try c.encode(purchase.transactionID, forKey: .transactionId)
        try c.encode(purchase.originalTransactionID, forKey: .originalTransactionId)
        try c.encode(purchase.quantity, forKey: .quantity)
        try c.encode(purchase.productType?.description, forKey: .productType)
        try c.encode(purchase.purchaseDate.map(ReceiptDate.format), forKey: .purchaseDate)
        try c.encode(purchase.originalPurchaseDate.map(ReceiptDate.format), forKey: .originalPurchaseDate)
        try c.encode(purchase.expiresDate.map(ReceiptDate.format), forKey: .expiresDate)
        try c.encode(purchase.cancellationDate.map(ReceiptDate.format), forKey: .cancellationDate)
        // A string: the id can exceed what JSON numbers hold exactly.
        try c.encode(purchase.webOrderLineItemID?.description, forKey: .webOrderLineItemId)
        try c.encode(purchase.isTrialPeriod, forKey: .isTrialPeriod)
        try c.encode(purchase.isInIntroOfferPeriod, forKey: .isInIntroOfferPeriod)
        try c.encode(purchase.promotionalOfferID, forKey: .promotionalOfferId)
        try c.encode(purchase.unknownAttributes.map(AttributeReport.init), forKey: .unknownAttributes)
    }
}

struct AttributeReport: Encodable {
    let type: Int
    let version: Int
    let value: String

    init(_ attribute: ReceiptAttribute) {
        type = attribute.type
        version = attribute.version
        value = attribute.value.hexString
    }
}

/// A file that could not be read as a receipt, in JSON.
struct ErrorReport: Encodable {
    struct Detail: Encodable {
        let code: String
        let reason: String
        /// Where the failing document was nested (`data.signedTransactionInfo`), when it was.
        var field: String? = nil
    }
    let file: String
    let error: Detail
}
