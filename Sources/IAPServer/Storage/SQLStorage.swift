import Foundation
import IAPCore
public import IAPEntitlements

/// Storage in an SQL database: one schema, one set of statements and one implementation of the rules, for SQLite
/// (``SQLiteDatabase``) and PostgreSQL (``PostgresDatabase``), so the conformance suite tests the rules once.
public final class SQLStorage: ServerStorage {
    let database: any SQLDatabase
    /// Records are stored as JSON, dates as `Date`'s own Codable form (what `JSONDecoder` reads by default); read back
    /// with ``StreamingJSONDecoder``.
    private let encoder = StreamingJSONEncoder(datesAsReferenceSeconds: true)
    let decoder = StreamingJSONDecoder()
    /// The posts of one transaction this server answered on PostgreSQL, to read a re-post before writing (nil on
    /// SQLite, which always reads first).
    let storedPosts: StoredPostHints?
    /// The histories this server read lately, offered to the read of a re-post (nil on SQLite).
    let histories: HistoryCache?
    /// The reads of re-posts, several to a statement when they come at once (nil on SQLite). One lane: with two, most
    /// reads found a lane free and went alone, and two instances answered the benchmark's re-posts no faster than
    /// without batches (4,695 a second against 4,187; one lane 5,776, 10 s runs, 2026-11-29).
    let rePostReads: Coalescer<RePostLookup, SQLRow?>?
    /// Counts this instance's writes on PostgreSQL, to have its tables analyzed while they are young (nil on SQLite).
    let youngTables: YoungTables?
    /// Posts of one transaction each on PostgreSQL, several to a statement when they come while one is in flight (nil
    /// on SQLite; see ``recordInOneStatement(batch:)``). One lane, at most 8 a batch: two instances wrote new
    /// purchases 2,374-2,443 a second so, 1,809-1,914 with two lanes, 2,075-2,278 with 16 a batch (8 s runs,
    /// 2026-11-30). When 8 wait, the next post goes alone at once, so a batch held by a lock holds up no more.
    let oneStatementWrites: Coalescer<OneStatementWrite, Result<OneStatementResult, StorageError>>?
    /// How many of those batches PostgreSQL refused as a whole (their posts then went one by one).
    let writeBatchFailures = FailureCount()
    var failedWriteBatches: Int { writeBatchFailures.value }

    /// Opens storage in `database`, applying the migrations it has not seen.
    public init(database: any SQLDatabase) async throws(StorageError) {
        self.database = database
        storedPosts = database.engine == .postgres ? StoredPostHints() : nil
        histories = database.engine == .postgres ? HistoryCache() : nil
        youngTables = database.engine == .postgres ? YoungTables() : nil
        rePostReads =
            database.engine == .postgres
            ? Coalescer(lanes: 1, batchLimit: 16) { lookups in
                try await Self.readRePosts(lookups, database: database)
            }
            : nil
        let writer = StorageReference()
        oneStatementWrites =
            database.engine == .postgres
            ? Coalescer(lanes: 1, batchLimit: 8, apart: OneStatementWrite.apart) { writes in
                guard let storage = writer.storage else {
                    return writes.map { _ in .failure(StorageError(code: "storageUnavailable", reason: "closed")) }
                }
                return await storage.runOneStatementWrites(writes)
            }
            : nil
        writer.storage = self
        do {
            try await Migrations.apply(to: database)
        } catch {
            // Nothing else will close it: its probe of an unreachable database would go on.
            try? await database.close()
            throw Migrations.failure(error)
        }
    }

    public func record(_ batch: PurchaseBatch, announcing announcer: EventAnnouncer?) async throws(StorageError)
        -> RecordOutcome
    {
        let bundleID = batch.transactions.first?.bundleID ?? batch.renewals.first?.bundleID ?? ""
        var readAlready = false
        var encodedFirst: String?
        if recordsInOneStatement(batch, announcer: announcer), let only = batch.transactions.first {
            let (outcome, read, json) = try await recordAlone(only, claimant: batch.claimant)
            if let outcome { return outcome }
            (readAlready, encodedFirst) = (read, json)
        }
        let rows = try encodedRows(batch, first: encodedFirst)
        if !readAlready, let unchanged = try await alreadyRecorded(batch, rows: rows, bundleID: bundleID) {
            return unchanged
        }
        let written: Written = try await inTransaction { db in
            // A claimed batch answers for its claimant, whoever ends up owning what it carries.
            var owners: [String] = batch.claimant.map { [$0] } ?? []
            var ownerOf: [String: String] = [:]
            var transfers: [Transfer] = []
            var previousOwners: [String] = []
            for row in rows.transactions {
                let original = row.transaction.originalTransactionID
                let (owned, madeUpOwner) = try await Self.own(row.transaction, claimant: batch.claimant, db: db)
                var owner = owned
                // A claim took the purchase from the owner the server made up: their records changed too.
                if let madeUpOwner, !previousOwners.contains(madeUpOwner) { previousOwners.append(madeUpOwner) }
                if let claimant = batch.claimant, owner != claimant {
                    switch batch.policy {
                    case .refuse:
                        let refused = RecordOutcome.claimedByAnother(originalTransactionID: original, owner: owner)
                        return (Written(refusal: refused, owners: [], digest: nil), commit: false)
                    case .keep:
                        break
                    case .transfer:
                        try await Self.move(original, bundleID: bundleID, to: claimant, db: db)
                        if !transfers.contains(where: { $0.originalTransactionID == original }) {
                            transfers.append(
                                Transfer(
                                    originalTransactionID: original, productID: row.transaction.productID,
                                    from: owner, reason: "restore"))
                        }
                        previousOwners.append(owner)
                        owner = claimant
                    }
                }
                if !owners.contains(owner) { owners.append(owner) }
                ownerOf[original] = owner
            }
            let before = try await versionsBefore(rows, bundleID: bundleID, announcer: announcer, db: db)
            var rows = rows
            // New transactions and nothing else: marked in their rows, announced after this write commits.
            if let announcer, announcer.defers, let before, transfers.isEmpty, before.onlyNew(rows) {
                let moments = announcer.moments()
                rows.announce = (moments.recordedAt.millisecondsSince1970, moments.entitlementsAt.millisecondsSince1970)
            }
            let digest = try await writeUpdatingDigests(
                rows, owners: owners, previousOwners: previousOwners, bundleID: bundleID, db: db)
            if rows.announce == nil {
                try await announce(
                    rows, before: before, ownerOf: ownerOf,
                    transfers: transfers.isEmpty ? [:] : [batch.claimant ?? "": transfers], bundleID: bundleID,
                    announcer: announcer, db: db)
            }
            return (Written(refusal: nil, owners: owners, digest: digest), commit: true)
        }
        if let refusal = written.refusal { return refusal }
        return .recorded(
            owners: written.owners,
            digest: written.digest ?? CustomerDigest(history: CompactHistory(), version: 0))
    }

    /// The answer to a batch that would change nothing, read without taking the writer's turn; nil when it may change
    /// something. Apps post the same transaction at every launch: once it is stored, a post of it finds one owner who
    /// stays (the claimant, when there is one, already holds the claim) and, for each document, the same one or a
    /// newer one stored, which is exactly when the writes would leave every row as it is. One statement reads the
    /// batch's owners and stored documents, and the owner's digest, or their rows when they have no digest.
    private func alreadyRecorded(_ batch: PurchaseBatch, rows: EncodedRows, bundleID: String) async throws(StorageError)
        -> RecordOutcome?
    {
        guard !batch.transactions.isEmpty else { return nil }
        let found = try await read { db in try await db.rows(Self.storedQuery(batch)) }
        return try Self.decoding { () throws -> RecordOutcome? in
            var owners: [String: (customer: String, claimed: Bool)] = [:]
            var documents: [Int64: [String: SQLRow]] = [:]
            var digest: SQLRow?
            var history: [SQLRow] = []
            for row in found {
                switch try row.integer("kind") {
                case 7:
                    owners[try row.text("sort_text")] = (
                        try row.text("transaction_id"), try row.integer("sort_number") == 1
                    )
                case 5, 6: documents[try row.integer("kind"), default: [:]][try row.text("sort_text")] = row
                case 3: digest = row
                default: history.append(row)
                }
            }
            var owner: String?
            for transaction in batch.transactions {
                guard let found = owners[transaction.originalTransactionID] else { return nil }
                if let claimant = batch.claimant, !found.claimed || found.customer != claimant { return nil }
                guard owner == nil || owner == found.customer else { return nil }
                owner = found.customer
            }
            guard let owner else { return nil }
            func keeps(_ row: SQLRow?, signedDate: Date, document: String) throws -> Bool {
                guard let row else { return false }
                return try row.text("document") == document
                    || row.integer("signed_date") > signedDate.millisecondsSince1970
            }
            for transaction in batch.transactions {
                let stored = documents[5]?[transaction.transactionID]
                guard try keeps(stored, signedDate: transaction.signedDate, document: transaction.document) else {
                    return nil
                }
            }
            for renewal in batch.renewals {
                let stored = documents[6]?[renewal.originalTransactionID]
                guard try keeps(stored, signedDate: renewal.signedDate, document: renewal.document) else { return nil }
            }
            if let digest, let json = try digest.optionalText("record"), !json.isEmpty {
                let stored = CustomerDigest(
                    history: try decoder.decode(CompactHistory.self, from: json),
                    version: try digest.integer("sort_number"))
                return .recorded(owners: [owner], digest: stored)
            }
            // No digest: a short history, read whole (a long one goes through the writer, which builds one).
            guard history.count < Self.digestThreshold else { return nil }
            let records = try self.history(from: history, written: rows)
            return .recorded(owners: [owner], digest: CustomerDigest(history: CompactHistory(records), version: 0))
        }
    }

    /// What a batch's transaction did: refused, or recorded with the first owner's digest.
    private struct Written: Sendable {
        var refusal: RecordOutcome?
        var owners: [String]
        var digest: CustomerDigest?
    }

    public func record(
        notification: StoredNotification, applying batch: PurchaseBatch, announcing announcer: EventAnnouncer?,
        queueing queued: [QueuedEvent]
    ) async throws(StorageError) -> Bool {
        let rows = try encodedRows(batch)
        return try await inTransaction { db in
            let inserted = try await db.rows(
                SQLStatement(
                    """
                    INSERT INTO iap_notifications (notification_uuid, bundle_id, notification_type, subtype,
                        signed_date, received_at, body, original_transaction_id, effect)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                    ON CONFLICT (bundle_id, notification_uuid) DO UPDATE SET repeats = iap_notifications.repeats + 1
                    RETURNING repeats
                    """,
                    [
                        .text(notification.uuid), .text(notification.bundleID), .text(notification.type),
                        SQLValue(notification.subtype), .integer(notification.signedDate.millisecondsSince1970),
                        .integer(notification.receivedAt.millisecondsSince1970), .text(notification.body),
                        SQLValue(notification.originalTransactionID), SQLValue(notification.effect?.rawValue),
                    ]))
            // A repeat only counts itself.
            guard try inserted.first?.integer("repeats") == 0 else { return (false, commit: true) }
            var owners: [String] = []
            var ownerOf: [String: String] = [:]
            for row in rows.transactions {
                let owner = try await Self.own(row.transaction, claimant: nil, db: db).owner
                if !owners.contains(owner) { owners.append(owner) }
                ownerOf[row.transaction.originalTransactionID] = owner
            }
            let bundleID = notification.bundleID
            let before = try await versionsBefore(rows, bundleID: bundleID, announcer: announcer, db: db)
            _ = try await writeUpdatingDigests(rows, owners: owners, bundleID: bundleID, db: db)
            try await announce(
                rows, before: before, ownerOf: ownerOf, transfers: [:], bundleID: bundleID, announcer: announcer, db: db
            )
            for item in queued { try await Self.insert(item.event, endpoints: item.endpoints, db: db) }
            return (true, commit: true)
        }
    }

    public func customer(matching id: String, bundleID: String) async throws(StorageError) -> CustomerKey? {
        let rows = try await read { db in try await db.rows(Self.customerQuery(id: id, bundleID: bundleID)) }
        return try Self.decoding {
            try rows.first.map { CustomerKey(bundleID: bundleID, id: try $0.text("customer_id")) }
        }
    }

    public func records(of customer: CustomerKey) async throws(StorageError) -> CustomerRecords {
        let rows = try await read { db in try await db.rows(Self.recordsQuery(customer)) }
        return try records(of: customer, from: rows)
    }

    /// A customer's records from the rows of a full ``recordsQuery(_:unlessDigested:documents:)``.
    func records(of customer: CustomerKey, from rows: [SQLRow]) throws(StorageError) -> CustomerRecords {
        try Self.decoding {
            var records = CustomerRecords()
            for row in rows {
                switch try row.integer("kind") {
                case 0:
                    records.transactions.append(
                        StoredTransaction(
                            transactionID: try row.text("transaction_id"),
                            originalTransactionID: try row.text("original_transaction_id"),
                            bundleID: customer.bundleID,
                            productID: try row.text("product_id"),
                            signedDate: Date(millisecondsSince1970: try row.integer("signed_date")),
                            document: try row.text("document"),
                            appAccountToken: try row.optionalText("app_account_token"),
                            record: try decoder.decode(PurchaseRecord.self, from: try row.text("record"))))
                case 1:
                    records.renewals.append(
                        StoredRenewal(
                            bundleID: customer.bundleID,
                            originalTransactionID: try row.text("original_transaction_id"),
                            signedDate: Date(millisecondsSince1970: try row.integer("signed_date")),
                            document: try row.text("document"),
                            record: try decoder.decode(RenewalRecord.self, from: try row.text("record"))))
                case 2:
                    records.consumptions.append(
                        try decoder.decode(ConsumptionRecord.self, from: try row.text("record")))
                default:
                    break
                }
            }
            return records
        }
    }

    public func record(consumption: ConsumptionRecord, for customer: CustomerKey) async throws(StorageError) -> Bool {
        let key = consumption.id ?? UUID().uuidString
        let json = try encode(consumption)
        return try await inTransaction { db in
            // The customer's digest row first: a write of the same customer elsewhere waits for this one (or this one
            // for it), so one customer's consumptions take increasing sequence numbers (the sequence counts across
            // customers) and the digest builds on what came before.
            let held = try await Self.holdDigest(of: customer, db: db)
            let inserted = try await db.rows(
                SQLStatement(
                    """
                    INSERT INTO iap_consumptions (bundle_id, customer_id, idempotency_key, sequence, record)
                    VALUES ($1, $2, $3, (SELECT COALESCE(MAX(sequence), 0) + 1 FROM iap_consumptions), $4)
                    ON CONFLICT (bundle_id, customer_id, idempotency_key) DO NOTHING
                    RETURNING idempotency_key
                    """,
                    [.text(customer.bundleID), .text(customer.id), .text(key), .text(json)]))
            guard !inserted.isEmpty else { return (false, commit: false) }
            // The consumption joins the customer's digest, or the digest goes (built again when next read).
            if var digest = try digest(json: held.json, version: held.version),
                digest.history.append(records: [], consumptions: [consumption])
            {
                try await Self.saveDigest(digest.history, of: customer, version: held.version + 1, db: db)
            } else {
                try await Self.dropDigest(of: customer, db: db)
            }
            return (true, commit: true)
        }
    }

    public func transactions(of customer: CustomerKey, after cursor: String?, limit: Int, newestFirst: Bool)
        async throws(StorageError) -> [StoredTransaction]
    {
        // Ids compare by length, then as bytes (PostgreSQL's collation would order them by the locale).
        let id = database.engine == .postgres ? "t.transaction_id COLLATE \"C\"" : "t.transaction_id"
        let comparison = newestFirst ? "<" : ">"
        let direction = newestFirst ? "DESC" : "ASC"
        let cursorCondition =
            cursor == nil
            ? ""
            : """
            AND (LENGTH(t.transaction_id) \(comparison) LENGTH($3)
                OR (LENGTH(t.transaction_id) = LENGTH($3) AND \(id) \(comparison) $3))
            """
        let rows = try await read { db in
            try await db.rows(
                SQLStatement(
                    """
                    SELECT t.transaction_id, t.original_transaction_id, t.product_id, t.signed_date, t.document,
                        t.app_account_token, t.record
                    FROM iap_owners o CROSS JOIN iap_transactions t
                    WHERE o.bundle_id = $1 AND o.customer_id = $2
                        AND t.bundle_id = o.bundle_id AND t.original_transaction_id = o.original_transaction_id
                        \(cursorCondition)
                    ORDER BY LENGTH(t.transaction_id) \(direction), \(id) \(direction)
                    LIMIT \(max(0, min(limit, 10_000)))
                    """, [.text(customer.bundleID), .text(customer.id)] + (cursor.map { [SQLValue.text($0)] } ?? [])))
        }
        return try Self.decoding { try rows.map { try storedTransaction(row: $0, bundleID: customer.bundleID) } }
    }

    public func notification(uuid: String, bundleID: String) async throws(StorageError) -> StoredNotification? {
        let rows = try await read { db in
            try await db.rows(
                SQLStatement(
                    """
                    SELECT \(Self.notificationColumns()), body
                    FROM iap_notifications WHERE bundle_id = $1 AND notification_uuid = $2
                    """,
                    [.text(bundleID), .text(uuid)]))
        }
        return try Self.decoding { try rows.first.map { try Self.notification($0, body: try $0.text("body")) } }
    }

    public func counts() async throws(StorageError) -> StorageCounts {
        let rows = try await read { db in
            try await db.rows(
                SQLStatement(
                    """
                    SELECT (SELECT COUNT(*) FROM iap_transactions) AS transactions,
                        (SELECT COUNT(*) FROM iap_notifications) AS notifications,
                        (SELECT COUNT(*) FROM (SELECT DISTINCT bundle_id, customer_id FROM iap_owners) c) AS customers
                    """))
        }
        return try Self.decoding {
            func count(_ column: String) throws -> Int { Int(try rows.first?.integer(column) ?? 0) }
            return StorageCounts(
                transactions: try count("transactions"), notifications: try count("notifications"),
                customers: try count("customers"))
        }
    }

    public func largestTransactionID(bundleID: String) async throws(StorageError) -> UInt64? {
        // Digit strings order numerically by length first, then as text: no cast that a non-numeric id could break.
        let rows = try await read { db in
            try await db.rows(
                SQLStatement(
                    """
                    SELECT transaction_id FROM iap_transactions WHERE bundle_id = $1
                    ORDER BY LENGTH(transaction_id) DESC, transaction_id DESC LIMIT 20
                    """, [.text(bundleID)]))
        }
        return try Self.decoding { try rows.compactMap { UInt64(try $0.text("transaction_id")) }.max() }
    }

    public func reachable() async -> Bool { await database.reachable() }

    public func shutdown() async throws(StorageError) {
        do { try await database.close() } catch { throw StorageError.unavailable(error) }
    }

    // MARK: - Statements

    /// The customer named `id`: by app account token (or made-up id) first, else by an original transaction id, else
    /// by a transaction id. Index lookups only (an `OR` made SQLite scan the app's rows).
    static func customerQuery(id: String, bundleID: String) -> SQLStatement {
        SQLStatement(
            """
            SELECT customer_id, -1 AS rank FROM iap_aliases WHERE bundle_id = $1 AND alias = $2
            UNION ALL
            SELECT customer_id, 0 AS rank FROM iap_identified WHERE bundle_id = $1 AND customer_id = $2
            UNION ALL
            SELECT customer_id, 0 AS rank FROM iap_owners WHERE bundle_id = $1 AND customer_id = $2
            UNION ALL
            SELECT customer_id, 1 AS rank FROM iap_owners WHERE bundle_id = $1 AND original_transaction_id = $2
            UNION ALL
            SELECT o.customer_id, 2 AS rank FROM iap_transactions t CROSS JOIN iap_owners o
            WHERE t.bundle_id = $1 AND t.transaction_id = $2 AND o.bundle_id = t.bundle_id
                AND o.original_transaction_id = t.original_transaction_id
            ORDER BY rank LIMIT 1
            """,
            [.text(bundleID), .text(id)])
    }

    /// What ``alreadyRecorded(_:rows:bundleID:)`` reads of a batch, in one statement: the owner of each of its
    /// original transactions (kind 7: original transaction id as `sort_text`, claimed as `sort_number`, the customer
    /// as `transaction_id`), the stored document of each of its transactions (kind 5, by transaction id) and renewals
    /// (kind 6, by original transaction id), and the digest of the first one's owner (kind 3), or their rows when
    /// they have no usable digest (kinds 0 to 2, without documents).
    static func storedQuery(_ batch: PurchaseBatch) -> SQLStatement {
        let bundleID = batch.transactions.first?.bundleID ?? ""
        var values: [SQLValue] = [.text(bundleID), .text(batch.transactions.first?.originalTransactionID ?? "")]
        func list(_ ids: [String]) -> String {
            ids.map { id in
                values.append(.text(id))
                return "$\(values.count)"
            }.joined(separator: ", ")
        }
        let originals = list(Array(Set(batch.transactions.map(\.originalTransactionID))).sorted())
        let transactions = list(batch.transactions.map(\.transactionID))
        let renewals =
            batch.renewals.isEmpty
            ? ""
            : """
            SELECT 6, r.original_transaction_id, CAST(NULL AS BIGINT), CAST(NULL AS TEXT), r.original_transaction_id,
                CAST(NULL AS TEXT), r.signed_date, r.document, CAST(NULL AS TEXT), CAST(NULL AS TEXT)
            FROM iap_renewals r
            WHERE r.bundle_id = $1 AND r.original_transaction_id IN (\(list(batch.renewals.map(\.originalTransactionID))))
            UNION ALL

            """
        let text = """
            WITH first_owner AS (
                SELECT customer_id FROM iap_owners WHERE bundle_id = $1 AND original_transaction_id = $2
            )
            SELECT 7 AS kind, o.original_transaction_id AS sort_text, o.claimed AS sort_number,
                o.customer_id AS transaction_id, CAST(NULL AS TEXT) AS original_transaction_id,
                CAST(NULL AS TEXT) AS product_id, CAST(NULL AS BIGINT) AS signed_date, CAST(NULL AS TEXT) AS document,
                CAST(NULL AS TEXT) AS app_account_token, CAST(NULL AS TEXT) AS record
            FROM iap_owners o WHERE o.bundle_id = $1 AND o.original_transaction_id IN (\(originals))
            UNION ALL
            SELECT 5, t.transaction_id, CAST(NULL AS BIGINT), t.transaction_id, t.original_transaction_id,
                CAST(NULL AS TEXT), t.signed_date, t.document, CAST(NULL AS TEXT), CAST(NULL AS TEXT)
            FROM iap_transactions t WHERE t.bundle_id = $1 AND t.transaction_id IN (\(transactions))
            UNION ALL
            \(renewals)
            """
            + recordsText(
                bundle: "$1", customer: "(SELECT customer_id FROM first_owner)", unlessDigested: true,
                documents: (noDocument, noDocument))
        return SQLStatement(text, values)
    }

    /// A document column left out of a read.
    static let noDocument = "CAST(NULL AS TEXT)"

    /// A customer's rows in one statement: kind 0 transactions, 1 renewals, 2 consumptions. The owner's rows come
    /// first (SQLite's planner keeps a CROSS JOIN's order), so the cost is the customer's rows, never the app's. The
    /// signed documents are most of a row's bytes, and only a full read needs them: without `documents`, the rows
    /// carry the records alone (what the entitlement history is made of).
    static func recordsQuery(_ customer: CustomerKey, unlessDigested: Bool = false, documents: Bool = true)
        -> SQLStatement
    {
        SQLStatement(
            recordsText(
                bundle: "$1", customer: "$2", unlessDigested: unlessDigested,
                documents: documents ? ("t.document", "r.document") : (noDocument, noDocument)),
            [.text(customer.bundleID), .text(customer.id)])
    }

    /// The text of ``recordsQuery(_:unlessDigested:documents:)`` for the customer the SQL expressions `bundle` and
    /// `customer` name, with `documents` as the transactions' and renewals' document columns. With `written` (a write
    /// in the same statement, see ``recordInOneStatement(_:json:)``): its `condition` keeps the stored transaction
    /// row the write replaced out, and its `rows` select the row as written instead. With `unlessDigested`, `wanted`
    /// names a value the statement computes once from ``rowsWantedText(bundle:customer:)`` (four look-ups of the
    /// digest row cost PostgreSQL 5% of a new transaction's statement); without it each kind of row looks for itself.
    static func recordsText(
        bundle: String, customer: String, unlessDigested: Bool, documents: (transactions: String, renewals: String),
        written: (condition: String, rows: String)? = nil, wanted: String? = nil
    ) -> String {
        // With `unlessDigested`, the digest comes first (kind 3: version as sort_number, JSON as record) and the rows
        // only when it is missing or stale.
        let digest =
            unlessDigested
            ? """
            SELECT 3 AS kind, CAST(NULL AS TEXT) AS sort_text, version AS sort_number, CAST(NULL AS TEXT) AS transaction_id,
                CAST(NULL AS TEXT) AS original_transaction_id, CAST(NULL AS TEXT) AS product_id,
                CAST(NULL AS BIGINT) AS signed_date, CAST(NULL AS TEXT) AS document,
                CAST(NULL AS TEXT) AS app_account_token, digest AS record
            FROM iap_customer_digests WHERE bundle_id = \(bundle) AND customer_id = \(customer)
            UNION ALL

            """ : ""
        let rowsWanted = unlessDigested ? " AND \(wanted ?? rowsWantedText(bundle: bundle, customer: customer))" : ""
        let writtenRows = written.map { "\n    AND \($0.condition)\nUNION ALL\n\($0.rows)\(rowsWanted)" } ?? ""
        return digest + """
            SELECT 0 AS kind, t.transaction_id AS sort_text, CAST(NULL AS BIGINT) AS sort_number,
                t.transaction_id, t.original_transaction_id, t.product_id, t.signed_date,
                \(documents.transactions) AS document, t.app_account_token, t.record
            FROM iap_owners o CROSS JOIN iap_transactions t
            WHERE o.bundle_id = \(bundle) AND o.customer_id = \(customer)
                AND t.bundle_id = o.bundle_id AND t.original_transaction_id = o.original_transaction_id\(rowsWanted)\(writtenRows)
            UNION ALL
            SELECT 1, r.original_transaction_id, CAST(NULL AS BIGINT), CAST(NULL AS TEXT),
                r.original_transaction_id, CAST(NULL AS TEXT), r.signed_date, \(documents.renewals),
                CAST(NULL AS TEXT), r.record
            FROM iap_owners o CROSS JOIN iap_renewals r
            WHERE o.bundle_id = \(bundle) AND o.customer_id = \(customer)
                AND r.bundle_id = o.bundle_id AND r.original_transaction_id = o.original_transaction_id\(rowsWanted)
            UNION ALL
            SELECT 2, CAST(NULL AS TEXT), sequence, CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS TEXT),
                CAST(NULL AS BIGINT), CAST(NULL AS TEXT), CAST(NULL AS TEXT), record
            FROM iap_consumptions
            WHERE bundle_id = \(bundle) AND customer_id = \(customer)\(rowsWanted)
            ORDER BY kind, sort_text, sort_number
            """
    }

    /// Whether a customer's rows are wanted by a read `unlessDigested`: they have no digest row, or a stale one.
    static func rowsWantedText(bundle: String, customer: String) -> String {
        """
        NOT EXISTS (SELECT 1 FROM iap_customer_digests d
            WHERE d.bundle_id = \(bundle) AND d.customer_id = \(customer) AND d.digest <> '')
        """
    }

    struct EncodedRows: Sendable {
        var transactions: [(transaction: StoredTransaction, json: String)]
        var renewals: [(renewal: StoredRenewal, json: String)]
        /// For new transactions left unannounced by their write: its moment and its entitlements' (milliseconds).
        var announce: (at: Int64, moment: Int64)? = nil
    }

    /// The batch's rows with their records' JSON; `first`, when given, is the first transaction's, encoded already.
    private func encodedRows(_ batch: PurchaseBatch, first: String? = nil) throws(StorageError) -> EncodedRows {
        EncodedRows(
            transactions: try batch.transactions.enumerated().map { (index, t) throws(StorageError) in
                if index == 0, let first { return (t, first) }
                return (t, try encode(t.record))
            },
            renewals: try batch.renewals.map { (r) throws(StorageError) in (r, try encode(r.record)) })
    }

    func encode(_ value: some Encodable) throws(StorageError) -> String {
        do { return String(decoding: try encoder.encode(value), as: UTF8.self) } catch {
            throw StorageError(code: "storageCorrupt", reason: "a record could not be encoded: \(error)")
        }
    }

    // MARK: - Transactions and errors

    /// Runs `body` in one transaction; it answers whether to commit. It may run again after a deadlock (see
    /// ``SQLDatabase/transaction(_:)``): nothing but statements and its answer.
    func inTransaction<R: Sendable>(
        _ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool)
    ) async throws(StorageError) -> R {
        do { return try await database.transaction(body) } catch { throw StorageError.unavailable(error) }
    }

    func read<R: Sendable>(_ body: (any SQLStatementRunner) async throws -> R) async throws(StorageError) -> R {
        do { return try await database.read(body) } catch { throw StorageError.unavailable(error) }
    }

    /// Turns rows into values; a row of the wrong shape is a corrupt database.
    static func decoding<R>(_ body: () throws -> R) throws(StorageError) -> R {
        do { return try body() } catch {
            throw StorageError(code: "storageCorrupt", reason: "a stored row could not be read: \(error)")
        }
    }
}
