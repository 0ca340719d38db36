public import Foundation

/// An App Store app receipt (StoreKit 1): every documented field, typed, and every other attribute kept.
///
/// Build one from bytes with ``SignedReceipt``; build one by hand and sign it with ``ReceiptSigner``.
public struct AppReceipt: Hashable, Sendable, Codable {
    /// 0: the receipt type, which names the environment.
    public var environment: ReceiptEnvironment?
    /// 1: the App Store app id (adam id), production only.
    public var appItemID: ReceiptInteger?
    /// 2: the bundle identifier.
    public var bundleID: String
    /// 2: the exact value octets of the bundle identifier attribute (its DER encoding), an input of the device hash.
    public var bundleIDData: [UInt8]
    /// 3: the app version (`CFBundleVersion`) the receipt was issued for.
    public var appVersion: String
    /// 4: the opaque value, an input of the device hash.
    public var opaqueValue: [UInt8]
    /// 5: SHA-1(device identifier ‖ opaque value ‖ bundle id DER).
    public var sha1Hash: [UInt8]
    /// 12: when the receipt was created; the time its certificate chain is validated at.
    public var creationDate: Date?
    /// 17: the in-app purchase records, in the order the receipt holds them.
    public var inAppPurchases: [InAppPurchase]
    /// 18: the original purchase date of the app (undocumented).
    public var originalPurchaseDate: Date?
    /// 19: the version of the app the user first bought.
    public var originalAppVersion: String?
    /// 21: when the receipt expires (volume purchase receipts; Xcode writes 4001-01-01).
    public var expirationDate: Date?
    /// Every top-level attribute IAPKit does not interpret, as it came.
    public var unknownAttributes: [ReceiptAttribute]

    public init(
        environment: ReceiptEnvironment? = nil,
        appItemID: ReceiptInteger? = nil,
        bundleID: String,
        appVersion: String,
        opaqueValue: [UInt8] = [],
        sha1Hash: [UInt8] = [],
        creationDate: Date? = nil,
        inAppPurchases: [InAppPurchase] = [],
        originalPurchaseDate: Date? = nil,
        originalAppVersion: String? = nil,
        expirationDate: Date? = nil,
        unknownAttributes: [ReceiptAttribute] = []
    ) {
        self.environment = environment
        self.appItemID = appItemID
        self.bundleID = bundleID
        self.bundleIDData = Array(ReceiptAttribute.string(ReceiptAttributeType.bundleID, bundleID).value)
        self.appVersion = appVersion
        self.opaqueValue = opaqueValue
        self.sha1Hash = sha1Hash
        self.creationDate = creationDate
        self.inAppPurchases = inAppPurchases
        self.originalPurchaseDate = originalPurchaseDate
        self.originalAppVersion = originalAppVersion
        self.expirationDate = expirationDate
        self.unknownAttributes = unknownAttributes
    }
}

/// The attribute type numbers of the receipt format (APP_STORE_FORMATS.md section 1).
public enum ReceiptAttributeType {
    public static let receiptType = 0
    public static let appItemID = 1
    public static let bundleID = 2
    public static let appVersion = 3
    public static let opaqueValue = 4
    public static let sha1Hash = 5
    public static let creationDate = 12
    public static let inAppPurchase = 17
    public static let originalPurchaseDate = 18
    public static let originalAppVersion = 19
    public static let expirationDate = 21

    public static let quantity = 1701
    public static let productID = 1702
    public static let transactionID = 1703
    public static let purchaseDate = 1704
    public static let originalTransactionID = 1705
    public static let inAppOriginalPurchaseDate = 1706
    public static let productType = 1707
    public static let expiresDate = 1708
    public static let webOrderLineItemID = 1711
    public static let cancellationDate = 1712
    public static let isTrialPeriod = 1713
    public static let isInIntroOfferPeriod = 1719
    public static let promotionalOfferID = 1721
}
