import Foundation
import Hummingbird
import IAPCatalog

/// A page of an app's customers as `/console/customers` answers it; `next` continues the list.
struct CustomerList: ResponseEncodable {
    var bundleId: String
    var customers: [CustomerSummary]
    var next: String?
}

extension ValidationService {
    /// An app's customers a page at a time, or the one `search` names (an app user id or alias, an app account token,
    /// an original transaction id or a transaction id).
    func customerList(bundleID: String?, search: String?, after: String?, limit: Int) async throws(ServiceError)
        -> CustomerList
    {
        let app = try self.app(bundleID: bundleID).configuration.bundleID
        var only: [String]?
        if let search = search?.trimmingCharacters(in: .whitespaces), !search.isEmpty {
            let key = (try? Self.normalizedToken(search)) ?? search
            only = try await customer(matching: key, bundleID: app).map { [$0.id] } ?? []
        }
        do {
            let customers =
                only == [] ? [] : try await storage.customers(bundleID: app, after: after, only: only, limit: limit)
            return CustomerList(
                bundleId: app, customers: customers,
                next: only == nil && customers.count == limit ? customers.last?.customerId : nil)
        } catch {
            throw .storage(error)
        }
    }
}

/// `GET /console/names`: what the pages call an app's products and subscription groups instead of their ids (from
/// the app's catalog, in the catalog's locale; empty without a catalog).
struct CatalogNames: ResponseEncodable {
    var bundleId: String
    var products: [String: String]
    var groups: [String: String]
}

extension ValidationService {
    func catalogNames(bundleID: String?) throws(ServiceError) -> CatalogNames {
        let configuration = try app(bundleID: bundleID).configuration
        let catalog = configuration.catalog
        let locale = catalog?.settings.locale ?? "en_US"
        return CatalogNames(
            bundleId: configuration.bundleID,
            products: Dictionary(
                (catalog?.products ?? []).map { ($0.id, $0.displayName(for: locale)) }, uniquingKeysWith: { a, _ in a }),
            groups: Dictionary(
                (catalog?.subscriptionGroups ?? []).map { ($0.id, $0.name.isEmpty ? $0.id : $0.name) },
                uniquingKeysWith: { a, _ in a }))
    }
}
