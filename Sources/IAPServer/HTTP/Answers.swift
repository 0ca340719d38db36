import Foundation
import Hummingbird
import IAPEntitlements

/// The JSON answers of the API (errors are ``ErrorBody``).
enum Answers {
    /// What `POST /v1/customers/{id}/refresh` fetched, and the entitlements after it.
    struct Refresh: ResponseEncodable {
        var customer: String
        var bundleId: String
        var transactionsFetched: Int
        var renewalsFetched: Int
        var entitlements: Entitlements
    }

    /// A customer's entitlements.
    struct Entitlements: ResponseEncodable {
        /// Absent only when a receipt without purchases was posted without an app account token.
        var customerId: String?
        var bundleId: String
        /// The products the customer may use now, sorted.
        var entitledProductIds: [String]
        var entitlements: EntitlementSnapshot

        init(customerID: String?, bundleID: String, _ snapshot: EntitlementSnapshot) {
            customerId = customerID
            bundleId = bundleID
            entitledProductIds = snapshot.entitledProductIDs.sorted()
            entitlements = snapshot
        }

        init(_ customer: CustomerKey, _ snapshot: EntitlementSnapshot) {
            self.init(customerID: customer.id, bundleID: customer.bundleID, snapshot)
        }
    }

    /// A customer's stored transactions.
    struct Transactions: ResponseEncodable {
        struct Item: Encodable {
            var transactionId: String
            var originalTransactionId: String
            var productId: String
            var signedDate: Date
            var appAccountToken: String?
            var document: String
            var record: PurchaseRecord
        }
        var customerId: String
        var bundleId: String
        var transactions: [Item]
        /// The cursor of the next page, when there is one.
        var next: String?

        /// One page, as the storage read it with one more than `limit` (which tells whether there is a next page).
        init(_ customer: CustomerKey, _ stored: [StoredTransaction], limit: Int) {
            customerId = customer.id
            bundleId = customer.bundleID
            let page = stored.prefix(limit)
            transactions = page.map {
                Item(
                    transactionId: $0.transactionID, originalTransactionId: $0.originalTransactionID,
                    productId: $0.productID, signedDate: $0.signedDate, appAccountToken: $0.appAccountToken,
                    document: $0.document, record: $0.record)
            }
            next = stored.count > page.count ? page.last?.transactionID : nil
        }
    }

    /// What a login did, and the entitlements of the customer logged in.
    struct Login: ResponseEncodable {
        var customerId: String
        var bundleId: String
        var merged: Bool
        var movedOriginalTransactionIds: [String]
        var entitledProductIds: [String]
        var entitlements: EntitlementSnapshot
    }

    struct Consumption: ResponseEncodable {
        var recorded: Bool
        var customerId: String
        var balance: Int
        var entitlements: EntitlementSnapshot
    }

    struct Notification: ResponseEncodable {
        var status: String
    }

    struct Health: ResponseEncodable {
        var status: String
        var apps: [String]
        /// `reachable` or `unreachable`.
        var database: String
        /// Absent while the database is unreachable.
        var storage: StorageCounts?
        /// What each addition says of itself (`localAppStore`: `sells`, `sellsUnconfirmed`, `sellsElsewhere` or `noneSells`).
        var additions: [String: String]?
    }

    struct Ready: ResponseEncodable {
        var ready: Bool
    }
}
