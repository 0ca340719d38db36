import Foundation
public import IAPEntitlements
import SQLKit

/// Storage in an SQL database through SQLKit: one schema, one set of statements, for SQLite and PostgreSQL.
///
/// SQLKit over sqlite-kit and postgres-kit was chosen over GRDB beside postgres-nio so that both engines run the same
/// statements: the conformance suite then tests one implementation of the rules, not two.
public final class SQLStorage: ServerStorage {
    private let source: any SQLConnectionSource
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    /// Opens storage over `source`, applying the migrations it has not seen.
    public init(source: any SQLConnectionSource) async throws(StorageError) {
        self.source = source
        do {
            try await source.withWriter { db in try await Migrations.apply(to: db, engine: source.engine) }
        } catch {
            throw StorageError.unavailable(error)
        }
    }

    public func record(_ batch: PurchaseBatch) async throws(StorageError) -> RecordOutcome {
        let rows = try encodedRows(batch)
        return try await inTransaction { db in
            var owners: [String] = []
            for row in rows.transactions {
                let owner = try await Self.own(row.transaction, claimant: batch.claimant, db: db)
                if let claimant = batch.claimant, owner != claimant {
                    return .claimedByAnother(originalTransactionID: row.transaction.originalTransactionID, owner: owner)
                }
                if !owners.contains(owner) { owners.append(owner) }
            }
            try await Self.write(rows, db: db)
            return .recorded(owners: owners)
        } abortingWhen: { outcome in
            if case .claimedByAnother = outcome { return true } else { return false }
        }
    }

    public func record(notification: StoredNotification, applying batch: PurchaseBatch) async throws(StorageError)
        -> Bool
    {
        let rows = try encodedRows(batch)
        return try await inTransaction { db in
            let inserted = try await db.raw(
                """
                INSERT INTO iap_notifications (notification_uuid, bundle_id, notification_type, subtype, signed_date,
                    received_at, body)
                VALUES (\(bind: notification.uuid), \(bind: notification.bundleID), \(bind: notification.type),
                    \(bind: notification.subtype), \(bind: Self.millis(notification.signedDate)),
                    \(bind: Self.millis(notification.receivedAt)), \(bind: notification.body))
                ON CONFLICT (notification_uuid) DO NOTHING
                RETURNING notification_uuid
                """
            ).all()
            guard !inserted.isEmpty else { return false }
            for row in rows.transactions { _ = try await Self.own(row.transaction, claimant: nil, db: db) }
            try await Self.write(rows, db: db)
            return true
        } abortingWhen: { _ in
            false
        }
    }

    public func customer(matching id: String, bundleID: String) async throws(StorageError) -> CustomerKey? {
        try await read { db in
            let row = try await db.raw(Self.customerQuery(id: id, bundleID: bundleID)).first()
            return try row.map {
                CustomerKey(bundleID: bundleID, id: try $0.decode(column: "customer_id", as: String.self))
            }
        }
    }

    public func records(of customer: CustomerKey) async throws(StorageError) -> CustomerRecords {
        let rows = try await read { db in
            try await db.raw(Self.recordsQuery(customer)).all()
        }
        do {
            var records = CustomerRecords()
            var (transactionRows, renewalRows, consumptionRows) = ([any SQLRow](), [any SQLRow](), [any SQLRow]())
            for row in rows {
                switch try row.decode(column: "kind", as: Int64.self) {
                case 0: transactionRows.append(row)
                case 1: renewalRows.append(row)
                default: consumptionRows.append(row)
                }
            }
            for row in transactionRows {
                records.transactions.append(
                    StoredTransaction(
                        transactionID: try row.decode(column: "transaction_id", as: String.self),
                        originalTransactionID: try row.decode(column: "original_transaction_id", as: String.self),
                        bundleID: customer.bundleID,
                        productID: try row.decode(column: "product_id", as: String.self),
                        signedDate: Self.date(try row.decode(column: "signed_date", as: Int64.self)),
                        document: try row.decode(column: "document", as: String.self),
                        appAccountToken: try row.decode(column: "app_account_token", as: String?.self),
                        record: try decoder.decode(
                            PurchaseRecord.self, from: Data(try row.decode(column: "record", as: String.self).utf8))))
            }
            for row in renewalRows {
                records.renewals.append(
                    StoredRenewal(
                        bundleID: customer.bundleID,
                        originalTransactionID: try row.decode(column: "original_transaction_id", as: String.self),
                        signedDate: Self.date(try row.decode(column: "signed_date", as: Int64.self)),
                        document: try row.decode(column: "document", as: String.self),
                        record: try decoder.decode(
                            RenewalRecord.self, from: Data(try row.decode(column: "record", as: String.self).utf8))))
            }
            for row in consumptionRows {
                records.consumptions.append(
                    try decoder.decode(
                        ConsumptionRecord.self, from: Data(try row.decode(column: "record", as: String.self).utf8)))
            }
            return records
        } catch {
            throw StorageError(code: "storageCorrupt", reason: "a stored row could not be read: \(error)")
        }
    }

    public func record(consumption: ConsumptionRecord, for customer: CustomerKey) async throws(StorageError) -> Bool {
        let key = consumption.id ?? UUID().uuidString
        let json = try encode(consumption)
        return try await inTransaction { db in
            let inserted = try await db.raw(
                """
                INSERT INTO iap_consumptions (bundle_id, customer_id, idempotency_key, sequence, record)
                VALUES (\(bind: customer.bundleID), \(bind: customer.id), \(bind: key),
                    (SELECT COALESCE(MAX(sequence), 0) + 1 FROM iap_consumptions), \(bind: json))
                ON CONFLICT (bundle_id, customer_id, idempotency_key) DO NOTHING
                RETURNING idempotency_key
                """
            ).all()
            return !inserted.isEmpty
        } abortingWhen: { _ in
            false
        }
    }

    public func notification(uuid: String) async throws(StorageError) -> StoredNotification? {
        try await read { db in
            guard
                let row = try await db.raw(
                    """
                    SELECT notification_uuid, bundle_id, notification_type, subtype, signed_date, received_at, body
                    FROM iap_notifications WHERE notification_uuid = \(bind: uuid)
                    """
                ).first()
            else { return nil }
            return StoredNotification(
                uuid: try row.decode(column: "notification_uuid", as: String.self),
                bundleID: try row.decode(column: "bundle_id", as: String.self),
                type: try row.decode(column: "notification_type", as: String.self),
                subtype: try row.decode(column: "subtype", as: String?.self),
                signedDate: Self.date(try row.decode(column: "signed_date", as: Int64.self)),
                receivedAt: Self.date(try row.decode(column: "received_at", as: Int64.self)),
                body: try row.decode(column: "body", as: String.self))
        }
    }

    public func counts() async throws(StorageError) -> StorageCounts {
        try await read { db in
            let row = try await db.raw(
                """
                SELECT (SELECT COUNT(*) FROM iap_transactions) AS transactions,
                    (SELECT COUNT(*) FROM iap_notifications) AS notifications,
                    (SELECT COUNT(*) FROM (SELECT DISTINCT bundle_id, customer_id FROM iap_owners) c) AS customers
                """
            ).first()
            func count(_ column: String) throws -> Int { Int(try row?.decode(column: column, as: Int64.self) ?? 0) }
            return StorageCounts(
                transactions: try count("transactions"), notifications: try count("notifications"),
                customers: try count("customers"))
        }
    }

    public func shutdown() async throws(StorageError) {
        do { try await source.shutdown() } catch { throw StorageError.unavailable(error) }
    }

    // MARK: - Statements

    /// The customer named `id`: by app account token (or made-up id) first, else by an original transaction id. Two
    /// index lookups (an `OR` made SQLite scan the app's rows).
    static func customerQuery(id: String, bundleID: String) -> SQLQueryString {
        """
        SELECT customer_id, 0 AS rank FROM iap_owners
            WHERE bundle_id = \(bind: bundleID) AND customer_id = \(bind: id)
        UNION ALL
        SELECT customer_id, 1 AS rank FROM iap_owners
            WHERE bundle_id = \(bind: bundleID) AND original_transaction_id = \(bind: id)
        ORDER BY rank LIMIT 1
        """
    }

    /// A customer's rows in one statement: kind 0 transactions, 1 renewals, 2 consumptions. The owner's rows come
    /// first (SQLite's planner keeps a CROSS JOIN's order), so the cost is the customer's rows, never the app's.
    static func recordsQuery(_ customer: CustomerKey) -> SQLQueryString {
        """
        SELECT 0 AS kind, t.transaction_id AS sort_text, CAST(NULL AS BIGINT) AS sort_number,
            t.transaction_id, t.original_transaction_id, t.product_id, t.signed_date, t.document,
            t.app_account_token, t.record
        FROM iap_owners o CROSS JOIN iap_transactions t
        WHERE o.bundle_id = \(bind: customer.bundleID) AND o.customer_id = \(bind: customer.id)
            AND t.bundle_id = o.bundle_id AND t.original_transaction_id = o.original_transaction_id
        UNION ALL
        SELECT 1, r.original_transaction_id, CAST(NULL AS BIGINT), CAST(NULL AS TEXT),
            r.original_transaction_id, CAST(NULL AS TEXT), r.signed_date, r.document, CAST(NULL AS TEXT),
            r.record
        FROM iap_owners o CROSS JOIN iap_renewals r
        WHERE o.bundle_id = \(bind: customer.bundleID) AND o.customer_id = \(bind: customer.id)
            AND r.bundle_id = o.bundle_id AND r.original_transaction_id = o.original_transaction_id
        UNION ALL
        SELECT 2, CAST(NULL AS TEXT), sequence, CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT),
            CAST(NULL AS BIGINT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), record
        FROM iap_consumptions
        WHERE bundle_id = \(bind: customer.bundleID) AND customer_id = \(bind: customer.id)
        ORDER BY kind, sort_text, sort_number
        """
    }

    private struct EncodedRows: Sendable {
        var transactions: [(transaction: StoredTransaction, json: String)]
        var renewals: [(renewal: StoredRenewal, json: String)]
    }

    private func encodedRows(_ batch: PurchaseBatch) throws(StorageError) -> EncodedRows {
        EncodedRows(
            transactions: try batch.transactions.map { (t) throws(StorageError) in (t, try encode(t.record)) },
            renewals: try batch.renewals.map { (r) throws(StorageError) in (r, try encode(r.record)) })
    }

    private func encode(_ value: some Encodable) throws(StorageError) -> String {
        do { return String(decoding: try encoder.encode(value), as: UTF8.self) } catch {
            throw StorageError(code: "storageCorrupt", reason: "a record could not be encoded: \(error)")
        }
    }

    /// Gives the original transaction an owner when it has none (or only one the server made up and a customer now
    /// claims it), and answers who owns it now.
    private static func own(_ transaction: StoredTransaction, claimant: String?, db: any SQLDatabase) async throws
        -> String
    {
        let customer = claimant ?? PurchaseBatch.implicitOwner(of: transaction)
        let claimed: Int64 = claimant == nil ? 0 : 1
        // One statement: the row is always touched, and RETURNING answers the owner after the rule was applied.
        let row = try await db.raw(
            """
            INSERT INTO iap_owners (bundle_id, original_transaction_id, customer_id, claimed)
            VALUES (\(bind: transaction.bundleID), \(bind: transaction.originalTransactionID), \(bind: customer),
                \(bind: claimed))
            ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                customer_id = CASE WHEN iap_owners.claimed = 0 AND excluded.claimed = 1
                    THEN excluded.customer_id ELSE iap_owners.customer_id END,
                claimed = CASE WHEN iap_owners.claimed = 0 AND excluded.claimed = 1 THEN 1 ELSE iap_owners.claimed END
            RETURNING customer_id
            """
        ).first()
        return try row?.decode(column: "customer_id", as: String.self) ?? customer
    }

    private static func write(_ rows: EncodedRows, db: any SQLDatabase) async throws {
        for (transaction, json) in rows.transactions {
            try await db.raw(
                """
                INSERT INTO iap_transactions (transaction_id, original_transaction_id, bundle_id, product_id,
                    signed_date, document, app_account_token, record)
                VALUES (\(bind: transaction.transactionID), \(bind: transaction.originalTransactionID),
                    \(bind: transaction.bundleID), \(bind: transaction.productID),
                    \(bind: millis(transaction.signedDate)), \(bind: transaction.document),
                    \(bind: transaction.appAccountToken), \(bind: json))
                ON CONFLICT (transaction_id) DO UPDATE SET
                    original_transaction_id = excluded.original_transaction_id, bundle_id = excluded.bundle_id,
                    product_id = excluded.product_id, signed_date = excluded.signed_date,
                    document = excluded.document, app_account_token = excluded.app_account_token,
                    record = excluded.record
                WHERE excluded.signed_date > iap_transactions.signed_date
                    OR (excluded.signed_date = iap_transactions.signed_date
                        AND excluded.document > iap_transactions.document)
                """
            ).run()
        }
        for (renewal, json) in rows.renewals {
            try await db.raw(
                """
                INSERT INTO iap_renewals (bundle_id, original_transaction_id, signed_date, document, record)
                VALUES (\(bind: renewal.bundleID), \(bind: renewal.originalTransactionID),
                    \(bind: millis(renewal.signedDate)), \(bind: renewal.document), \(bind: json))
                ON CONFLICT (bundle_id, original_transaction_id) DO UPDATE SET
                    signed_date = excluded.signed_date, document = excluded.document, record = excluded.record
                WHERE excluded.signed_date > iap_renewals.signed_date
                    OR (excluded.signed_date = iap_renewals.signed_date AND excluded.document > iap_renewals.document)
                """
            ).run()
        }
    }

    // MARK: - Transactions and errors

    /// Runs `body` in one transaction on the writer; rolls back when it throws or when `abort` says so.
    private func inTransaction<R: Sendable>(
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R,
        abortingWhen abort: @escaping @Sendable (R) -> Bool
    ) async throws(StorageError) -> R {
        let begin = source.engine == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN"
        do {
            return try await source.withWriter { db in
                try await db.raw("\(unsafeRaw: begin)").run()
                do {
                    let result = try await body(db)
                    try await db.raw(abort(result) ? "ROLLBACK" : "COMMIT").run()
                    return result
                } catch {
                    try? await db.raw("ROLLBACK").run()
                    throw error
                }
            }
        } catch {
            throw StorageError.unavailable(error)
        }
    }

    private func read<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R)
        async throws(StorageError) -> R
    {
        do { return try await source.withReader(body) } catch { throw StorageError.unavailable(error) }
    }

    static func millis(_ date: Date) -> Int64 { epochMilliseconds(date) }
    static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}
