public import Foundation
public import IAPCatalog

/// One purchase, whatever it came from: a receipt's in-app entry, a signed transaction, or the simulator.
///
/// Every source maps to this one type so the ``EntitlementEngine`` answers the same way on the device, on the
/// server and in the simulator. Fields a source does not carry stay `nil` (or `false`) and ``source`` says where the
/// record came from.
public struct PurchaseRecord: Hashable, Sendable, Codable {
    public var transactionID: String
    /// The first transaction of this subscription (or of a restored purchase); the transaction's own id if unknown.
    public var originalTransactionID: String
    public var productID: String
    /// The product type the record states (a JWS `type`, receipt attribute 1707); `nil` when it says nothing.
    public var kind: ProductKind?
    /// The subscription group the record states (JWS `subscriptionGroupIdentifier`); receipts do not carry one.
    public var subscriptionGroupID: String?
    public var quantity: Int
    public var purchaseDate: Date
    public var originalPurchaseDate: Date?
    /// When this period of an auto-renewable (or a stated non-renewing) subscription ends.
    public var expiresDate: Date?
    public var ownership: Ownership
    /// Set when Apple refunded or revoked the purchase; the purchase stops granting from that moment.
    public var revocation: Revocation?
    /// The customer moved to a higher-level subscription; this period stops counting when the new one starts.
    public var isUpgraded: Bool
    /// The offer this period was bought with (introductory, promotional, offer code, win-back), if any.
    public var offer: OfferUse?
    public var appAccountToken: String?
    public var webOrderLineItemID: String?
    /// `Production`, `Sandbox`, `Xcode`... as the source says it.
    public var environment: String?
    public var source: PurchaseSource
    /// When the source stated this copy: a signed transaction's `signedDate`, a receipt's creation date. Of two
    /// copies of one transaction from the same kind of source, the later statement wins, so a refund reversed after a
    /// dispute (REFUND_REVERSED, a copy signed later without the revocation) gives access back.
    public var signedDate: Date?
    /// What the customer paid, in milli-units of ``currency``, when the source states it (signed transactions do).
    public var price: Int64?
    /// The ISO 4217 currency of ``price``.
    public var currency: String?
    /// The storefront (ISO 3166-1 alpha-3) the purchase was made in, when the source states it.
    public var storefront: String?

    public init(
        transactionID: String,
        originalTransactionID: String? = nil,
        productID: String,
        kind: ProductKind? = nil,
        subscriptionGroupID: String? = nil,
        quantity: Int = 1,
        purchaseDate: Date,
        originalPurchaseDate: Date? = nil,
        expiresDate: Date? = nil,
        ownership: Ownership = .purchased,
        revocation: Revocation? = nil,
        isUpgraded: Bool = false,
        offer: OfferUse? = nil,
        appAccountToken: String? = nil,
        webOrderLineItemID: String? = nil,
        environment: String? = nil,
        source: PurchaseSource,
        signedDate: Date? = nil,
        price: Int64? = nil,
        currency: String? = nil,
        storefront: String? = nil
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID ?? transactionID
        self.productID = productID
        self.kind = kind
        self.subscriptionGroupID = subscriptionGroupID
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.ownership = ownership
        self.revocation = revocation
        self.isUpgraded = isUpgraded
        self.offer = offer
        self.appAccountToken = appAccountToken
        self.webOrderLineItemID = webOrderLineItemID
        self.environment = environment
        self.source = source
        self.signedDate = signedDate
        self.price = price
        self.currency = currency
        self.storefront = storefront
    }

    /// Whether the purchase had been revoked (refunded, family access withdrawn) at `moment`.
    public func isRevoked(at moment: Date) -> Bool {
        guard let revocation else { return false }
        return revocation.date <= moment
    }
}

/// Where a ``PurchaseRecord`` or ``RenewalRecord`` came from.
public enum PurchaseSource: String, Hashable, Sendable, Codable, Comparable {
    /// An in-app entry of a verified app receipt (StoreKit 1).
    case receipt
    /// A verified signed transaction or renewal info (StoreKit 2, App Store Server API, notifications).
    case signedTransaction
    /// IAPKit's local App Store.
    case simulator
    /// Entered by hand (tests, migrations, support tools).
    case manual

    /// How much a source is trusted to be complete when two describe the same transaction: signed data first.
    var rank: Int {
        switch self {
        case .signedTransaction: 0
        case .simulator: 1
        case .receipt: 2
        case .manual: 3
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}

/// Who paid: the customer, or a family member sharing with them.
public enum Ownership: String, Hashable, Sendable, Codable {
    case purchased
    case familyShared
}

/// A refund or revocation: from `date` on, the purchase grants nothing.
public struct Revocation: Hashable, Sendable, Codable {
    /// What happened, as far as the source says.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// The whole purchase was refunded.
        case refund
        /// Part of the price was refunded (`revocationPercentage` says how much).
        case proratedRefund
        /// The purchaser stopped sharing it, left the family, or was refunded: a family member loses it.
        case familyRevoke
        /// The source says only that it was cancelled (a receipt's cancellation date).
        case unspecified
    }

    public var date: Date
    public var kind: Kind
    /// `appIssue` or `other` (JWS `revocationReason` 1/0), when given.
    public var reason: String?
    /// For prorated refunds: the refunded share in thousandths of a percent (100000 = all), as Apple gives it.
    public var percentage: Int?

    public init(date: Date, kind: Kind, reason: String? = nil, percentage: Int? = nil) {
        self.date = date
        self.kind = kind
        self.reason = reason
        self.percentage = percentage
    }
}

/// The offer a subscription period was bought with.
public struct OfferUse: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A free trial or an introductory price: uses up the group's introductory-offer eligibility.
        case introductory
        case promotional
        case offerCode
        case winBack
        /// An offer type this version does not know (the raw number is in ``identifier`` if nothing else).
        case other
    }

    public var kind: Kind
    /// The offer's identifier (promotional offers, offer codes, win-back offers).
    public var identifier: String?
    /// Whether the period was a free trial (receipt `is_trial_period`, JWS `offerDiscountType` FREE_TRIAL).
    public var isFreeTrial: Bool

    public init(kind: Kind, identifier: String? = nil, isFreeTrial: Bool = false) {
        self.kind = kind
        self.identifier = identifier
        self.isFreeTrial = isFreeTrial
    }
}

/// What the customer's app recorded as used up of a consumable: the only way the engine learns about consumption.
public struct ConsumptionRecord: Hashable, Sendable, Codable {
    public var productID: String
    public var quantity: Int
    public var date: Date
    /// The purchase it draws on, when the app knows it (for the history only).
    public var transactionID: String?
    /// A caller-chosen identifier so the same consumption recorded twice counts once.
    public var id: String?

    public init(productID: String, quantity: Int = 1, date: Date, transactionID: String? = nil, id: String? = nil) {
        self.productID = productID
        self.quantity = quantity
        self.date = date
        self.transactionID = transactionID
        self.id = id
    }
}
