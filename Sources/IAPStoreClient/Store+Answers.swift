public import IAPCatalog
public import IAPEntitlements

/// What the customer may use and what the store sells, every answer from the entitlement engine's snapshot.
extension Store {
    /// The configuration's products of one kind, in configuration order.
    public func products(of kind: ProductKind) -> [StoreProduct] { products.filter { $0.kind == kind } }

    /// A subscription group's products, highest service level first.
    public func subscriptions(inGroup groupID: String) -> [StoreProduct] {
        products.filter { $0.subscriptionGroupID == groupID }.sorted {
            (catalog.product($0.id)?.subscription?.level ?? .max)
                < (catalog.product($1.id)?.subscription?.level ?? .max)
        }
    }

    /// The subscription groups the configuration's products belong to, in configuration order.
    public var subscriptionGroupIDs: [String] {
        var seen: Set<String> = []
        return products.compactMap(\.subscriptionGroupID).filter { seen.insert($0).inserted }
    }

    /// Whether the customer may use the product now.
    public func isPurchased(_ productID: String) -> Bool { entitlements.isEntitled(to: productID) }

    /// Every product the customer may use now.
    public var purchasedProductIDs: Set<String> { entitlements.entitledProductIDs }

    /// The units of a consumable left: bought, minus used, minus refunded.
    public func consumableCount(_ productID: String) -> Int { entitlements.balance(of: productID) }

    /// A subscription group as the engine sees it: the active product with the highest level, its state, renewal
    /// date, auto-renew and next product, and a pending upgrade or downgrade. `group` is the group's id or, when no
    /// group has that id, its name in the product configuration (`"VIP"` for the florist's `21000001`).
    public func subscriptionInfo(group: String) -> SubscriptionGroupStatus? {
        entitlements.group(catalog.group(idOrName: group)?.id ?? group)
    }

    /// A non-consumable's purchase: its date and, when refunded or revoked, the date access ended.
    public func purchaseInfo(_ productID: String) -> PurchaseInfo? {
        if let owned = entitlements.nonConsumables.first(where: { $0.productID == productID }) {
            return PurchaseInfo(
                productID: productID, transactionID: owned.transactionID, purchaseDate: owned.purchaseDate,
                revocationDate: nil, ownership: owned.ownership, isActive: true)
        }
        if let revoked = entitlements.revokedTransactions.last(where: { $0.productID == productID }) {
            return PurchaseInfo(
                productID: productID, transactionID: revoked.transactionID, purchaseDate: revoked.purchaseDate,
                revocationDate: revoked.revocation.date, ownership: .purchased, isActive: false)
        }
        return nil
    }

    /// Whether the customer would get a group's introductory offer (never had one in the group).
    public func isEligibleForIntroductoryOffer(group groupID: String) -> Bool {
        entitlements.isEligibleForIntroductoryOffer(inGroup: groupID)
    }

    /// The last purchase state of a product.
    public func purchaseState(_ productID: String) -> PurchaseState { purchaseStates[productID] ?? .notStarted }
}
