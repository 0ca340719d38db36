import Foundation
import IAPCore
import IAPEntitlements

/// Several posts of new purchases in one statement. A post of one transaction on PostgreSQL is one statement
/// (``recordInOneStatement(_:json:claimant:)``), and under load several wait for a pooled connection at any moment:
/// ``oneStatementWrites`` gathers them (``Coalescer``), and this statement writes them set-wise, each purchase with the
/// checks the one statement makes for it (a subscription's period goes alone). A statement costs a server about 0.1 ms of CPU before it does any work, and
/// PostgreSQL's own work a purchase falls with the batch (docs/scale.md).
extension SQLStorage {
    /// One post of a transaction for the one statement: the transaction, its record's JSON, and who claims it.
    struct OneStatementWrite: Sendable {
        let transaction: StoredTransaction
        let json: String
        let claimant: String?

        /// Whether the post can share a statement: a subscription's period goes alone, since it supersedes the
        /// subscription's earlier periods, and that update, written set-wise, was planned as a walk over every
        /// period of every subscription (on young tables; a plan is kept until its statement is prepared again).
        var batchable: Bool { transaction.record.expiresDate == nil }

        /// Whether two posts must go to different statements: one transaction's row cannot be written twice by one
        /// statement (`ON CONFLICT DO UPDATE` refuses), nor two owners decided for one original transaction; and a
        /// statement writes for one app (its answers are told apart by customer id alone).
        static func apart(_ first: OneStatementWrite, _ second: OneStatementWrite) -> Bool {
            first.transaction.bundleID != second.transaction.bundleID
                || first.transaction.originalTransactionID == second.transaction.originalTransactionID
                || first.transaction.transactionID == second.transaction.transactionID
        }
    }

    /// What the one statement answers a post: nil when it could not record it (the caller writes through a
    /// transaction then), else the outcome, whether the transaction's row was written, and the version of the owner's
    /// digest row the answered history is exact at (nil when that cannot be told).
    typealias OneStatementResult = (outcome: RecordOutcome, wrote: Bool, version: Int64?)?

    /// Runs `writes` (gathered by ``oneStatementWrites``): one alone as ``recordInOneStatement(_:json:claimant:)``,
    /// several in one statement. A batch PostgreSQL refuses for what it holds (a deadlock it broke, a value it cannot
    /// store) goes again one by one; any other failure (the database unreachable, a statement timed out) is each
    /// post's answer, so a lane held by a lock is not held again for each post.
    func runOneStatementWrites(_ writes: [OneStatementWrite]) async -> [Result<OneStatementResult, StorageError>] {
        if writes.count > 1 {
            do {
                return try await recordInOneStatement(batch: writes).map { .success($0) }
            } catch is BatchRefused {
                ServerMetrics.writeBatch(purchases: writes.count, failed: true)
                writeBatchFailures.add()
            } catch let error as StorageError {
                return writes.map { _ in .failure(error) }
            } catch {
                return writes.map { _ in .failure(StorageError.unavailable(error)) }
            }
        }
        var results: [Result<OneStatementResult, StorageError>] = []
        for write in writes {
            do {
                results.append(
                    .success(
                        try await recordInOneStatement(write.transaction, json: write.json, claimant: write.claimant))
                )
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// A batch statement PostgreSQL refused for what it held, not for being unreachable: a deadlock it broke or a
    /// serialization failure (SQLSTATE class 40), a value it cannot take (22), a constraint (23). Nothing was written.
    struct BatchRefused: Error {
        let failure: PostgresFailure

        static func refusing(_ error: any Error) -> BatchRefused? {
            guard let failure = error as? PostgresFailure, ["40", "22", "23"].contains(failure.state.prefix(2))
            else { return nil }
            return BatchRefused(failure: failure)
        }
    }

    /// Records several posts of one transaction each in one statement: for each, what
    /// ``recordInOneStatement(_:json:claimant:)`` does (its owner kept, claimed or made up; its row unless the same
    /// document or a newer one is stored; no subscription periods: see ``OneStatementWrite/batchable``), each owner's
    /// digest row bumped once for the batch, and each owner's rows as they are after it. Rows are locked in the order
    /// every write takes them (owners, then transactions, then digest rows), each table's in its key's byte order, so
    /// batches on two instances do not wait on each other in a circle. A history the server holds is not offered
    /// here. An owner's kept digest takes the batch's records as the one statement's does; a history long enough for
    /// one is kept; one another write came between is read again. Throws ``BatchRefused`` when PostgreSQL refused
    /// the statement for what it held.
    func recordInOneStatement(batch writes: [OneStatementWrite]) async throws -> [OneStatementResult] {
        assert(writes.allSatisfy(\.batchable), "a subscription's period is written alone")
        assert(Set(writes.map(\.transaction.bundleID)).count == 1, "a batch writes for one app")
        let json: String
        do {
            let items = writes.enumerated().map { index, write in
                BatchItem(
                    index: index,
                    values: Self.transactionValues(write.transaction, json: write.json, announce: nil),
                    customer: write.claimant ?? PurchaseBatch.implicitOwner(of: write.transaction),
                    claimed: write.claimant == nil ? 0 : 1)
            }
            json = String(decoding: try StreamingJSONEncoder().encode(items), as: UTF8.self)
        } catch {
            throw StorageError(code: "storageCorrupt", reason: "a batch could not be encoded: \(error)")
        }
        let rows: [SQLRow]
        do {
            rows = try await database.read { db in try await db.rows(SQLStatement(Self.batchText, [.text(json)])) }
        } catch {
            throw BatchRefused.refusing(error) ?? StorageError.unavailable(error)
        }
        ServerMetrics.writeBatch(purchases: writes.count, failed: false)
        let bundleID = writes[0].transaction.bundleID
        let written = EncodedRows(transactions: writes.map { ($0.transaction, $0.json) }, renewals: [])
        // The rows by what they answer: each purchase's (kind 6), each owner's digest row before (3) and after (7) the
        // batch, and each owner's records (0 to 2).
        var purchases: [Int: SQLRow] = [:]
        var before: [String: SQLRow] = [:]
        var after: [String: Int64] = [:]
        var records: [String: [SQLRow]] = [:]
        try Self.decoding {
            for row in rows {
                let kind = try row.integer("kind")
                switch kind {
                case 6: purchases[Int(try row.integer("i"))] = row
                case 3: before[try row.text("owner")] = row
                case 7: after[try row.text("owner")] = try row.integer("sort_number")
                default: records[try row.text("owner"), default: []].append(row)
                }
            }
        }
        // Each post's owner and whether its row was written; nil where the one statement would answer nil (its owner
        // could not be told, or the claimant does not hold the claim): the caller takes the way through a transaction.
        var posts: [(owner: String, wrote: Bool)?] = []
        for (index, write) in writes.enumerated() {
            guard let row = purchases[index], let owner = try Self.decoding({ try row.optionalText("owner") }) else {
                posts.append(nil)
                continue
            }
            if let claimant = write.claimant {
                let held = try Self.decoding { try row.optionalInteger("sort_number") } == 1
                guard Self.same(owner, claimant), held else {
                    posts.append(nil)
                    continue
                }
            }
            posts.append((owner, try Self.decoding { try row.optionalText("sort_text") } == "wrote"))
        }
        // Each owner's answer once, however many of the batch's purchases they own.
        var answers: [String: (digest: CustomerDigest, exactAt: Int64?)] = [:]
        func answer(for owner: String) async throws -> (digest: CustomerDigest, exactAt: Int64?) {
            if let known = answers[owner] { return known }
            let customer = CustomerKey(bundleID: bundleID, id: owner)
            let seen = try Self.decoding { try before[owner]?.integer("sort_number") }
            let bumped = after[owner]
            // The batch bumped the version it read by one, unless another write came between.
            let whole = bumped.map { $0 == (seen ?? 0) + 1 } ?? true
            let found: (digest: CustomerDigest, exactAt: Int64?)
            if let kept = try digest(
                json: try Self.decoding { try before[owner]?.optionalText("record") }, version: seen ?? 0)
            {
                // A kept digest (its rows were not sent) takes the records the batch wrote for this owner.
                let added = zip(writes, posts).compactMap { write, post in
                    post?.owner == owner && post?.wrote == true ? write.transaction.record : nil
                }
                var history = kept.history
                if bumped == nil {
                    found = (kept, kept.version)
                } else if whole,
                    !added.contains(where: { record in
                        history.history.records.contains { $0.transactionID == record.transactionID }
                    }),
                    history.append(records: added, renewals: [])
                {
                    let stored = try await read { db in
                        try await Self.keepDigest(history, of: customer, replacingStale: bumped, db: db)
                    }
                    found = (stored, stored.version > 0 ? stored.version : nil)
                } else {
                    found = (try await digest(of: customer), nil)
                }
            } else {
                let rows = records[owner] ?? []
                let built = CompactHistory(try history(from: rows, written: written))
                if rows.count < Self.digestThreshold {
                    found = (CustomerDigest(history: built, version: 0), bumped == nil ? seen : whole ? bumped : nil)
                } else if whole {
                    // Long enough to keep a digest of, as the one statement keeps one.
                    let stored = try await read { db in
                        try await Self.keepDigest(built, of: customer, replacingStale: bumped ?? seen, db: db)
                    }
                    found = (stored, stored.version > 0 ? stored.version : nil)
                } else {
                    found = (try await digest(of: customer), nil)
                }
            }
            answers[owner] = found
            return found
        }
        var results: [OneStatementResult] = []
        for post in posts {
            guard let post else {
                results.append(nil)
                continue
            }
            if post.wrote { ServerMetrics.writeHistory("read") }
            let (digest, exactAt) = try await answer(for: post.owner)
            results.append((.recorded(owners: [post.owner], digest: digest), post.wrote, exactAt))
        }
        return results
    }

    /// One purchase of a batch as JSON: its place, the values of ``insertTransaction(owner:onlyIf:source:)``
    /// (`v1` to `v19`), the customer who claims it or the owner made up for it, and whether it is claimed.
    private struct BatchItem: Encodable {
        let index: Int
        let values: [SQLValue]
        let customer: String
        let claimed: Int

        struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(index, forKey: Key("i"))
            for (place, value) in values.enumerated() {
                let key = Key("v\(place + 1)")
                switch value {
                case .null: try container.encodeNil(forKey: key)
                case .integer(let number): try container.encode(number, forKey: key)
                case .text(let text): try container.encode(text, forKey: key)
                }
            }
            try container.encode(customer, forKey: Key("c"))
            try container.encode(claimed, forKey: Key("cl"))
        }
    }

    /// The text of ``recordInOneStatement(batch:)``: `$1` is the purchases as a JSON array of ``BatchItem``.
    static let batchText: String = {
        // Each purchase's checks, as the one statement makes them: any owner writes an unclaimed post, only the
        // claimant's own claim a claimed one; the row is not written over the same document or a newer one.
        let owned = "o.customer_id IS NOT NULL AND (p.cl = 0 OR (o.customer_id = p.c AND o.claimed = 1))"
        let stored = """
            NOT EXISTS (SELECT 1 FROM iap_transactions k WHERE k.bundle_id = p.v3 AND k.transaction_id = p.v1
                    AND (k.document = p.v6 OR k.signed_date > p.v5))
            """
        let insert = insertTransaction(
            owner: "o.customer_id", onlyIf: "\(owned) AND \(stored)\nORDER BY p.v3 COLLATE \"C\", p.v1 COLLATE \"C\"",
            source: (from: "p JOIN o ON o.i = p.i", value: { "p.v\($0)" }))
        // Each owner's rows, looked up owner by owner (LATERAL, on the tables' keys; `OFFSET 0` keeps the planner from
        // merging them into a join it could run as a scan), unless a kept digest stands. Rows are locked in their keys'
        // byte order (`COLLATE "C"`), the order the writes through a transaction sort customers in.
        /// Each owner's rows of `table` (theirs through the purchases they own), their `key` as `k`.
        func ownersRows(of table: String, key: String) -> String {
            """
            FROM ow CROSS JOIN LATERAL (
                SELECT x.\(key) AS k, x.record FROM iap_owners y JOIN \(table) x
                    ON x.bundle_id = y.bundle_id AND x.original_transaction_id = y.original_transaction_id
                WHERE y.bundle_id = ow.b AND y.customer_id = ow.customer_id OFFSET 0) x
            """
        }
        let wanted = """
            NOT EXISTS (SELECT 1 FROM iap_customer_digests d
                    WHERE d.bundle_id = ow.b AND d.customer_id = ow.customer_id AND d.digest <> '')
            """
        return """
            WITH p AS (
                SELECT * FROM json_to_recordset($1::json) AS p(i bigint, v1 text, v2 text, v3 text, v4 text,
                    v5 bigint, v6 text, v7 text, v8 text, v9 bigint, v10 bigint, v11 bigint, v12 bigint, v13 bigint,
                    v14 bigint, v15 text, v16 text, v17 bigint, v18 bigint, v19 bigint, c text, cl bigint)
            ), inserted AS (
                INSERT INTO iap_owners (bundle_id, original_transaction_id, customer_id, claimed)
                SELECT v3, v2, c, cl FROM p ORDER BY v3 COLLATE "C", v2 COLLATE "C"
                ON CONFLICT (bundle_id, original_transaction_id) DO NOTHING
                RETURNING bundle_id, original_transaction_id, customer_id, claimed
            ), held AS (
                SELECT h.bundle_id, h.original_transaction_id, h.customer_id, h.claimed
                FROM (SELECT v3, v2 FROM p ORDER BY v3 COLLATE "C", v2 COLLATE "C") q CROSS JOIN LATERAL (
                    SELECT bundle_id, original_transaction_id, customer_id, claimed FROM iap_owners
                    WHERE bundle_id = q.v3 AND original_transaction_id = q.v2 FOR SHARE) h
            ), o AS (
                SELECT p.i, COALESCE(n.customer_id, h.customer_id) AS customer_id,
                    COALESCE(n.claimed, h.claimed) AS claimed
                FROM p
                LEFT JOIN inserted n ON n.bundle_id = p.v3 AND n.original_transaction_id = p.v2
                LEFT JOIN held h ON h.bundle_id = p.v3 AND h.original_transaction_id = p.v2
            ), w AS (
            \(insert)
                RETURNING bundle_id, transaction_id, record, customer_id
            ), g AS (
                INSERT INTO iap_customer_digests (bundle_id, customer_id, version, digest)
                SELECT b, c, 1, '' FROM (SELECT DISTINCT bundle_id AS b, customer_id AS c FROM w) d
                ORDER BY b COLLATE "C", c COLLATE "C"
                ON CONFLICT (bundle_id, customer_id)
                    DO UPDATE SET digest = '', version = iap_customer_digests.version + 1
                RETURNING bundle_id, customer_id, version
            ), ow AS (
                SELECT DISTINCT p.v3 AS b, o.customer_id FROM p JOIN o ON o.i = p.i WHERE \(owned)
            )
            SELECT 6 AS kind, o.customer_id AS owner, p.i,
                CASE WHEN EXISTS (SELECT 1 FROM w WHERE w.bundle_id = p.v3 AND w.transaction_id = p.v1)
                    THEN 'wrote' END AS sort_text,
                CAST(o.claimed AS BIGINT) AS sort_number, CAST(NULL AS TEXT) AS record
            FROM p JOIN o ON o.i = p.i
            UNION ALL
            SELECT 3, ow.customer_id, CAST(NULL AS BIGINT), CAST(NULL AS TEXT), d.version, d.digest
            FROM ow JOIN iap_customer_digests d ON d.bundle_id = ow.b AND d.customer_id = ow.customer_id
            UNION ALL
            SELECT 7, g.customer_id, CAST(NULL AS BIGINT), CAST(NULL AS TEXT), g.version, CAST(NULL AS TEXT) FROM g
            UNION ALL
            SELECT 0, ow.customer_id, CAST(NULL AS BIGINT), x.k, CAST(NULL AS BIGINT), x.record
            \(ownersRows(of: "iap_transactions", key: "transaction_id"))
            WHERE \(wanted) AND NOT EXISTS (SELECT 1 FROM w WHERE w.bundle_id = ow.b AND w.transaction_id = x.k)
            UNION ALL
            SELECT 0, w.customer_id, CAST(NULL AS BIGINT), w.transaction_id, CAST(NULL AS BIGINT), w.record
            FROM w JOIN ow ON ow.b = w.bundle_id AND ow.customer_id = w.customer_id
            WHERE \(wanted)
            UNION ALL
            SELECT 1, ow.customer_id, CAST(NULL AS BIGINT), x.k, CAST(NULL AS BIGINT), x.record
            \(ownersRows(of: "iap_renewals", key: "original_transaction_id"))
            WHERE \(wanted)
            UNION ALL
            SELECT 2, ow.customer_id, CAST(NULL AS BIGINT), CAST(NULL AS TEXT), c.sequence, c.record
            FROM ow CROSS JOIN LATERAL (
                SELECT sequence, record FROM iap_consumptions
                WHERE bundle_id = ow.b AND customer_id = ow.customer_id OFFSET 0) c
            WHERE \(wanted)
            ORDER BY owner, kind, sort_text, sort_number
            """
    }()
}

/// How many batches of writes PostgreSQL refused as a whole (their posts went again one by one).
final class FailureCount: Sendable {
    private let count = Locked(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}

/// The storage a ``Coalescer`` made in its initializer runs its batches on, once it is made (a weak reference: the
/// storage owns the coalescer).
final class StorageReference: Sendable {
    private final class Box: @unchecked Sendable {
        weak var storage: SQLStorage?
    }
    private let box = Locked(Box())

    var storage: SQLStorage? {
        get { box.withLock { $0.storage } }
        set { box.withLock { $0.storage = newValue } }
    }
}
