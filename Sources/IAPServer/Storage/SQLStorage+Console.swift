import Foundation
import IAPCore

/// The console's reads in SQL (the overview, and the customers list further down). The overview: grouped by day, product, storefront and currency in the database (each statement
/// reads one index range: purchases in the span, refunds in it, subscriptions expiring after its moment or in it), so
/// the rows that come back are few however many transactions the app has.
extension SQLStorage {
    /// A row's price as the console sums it (`OverviewLine.summed`): within 0 and a billion of its currency, so no sum
    /// of fewer than nine million purchases overflows 64 bits, whatever price a signed document claimed.
    static func summedPrice(_ column: String) -> String {
        let most = OverviewLine.largestSummedPrice
        return "CASE WHEN \(column) > \(most) THEN \(most) WHEN \(column) < 0 THEN 0 ELSE \(column) END"
    }

    /// The statements of an overview, by what they read (each one index range; `QueryPlanTests` checks the plans).
    static func overviewStatements(_ query: OverviewQuery) -> (
        purchases: SQLStatement, refunds: SQLStatement, churns: SQLStatement, actives: SQLStatement,
        paying: SQLStatement
    ) {
        let from = SQLValue.integer(query.from.millisecondsSince1970)
        let to = SQLValue.integer(query.to.millisecondsSince1970)
        let moment = SQLValue.integer(query.moment.millisecondsSince1970)
        let app = SQLValue.text(query.bundleID)
        let day = OverviewLine.millisecondsPerDay
        // Purchases by the UTC day stored with each row: the span's whole days, grouped in the index's own order (no
        // sort), counted from the index alone.
        let firstDay = SQLValue.integer(Overview.day(of: query.from))
        let lastDay = SQLValue.integer(Overview.day(of: query.to))
        let purchases = SQLStatement(
            """
            SELECT purchase_day AS day, product_id, COALESCE(storefront, '') AS storefront,
                COALESCE(currency, '') AS currency, first_period AS first,
                COUNT(*) AS n, CAST(COALESCE(SUM(\(summedPrice("price"))), 0) AS BIGINT) AS amount
            FROM iap_transactions WHERE bundle_id = $1 AND purchase_day >= $2 AND purchase_day < $3
            GROUP BY purchase_day, product_id, storefront, currency, first_period
            """, [app, firstDay, lastDay])
        let refunds = SQLStatement(
            """
            SELECT revoked_ms / \(day) AS day, product_id, COALESCE(storefront, '') AS storefront,
                COALESCE(currency, '') AS currency, COUNT(*) AS n, CAST(COALESCE(SUM(\(summedPrice("price"))), 0) AS BIGINT) AS amount
            FROM iap_transactions
            WHERE bundle_id = $1 AND revoked_ms IS NOT NULL AND revoked_ms >= $2 AND revoked_ms < $3
            GROUP BY 1, 2, 3, 4
            """, [app, from, to])
        let churns = SQLStatement(
            """
            SELECT expires_ms / \(day) AS day, product_id, COALESCE(storefront, '') AS storefront, COUNT(*) AS n
            FROM iap_transactions
            WHERE bundle_id = $1 AND expires_ms IS NOT NULL AND expires_ms >= $2 AND expires_ms < $3
                AND revoked_ms IS NULL AND superseded = 0
            GROUP BY 1, 2, 3
            """, [app, from, moment])
        // A subscription is active at the moment when one of its periods holds it. Its latest period (not superseded)
        // is one row per subscription, so those are counted as rows; only a subscription whose latest period does not
        // hold the moment (a moment in the past, a renewal charged early, a refunded last period) is looked at
        // further, and counted once.
        let holds = "expires_ms IS NOT NULL AND expires_ms > $2 AND purchase_ms <= $2 AND revoked_ms IS NULL"
        let actives = SQLStatement(
            """
            SELECT product_id, storefront, CAST(SUM(n) AS BIGINT) AS n, CAST(SUM(trials) AS BIGINT) AS trials FROM (
                SELECT product_id, COALESCE(storefront, '') AS storefront, COUNT(*) AS n,
                    COUNT(CASE WHEN trial = 1 THEN 1 END) AS trials
                FROM iap_transactions
                WHERE bundle_id = $1 AND \(holds) AND superseded = 0
                GROUP BY 1, 2
                UNION ALL
                SELECT t.product_id, COALESCE(t.storefront, '') AS storefront,
                    COUNT(DISTINCT t.original_transaction_id) AS n,
                    COUNT(DISTINCT CASE WHEN t.trial = 1 THEN t.original_transaction_id END) AS trials
                FROM iap_transactions t
                WHERE t.bundle_id = $1 AND t.\(holds.replacingOccurrences(of: " AND ", with: " AND t."))
                    AND t.superseded = 1
                    AND NOT EXISTS (
                        SELECT 1 FROM iap_transactions l
                        WHERE l.bundle_id = t.bundle_id AND l.original_transaction_id = t.original_transaction_id
                            AND l.superseded = 0 AND l.\(holds.replacingOccurrences(of: " AND ", with: " AND l.")))
                GROUP BY 1, 2
            ) AS held
            GROUP BY product_id, storefront
            """, [app, moment])
        let paying = SQLStatement(
            """
            SELECT COUNT(DISTINCT customer_id) AS n FROM iap_transactions
            WHERE bundle_id = $1 AND purchase_day >= $2 AND purchase_day < $3 AND price > 0 AND revoked_ms IS NULL
            """, [app, firstDay, lastDay])
        return (purchases, refunds, churns, actives, paying)
    }

    public func overview(_ query: OverviewQuery) async throws(StorageError) -> Overview {
        let statements = Self.overviewStatements(query)
        // Each statement on a reader of its own, at once: they read different indexes, and a month of an app with a
        // million transactions takes each of them tens of milliseconds.
        async let purchaseRows = read { db in try await db.rows(statements.purchases) }
        async let refundRows = read { db in try await db.rows(statements.refunds) }
        async let churnRows = read { db in try await db.rows(statements.churns) }
        async let activeRows = read { db in try await db.rows(statements.actives) }
        async let payingRows = read { db in try await db.rows(statements.paying) }
        let purchases: [SQLRow]
        let refunds: [SQLRow]
        let churns: [SQLRow]
        let actives: [SQLRow]
        let payingRow: SQLRow?
        do {
            (purchases, refunds, churns, actives) = try await (purchaseRows, refundRows, churnRows, activeRows)
            payingRow = try await payingRows.first
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError.unavailable(error)
        }
        let paying = try Self.decoding { try payingRow?.integer("n") ?? 0 }
        return try Self.decoding {
            var lines: [OverviewLine] = []
            for row in purchases {
                lines.append(
                    OverviewLine(
                        kind: .purchase(first: try row.integer("first") == 1), day: try row.integer("day"),
                        productID: try row.text("product_id"), storefront: try row.text("storefront"),
                        currency: try row.text("currency"), count: Int(try row.integer("n")),
                        amount: try row.integer("amount")))
            }
            for row in refunds {
                lines.append(
                    OverviewLine(
                        kind: .refund, day: try row.integer("day"), productID: try row.text("product_id"),
                        storefront: try row.text("storefront"), currency: try row.text("currency"),
                        count: Int(try row.integer("n")), amount: try row.integer("amount")))
            }
            for row in churns {
                lines.append(
                    OverviewLine(
                        kind: .churn, day: try row.integer("day"), productID: try row.text("product_id"),
                        storefront: try row.text("storefront"), currency: "", count: Int(try row.integer("n")),
                        amount: 0))
            }
            for row in actives {
                lines.append(
                    OverviewLine(
                        kind: .active(trials: Int(try row.integer("trials"))), day: nil,
                        productID: try row.text("product_id"), storefront: try row.text("storefront"), currency: "",
                        count: Int(try row.integer("n")), amount: 0))
            }
            return Overview(query, lines: lines, payingCustomers: Int(paying))
        }
    }

    /// A page of an app's customer ids, in id order after `after` (one range of `iap_owners_customer`).
    static func customerPageStatement(bundleID: String, after: String?, limit: Int) -> SQLStatement {
        SQLStatement(
            """
            SELECT DISTINCT customer_id FROM iap_owners WHERE bundle_id = $1 AND customer_id > $2
            ORDER BY customer_id LIMIT $3
            """, [.text(bundleID), .text(after ?? ""), .integer(Int64(limit))])
    }

    /// What each of `ids` bought and spent, by currency: their purchases by owner key, their transactions by purchase.
    static func customerSummaryStatement(bundleID: String, ids: [String]) -> SQLStatement {
        let list = (0..<ids.count).map { "$\($0 + 2)" }.joined(separator: ", ")
        return SQLStatement(
            """
            SELECT o.customer_id, COALESCE(t.currency, '') AS currency, COUNT(*) AS n,
                CAST(COALESCE(SUM(CASE WHEN t.revoked_ms IS NULL THEN \(summedPrice("t.price")) END), 0) AS BIGINT) AS spent,
                MAX(t.purchase_ms) AS last, MAX(COALESCE(t.storefront, '')) AS storefront
            FROM iap_owners o CROSS JOIN iap_transactions t
            WHERE o.bundle_id = $1 AND o.customer_id IN (\(list)) AND t.bundle_id = o.bundle_id
                AND t.original_transaction_id = o.original_transaction_id
            GROUP BY o.customer_id, COALESCE(t.currency, '')
            """, [.text(bundleID)] + ids.map { SQLValue.text($0) })
    }

    public func customers(bundleID: String, after: String?, only: [String]?, limit: Int) async throws(StorageError)
        -> [CustomerSummary]
    {
        let rows: [SQLRow] = try await read { db in
            var ids = only ?? []
            if only == nil {
                ids = try await db.rows(Self.customerPageStatement(bundleID: bundleID, after: after, limit: limit))
                    .map { try $0.text("customer_id") }
            }
            guard !ids.isEmpty else { return [] }
            return try await db.rows(Self.customerSummaryStatement(bundleID: bundleID, ids: ids))
        }
        return try Self.decoding {
            var summaries: [String: CustomerSummary] = [:]
            for row in rows {
                let id = try row.text("customer_id")
                var summary =
                    summaries[id]
                    ?? CustomerSummary(customerId: id, purchases: 0, spent: [:], storefront: nil, lastPurchase: nil)
                summary.purchases += Int(try row.integer("n"))
                let currency = try row.text("currency")
                let spent = try row.integer("spent")
                if !currency.isEmpty, spent > 0 { summary.spent[currency, default: 0].saturatingAdd(spent) }
                let storefront = try row.text("storefront")
                if !storefront.isEmpty { summary.storefront = max(summary.storefront ?? "", storefront) }
                if let last = try row.optionalInteger("last").map(Date.init(millisecondsSince1970:)) {
                    summary.lastPurchase = max(summary.lastPurchase ?? last, last)
                }
                summaries[id] = summary
            }
            return summaries.values.sorted { $0.customerId < $1.customerId }
        }
    }
}

// MARK: - The notification log

extension SQLStorage {
    /// The columns a ``StoredNotification`` is read from, but its body (each after `table`: `n.`).
    static func notificationColumns(_ table: String = "") -> String {
        [
            "notification_uuid", "bundle_id", "notification_type", "subtype", "signed_date", "received_at",
            "original_transaction_id", "effect", "repeats",
        ].map { table + $0 }.joined(separator: ", ")
    }

    /// A notification from a row of ``notificationColumns``.
    static func notification(_ row: SQLRow, body: String) throws(SQLRowError) -> StoredNotification {
        StoredNotification(
            uuid: try row.text("notification_uuid"), bundleID: try row.text("bundle_id"),
            type: try row.text("notification_type"), subtype: try row.optionalText("subtype"),
            signedDate: Date(millisecondsSince1970: try row.integer("signed_date")),
            receivedAt: Date(millisecondsSince1970: try row.integer("received_at")), body: body,
            originalTransactionID: try row.optionalText("original_transaction_id"),
            effect: try row.optionalText("effect").flatMap(NotificationEffect.init(rawValue:)),
            repeats: Int(try row.integer("repeats")))
    }

    /// The log's statement: one range of `iap_notifications_received` (newest first, from the cursor), or, for a
    /// customer, of `iap_notifications_purchase` for each purchase they own.
    static func notificationLogStatement(_ query: NotificationQuery) -> SQLStatement {
        var binds: [SQLValue] = [.text(query.bundleID)]
        var conditions = ["n.bundle_id = $1"]
        func bind(_ value: SQLValue) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        for (column, value) in [
            ("n.notification_type", query.type), ("n.subtype", query.subtype), ("n.effect", query.effect?.rawValue),
        ] {
            guard let value else { continue }
            conditions.append("\(column) = \(bind(.text(value)))")
        }
        if let from = query.from { conditions.append("n.received_at >= \(bind(.integer(from.millisecondsSince1970)))") }
        if let to = query.to { conditions.append("n.received_at < \(bind(.integer(to.millisecondsSince1970)))") }
        if let cursor = query.before {
            let moment = bind(.integer(cursor.receivedAt.millisecondsSince1970))
            let uuid = bind(.text(cursor.uuid))
            conditions.append(
                "(n.received_at < \(moment) OR (n.received_at = \(moment) AND n.notification_uuid < \(uuid)))")
        }
        if let customer = query.customerID {
            conditions.append(
                """
                n.original_transaction_id IN (
                    SELECT c.original_transaction_id FROM iap_owners c
                    WHERE c.bundle_id = $1 AND c.customer_id = \(bind(.text(customer))))
                """)
        }
        return SQLStatement(
            """
            SELECT \(notificationColumns("n.")), o.customer_id
            FROM iap_notifications n
            LEFT JOIN iap_owners o ON o.bundle_id = n.bundle_id AND o.original_transaction_id = n.original_transaction_id
            WHERE \(conditions.joined(separator: " AND "))
            ORDER BY n.received_at DESC, n.notification_uuid DESC
            LIMIT \(max(1, min(query.limit, 1_000)))
            """, binds)
    }

    public func notifications(_ query: NotificationQuery) async throws(StorageError) -> [NotificationLogEntry] {
        let rows = try await read { db in try await db.rows(Self.notificationLogStatement(query)) }
        return try Self.decoding {
            try rows.map {
                NotificationLogEntry(
                    notification: try Self.notification($0, body: ""), customerID: try $0.optionalText("customer_id"))
            }
        }
    }
}
