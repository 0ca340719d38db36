import Foundation
public import IAPCatalog

/// The florist shop of the seeds as a catalog: flowers and chocolates to keep, a plant-installation service to use
/// up, a VIP subscription group (gold above silver above bronze, gold also yearly) and a one-month pass.
public enum FloristCatalog {
    public static let flowers = "com.example.florist.flowers"
    public static let chocolates = "com.example.florist.chocolates"
    public static let installation = "com.example.florist.installation"
    public static let gold = "com.example.florist.vip.gold"
    public static let goldYearly = "com.example.florist.vip.gold.yearly"
    public static let silver = "com.example.florist.vip.silver"
    public static let bronze = "com.example.florist.vip.bronze"
    public static let monthPass = "com.example.florist.pass.month"
    public static let vipGroup = "VIP"

    public static let catalog: Catalog = {
        let month = SubscriptionPeriod(value: 1, unit: .month)
        let trial = SubscriptionOffer(
            paymentMode: .freeTrial, period: SubscriptionPeriod(value: 1, unit: .week), numberOfPeriods: 1)
        func vip(_ id: String, level: Int, period: SubscriptionPeriod = month, price: Decimal) -> CatalogProduct {
            CatalogProduct(
                id: id, kind: .autoRenewable, referenceName: id, price: price, familyShareable: true,
                subscription: SubscriptionInfo(
                    groupID: vipGroup, level: level, period: period, introductoryOffer: trial))
        }
        return Catalog(
            products: [
                CatalogProduct(id: flowers, kind: .nonConsumable, price: 2.99, familyShareable: true),
                CatalogProduct(id: chocolates, kind: .nonConsumable, price: 1.99),
                CatalogProduct(id: installation, kind: .consumable, price: 19.99),
                CatalogProduct(id: monthPass, kind: .nonRenewable, price: 4.99),
                vip(gold, level: 1, price: 9.99),
                vip(goldYearly, level: 1, period: SubscriptionPeriod(value: 1, unit: .year), price: 99.99),
                vip(silver, level: 2, price: 5.99),
                vip(bronze, level: 3, price: 2.99),
            ],
            subscriptionGroups: [
                SubscriptionGroup(id: vipGroup, name: "VIP", productIDs: [gold, goldYearly, silver, bronze])
            ])
    }()
}
