public import IAPCatalog
public import IAPEntitlements

extension SimulatorEntitlements {
    /// Where an entitlement snapshot (the engine's reading of the artifacts) differs from this view, one sentence
    /// each; empty when they agree. Non-renewing passes are left out: their duration is the app's policy, not the
    /// store's. Consumables compare what was bought minus refunds (the snapshot holds no consumptions here).
    public func differences(from snapshot: EntitlementSnapshot, catalog: Catalog) -> [String] {
        var differences: [String] = []
        let passes = Set(catalog.products.filter { $0.kind == .nonRenewable }.map(\.id))
        let engineEntitled = snapshot.entitledProductIDs.subtracting(passes)
        if engineEntitled != entitledProductIDs {
            differences.append(
                "entitled: engine \(engineEntitled.sorted()), simulator \(entitledProductIDs.sorted())")
        }
        for (product, purchased) in consumablePurchased.sorted(by: { $0.key < $1.key })
        where snapshot.balance(of: product) != purchased {
            differences.append("\(product) balance: engine \(snapshot.balance(of: product)), simulator \(purchased)")
        }
        for (group, subscription) in subscriptions.sorted(by: { $0.key < $1.key }) {
            guard let status = snapshot.group(group) else {
                differences.append("group \(group): the engine has no such group")
                continue
            }
            func check<T: Equatable>(_ name: String, _ engine: T, _ simulator: T) {
                if engine != simulator {
                    differences.append("group \(group) \(name): engine \(engine), simulator \(simulator)")
                }
            }
            check("state", status.state, subscription.state)
            check("product", status.currentProductID, subscription.productID)
            check("expiry", status.expiresDate, subscription.expiresDate)
            check("auto-renew", status.willAutoRenew, subscription.willAutoRenew)
            check("renews to", status.renewsToProductID, subscription.renewsToProductID)
            if subscription.state == .inGracePeriod {
                check("grace end", status.gracePeriodExpiresDate, subscription.gracePeriodExpiresDate)
            }
        }
        return differences
    }
}
