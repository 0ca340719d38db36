import Crypto
import Foundation
import IAPCatalog
import IAPEntitlements
import IAPSignedData
import IAPSimulator

/// Reading a scenario's values: products by short name, groups by name, durations, dates.
struct ScenarioValues: Sendable {
    let catalog: Catalog
    /// The dotted prefix every product id of the catalog shares (`com.example.florist.`), or "".
    let sharedPrefix: String

    init(catalog: Catalog) {
        self.catalog = catalog
        let ids = catalog.products.map(\.id)
        var prefix = ids.first?.split(separator: ".").dropLast().map(String.init) ?? []
        for id in ids {
            let parts = id.split(separator: ".").map(String.init)
            while !prefix.isEmpty && !(parts.count > prefix.count && Array(parts.prefix(prefix.count)) == prefix) {
                prefix.removeLast()
            }
        }
        sharedPrefix = prefix.isEmpty ? "" : prefix.joined(separator: ".") + "."
    }

    /// A product id, or its unique last dot-separated part(s): `flowers`, `vip.gold`.
    func product(_ name: String) throws(ScenarioError) -> String {
        if catalog.product(name) != nil { return name }
        let matches = catalog.products.map(\.id).filter { $0.hasSuffix("." + name) }
        guard matches.count == 1 else {
            throw ScenarioError(
                .unknownName,
                matches.isEmpty
                    ? "no product '\(name)' in the catalog" : "'\(name)' could be \(matches.joined(separator: " or "))")
        }
        return matches[0]
    }

    /// A group id or name; the only group when nil.
    func group(_ name: String?) throws(ScenarioError) -> String {
        guard let name else {
            guard catalog.subscriptionGroups.count == 1 else {
                throw ScenarioError(.missingValue, "say which subscription group")
            }
            return catalog.subscriptionGroups[0].id
        }
        guard let group = catalog.subscriptionGroups.first(where: { $0.id == name || $0.name == name }) else {
            throw ScenarioError(.unknownName, "no subscription group '\(name)'")
        }
        return group.id
    }

    /// The shortest readable name of a product: its id without the shared prefix.
    func short(_ productID: String) -> String {
        sharedPrefix.isEmpty || !productID.hasPrefix(sharedPrefix)
            ? productID : String(productID.dropFirst(sharedPrefix.count))
    }

    /// A sentence with every product id written short.
    func shorten(_ text: String) -> String {
        sharedPrefix.isEmpty ? text : text.replacingOccurrences(of: sharedPrefix, with: "")
    }

    /// `P3D`, `P2W`, `P1M`, `P1Y` (calendar) or `90s`, `15m`, `2h`, `3d` (exact).
    static func duration(_ text: String, from start: Date) -> TimeInterval? {
        if let period = SubscriptionPeriod(iso8601: text) { return period.advance(start).timeIntervalSince(start) }
        guard let unit = text.last, let number = Double(text.dropLast()), number >= 0, number <= 1e9 else { return nil }
        switch unit {
        case "s": return number
        case "m": return number * 60
        case "h": return number * 3600
        case "d": return number * 86_400
        default: return nil
        }
    }

    static func date(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601)) ?? (try? Date(text + "T00:00:00Z", strategy: .iso8601))
    }
}
