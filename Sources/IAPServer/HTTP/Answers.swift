import Foundation
import IAPEntitlements

/// The JSON answers of the API (errors are ``ErrorBody``).
enum Answers {
    /// A customer's entitlements.
    struct Entitlements: Encodable {
        var customerId: String
        var bundleId: String
        /// The products the customer may use now, sorted.
        var entitledProductIds: [String]
        var entitlements: EntitlementSnapshot

        init(_ customer: CustomerKey, _ snapshot: EntitlementSnapshot) {
            customerId = customer.id
            bundleId = customer.bundleID
            entitledProductIds = snapshot.entitledProductIDs.sorted()
            entitlements = snapshot
        }
    }

    /// A customer's stored transactions.
    struct Transactions: Encodable {
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

        init(_ customer: CustomerKey, _ records: CustomerRecords) {
            customerId = customer.id
            bundleId = customer.bundleID
            transactions = records.transactions.map {
                Item(
                    transactionId: $0.transactionID, originalTransactionId: $0.originalTransactionID,
                    productId: $0.productID, signedDate: $0.signedDate, appAccountToken: $0.appAccountToken,
                    document: $0.document, record: $0.record)
            }
        }
    }

    struct Consumption: Encodable {
        var recorded: Bool
        var customerId: String
        var balance: Int
        var entitlements: EntitlementSnapshot
    }

    struct Notification: Encodable {
        var status: String
    }

    struct Health: Encodable {
        var status: String
        var apps: [String]
        var storage: StorageCounts
    }
}
