public import Foundation

/// One in-app purchase record of a receipt (the attributes inside attribute 17).
public struct InAppPurchase: Hashable, Sendable, Codable {
    /// The kind of product, from the undocumented attribute 1707.
    public struct ProductType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let nonConsumable = ProductType(rawValue: 0)
        public static let consumable = ProductType(rawValue: 1)
        public static let nonRenewingSubscription = ProductType(rawValue: 2)
        public static let autoRenewableSubscription = ProductType(rawValue: 3)

        public var description: String {
            switch self {
            case .nonConsumable: "nonConsumable"
            case .consumable: "consumable"
            case .nonRenewingSubscription: "nonRenewable"
            case .autoRenewableSubscription: "autoRenewable"
            default: "unknown(\(rawValue))"
            }
        }
    }

    /// 1701: how many were bought.
    public var quantity: Int
    /// 1702.
    public var productID: String
    /// 1703.
    public var transactionID: String
    /// 1705: the first transaction of this subscription or restored purchase.
    public var originalTransactionID: String?
    /// 1704.
    public var purchaseDate: Date?
    /// 1706 (missing in some Xcode receipts).
    public var originalPurchaseDate: Date?
    /// 1707 (undocumented).
    public var productType: ProductType?
    /// 1708: subscriptions only.
    public var expiresDate: Date?
    /// 1711: exact, however large.
    public var webOrderLineItemID: ReceiptInteger?
    /// 1712: set when Apple refunded or revoked the purchase.
    public var cancellationDate: Date?
    /// 1713.
    public var isTrialPeriod: Bool
    /// 1719.
    public var isInIntroOfferPeriod: Bool
    /// 1721.
    public var promotionalOfferID: String?
    /// Every attribute of the record whose type IAPKit does not interpret, as it came.
    public var unknownAttributes: [ReceiptAttribute]

    public init(
        quantity: Int = 1,
        productID: String,
        transactionID: String,
        originalTransactionID: String? = nil,
        purchaseDate: Date? = nil,
        originalPurchaseDate: Date? = nil,
        productType: ProductType? = nil,
        expiresDate: Date? = nil,
        webOrderLineItemID: ReceiptInteger? = nil,
        cancellationDate: Date? = nil,
        isTrialPeriod: Bool = false,
        isInIntroOfferPeriod: Bool = false,
        promotionalOfferID: String? = nil,
        unknownAttributes: [ReceiptAttribute] = []
    ) {
        self.quantity = quantity
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.productType = productType
        self.expiresDate = expiresDate
        self.webOrderLineItemID = webOrderLineItemID
        self.cancellationDate = cancellationDate
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.promotionalOfferID = promotionalOfferID
        self.unknownAttributes = unknownAttributes
    }
}
