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
    /// Transactions refunded or revoked by this moment, oldest first: every one, or, for a long history kept compact,
    /// the most recent ones after ``earlierRevocations`` others.
    public var revokedTransactions: [RevokedTransaction]
    /// How many revocations came before ``revokedTransactions`` (absent when it lists every one).
    public var earlierRevocations: Int?
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
