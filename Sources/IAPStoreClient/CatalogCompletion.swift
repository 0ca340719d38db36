import Foundation
public import IAPCatalog

extension Catalog {
    /// The catalog with what the store says of its products where the configuration is silent, as StoreHelper
    /// completes a flat `Products.plist` (ids only) with `Product.products(for:)`: each product's kind, price and
    /// family sharing; a subscription's group, service level, period and offers; the groups themselves. What the configuration
    /// says stays.
    public func completed(with storeProducts: [StoreProduct]) -> Catalog {
        var catalog = self
        let told = Dictionary(storeProducts.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for index in catalog.products.indices {
            guard let product = told[catalog.products[index].id] else { continue }
            catalog.products[index].kind = catalog.products[index].kind ?? product.kind
            catalog.products[index].price = catalog.products[index].price ?? product.price
            if !catalog.products[index].familyShareable {
                catalog.products[index].familyShareable = product.isFamilyShareable
            }
            guard product.kind == .autoRenewable, let groupID = product.subscriptionGroupID else { continue }
            var subscription =
                catalog.products[index].subscription
                ?? SubscriptionInfo(groupID: groupID, level: product.subscriptionLevel ?? 0, period: nil)
            subscription.period = subscription.period ?? product.subscriptionPeriod
            subscription.introductoryOffer = subscription.introductoryOffer ?? product.introductoryOffer
            if subscription.promotionalOffers.isEmpty { subscription.promotionalOffers = product.promotionalOffers }
            if subscription.winBackOffers.isEmpty { subscription.winBackOffers = product.winBackOffers }
            catalog.products[index].subscription = subscription
            if let group = catalog.subscriptionGroups.firstIndex(where: { $0.id == subscription.groupID }) {
                if !catalog.subscriptionGroups[group].productIDs.contains(product.id) {
                    catalog.subscriptionGroups[group].productIDs.append(product.id)
                }
            } else {
                catalog.subscriptionGroups.append(
                    SubscriptionGroup(
                        id: subscription.groupID, name: product.subscriptionGroupName ?? subscription.groupID,
                        productIDs: [product.id]))
            }
        }
        // Levels the store did not give follow the group's order (the first product is the highest level).
        for group in catalog.subscriptionGroups {
            let members = group.productIDs.compactMap { id in catalog.products.firstIndex { $0.id == id } }
            let ordered = members.sorted {
                (catalog.products[$0].subscription?.level ?? 0, $0) < (
                    catalog.products[$1].subscription?.level ?? 0, $1
                )
            }
            for (rank, index) in ordered.enumerated() where catalog.products[index].subscription?.level == 0 {
                catalog.products[index].subscription?.level = rank + 1
            }
        }
        return catalog
    }
}
