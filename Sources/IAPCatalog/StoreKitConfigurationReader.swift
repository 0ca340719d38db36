import Foundation

/// Reads Xcode's `.storekit` configuration files, format versions 1 to 5.
///
/// Version 1 lists `products` and `subscriptionGroups`; later versions add `nonRenewingSubscriptions`, a settings
/// block with the storefront and locale, `introductoryOffers` arrays beside `introductoryOffer`, ad hoc (promotional)
/// offers, offer codes, win-back offers and billing plans. Keys IAPKit does not use are ignored.
struct StoreKitConfigurationReader {
    let fileName: String

    func read(_ data: Data) throws(CatalogError) -> Catalog {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw CatalogError(.malformedFile, file: fileName, keyPath: "", "not JSON: \(error.localizedDescription)")
        }
        let root = ConfigurationValue(
            value: try ConfigurationNode(foundation: parsed, file: fileName), path: "", file: fileName)
        guard case .dictionary = root.value else { throw root.error(.malformedFile, "the top level is not an object") }

        let version = root["version"]
        let major = try version["major"].int(default: 1)
        guard (1...5).contains(major) else {
            throw version.error(.unsupportedVersion, "format version \(major) (IAPKit reads 1 to 5)")
        }
        let minor = try version["minor"].int(default: 0)

        var products: [CatalogProduct] = []
        for item in try root["products"].array() {
            products.append(try product(item, kind: nil))
        }
        for item in try root["nonRenewingSubscriptions"].array() {
            products.append(try product(item, kind: .nonRenewable))
        }
        var groups: [SubscriptionGroup] = []
        for group in try root["subscriptionGroups"].array() {
            let id = try group["id"].string()
            var members: [(level: Int, order: Int, product: CatalogProduct)] = []
            for (order, item) in try group["subscriptions"].array().enumerated() {
                var subscription = try product(item, kind: .autoRenewable)
                subscription.subscription = try subscriptionInfo(item, groupID: id)
                members.append((subscription.subscription!.level, order, subscription))
            }
            members.sort { ($0.level, $0.order) < ($1.level, $1.order) }
            products += members.map(\.product)
            groups.append(
                SubscriptionGroup(
                    id: id, name: try group["name"].optionalString() ?? id, productIDs: members.map(\.product.id)))
        }
        var seen = Set<String>()
        for product in products where !seen.insert(product.id).inserted {
            throw CatalogError(
                .duplicateProduct, file: fileName, keyPath: "", "the product id \(product.id) appears twice")
        }
        return Catalog(
            products: products, subscriptionGroups: groups, settings: try settings(root["settings"]),
            formatVersion: "\(major).\(minor)")
    }

    private func product(_ item: ConfigurationValue, kind: ProductKind?) throws(CatalogError) -> CatalogProduct {
        let type = try item["type"].string()
        let resolved: ProductKind
        switch type {
        case "Consumable": resolved = .consumable
        case "NonConsumable": resolved = .nonConsumable
        case "NonRenewingSubscription": resolved = .nonRenewable
        case "RecurringSubscription": resolved = .autoRenewable
        default: throw item["type"].error(.invalidValue, "unknown product type \"\(type)\"")
        }
        if let kind, kind != resolved {
            throw item["type"].error(.invalidValue, "\"\(type)\" does not belong in this list")
        }
        var localizations: [ProductLocalization] = []
        for entry in try item["localizations"].array() {
            localizations.append(
                ProductLocalization(
                    locale: try entry["locale"].string(), displayName: try entry["displayName"].optionalString() ?? "",
                    description: try entry["description"].optionalString() ?? ""))
        }
        return CatalogProduct(
            id: try item["productID"].string(), kind: resolved,
            referenceName: try item["referenceName"].optionalString() ?? "", price: try item["displayPrice"].price(),
            familyShareable: try item["familyShareable"].bool(default: false), localizations: localizations)
    }

    private func subscriptionInfo(_ item: ConfigurationValue, groupID: String) throws(CatalogError) -> SubscriptionInfo
    {
        var introductory: SubscriptionOffer?
        if item["introductoryOffer"].isPresent {
            introductory = try offer(item["introductoryOffer"])
        } else if let first = try item["introductoryOffers"].array().first {
            introductory = try offer(first)
        }
        return SubscriptionInfo(
            groupID: groupID, level: try item["groupNumber"].int(default: 1),
            period: try item["recurringSubscriptionPeriod"].period(), introductoryOffer: introductory,
            promotionalOffers: try item["adHocOffers"].array().map { (entry) throws(CatalogError) in try offer(entry) },
            offerCodes: try item["codeOffers"].array().map { (entry) throws(CatalogError) in try offer(entry) },
            winBackOffers: try item["winbackOffers"].array().map { (entry) throws(CatalogError) in try offer(entry) })
    }

    private func offer(_ item: ConfigurationValue) throws(CatalogError) -> SubscriptionOffer {
        let mode = try item["paymentMode"].string()
        let paymentMode: SubscriptionOffer.PaymentMode
        switch mode {
        case "free": paymentMode = .freeTrial
        case "payAsYouGo": paymentMode = .payAsYouGo
        case "payUpFront": paymentMode = .payUpFront
        default: throw item["paymentMode"].error(.invalidValue, "unknown payment mode \"\(mode)\"")
        }
        return SubscriptionOffer(
            id: try item["offerID"].optionalString(), referenceName: try item["referenceName"].optionalString(),
            paymentMode: paymentMode, period: try item["subscriptionPeriod"].period(),
            numberOfPeriods: try item["numberOfPeriods"].int(default: 1), price: try item["displayPrice"].price())
    }

    private func settings(_ block: ConfigurationValue) throws(CatalogError) -> StoreKitSettings {
        var errors: [[String: String]] = []
        for entry in try block["_storeKitErrors"].array() {
            guard case .dictionary(let object) = entry.value else { continue }
            errors.append(object.compactMapValues(\.scalarText))
        }
        return StoreKitSettings(
            storefront: try block["_storefront"].optionalString(), locale: try block["_locale"].optionalString(),
            timeRate: try block["_timeRate"].int(default: 0),
            askToBuyEnabled: try block["_askToBuyEnabled"].bool(default: false),
            billingGracePeriodEnabled: try block["_billingGracePeriodEnabled"].bool(default: false),
            billingIssuesEnabled: try block["_billingIssuesEnabled"].bool(default: false),
            failTransactionsEnabled: try block["_failTransactionsEnabled"].bool(default: false),
            storeKitErrors: errors)
    }
}
