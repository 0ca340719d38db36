import Foundation
import IAPCore
import IAPEntitlements

/// PostgreSQL's post of one transaction in one statement. A write in a transaction takes round trips to the database
/// (the read that finds a re-post, BEGIN, the owner, the row, the customer's rows, COMMIT), and on PostgreSQL each one
/// costs both sides more than the statement's own work. The common post (one transaction, claimed or not, no renewal,
/// nothing to announce) does it all in one data-modifying statement instead, which commits on its own and writes
/// nothing for a post of what is stored; the conformance suite holds it to the same answers as the other way.
extension SQLStorage {
    /// Whether ``recordInOneStatement(_:json:claimant:)`` can record `batch`.
    func recordsInOneStatement(_ batch: PurchaseBatch, announcer: EventAnnouncer?) -> Bool {
        guard database.engine == .postgres, batch.renewals.isEmpty,
            let transaction = batch.transactions.first, batch.transactions.count == 1
        else { return false }
        return announcer?.endpoints(transaction.bundleID).isEmpty ?? true
    }

    /// Records a post of one transaction on PostgreSQL: answered by the read when it is stored, else by the one
    /// statement. Nil when neither could (the caller writes through a transaction then), with whether it was read and
    /// the record's JSON when it was encoded for the statement.
    ///
    /// A post this server answered before is most likely stored: the read answers it for less (see
    /// ``StoredPostHints``). So is one it has no hint for while most such posts lately were (behind a balancer, an
    /// app's re-post often reaches another instance); otherwise it goes straight to the one statement.
    func recordAlone(_ transaction: StoredTransaction, claimant: String?)
        async throws(StorageError) -> (outcome: RecordOutcome?, read: Bool, json: String?)
    {
        let fingerprint = StoredPostHints.fingerprint(transaction, claimant: claimant)
        let hinted = storedPosts?.contains(fingerprint) == true
        let readFirst = hinted || storedPosts?.unhintedPostsAreMostlyStored == true
        if readFirst {
            let unchanged = try await storedPost(transaction, claimant: claimant)
            if !hinted { storedPosts?.noteUnhinted(stored: unchanged != nil) }
            if let unchanged {
                storedPosts?.insert(fingerprint)
                return (unchanged, true, nil)
            }
        }
        // The record's JSON only now: a re-post the read answered is never written.
        let json = try encode(transaction.record)
        guard let (outcome, wrote, version) = try await writeInOneStatement(transaction, json: json, claimant: claimant)
        else { return (nil, readFirst, json) }
        if !readFirst { storedPosts?.noteUnhinted(stored: !wrote) }
        if wrote, youngTables?.noteWrite() == true {
            Task { [database] in _ = await YoungTables.analyzeUnlessAnalyzed(database) }
        }
        if case .recorded(let owners, let digest) = outcome, let owner = owners.first {
            storedPosts?.insert(fingerprint)
            histories?.noteOwner(
                owner, bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID)
            // The next re-post of this customer's purchases here is offered what the write answered.
            if let version {
                histories?.remember(digest, of: CustomerKey(bundleID: transaction.bundleID, id: owner), at: version)
            }
        }
        return (outcome, readFirst, json)
    }

    /// Records one transaction in one statement, with other posts' when they come at once (``oneStatementWrites``).
    /// A post that holds a NUL goes alone: JSON's `\u0000` would fail the whole batch's statement, and PostgreSQL's text
    /// refuses it anyway.
    private func writeInOneStatement(_ transaction: StoredTransaction, json: String, claimant: String?)
        async throws(StorageError) -> OneStatementResult
    {
        let texts = [
            transaction.transactionID, transaction.originalTransactionID, transaction.bundleID, transaction.productID,
            transaction.document, transaction.appAccountToken ?? "", claimant ?? "",
            transaction.record.currency ?? "", transaction.record.storefront ?? "",
        ]
        let write = OneStatementWrite(transaction: transaction, json: json, claimant: claimant)
        guard let oneStatementWrites, write.batchable, !texts.contains(where: Self.holdsNUL) else {
            return try await recordInOneStatement(transaction, json: json, claimant: claimant)
        }
        do {
            return try await oneStatementWrites.answer(write).get()
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError.unavailable(error)
        }
    }

    /// Records one transaction in one statement: its owner (kept, or the claimant, or made up as
    /// ``PurchaseBatch/implicitOwner(of:)`` when there is none); its row, unless the same document or a newer signed
    /// version is stored; the earlier periods it supersedes; the owner's digest marked stale and its version bumped
    /// when the row was written; and the owner's rows as they are after it. A customer with a digest gets it stored
    /// again by a second statement, which only replaces the stale one: a write in between wins, and the next read
    /// builds the digest afresh. The owner is read as it is now, not as the statement's snapshot has it (a login may
    /// have moved the purchase), and held until the statement ends; the rows it locks are taken in the order every
    /// write takes them: owner and transaction rows, then the digest row.
    ///
    /// Nil, having written nothing, when the owner could not be told (another post of the same new purchase was
    /// inserting it at that moment: its row was not in this statement's snapshot), or when `claimant` does not hold
    /// the claim already (a claim on a purchase someone else owns, or on one the server made up an owner for, follows
    /// the transfer policy). The caller takes the way through a transaction then.
    ///
    /// `version` is the version of the owner's digest row at which the answered history is exact (what
    /// ``HistoryCache`` remembers it with): nil when the statement cannot tell (a write of the same customer came in
    /// between, a digest could not be kept, or the history was read again by a second statement).
    func recordInOneStatement(_ transaction: StoredTransaction, json: String, claimant: String?)
        async throws(StorageError) -> (outcome: RecordOutcome, wrote: Bool, version: Int64?)?
    {
        let owner = "(SELECT customer_id FROM o)"
        // Whose write this is: any owner's for an unclaimed post ($21 = 0), only the claimant's own claim otherwise.
        let owned = "$21 = 0 OR (o.customer_id = $20 AND o.claimed = 1)"
        let stored = """
            NOT EXISTS (SELECT 1 FROM iap_transactions k WHERE k.bundle_id = $3 AND k.transaction_id = $1
                AND (k.document = $6 OR k.signed_date > $5))
            """
        let writtenRow = """
            SELECT 0, w.transaction_id, CAST(NULL AS BIGINT), w.transaction_id, w.original_transaction_id, w.product_id,
                w.signed_date, CAST(NULL AS TEXT), w.app_account_token, w.record
            FROM w WHERE w.transaction_id = $1
            """
        let text = """
            WITH inserted AS (
                INSERT INTO iap_owners (bundle_id, original_transaction_id, customer_id, claimed)
                VALUES ($3, $2, $20, $21)
                ON CONFLICT (bundle_id, original_transaction_id) DO NOTHING
                RETURNING customer_id, claimed
            ), held AS (
                SELECT customer_id, claimed FROM iap_owners WHERE bundle_id = $3 AND original_transaction_id = $2
                FOR SHARE
            ), o AS (
                SELECT customer_id, claimed FROM inserted
                UNION ALL
                SELECT customer_id, claimed FROM held
            ), w AS (
            \(Self.insertTransaction(owner: owner, onlyIf: "EXISTS (SELECT 1 FROM o WHERE \(owned)) AND \(stored)"))
                RETURNING transaction_id, original_transaction_id, product_id, signed_date, app_account_token, record
            ), s AS (
                UPDATE iap_transactions SET superseded = 1
                WHERE bundle_id = $3 AND original_transaction_id = $2 AND expires_ms IS NOT NULL
                    AND expires_ms < $12 AND superseded = 0 AND transaction_id <> $1 AND EXISTS (SELECT 1 FROM w)
                RETURNING 1
            ), g AS (
                INSERT INTO iap_customer_digests (bundle_id, customer_id, version, digest)
                SELECT $3, \(owner), 1, '' WHERE EXISTS (SELECT 1 FROM w) AND (SELECT COUNT(*) FROM s) >= 0
                ON CONFLICT (bundle_id, customer_id)
                    DO UPDATE SET digest = '', version = iap_customer_digests.version + 1
                RETURNING version
            ), wanted AS (
                SELECT COALESCE((
                    SELECT d.digest = '' AND NOT (d.customer_id = $22 AND d.version = $23) FROM iap_customer_digests d
                    WHERE d.bundle_id = $3 AND d.customer_id = \(owner)), TRUE) AS rows
            )
            SELECT 6 AS kind, \(owner) AS sort_text, (SELECT version FROM g) AS sort_number,
                CASE WHEN (SELECT rows FROM wanted) THEN 'sent' END AS transaction_id,
                CAST(NULL AS TEXT) AS original_transaction_id,
                CAST(NULL AS TEXT) AS product_id, CAST((SELECT claimed FROM o) AS BIGINT) AS signed_date,
                CAST(NULL AS TEXT) AS document,
                CAST(NULL AS TEXT) AS app_account_token, CAST(NULL AS TEXT) AS record
            UNION ALL
            \(Self.recordsText(
                bundle: "$3", customer: owner, unlessDigested: true, documents: (Self.noDocument, Self.noDocument),
                written: ("NOT (t.transaction_id = $1 AND EXISTS (SELECT 1 FROM w))", writtenRow),
                wanted: "(SELECT rows FROM wanted)"))
            """
        let offer = writeOffer(transaction, claimant: claimant)
        let values =
            Self.transactionValues(transaction, json: json, announce: nil)
            + [.text(claimant ?? PurchaseBatch.implicitOwner(of: transaction)), .integer(claimant == nil ? 0 : 1)]
            + [.text(offer?.customer ?? ""), .integer(offer?.version ?? -1)]
        let written = EncodedRows(transactions: [(transaction, json)], renewals: [])
        let bundleID = transaction.bundleID
        // Not in a transaction: on PostgreSQL a statement outside one commits on its own, all or nothing.
        // Whether the statement wrote the transaction's row (false: the document or a newer one was stored).
        var wroteRow = false
        let answer: OneStatementAnswer? = try await read { db in
            var found = try await db.rows(SQLStatement(text, values))
            guard let last = found.popLast(), try last.integer("kind") == 6 else {
                throw StorageError(code: "storageCorrupt", reason: "a write in one statement answered no owner")
            }
            // The last row (kind 6) says who owns the purchase (sort_text), the version the write left the digest at
            // (sort_number, nil when it wrote nothing), whether the owner holds a claim (signed_date, 1 or 0) and
            // whether the owner's rows were sent (transaction_id `sent`).
            guard let id = try last.optionalText("sort_text") else { return nil }
            // A claim is written here only by the customer who holds it (or takes a purchase nobody owned). Ids are
            // compared as PostgreSQL does, by their bytes (Swift's `==` takes canonically equivalent text as equal).
            if let claimant {
                let held = try last.optionalInteger("signed_date") == 1
                guard Self.same(id, claimant), held else { return nil }
            }
            let rowsSent = try last.optionalText("transaction_id") == "sent"
            let customer = CustomerKey(bundleID: bundleID, id: id)
            // The digest row as the statement read it (before its own write), if the customer had one.
            let stored = try found.first { try $0.integer("kind") == 3 }
            let seen = try stored?.integer("sort_number")
            let wrote = try last.optionalInteger("sort_number")
            wroteRow = wrote != nil
            // The write bumped the version the statement read by one, unless something else bumped it after the
            // statement's snapshot (another write of this customer, which this one may have waited for, or a digest
            // kept or folded): what the statement read may miss a write then. It answers the post as of the statement
            // (as any read that came first would), but it is no digest to keep: a long history is read again.
            let whole = wrote.map { $0 == (seen ?? 0) + 1 } ?? true
            // The version a stale digest is at: the write marked it, or it was stale already; nil without a row.
            let stale = wrote ?? seen
            var readAgain = false
            if let stored,
                let digest = try digest(json: try stored.optionalText("record"), version: stored.integer("sort_number"))
            {
                // Nothing written: the digest stands.
                guard wrote != nil else {
                    return .recorded(.recorded(owners: [customer.id], digest: digest), at: digest.version)
                }
                guard whole else { return .readAgain(customer) }
                var history = digest.history
                if !history.history.records.contains(where: { $0.transactionID == transaction.transactionID }),
                    history.append(records: [transaction.record], renewals: [])
                {
                    let kept = try await Self.keepDigest(history, of: customer, replacingStale: stale, db: db)
                    return .recorded(
                        .recorded(owners: [customer.id], digest: kept), at: kept.version > 0 ? kept.version : nil)
                }
                found = try await db.rows(Self.recordsQuery(customer, documents: false))
                readAgain = true
            }
            if let offer, !rowsSent, !readAgain {
                // No usable digest and no rows: the owner's row was at the offered version, and the history is the
                // one offered, as of the statement's snapshot.
                guard wrote != nil else {
                    return .recorded(.recorded(owners: [id], digest: offer.digest), at: seen)
                }
                histories?.takenByWrite()
                ServerMetrics.writeHistory("remembered")
                var history = offer.digest.history.history
                // Where the rows would have put it (by transaction id, compared as bytes; Apple's ids are digits).
                let place =
                    history.records.firstIndex {
                        transaction.transactionID.utf8.lexicographicallyPrecedes($0.transactionID.utf8)
                    } ?? history.records.endIndex
                history.records.insert(transaction.record, at: place)
                // Exact at the version the write left when nothing came between; else as of the statement.
                return .recorded(
                    .recorded(owners: [id], digest: CustomerDigest(history: CompactHistory(history), version: 0)),
                    at: whole ? wrote : nil)
            }
            if wrote != nil { ServerMetrics.writeHistory("read") }
            let built = CompactHistory(try history(from: found, written: written))
            let records = try found.filter { try $0.integer("kind") != 3 }.count
            guard records >= Self.digestThreshold else {
                // The rows and the versions are of the statement's one moment (unless read again): as its own write
                // left them when it was whole, else as its snapshot had them when it wrote nothing.
                let exactAt: Int64? = readAgain ? nil : wrote == nil ? seen : whole ? wrote : nil
                return .recorded(
                    .recorded(owners: [customer.id], digest: CustomerDigest(history: built, version: 0)), at: exactAt)
            }
            guard whole else { return .readAgain(customer) }
            let kept = try await Self.keepDigest(built, of: customer, replacingStale: stale, db: db)
            return .recorded(.recorded(owners: [customer.id], digest: kept), at: kept.version > 0 ? kept.version : nil)
        }
        switch answer {
        case nil: return nil
        case .recorded(let outcome, let version): return (outcome, wroteRow, version)
        case .readAgain(let customer):
            return (.recorded(owners: [customer.id], digest: try await digest(of: customer)), wroteRow, nil)
        }
    }

    /// The history ``HistoryCache`` holds for the customer expected to own `transaction`, when a write of it can build
    /// on it: built from the rows (never a kept digest, so never folded), short enough to stay without a kept digest with one more record, and without this
    /// transaction (a newer version of a stored one replaces its record: the rows are read then). PostgreSQL sends the
    /// rows only when the owner differs or their digest row moved on from the offered version.
    private func writeOffer(_ transaction: StoredTransaction, claimant: String?) -> HistoryCache.Offer? {
        guard
            let offer = histories?.offer(
                bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID,
                claimant: claimant, implicitOwner: PurchaseBatch.implicitOwner(of: transaction)),
            offer.digest.version == 0, offer.digest.history.foldedThrough == nil
        else { return nil }
        let history = offer.digest.history.history
        guard history.records.count + history.renewals.count + history.consumptions.count + 1 < Self.digestThreshold,
            !history.records.contains(where: { $0.transactionID == transaction.transactionID })
        else { return nil }
        return offer
    }

    /// Whether two ids are the same to PostgreSQL: the same bytes. (Swift's `==` takes canonically equivalent text,
    /// such as "é" as one scalar and as two, as equal; a customer id named by a backend may be either.)
    static func same(_ first: String, _ second: String) -> Bool { first.utf8.elementsEqual(second.utf8) }

    /// Whether `text` holds a NUL, read as the contiguous UTF-8 a native string is (a document is kilobytes long, and
    /// going through `String.UTF8View` one byte at a time took 2% of a re-post's CPU).
    static func holdsNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let start = bytes.baseAddress else { return false }
            return memchr(start, 0, bytes.count) != nil
        }
    }

    /// What the one statement's rows answer: the outcome, or that a write of the same customer came in between and
    /// the customer's history must be read again.
    private enum OneStatementAnswer: Sendable {
        /// The outcome, with the version of the digest row its history is exact at when the statement can tell.
        case recorded(RecordOutcome, at: Int64?)
        case readAgain(CustomerKey)
    }

    /// What `alreadyRecorded` answers to a post of one transaction, read in one row of ``readRePosts(_:database:)``
    /// (with other re-posts' lookups when several come at once: ``rePostReads``). The history ``HistoryCache`` offers
    /// for the owner this server expects is answered instead of the digest or the records when the owner's digest row is
    /// still at the version it was read at. Nil when the post may change something: the caller writes then.
    func storedPost(_ transaction: StoredTransaction, claimant: String?)
        async throws(StorageError) -> RecordOutcome?
    {
        let offer = histories?.offer(
            bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID,
            claimant: claimant, implicitOwner: PurchaseBatch.implicitOwner(of: transaction))
        let lookup = RePostLookup(
            b: transaction.bundleID, t: transaction.transactionID, o: transaction.originalTransactionID,
            d: transaction.document, c: offer?.customer ?? "", v: offer?.version ?? -1)
        // PostgreSQL's text holds no NUL, and JSON's `\u0000` fails a whole batch: such a post goes to the writer,
        // which refuses it alone.
        guard ![lookup.b, lookup.t, lookup.o, lookup.d, lookup.c].contains(where: Self.holdsNUL) else { return nil }
        let found: SQLRow?
        do {
            if let rePostReads {
                found = try await rePostReads.answer(lookup)
            } else {
                found = try await Self.readRePosts([lookup], database: database)[0]
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError.unavailable(error)
        }
        guard let row = found else { return nil }
        return try Self.decoding { () throws -> RecordOutcome? in
            let owner = try row.text("owner")
            if let claimant, try row.integer("claimed") != 1 || !Self.same(owner, claimant) { return nil }
            // The posted document is stored, or a newer one is.
            guard
                try row.integer("same_document") == 1
                    || row.integer("signed_date") > transaction.signedDate.millisecondsSince1970
            else { return nil }
            let version = try row.optionalInteger("version")
            if let offer, let version, Self.same(owner, offer.customer), version == offer.version {
                histories?.taken()
                ServerMetrics.rePostRead("remembered")
                return .recorded(owners: [owner], digest: offer.digest)
            }
            ServerMetrics.rePostRead("read")
            let customer = CustomerKey(bundleID: transaction.bundleID, id: owner)
            histories?.noteOwner(
                owner, bundleID: transaction.bundleID, originalTransactionID: transaction.originalTransactionID)
            /// The answer, remembered with the version it was read at.
            func answer(_ digest: CustomerDigest) -> RecordOutcome {
                if let version { histories?.remember(digest, of: customer, at: version) }
                return .recorded(owners: [owner], digest: digest)
            }
            if let json = try row.optionalText("digest"), !json.isEmpty {
                let stored = try digest(json: json, version: try row.integer("version"))
                return stored.map(answer)
            }
            func all<Record: Decodable>(_ column: String, _ type: Record.Type) throws -> [Record] {
                try row.optionalText(column).map { try decoder.decode([Record].self, from: $0) } ?? []
            }
            var history = PurchaseHistory()
            history.records = try all("purchases", PurchaseRecord.self)
            history.renewals = try all("renewals", RenewalRecord.self)
            history.consumptions = try all("consumptions", ConsumptionRecord.self)
            // No digest: a short history, read whole (a long one goes through the writer, which builds one).
            let count = history.records.count + history.renewals.count + history.consumptions.count
            guard count < Self.digestThreshold else { return nil }
            return answer(CustomerDigest(history: CompactHistory(history), version: 0))
        }
    }

    /// One re-post's lookup in ``readRePosts(_:database:)``'s batch, as JSON: the bundle, the transaction, its original
    /// transaction and the posted document; the owner and the version of the history ``HistoryCache`` offers.
    struct RePostLookup: Codable, Sendable {
        /// Its place in the batch.
        var i = 0
        let b: String
        let t: String
        let o: String
        let d: String
        let c: String
        let v: Int64
    }

    /// The row `storedPost` reads for each lookup (nil where the transaction or its owner is not stored), all in one
    /// statement: the lookups travel as one JSON array, each joined to its rows (`LATERAL`, on the tables' keys).
    static func readRePosts(_ lookups: [RePostLookup], database: any SQLDatabase) async throws -> [SQLRow?] {
        ServerMetrics.rePostBatch(lookups: lookups.count)
        var numbered = lookups
        for index in numbered.indices { numbered[index].i = index }
        let json = try StreamingJSONEncoder().encode(numbered)
        let rows = try await database.read { db in
            try await db.rows(SQLStatement(rePostText, [.text(String(decoding: json, as: UTF8.self))]))
        }
        var found = [SQLRow?](repeating: nil, count: lookups.count)
        for row in rows {
            let index = try row.integer("i")
            guard found.indices.contains(Int(index)) else { continue }
            found[Int(index)] = row
        }
        return found
    }

    /// The text of ``readRePosts(_:database:)``: for each lookup `k`, the owner of its original transaction, whether
    /// the stored document is the posted one, and the owner's digest or, when they have no usable one, their records (a
    /// JSON array of each kind); the digest and the records are left out when the offered history still stands (the
    /// owner expected, the version it was read at). The general read, a union of seven lookups with a sort, costs
    /// PostgreSQL about a quarter more (pgbench, 2026-11-28), and a row for each record costs the server more than one.
    static let rePostText: String = {
        let offered = "COALESCE(o.customer_id = k.c AND d.version = k.v, FALSE)"
        // One kind of record in ``recordsQuery(_:unlessDigested:documents:)``'s order, unless a digest stands for them;
        // no more than a history without a digest holds (a longer one is answered by the writer, never decoded here).
        func records(from: String, where condition: String, order: String) -> String {
            """
            CASE WHEN COALESCE(d.digest, '') = '' AND NOT \(offered) THEN (SELECT '[' || string_agg(r.record, ',' ORDER BY r.k) || ']'
                    FROM (SELECT x.record, \(order) AS k FROM \(from) WHERE \(condition)
                        ORDER BY \(order) LIMIT \(digestThreshold)) r) END
            """
        }
        func owned(_ table: String) -> String {
            """
            iap_owners y JOIN \(table) x
                        ON x.bundle_id = y.bundle_id AND x.original_transaction_id = y.original_transaction_id
            """
        }
        let owner = "y.bundle_id = o.bundle_id AND y.customer_id = o.customer_id"
        return """
            SELECT k.i, p.* FROM json_to_recordset($1::json) AS k(i bigint, b text, t text, o text, d text, c text, v bigint)
            CROSS JOIN LATERAL (
                SELECT o.customer_id AS owner, o.claimed, t.signed_date,
                    CASE WHEN t.document = k.d THEN 1 ELSE 0 END AS same_document, d.version,
                    CASE WHEN \(offered) THEN NULL ELSE d.digest END AS digest,
                    \(records(from: owned("iap_transactions"), where: owner, order: "x.transaction_id")) AS purchases,
                    \(records(from: owned("iap_renewals"), where: owner, order: "x.original_transaction_id")) AS renewals,
                    \(records(
                        from: "iap_consumptions x", where: "x.bundle_id = o.bundle_id AND x.customer_id = o.customer_id",
                        order: "x.sequence")) AS consumptions
                FROM iap_transactions t
                JOIN iap_owners o ON o.bundle_id = t.bundle_id AND o.original_transaction_id = k.o
                LEFT JOIN iap_customer_digests d ON d.bundle_id = o.bundle_id AND d.customer_id = o.customer_id
                WHERE t.bundle_id = k.b AND t.transaction_id = k.t
            ) p
            """
    }()

    /// Stores `history` as the customer's digest in place of the stale one at version `stale`, or as their first
    /// one when `stale` is nil. Answers the digest as stored, or with version 0 (not stored) when another write came
    /// first.
    static func keepDigest(
        _ history: CompactHistory, of customer: CustomerKey, replacingStale stale: Int64?, db: any SQLStatementRunner
    ) async throws -> CustomerDigest {
        let json = String(
            decoding: try StreamingJSONEncoder(datesAsReferenceSeconds: true).encode(history), as: UTF8.self)
        let statement =
            if let stale {
                SQLStatement(
                    """
                    UPDATE iap_customer_digests SET digest = $4, version = version + 1
                    WHERE bundle_id = $1 AND customer_id = $2 AND version = $3 AND digest = ''
                    RETURNING version
                    """, [.text(customer.bundleID), .text(customer.id), .integer(stale), .text(json)])
            } else {
                SQLStatement(
                    """
                    INSERT INTO iap_customer_digests (bundle_id, customer_id, version, digest) VALUES ($1, $2, 1, $3)
                    ON CONFLICT (bundle_id, customer_id) DO NOTHING
                    RETURNING version
                    """, [.text(customer.bundleID), .text(customer.id), .text(json)])
            }
        let version = try await db.rows(statement).first?.integer("version") ?? 0
        return CustomerDigest(history: history, version: version)
    }
}
