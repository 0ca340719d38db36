import Foundation
import IAPCore
import IAPEntitlements

/// Customer identity: aliases (an anonymous customer merged into the one who logged in answers as them), the customers
/// who logged in (`iap_identified`), and purchases moved between customers.
extension SQLStorage {
    public func logIn(_ source: CustomerKey, as target: String, announcing announcer: EventAnnouncer?)
        async throws(StorageError) -> LoginOutcome
    {
        let bundleID = source.bundleID
        return try await inTransaction { db in
            let identified =
                !(try await db.rows(
                    SQLStatement(
                        "SELECT 1 AS found FROM iap_identified WHERE bundle_id = $1 AND customer_id = $2",
                        [.text(bundleID), .text(source.id)])
                ).isEmpty)
            try await db.run(
                SQLStatement(
                    "INSERT INTO iap_identified (bundle_id, customer_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                    [.text(bundleID), .text(target)]))
            // Logging in as oneself, or from a customer who logged in before (switching accounts): nothing merges.
            guard source.id != target, !identified else {
                return (LoginOutcome(merged: false, moved: []), commit: true)
            }
            let moved = try await db.rows(
                SQLStatement(
                    """
                    UPDATE iap_owners SET customer_id = $3, claimed = 1
                    WHERE bundle_id = $1 AND customer_id = $2
                    RETURNING original_transaction_id
                    """, [.text(bundleID), .text(source.id), .text(target)])
            ).map { try $0.text("original_transaction_id") }.sorted()
            for original in moved { try await Self.setOwner(of: original, bundleID: bundleID, to: target, db: db) }
            // The two digest rows, in one order, before the consumption rows: every write takes them in that order
            // (owner and transaction rows, digest rows, consumption rows; see `writeUpdatingDigests`).
            for customer in [source.id, target].sorted() {
                try await Self.dropDigest(of: CustomerKey(bundleID: bundleID, id: customer), db: db)
            }
            // Consumptions follow (one recorded under the same key by both stays once).
            try await db.run(
                SQLStatement(
                    """
                    INSERT INTO iap_consumptions (bundle_id, customer_id, idempotency_key, sequence, record)
                    SELECT bundle_id, $3, idempotency_key, sequence, record FROM iap_consumptions
                    WHERE bundle_id = $1 AND customer_id = $2
                    ON CONFLICT (bundle_id, customer_id, idempotency_key) DO NOTHING
                    """, [.text(bundleID), .text(source.id), .text(target)]))
            try await db.run(
                SQLStatement(
                    "DELETE FROM iap_consumptions WHERE bundle_id = $1 AND customer_id = $2",
                    [.text(bundleID), .text(source.id)]))
            try await db.run(
                SQLStatement(
                    "UPDATE iap_aliases SET customer_id = $3 WHERE bundle_id = $1 AND customer_id = $2",
                    [.text(bundleID), .text(source.id), .text(target)]))
            try await db.run(
                SQLStatement(
                    """
                    INSERT INTO iap_aliases (bundle_id, alias, customer_id) VALUES ($1, $2, $3)
                    ON CONFLICT (bundle_id, alias) DO UPDATE SET customer_id = excluded.customer_id
                    """, [.text(bundleID), .text(source.id), .text(target)]))
            if let announcer, !announcer.endpoints(bundleID).isEmpty, !moved.isEmpty {
                var transfers: [Transfer] = []
                for original in moved {
                    let product = try await db.rows(
                        SQLStatement(
                            """
                            SELECT product_id FROM iap_transactions WHERE bundle_id = $1 AND original_transaction_id = $2
                            ORDER BY LENGTH(transaction_id) DESC, transaction_id DESC LIMIT 1
                            """, [.text(bundleID), .text(original)])
                    ).first?.text("product_id")
                    transfers.append(
                        Transfer(originalTransactionID: original, productID: product, from: source.id, reason: "login"))
                }
                try await announce(
                    EncodedRows(transactions: [], renewals: []), before: VersionsBefore(), ownerOf: [:],
                    transfers: [target: transfers], bundleID: bundleID, announcer: announcer, db: db)
            }
            return (LoginOutcome(merged: true, moved: moved), commit: true)
        }
    }

    /// Gives an original transaction to `customer` (a claim under the transfer policy).
    static func move(_ original: String, bundleID: String, to customer: String, db: any SQLStatementRunner)
        async throws
    {
        try await db.run(
            SQLStatement(
                """
                UPDATE iap_owners SET customer_id = $3, claimed = 1
                WHERE bundle_id = $1 AND original_transaction_id = $2
                """, [.text(bundleID), .text(original), .text(customer)]))
        try await setOwner(of: original, bundleID: bundleID, to: customer, db: db)
    }
}
