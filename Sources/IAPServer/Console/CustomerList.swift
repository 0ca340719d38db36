import Foundation
import Hummingbird

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
