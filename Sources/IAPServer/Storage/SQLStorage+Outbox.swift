public import Foundation
import IAPCore
import IAPEntitlements

/// The outbox: events stored in the same transaction as the change that made them (`iap_events`), one delivery per
/// event and endpoint (`iap_deliveries`) leased to one sender at a time, and every attempt kept
/// (`iap_delivery_attempts`).
extension SQLStorage {
    /// The stored versions a batch may replace, read inside the write's transaction after its owner rows are locked
    /// (so on PostgreSQL a concurrent write of the same subscription has committed or waits): nil when the app
    /// announces nothing.
    struct VersionsBefore: Sendable {
        var transactions: [String: StoredTransaction] = [:]
        var renewals: [String: StoredRenewal] = [:]

        /// Whether every transaction of `rows` is new, and nothing else is in them: a write its announcer may
        /// leave for later.
        func onlyNew(_ rows: EncodedRows) -> Bool {
            rows.renewals.isEmpty && rows.transactions.allSatisfy { transactions[$0.transaction.transactionID] == nil }
        }
    }

    func versionsBefore(
        _ rows: EncodedRows, bundleID: String, announcer: EventAnnouncer?, db: any SQLStatementRunner
    ) async throws -> VersionsBefore? {
        guard let announcer, !announcer.endpoints(bundleID).isEmpty else { return nil }
        var before = VersionsBefore()
        for (transaction, _) in rows.transactions {
            if let row = try await db.rows(
                SQLStatement(
                    """
                    SELECT transaction_id, original_transaction_id, product_id, signed_date, document,
                        app_account_token, record
                    FROM iap_transactions WHERE bundle_id = $1 AND transaction_id = $2
                    """, [.text(bundleID), .text(transaction.transactionID)])
            ).first {
                before.transactions[transaction.transactionID] = try storedTransaction(row: row, bundleID: bundleID)
            }
        }
        for (renewal, _) in rows.renewals {
            if let row = try await db.rows(
                SQLStatement(
                    """
                    SELECT signed_date, document, record FROM iap_renewals
                    WHERE bundle_id = $1 AND original_transaction_id = $2
                    """, [.text(bundleID), .text(renewal.originalTransactionID)])
            ).first {
                before.renewals[renewal.originalTransactionID] = StoredRenewal(
                    bundleID: bundleID, originalTransactionID: renewal.originalTransactionID,
                    signedDate: Date(millisecondsSince1970: try row.integer("signed_date")),
                    document: try row.text("document"),
                    record: try decoder.decode(RenewalRecord.self, from: try row.text("record")))
            }
        }
        return before
    }

    /// For a new transaction of a subscription that is not its first: the product of the stored transaction before
    /// it (by transaction id), which tells a renewal from a change of plan.
    func previousProduct(of transaction: StoredTransaction, db: any SQLStatementRunner) async throws -> String? {
        guard transaction.transactionID != transaction.originalTransactionID else { return nil }
        return try await db.rows(
            SQLStatement(
                """
                SELECT product_id FROM iap_transactions
                WHERE bundle_id = $1 AND original_transaction_id = $2
                    AND (LENGTH(transaction_id) < LENGTH($3)
                        OR (LENGTH(transaction_id) = LENGTH($3) AND transaction_id < $3))
                ORDER BY LENGTH(transaction_id) DESC, transaction_id DESC LIMIT 1
                """,
                [
                    .text(transaction.bundleID), .text(transaction.originalTransactionID),
                    .text(transaction.transactionID),
                ])
        ).first?.text("product_id")
    }

    /// Stores the events of what a written batch changed: per customer, the versions that replaced the ones read
    /// before; each event once (its id is the change's), with one pending delivery per endpoint. A customer's writes
    /// left for later are announced first, so their events come before this one's. On PostgreSQL a customer's events
    /// take a lock first, so their order is the order of commits.
    func announce(
        _ rows: EncodedRows, before: VersionsBefore?, ownerOf: [String: String], transfers: [String: [Transfer]],
        bundleID: String, announcer: EventAnnouncer?, db: any SQLStatementRunner
    ) async throws {
        guard let before, let announcer else { return }
        var changes: [String: RecordedChange] = [:]
        func change(of owner: String) -> RecordedChange {
            changes[owner]
                ?? RecordedChange(
                    customer: CustomerKey(bundleID: bundleID, id: owner), transactions: [], previousProducts: [:],
                    renewals: [])
        }
        let transactions = rows.transactions.map(\.transaction).sorted {
            ($0.record.purchaseDate, $0.transactionID) < ($1.record.purchaseDate, $1.transactionID)
        }
        for transaction in transactions {
            let old = before.transactions[transaction.transactionID]
            if let old,
                !SignedVersion.replaces(
                    (transaction.signedDate, transaction.document), (old.signedDate, old.document))
            {
                continue
            }
            guard let owner = ownerOf[transaction.originalTransactionID] else { continue }
            var entry = change(of: owner)
            entry.transactions.append(Replacement(before: old, after: transaction))
            if old == nil, let product = try await previousProduct(of: transaction, db: db) {
                entry.previousProducts[transaction.transactionID] = product
            }
            changes[owner] = entry
        }
        for (renewal, _) in rows.renewals {
            let old = before.renewals[renewal.originalTransactionID]
            if let old, !SignedVersion.replaces((renewal.signedDate, renewal.document), (old.signedDate, old.document))
            {
                continue
            }
            var owner = ownerOf[renewal.originalTransactionID]
            if owner == nil {
                owner = try await db.rows(
                    SQLStatement(
                        "SELECT customer_id FROM iap_owners WHERE bundle_id = $1 AND original_transaction_id = $2",
                        [.text(bundleID), .text(renewal.originalTransactionID)])
                ).first?.text("customer_id")
            }
            guard let owner else { continue }
            var entry = change(of: owner)
            entry.renewals.append(Replacement(before: old, after: renewal))
            changes[owner] = entry
        }
        for (owner, moved) in transfers where !moved.isEmpty {
            var entry = change(of: owner)
            entry.transfers = moved
            changes[owner] = entry
        }
        let endpoints = announcer.endpoints(bundleID)
        for owner in changes.keys.sorted() {
            guard let change = changes[owner] else { continue }
            try await lockEvents(of: change.customer, db: db)
            if announcer.defers {
                try await announceWaiting(
                    of: change.customer, asBefore: before.transactions, announcer: announcer, db: db)
            }
            for event in announcer.events(change) { try await Self.insert(event, endpoints: endpoints, db: db) }
        }
    }

    /// On PostgreSQL, waits for (and holds until commit) the lock a customer's events are stored under.
    private func lockEvents(of customer: CustomerKey, db: any SQLStatementRunner) async throws {
        guard database.engine == .postgres else { return }
        try await db.run(
            SQLStatement("SELECT pg_advisory_xact_lock(hashtext($1))", [.text("\(customer.bundleID)|\(customer.id)")]))
    }

    /// The columns of a transaction left unannounced, with its moments and owner.
    private static let waitingColumns = """
        t.bundle_id, t.transaction_id, t.original_transaction_id, t.product_id, t.signed_date, t.document,
        t.app_account_token, t.record, t.announce_at, t.announce_moment, o.customer_id
        FROM iap_transactions t
        JOIN iap_owners o ON o.bundle_id = t.bundle_id AND o.original_transaction_id = t.original_transaction_id
        """

    /// Announces a customer's writes left for later, in the order written; a transaction this write replaced is
    /// announced as it was (`asBefore`), and this write's own change then follows it.
    private func announceWaiting(
        of customer: CustomerKey, asBefore: [String: StoredTransaction], announcer: EventAnnouncer,
        db: any SQLStatementRunner
    ) async throws {
        let lock = database.engine == .postgres ? "FOR UPDATE OF t" : ""
        let rows = try await db.rows(
            SQLStatement(
                """
                SELECT \(Self.waitingColumns)
                WHERE o.bundle_id = $1 AND o.customer_id = $2 AND t.announce_at IS NOT NULL
                ORDER BY t.announce_at, t.transaction_id \(lock)
                """, [.text(customer.bundleID), .text(customer.id)]))
        try await announceWritten(rows, asBefore: asBefore, announcer: announcer, db: db)
    }

    /// Stores the events of transactions written unannounced (`rows` of ``waitingColumns``, in order) and marks them
    /// announced.
    private func announceWritten(
        _ rows: [SQLRow], asBefore: [String: StoredTransaction] = [:], announcer: EventAnnouncer,
        db: any SQLStatementRunner
    ) async throws {
        for row in rows {
            let bundleID = try row.text("bundle_id")
            let id = try row.text("transaction_id")
            let stored = try asBefore[id] ?? storedTransaction(row: row, bundleID: bundleID)
            var change = RecordedChange(
                customer: CustomerKey(bundleID: bundleID, id: try row.text("customer_id")),
                transactions: [Replacement(before: nil, after: stored)], previousProducts: [:], renewals: [],
                recordedAt: Date(millisecondsSince1970: try row.integer("announce_at")),
                entitlementsAt: Date(millisecondsSince1970: try row.integer("announce_moment")))
            if let product = try await previousProduct(of: stored, db: db) { change.previousProducts[id] = product }
            let endpoints = announcer.endpoints(bundleID)
            for event in announcer.events(change) { try await Self.insert(event, endpoints: endpoints, db: db) }
        }
        // Marked announced: on SQLite a row at a time (a statement costs no round trip, and each finds its row by
        // key), on PostgreSQL in one statement per hundred rows.
        guard database.engine == .postgres else {
            for row in rows {
                try await db.run(
                    SQLStatement(
                        """
                        UPDATE iap_transactions SET announce_at = NULL, announce_moment = NULL
                        WHERE bundle_id = $1 AND transaction_id = $2
                        """, [.text(try row.text("bundle_id")), .text(try row.text("transaction_id"))]))
            }
            return
        }
        for chunk in stride(from: 0, to: rows.count, by: 100) {
            let part = rows[chunk..<min(chunk + 100, rows.count)]
            var binds: [SQLValue] = []
            for row in part { binds += [.text(try row.text("bundle_id")), .text(try row.text("transaction_id"))] }
            let pairs = (0..<part.count).map { "($\(2 * $0 + 1), $\(2 * $0 + 2))" }.joined(separator: ", ")
            try await db.run(
                SQLStatement(
                    """
                    UPDATE iap_transactions SET announce_at = NULL, announce_moment = NULL
                    WHERE (bundle_id, transaction_id) IN (VALUES \(pairs))
                    """, binds))
        }
    }

    public func announceDeferred(by announcer: EventAnnouncer, limit: Int) async throws(StorageError) -> Int {
        try await inTransaction { db in
            let postgres = database.engine == .postgres
            // On PostgreSQL one instance announces at a time (the others skip the round rather than wait), and rows a
            // write is announcing are skipped (it holds their customer's lock too, so that customer is left whole).
            if postgres {
                let free = try await db.rows(
                    SQLStatement(
                        "SELECT CASE WHEN pg_try_advisory_xact_lock($1) THEN 1 ELSE 0 END AS free",
                        [.integer(Self.announcingLock)])
                ).first?.integer("free")
                guard free == 1 else { return (0, commit: false) }
            }
            let waiting = try await db.rows(
                SQLStatement(
                    """
                    SELECT \(Self.waitingColumns)
                    WHERE t.announce_at IS NOT NULL ORDER BY t.announce_at, t.transaction_id LIMIT $1
                    \(postgres ? "FOR UPDATE OF t SKIP LOCKED" : "")
                    """, [.integer(Int64(limit))]))
            guard !waiting.isEmpty else { return (0, commit: false) }
            var taken = waiting
            if postgres { taken = try await wholeAndFree(waiting, db: db) }
            try await announceWritten(taken, announcer: announcer, db: db)
            return (taken.count, commit: true)
        }
    }

    /// The advisory lock held (on PostgreSQL) by the instance announcing writes left for later.
    static let announcingLock: Int64 = 7_355_609

    /// Of rows read waiting (and locked, skipping rows others hold), those of customers taken whole: every row the
    /// customer has waiting up to the last one read is among them (none is held by a write, or committed meanwhile
    /// with an earlier moment) and the customer's lock is free (a write holding it announces them itself). One
    /// statement for all the customers.
    private func wholeAndFree(_ rows: [SQLRow], db: any SQLStatementRunner) async throws -> [SQLRow] {
        var read: [String: Int64] = [:]
        var customers: [(bundleID: String, id: String)] = []
        var last: Int64 = 0
        for row in rows {
            let key = "\(try row.text("bundle_id"))|\(try row.text("customer_id"))"
            if read[key] == nil { customers.append((try row.text("bundle_id"), try row.text("customer_id"))) }
            read[key, default: 0] += 1
            last = max(last, try row.integer("announce_at"))
        }
        var binds: [SQLValue] = [.integer(last)]
        for customer in customers { binds += [.text(customer.bundleID), .text(customer.id)] }
        let keys = (0..<customers.count).map { "($\(2 * $0 + 2), $\(2 * $0 + 3))" }.joined(separator: ", ")
        var whole: Set<String> = []
        for answer in try await db.rows(
            SQLStatement(
                """
                SELECT k.b AS bundle_id, k.c AS customer_id,
                    (SELECT COUNT(*) FROM iap_transactions t
                        JOIN iap_owners o
                            ON o.bundle_id = t.bundle_id AND o.original_transaction_id = t.original_transaction_id
                        WHERE o.bundle_id = k.b AND o.customer_id = k.c AND t.announce_at IS NOT NULL
                            AND t.announce_at <= $1) AS waiting,
                    CASE WHEN pg_try_advisory_xact_lock(hashtext(k.b || '|' || k.c)) THEN 1 ELSE 0 END AS free
                FROM (VALUES \(keys)) AS k(b, c)
                """, binds))
        {
            let key = "\(try answer.text("bundle_id"))|\(try answer.text("customer_id"))"
            if try answer.integer("free") == 1, try answer.integer("waiting") == read[key] { whole.insert(key) }
        }
        return try rows.filter { whole.contains("\(try $0.text("bundle_id"))|\(try $0.text("customer_id"))") }
    }

    /// Stores an event once (by id) with a pending delivery to each endpoint, due at once.
    static func insert(_ event: OutboxEvent, endpoints: [String], db: any SQLStatementRunner) async throws {
        let created = event.createdAt.millisecondsSince1970
        guard
            let sequence = try await db.rows(
                SQLStatement(
                    """
                    INSERT INTO iap_events (event_id, bundle_id, customer_id, event_type, created_at, body, give_up_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7)
                    ON CONFLICT (event_id) DO NOTHING
                    RETURNING sequence
                    """,
                    [
                        .text(event.id), .text(event.bundleID), .text(event.customerID), .text(event.type),
                        .integer(created), .text(event.body),
                        event.giveUpAt.map { .integer($0.millisecondsSince1970) } ?? .null,
                    ])
            ).first?.integer("sequence")
        else { return }
        for endpoint in endpoints {
            try await db.run(
                SQLStatement(
                    """
                    INSERT INTO iap_deliveries (event_id, endpoint, sequence, bundle_id, customer_id, state, attempts,
                        next_attempt_at, lease_until)
                    VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, 0)
                    """,
                    [
                        .text(event.id), .text(endpoint), .integer(sequence), .text(event.bundleID),
                        .text(event.customerID), .integer(created),
                    ]))
        }
    }

    public func leaseDeliveries(now: Date, leaseUntil: Date, instance: String, limit: Int)
        async throws(StorageError) -> [LeasedDelivery]
    {
        let skipLocked = database.engine == .postgres ? "FOR UPDATE OF d SKIP LOCKED" : ""
        let now = now.millisecondsSince1970
        let rows: [SQLRow] = try await inTransaction { db in
            let leased = try await db.rows(
                SQLStatement(
                    """
                    UPDATE iap_deliveries SET lease_owner = $2, lease_until = $3
                    WHERE (sequence, endpoint) IN (
                        SELECT d.sequence, d.endpoint FROM iap_deliveries d
                        WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND d.lease_until <= $1
                            AND NOT EXISTS (
                                SELECT 1 FROM iap_deliveries p
                                WHERE p.state = 'pending' AND p.endpoint = d.endpoint AND p.bundle_id = d.bundle_id
                                    AND p.customer_id = d.customer_id AND p.sequence < d.sequence)
                        ORDER BY d.sequence
                        LIMIT \(max(1, min(limit, 1_000)))
                        \(skipLocked))
                    RETURNING sequence, endpoint, attempts
                    """, [.integer(now), .text(instance), .integer(leaseUntil.millisecondsSince1970)]))
            guard !leased.isEmpty else { return ([], commit: false) }
            var events: [SQLRow] = []
            let sequences = Array(Set(try leased.map { try $0.integer("sequence") }))
            for start in stride(from: 0, to: sequences.count, by: 100) {
                let chunk = sequences[start..<min(sequences.count, start + 100)]
                let marks = chunk.indices.map { "$\($0 - start + 1)" }.joined(separator: ", ")
                events += try await db.rows(
                    SQLStatement(
                        """
                        SELECT event_id, bundle_id, customer_id, event_type, created_at, body, give_up_at, sequence
                        FROM iap_events WHERE sequence IN (\(marks))
                        """, chunk.map { .integer($0) }))
            }
            let bySequence = Dictionary(
                try events.map { (try $0.integer("sequence"), $0) }, uniquingKeysWith: { a, _ in a })
            var joined: [SQLRow] = []
            for row in leased {
                guard let event = bySequence[try row.integer("sequence")] else { continue }
                joined.append(
                    SQLRow(columns: row.columns + event.columns.map { "e." + $0 }, values: row.values + event.values))
            }
            return (joined, commit: true)
        }
        return try Self.decoding {
            try rows.map { row in
                LeasedDelivery(
                    event: try Self.event(row, prefix: "e."), endpoint: try row.text("endpoint"),
                    attempts: Int(try row.integer("attempts")), sequence: try row.integer("sequence"))
            }
            .sorted { $0.event.createdAt < $1.event.createdAt }
        }
    }

    public func finishDeliveries(_ reports: [DeliveryReport]) async throws(StorageError) {
        guard !reports.isEmpty else { return }
        // Two statements for up to 50 reports (one round trip each on PostgreSQL), not two per report.
        try await inTransaction { db in
            for start in stride(from: 0, to: reports.count, by: 50) {
                let chunk = reports[start..<min(reports.count, start + 50)]
                var outcomes: [String] = []
                var outcomeBinds: [SQLValue] = []
                var attempts: [String] = []
                var attemptBinds: [SQLValue] = []
                for report in chunk {
                    let attempt = report.attempt
                    let status = attempt.status.map { SQLValue.integer(Int64($0)) } ?? .null
                    let n = outcomeBinds.count
                    outcomes.append(
                        "(CAST($\(n + 1) AS BIGINT), CAST($\(n + 2) AS TEXT), CAST($\(n + 3) AS TEXT), "
                            + "CAST($\(n + 4) AS BIGINT), CAST($\(n + 5) AS BIGINT), CAST($\(n + 6) AS TEXT), "
                            + "CAST($\(n + 7) AS BIGINT))")
                    outcomeBinds += [
                        .integer(report.delivery.sequence), .text(report.delivery.endpoint),
                        .text(report.state.rawValue),
                        .integer((report.nextAttempt ?? attempt.startedAt).millisecondsSince1970), status,
                        SQLValue(attempt.error),
                        .integer(attempt.startedAt.millisecondsSince1970 + Int64(attempt.milliseconds)),
                    ]
                    let m = attemptBinds.count
                    attempts.append("(" + (1...8).map { "$\(m + $0)" }.joined(separator: ", ") + ")")
                    attemptBinds += [
                        .text(report.delivery.event.id), .text(report.delivery.endpoint),
                        .integer(Int64(attempt.number)), .integer(attempt.startedAt.millisecondsSince1970), status,
                        SQLValue(attempt.error), .integer(Int64(attempt.milliseconds)), .text(attempt.instance),
                    ]
                }
                try await db.run(
                    SQLStatement(
                        """
                        WITH v (sequence, endpoint, state, next_at, status, error, done_at) AS (
                            VALUES \(outcomes.joined(separator: ", ")))
                        UPDATE iap_deliveries SET state = v.state, attempts = iap_deliveries.attempts + 1,
                            next_attempt_at = v.next_at, lease_owner = NULL, lease_until = 0, last_status = v.status,
                            last_error = v.error,
                            delivered_at = CASE WHEN v.state = 'delivered' THEN v.done_at
                                ELSE iap_deliveries.delivered_at END
                        FROM v
                        WHERE iap_deliveries.sequence = v.sequence AND iap_deliveries.endpoint = v.endpoint
                            AND iap_deliveries.state = 'pending'
                        """, outcomeBinds))
                try await db.run(
                    SQLStatement(
                        """
                        INSERT INTO iap_delivery_attempts (event_id, endpoint, attempt, started_at, status, error,
                            duration_ms, instance)
                        VALUES \(attempts.joined(separator: ", "))
                        ON CONFLICT (event_id, endpoint, attempt) DO NOTHING
                        """, attemptBinds))
            }
            return ((), commit: true)
        }
    }

    public func deliveries(_ query: DeliveryQuery) async throws(StorageError) -> [DeliveryRecord] {
        var conditions: [String] = []
        var binds: [SQLValue] = []
        for (column, value) in [
            ("d.bundle_id", query.bundleID), ("d.customer_id", query.customerID), ("d.state", query.state?.rawValue),
            ("e.event_type", query.eventType),
        ] {
            guard let value else { continue }
            binds.append(.text(value))
            conditions.append("\(column) = $\(binds.count)")
        }
        for (comparison, moment) in [(">=", query.from), ("<", query.to)] {
            guard let moment else { continue }
            binds.append(.integer(moment.millisecondsSince1970))
            conditions.append("e.created_at \(comparison) $\(binds.count)")
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let (deliveries, attempts): ([SQLRow], [SQLRow]) = try await read { db in
            let deliveries = try await db.rows(
                SQLStatement(
                    """
                    SELECT d.endpoint, d.state, d.next_attempt_at, d.delivered_at, e.event_id, e.bundle_id,
                        e.customer_id, e.event_type, e.created_at, e.body, e.give_up_at
                    FROM iap_deliveries d JOIN iap_events e ON e.sequence = d.sequence
                    \(filter)
                    ORDER BY d.sequence DESC, d.endpoint
                    LIMIT \(max(1, min(query.limit, 1_000)))
                    """, binds))
            // The attempts of every listed delivery in one statement per 100 events, not one per delivery.
            var attempts: [SQLRow] = []
            var seen: Set<String> = []
            let events = try deliveries.map { try $0.text("event_id") }.filter { seen.insert($0).inserted }
            for start in stride(from: 0, to: events.count, by: 100) {
                let chunk = events[start..<min(events.count, start + 100)]
                let marks = chunk.indices.map { "$\($0 - start + 1)" }.joined(separator: ", ")
                attempts += try await db.rows(
                    SQLStatement(
                        """
                        SELECT event_id, endpoint, attempt, started_at, status, error, duration_ms, instance
                        FROM iap_delivery_attempts WHERE event_id IN (\(marks)) ORDER BY event_id, endpoint, attempt
                        """, chunk.map { .text($0) }))
            }
            return (deliveries, attempts)
        }
        return try Self.decoding {
            var byDelivery: [String: [DeliveryAttempt]] = [:]
            for row in attempts {
                byDelivery["\(try row.text("event_id"))\u{0}\(try row.text("endpoint"))", default: []].append(
                    DeliveryAttempt(
                        number: Int(try row.integer("attempt")),
                        startedAt: Date(millisecondsSince1970: try row.integer("started_at")),
                        status: try row.optionalInteger("status").map(Int.init), error: try row.optionalText("error"),
                        milliseconds: Int(try row.integer("duration_ms")), instance: try row.text("instance")))
            }
            return try deliveries.map { row in
                let event = try Self.event(row, prefix: "")
                let endpoint = try row.text("endpoint")
                let state = DeliveryState(rawValue: try row.text("state")) ?? .pending
                return DeliveryRecord(
                    event: event, endpoint: endpoint, state: state,
                    nextAttempt: state == .pending
                        ? Date(millisecondsSince1970: try row.integer("next_attempt_at")) : nil,
                    deliveredAt: try row.optionalInteger("delivered_at").map(Date.init(millisecondsSince1970:)),
                    attempts: byDelivery["\(event.id)\u{0}\(endpoint)"] ?? [])
            }
        }
    }

    public func retryDelivery(eventID: String, endpoint: String?, now: Date) async throws(StorageError) -> Int {
        try await inTransaction { db in
            let updated = try await db.rows(
                SQLStatement(
                    """
                    UPDATE iap_deliveries SET state = 'pending', next_attempt_at = $2
                    WHERE sequence = (SELECT sequence FROM iap_events WHERE event_id = $1) AND ($3 = '' OR endpoint = $3)
                        AND (state <> 'pending' OR lease_until <= $2)
                    RETURNING endpoint
                    """, [.text(eventID), .integer(now.millisecondsSince1970), .text(endpoint ?? "")]))
            return (updated.count, commit: !updated.isEmpty)
        }
    }

    static func event(_ row: SQLRow, prefix: String) throws -> OutboxEvent {
        OutboxEvent(
            id: try row.text(prefix + "event_id"), bundleID: try row.text(prefix + "bundle_id"),
            customerID: try row.text(prefix + "customer_id"), type: try row.text(prefix + "event_type"),
            createdAt: Date(millisecondsSince1970: try row.integer(prefix + "created_at")),
            body: try row.text(prefix + "body"),
            giveUpAt: try row.optionalInteger(prefix + "give_up_at").map(Date.init(millisecondsSince1970:)))
    }

    /// A transaction from a row of `iap_transactions` (its columns under their own names).
    func storedTransaction(row: SQLRow, bundleID: String) throws -> StoredTransaction {
        StoredTransaction(
            transactionID: try row.text("transaction_id"),
            originalTransactionID: try row.text("original_transaction_id"),
            bundleID: bundleID, productID: try row.text("product_id"),
            signedDate: Date(millisecondsSince1970: try row.integer("signed_date")),
            document: try row.text("document"),
            appAccountToken: try row.optionalText("app_account_token"),
            record: try decoder.decode(PurchaseRecord.self, from: try row.text("record")))
    }
}
