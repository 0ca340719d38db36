import Foundation
import Hummingbird
import IAPCatalog
import IAPServerAPI
import IAPSignedData

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
            only = try await consoleCustomer(search, bundleID: app).map { [$0.id] } ?? []
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

extension ValidationService {
    /// The customer the console's search names: by any id stored here (app user id or alias, app account token,
    /// transaction or original transaction id), else by an order id from a customer's emailed receipt, which only
    /// Apple can resolve: the app's App Store Server API key looks the order up, and the customer is whoever owns its
    /// first transaction here. Nil when neither finds one.
    func consoleCustomer(_ search: String, bundleID: String) async throws(ServiceError) -> CustomerKey? {
        guard search.utf8.count <= 1_024,
            !search.hasControlCharacters
        else {
            throw .badRequest("invalidCustomerId", "a customer id is at most 1,024 bytes, without control characters")
        }
        let key = (try? Self.normalizedToken(search)) ?? search
        if let found = try await customer(matching: key, bundleID: bundleID) { return found }
        guard let client = try app(bundleID: bundleID).configuration.serverAPI,
            search.utf8.count <= 64, search.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return nil }
        let order: OrderLookup
        do { order = try await client.lookUpOrder(search) } catch {
            throw ServiceError(
                .upstreamFailed, "orderLookupFailed",
                "'\(search)' is no id stored here, and Apple's order lookup answered \(error.code): \(error.reason)")
        }
        for transaction in order.transactions {
            guard let original = transaction.originalTransactionID else { continue }
            if let found = try await customer(matching: original, bundleID: bundleID) { return found }
        }
        return nil
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
