public import Foundation

/// What a customer owns and may use at one moment: the ``EntitlementEngine``'s answer.
///
/// Lists are sorted (by product id, group key) so two snapshots of the same history compare equal.
public struct EntitlementSnapshot: Hashable, Sendable, Codable {
    /// The moment the snapshot describes.
    public var moment: Date
    /// Non-consumables owned (bought or shared by family, not revoked).
    public var nonConsumables: [OwnedProduct]
    /// One balance per consumable product ever bought or consumed.
    public var consumables: [ConsumableBalance]
    /// One status per subscription group the customer ever subscribed in.
    public var subscriptionGroups: [SubscriptionGroupStatus]
    /// One status per non-renewing subscription product bought.
    public var nonRenewingSubscriptions: [NonRenewingStatus]
    /// Purchases whose type neither the catalog nor the record states: reported, never guessed.
    public var unclassified: [UnclassifiedPurchase]
    /// Transactions refunded or revoked by this moment.
    public var revokedTransactions: [RevokedTransaction]
    /// The version of the app the customer first obtained (receipt attribute 19 / app transaction), if known.
    public var originalAppVersion: String?

    public init(
        moment: Date,
        nonConsumables: [OwnedProduct] = [],
        consumables: [ConsumableBalance] = [],
        subscriptionGroups: [SubscriptionGroupStatus] = [],
        nonRenewingSubscriptions: [NonRenewingStatus] = [],
        unclassified: [UnclassifiedPurchase] = [],
        revokedTransactions: [RevokedTransaction] = [],
        originalAppVersion: String? = nil
    ) {
        self.moment = moment
        self.nonConsumables = nonConsumables
        self.consumables = consumables
        self.subscriptionGroups = subscriptionGroups
        self.nonRenewingSubscriptions = nonRenewingSubscriptions
        self.unclassified = unclassified
        self.revokedTransactions = revokedTransactions
        self.originalAppVersion = originalAppVersion
    }

    /// The product ids that grant access now: owned non-consumables, the current product of every group that
    /// grants access, and active non-renewing subscriptions. Consumables are balances, not entitlements.
    public var entitledProductIDs: Set<String> {
        var ids = Set(nonConsumables.map(\.productID))
        for group in subscriptionGroups where group.isEntitled {
            if let product = group.currentProductID { ids.insert(product) }
        }
        for pass in nonRenewingSubscriptions where pass.state == .active { ids.insert(pass.productID) }
        return ids
    }

    /// Whether `productID` grants access now (see ``entitledProductIDs``).
    public func isEntitled(to productID: String) -> Bool { entitledProductIDs.contains(productID) }

    /// The consumable balance of `productID` (0 if never bought).
    public func balance(of productID: String) -> Int {
        consumables.first { $0.productID == productID }?.balance ?? 0
    }

    /// The status of a subscription group, by its id (or, for a group no catalog or record names, its key).
    public func group(_ id: String) -> SubscriptionGroupStatus? {
        subscriptionGroups.first { $0.groupID == id } ?? subscriptionGroups.first { $0.key == id }
    }

    /// Whether the customer may still use an introductory offer in `groupID`: true for a group never subscribed in.
    public func isEligibleForIntroductoryOffer(inGroup groupID: String) -> Bool {
        group(groupID)?.introductoryOfferEligible ?? true
    }

    /// The original-app-version gate: did the customer obtain the app before `version`?
    ///
    /// `nil` when the original version is unknown (Xcode receipts carry none). On iOS the receipt holds the build
    /// number (`CFBundleVersion`) and the sandbox always says "1.0": compare against build numbers, and test in
    /// production terms.
    public func obtainedAppBefore(version: String) -> Bool? {
        guard let originalAppVersion else { return nil }
        return AppVersion(originalAppVersion) < AppVersion(version)
    }
}

/// A non-consumable the customer owns.
public struct OwnedProduct: Hashable, Sendable, Codable {
    public var productID: String
    /// The transaction that grants it (the customer's own purchase before a family-shared one, then the earliest).
    public var transactionID: String
    public var originalTransactionID: String
    public var purchaseDate: Date
    public var ownership: Ownership
    public var source: PurchaseSource
}

/// A consumable's balance with the history that produced it.
public struct ConsumableBalance: Hashable, Sendable, Codable {
    public var productID: String
    /// Units bought (including ones later refunded).
    public var purchased: Int
    /// Units the app recorded as consumed.
    public var consumed: Int
    /// Units refunded.
    public var refunded: Int
    /// What is left to use: never below zero.
    public var balance: Int
    /// Units consumed or refunded when nothing was left (a refund after use, a consumption never bought): the
    /// customer's debt, which the balance does not carry forward.
    public var shortfall: Int
    /// Every purchase, consumption and refund in time order, with the balance after it.
    public var history: [ConsumableEvent]
}

/// One step of a consumable's history.
public struct ConsumableEvent: Hashable, Sendable, Codable {
    public enum Kind: String, Hashable, Sendable, Codable { case purchase, consumption, refund }
    public var date: Date
    public var kind: Kind
    public var quantity: Int
    public var transactionID: String?
    public var balanceAfter: Int
}

/// Where a subscription group stands.
public enum SubscriptionState: String, Hashable, Sendable, Codable {
    /// A period is running (App Store Server API status 1).
    case subscribed
    /// Renewal failed, Apple is retrying, and the customer keeps access until the grace period ends (status 4).
    case inGracePeriod
    /// Renewal failed and Apple is retrying; no access (status 3).
    case inBillingRetry
    /// The last period ended (status 2); ``SubscriptionGroupStatus/expirationReason`` says why.
    case expired
    /// The last period was refunded or revoked (status 5).
    case revoked

    /// The App Store Server API's number for this state.
    public var appStoreStatus: Int {
        switch self {
        case .subscribed: 1
        case .expired: 2
        case .inBillingRetry: 3
        case .inGracePeriod: 4
        case .revoked: 5
        }
    }

    /// Whether the customer may use the subscription in this state.
    public var grantsAccess: Bool { self == .subscribed || self == .inGracePeriod }
}

/// How the product a subscription renews to compares with the current one.
public enum PlanChange: String, Hashable, Sendable, Codable {
    case upgrade
    /// To a lower service level, at the next renewal.
    case downgrade
    /// To another product of the same level, at the next renewal.
    case crossgrade
    /// To another product whose level is unknown (no catalog).
    case otherProduct
}

/// One subscription group's status.
public struct SubscriptionGroupStatus: Hashable, Sendable, Codable {
    /// The group's id from the catalog or the records; `nil` when neither names it.
    public var groupID: String?
    /// ``groupID``, or `original:<original transaction id>` for a group nothing names.
    public var key: String
    public var state: SubscriptionState
    /// The product that grants access now, or that granted it last: the highest service level among the active
    /// periods.
    public var currentProductID: String?
    /// The current product's service level in the catalog (1 is the highest).
    public var serviceLevel: Int?
    public var currentTransactionID: String?
    public var originalTransactionID: String?
    public var ownership: Ownership?
    /// When the current (or last) period started and ends.
    public var periodStart: Date?
    public var expiresDate: Date?
    public var gracePeriodExpiresDate: Date?
    /// Set when ``state`` is ``SubscriptionState/expired``.
    public var expirationReason: ExpirationReason?
    /// Set when ``state`` is ``SubscriptionState/revoked``.
    public var revocation: Revocation?
    /// `nil` when no renewal information was given.
    public var willAutoRenew: Bool?
    /// The product the next period will be, when it renews.
    public var renewsToProductID: String?
    /// Set when the next period changes product (a downgrade or crossgrade waiting for the renewal).
    public var pendingChange: PlanChange?
    /// Whether an introductory offer (free trial, intro price) is still available in this group.
    public var introductoryOfferEligible: Bool
    /// Transactions that stopped counting because the customer upgraded.
    public var upgradedTransactionIDs: [String]

    /// Whether the group grants access now.
    public var isEntitled: Bool { state.grantsAccess }
}

/// A non-renewing subscription's status, with the duration the caller defined.
public struct NonRenewingStatus: Hashable, Sendable, Codable {
    public enum State: String, Hashable, Sendable, Codable {
        case active, expired
        /// No duration was configured for the product and the records state no end: it cannot be told.
        case durationUnknown
    }
    public var productID: String
    public var state: State
    /// The start of the unbroken run of purchased time that contains the moment (or the last one).
    public var startDate: Date?
    /// When the purchased time runs out.
    public var expiresDate: Date?
    public var transactionIDs: [String]
}

/// A purchase whose product type cannot be known.
public struct UnclassifiedPurchase: Hashable, Sendable, Codable {
    public var productID: String
    public var transactionID: String
    public var purchaseDate: Date
    public var quantity: Int
}

/// A refunded or revoked transaction.
public struct RevokedTransaction: Hashable, Sendable, Codable {
    public var productID: String
    public var transactionID: String
    public var purchaseDate: Date
    public var revocation: Revocation
}
