import Foundation
import IAPCore
import IAPEntitlements

/// How a write's rows reach the tables: the owner of each purchase (claimed, made up, moved), the transaction rows with
/// the columns the console reads beside their records, and the renewal information.
extension SQLStorage {
    /// Gives the original transaction an owner when it has none (or only one the server made up and a customer now
    /// claims it), and answers who owns it now and, when a claim just took it from the owner the server made up, who
    /// that was (their records lost it: the write marks their digest stale).
    static func own(_ transaction: StoredTransaction, claimant: String?, db: any SQLStatementRunner)
        async throws -> (owner: String, previous: String?)
    {
        let customer = claimant ?? PurchaseBatch.implicitOwner(of: transaction)
        // One statement: the row is always touched, and RETURNING answers the owner after the rule was applied.
        let rows = try await db.rows(
            SQLStatement(
                """
                INSERT INTO iap_owners (bundle_id, original_transaction_id, customer_id, claimed)
                VALUES ($1, $2, $3, $4)
                ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                    customer_id = CASE WHEN iap_owners.claimed = 0 AND excluded.claimed = 1
                        THEN excluded.customer_id ELSE iap_owners.customer_id END,
                    claimed = CASE WHEN iap_owners.claimed = 0 AND excluded.claimed = 1
                        THEN 1 ELSE iap_owners.claimed END,
                    moved = CASE WHEN iap_owners.claimed = 0 AND excluded.claimed = 1
                        AND iap_owners.customer_id <> excluded.customer_id THEN 1 ELSE 0 END,
                    moved_from = CASE WHEN iap_owners.claimed = 0 AND excluded.claimed = 1
                        AND iap_owners.customer_id <> excluded.customer_id THEN iap_owners.customer_id END
                RETURNING customer_id, moved, moved_from
                """,
                [
                    .text(transaction.bundleID), .text(transaction.originalTransactionID), .text(customer),
                    .integer(claimant == nil ? 0 : 1),
                ]))
        let owner = try rows.first?.text("customer_id") ?? customer
        // A claim just took the purchase from the owner the server made up: its stored rows follow.
        guard try rows.first?.integer("moved") == 1 else { return (owner, nil) }
        try await Self.setOwner(
            of: transaction.originalTransactionID, bundleID: transaction.bundleID, to: owner, db: db)
        return (owner, try rows.first?.optionalText("moved_from"))
    }

    /// Keeps the owner each stored transaction row carries (the console counts paying customers by it) equal to the
    /// owner table's, after a purchase changed hands.
    static func setOwner(of original: String, bundleID: String, to customer: String, db: any SQLStatementRunner)
        async throws
    {
        try await db.run(
            SQLStatement(
                """
                UPDATE iap_transactions SET customer_id = $3
                WHERE bundle_id = $1 AND original_transaction_id = $2 AND (customer_id IS NULL OR customer_id <> $3)
                """, [.text(bundleID), .text(original), .text(customer)]))
    }

    /// The columns the console's overview adds up, from a record (see the `2026-11-27-overview` and
    /// `2026-11-27-console-speed` migrations): the moments, price, currency, storefront, free trial, UTC day and
    /// whether it is a subscription's first period.
    static func overviewColumns(_ record: PurchaseRecord) -> [SQLValue] {
        let purchased = record.purchaseDate.millisecondsSince1970
        let first = record.expiresDate != nil && record.transactionID == record.originalTransactionID
        return [
            .integer(purchased),
            record.expiresDate.map { .integer($0.millisecondsSince1970) } ?? .null,
            record.revocation.map { .integer($0.date.millisecondsSince1970) } ?? .null,
            record.price.map { .integer($0) } ?? .null, SQLValue(record.currency), SQLValue(record.storefront),
            .integer(record.offer?.isFreeTrial == true ? 1 : 0),
            .integer(Overview.day(ofMilliseconds: purchased)), .integer(first ? 1 : 0),
        ]
    }

    /// The statement that stores a transaction row (`$1` to `$19`, see ``transactionValues(_:json:announce:)``) unless
    /// the row stored is a newer signed version, its owner read by `owner` (an SQL expression); with `condition`, only
    /// when that holds (PostgreSQL only: SQLite cannot tell `INSERT ... SELECT ... ON CONFLICT` apart). With
    /// `source`, the rows come from its `from` clause (and `condition`, which may end in an `ORDER BY`), value `n` of
    /// each named by its `value(n)` instead of `$n`.
    static func insertTransaction(
        owner: String, onlyIf condition: String? = nil,
        source: (from: String, value: (Int) -> String)? = nil
    ) -> String {
        let value = source?.value ?? { "$\($0)" }
        let values = """
            \((1...19).map(value).joined(separator: ", ")),
                \(owner),
                CASE WHEN EXISTS (
                    SELECT 1 FROM iap_transactions l
                    WHERE l.bundle_id = \(value(3)) AND l.original_transaction_id = \(value(2))
                        AND l.expires_ms > \(value(12)))
                THEN 1 ELSE 0 END
            """
        let from = source.map { "\nFROM \($0.from)" } ?? ""
        return """
            INSERT INTO iap_transactions (transaction_id, original_transaction_id, bundle_id, product_id,
                signed_date, document, app_account_token, record, announce_at, announce_moment,
                purchase_ms, expires_ms, revoked_ms, price, currency, storefront, trial, purchase_day,
                first_period, customer_id, superseded)
            \(condition.map { "SELECT \(values)\(from)\nWHERE \($0)" } ?? "VALUES (\(values))")
            ON CONFLICT (bundle_id, transaction_id) DO UPDATE SET
                original_transaction_id = excluded.original_transaction_id, product_id = excluded.product_id,
                signed_date = excluded.signed_date, document = excluded.document,
                app_account_token = excluded.app_account_token, record = excluded.record,
                purchase_ms = excluded.purchase_ms, expires_ms = excluded.expires_ms, revoked_ms = excluded.revoked_ms,
                price = excluded.price, currency = excluded.currency, storefront = excluded.storefront,
                trial = excluded.trial, purchase_day = excluded.purchase_day, first_period = excluded.first_period,
                customer_id = excluded.customer_id, superseded = excluded.superseded
            WHERE excluded.signed_date > iap_transactions.signed_date
                OR (excluded.signed_date = iap_transactions.signed_date
                    AND excluded.document > iap_transactions.document)
            """
    }

    /// The values of ``insertTransaction(owner:onlyIf:)``: `$12` is the expiry (NULL for what does not expire).
    static func transactionValues(_ transaction: StoredTransaction, json: String, announce: (at: Int64, moment: Int64)?)
        -> [SQLValue]
    {
        [
            .text(transaction.transactionID), .text(transaction.originalTransactionID),
            .text(transaction.bundleID), .text(transaction.productID),
            .integer(transaction.signedDate.millisecondsSince1970), .text(transaction.document),
            SQLValue(transaction.appAccountToken), .text(json),
            announce.map { .integer($0.at) } ?? .null, announce.map { .integer($0.moment) } ?? .null,
        ] + Self.overviewColumns(transaction.record)
    }

    static func write(_ rows: EncodedRows, db: any SQLStatementRunner) async throws {
        for (transaction, json) in rows.transactions {
            let owner = "(SELECT customer_id FROM iap_owners WHERE bundle_id = $3 AND original_transaction_id = $2)"
            try await db.run(
                SQLStatement(
                    insertTransaction(owner: owner),
                    transactionValues(transaction, json: json, announce: rows.announce)))
            // A new period supersedes the earlier ones of its subscription (they no longer count as churned).
            if let expires = transaction.record.expiresDate {
                try await db.run(
                    SQLStatement(
                        """
                        UPDATE iap_transactions SET superseded = 1
                        WHERE bundle_id = $1 AND original_transaction_id = $2 AND expires_ms IS NOT NULL
                            AND expires_ms < $3 AND superseded = 0
                        """,
                        [
                            .text(transaction.bundleID), .text(transaction.originalTransactionID),
                            .integer(expires.millisecondsSince1970),
                        ]))
            }
        }
        for (renewal, json) in rows.renewals {
            try await db.run(
                SQLStatement(
                    """
                    INSERT INTO iap_renewals (bundle_id, original_transaction_id, signed_date, document, record)
                    VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                        signed_date = excluded.signed_date, document = excluded.document, record = excluded.record
                    WHERE excluded.signed_date > iap_renewals.signed_date
                        OR (excluded.signed_date = iap_renewals.signed_date
                            AND excluded.document > iap_renewals.document)
                    """,
                    [
                        .text(renewal.bundleID), .text(renewal.originalTransactionID),
                        .integer(renewal.signedDate.millisecondsSince1970), .text(renewal.document), .text(json),
                    ]))
        }
    }
}
