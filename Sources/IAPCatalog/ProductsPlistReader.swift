import Foundation

/// Reads the `Products.plist` convention the open-source helpers use:
/// - a flat array of product ids (types unknown), or a dictionary whose `Products` is such an array;
/// - or a dictionary by type: `Consumable`, `Non-Consumable`, `Non-Renewing` arrays of ids, and `Subscriptions`, an
///   array of `{ "Group": name, "Products": [ids, highest service level first] }`.
struct ProductsPlistReader {
    let fileName: String

    func read(_ data: Data) throws(CatalogError) -> Catalog {
        let root = ConfigurationValue(value: try parse(data), path: "", file: fileName)
        var products: [CatalogProduct] = []
        var groups: [SubscriptionGroup] = []
        switch root.value {
        case .array?:
            products = try ids(root).map { CatalogProduct(id: $0, kind: nil) }
        case .dictionary?:
            if root["Products"].isPresent {
                products += try ids(root["Products"]).map { CatalogProduct(id: $0, kind: nil) }
            }
            for (key, kind) in [
                ("Consumable", ProductKind.consumable), ("Non-Consumable", .nonConsumable),
                ("Non-Renewing", .nonRenewable),
            ] {
                products += try ids(root[key]).map { CatalogProduct(id: $0, kind: kind) }
            }
            for group in try root["Subscriptions"].array() {
                let name = try group["Group"].string()
                let members = try ids(group["Products"])
                groups.append(SubscriptionGroup(id: name, name: name, productIDs: members))
                for (index, id) in members.enumerated() {
                    // The convention does not give periods: they stay unknown.
                    products.append(
                        CatalogProduct(
                            id: id, kind: .autoRenewable,
                            subscription: SubscriptionInfo(groupID: name, level: index + 1, period: nil)))
                }
            }
        default:
            throw root.error(.malformedFile, "the top level is neither an array nor a dictionary")
        }
        var seen = Set<String>()
        for product in products where !seen.insert(product.id).inserted {
            throw CatalogError(
                .duplicateProduct, file: fileName, keyPath: "", "the product id \(product.id) appears twice")
        }
        return Catalog(products: products, subscriptionGroups: groups)
    }

    /// The property list as nodes: binary ones by IAPKit's own reader, XML and text ones by Foundation's.
    private func parse(_ data: Data) throws(CatalogError) -> ConfigurationNode {
        if BinaryPropertyListReader.isBinary(data) {
            return try BinaryPropertyListReader(bytes: Array(data), file: fileName).read()
        }
        let parsed: Any
        do {
            parsed = try PropertyListSerialization.propertyList(from: data, format: nil)
        } catch {
            throw CatalogError(.malformedFile, file: fileName, keyPath: "", "neither JSON nor a property list")
        }
        return try ConfigurationNode(foundation: parsed, file: fileName)
    }

    private func ids(_ list: ConfigurationValue) throws(CatalogError) -> [String] {
        try list.array().map { (item) throws(CatalogError) in try item.string() }
    }
}
