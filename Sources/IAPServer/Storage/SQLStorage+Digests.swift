import Foundation
import IAPCore
public import IAPEntitlements

/// Each customer's compact history (``CustomerDigest``), kept in `iap_customer_digests` beside their records: read
/// in place of a long history, appended in the write's own transaction, built again from the records when a write
/// reaches into what was folded.
extension SQLStorage {
    public func digest(of customer: CustomerKey) async throws(StorageError) -> CustomerDigest {
        // One statement, so the digest's version and the rows are of one moment: the digest when it is usable, else
        // every row (and the stale digest's version).
        let found = try await read { db in
            try await db.rows(Self.recordsQuery(customer, unlessDigested: true, documents: false))
        }
        let (stored, rows) = try Self.decoding {
            let row = try found.first { try $0.integer("kind") == 3 }
            return (
                try row.map { (version: try $0.integer("sort_number"), json: try $0.optionalText("record")) },
                try found.filter { try $0.integer("kind") != 3 }
            )
        }
        if let stored, let digest = try digest(json: stored.json, version: stored.version) { return digest }
        let built = CompactHistory(try history(from: rows))
        // Version 0: not stored (a short history is read whole).
        guard rows.count >= Self.digestThreshold else { return CustomerDigest(history: built, version: 0) }
        // A long history without a digest (from before digests, or one a refund made stale): built from every record
        // and kept, unless a write came after the read (the stale version moved on).
        return try await inTransaction { db in
            (try await Self.keepDigest(built, of: customer, replacingStale: stored?.version, db: db), commit: true)
        }
    }

    public func replaceDigest(_ history: CompactHistory, of customer: CustomerKey, version: Int64)
        async throws(StorageError) -> Bool
    {
        let json = try encode(history)
        return try await inTransaction { db in
            let updated = try await db.rows(
                SQLStatement(
                    """
                    UPDATE iap_customer_digests SET digest = $4, version = version + 1
                    WHERE bundle_id = $1 AND customer_id = $2 AND version = $3 AND digest <> ''
                    RETURNING version
                    """, [.text(customer.bundleID), .text(customer.id), .integer(version), .text(json)]))
            return (!updated.isEmpty, commit: !updated.isEmpty)
        }
    }

    /// A history shorter than this (records and consumptions) has no stored digest: reading it whole costs no more.
    static let digestThreshold = 64

    /// Writes a batch's rows and brings the digests of the customers it touched up to date: the first owner's gets
    /// the new rows appended when they are new transactions after what it folded and no other customer's records
    /// changed, else it is built again from every row (and kept when the history is long enough to need one); any
    /// other customer whose records changed (another owner, the owner of a renewal's purchase, a purchase's
    /// `previousOwners`) has theirs marked stale (built again when next read). Answers the first owner's.
    ///
    /// Every one of those customers' digest rows is taken first (``holdDigest(of:db:)``), so a write of the same
    /// customer on another instance waits for this one and builds on it.
    func writeUpdatingDigests(
        _ rows: EncodedRows, owners: [String], previousOwners: [String] = [], bundleID: String,
        db: any SQLStatementRunner
    ) async throws -> CustomerDigest? {
        try await Self.write(rows, db: db)
        var others = Set(owners.dropFirst() + previousOwners)
        let originals = Set(rows.transactions.map(\.transaction.originalTransactionID))
        // The owner as it is when this write commits: on PostgreSQL a login or a claim moving the purchase at this
        // moment is waited for (and its new owner marked), else the renewal would join the new owner's history without
        // their version moving, and a history remembered of them would still be offered.
        let share = database.engine == .postgres ? " FOR SHARE" : ""
        for original in Set(rows.renewals.map(\.renewal.originalTransactionID)).subtracting(originals).sorted() {
            let found = try await db.rows(
                SQLStatement(
                    "SELECT customer_id FROM iap_owners WHERE bundle_id = $1 AND original_transaction_id = $2\(share)",
                    [.text(bundleID), .text(original)]))
            if let owner = try found.first?.text("customer_id") { others.insert(owner) }
        }
        if let first = owners.first { others.remove(first) }
        // In one order, so that two writes of the same two customers never wait for each other in a circle.
        var held: [String: (version: Int64, json: String)] = [:]
        for customer in others.union(owners.prefix(1)).sorted() {
            held[customer] = try await Self.holdDigest(of: CustomerKey(bundleID: bundleID, id: customer), db: db)
        }
        for other in others.sorted() {
            try await Self.dropDigest(of: CustomerKey(bundleID: bundleID, id: other), db: db)
        }
        guard let first = owners.first else { return nil }
        let customer = CustomerKey(bundleID: bundleID, id: first)
        guard let stored = held[first] else { return nil }
        let version = stored.version + 1
        if let digest = try digest(json: stored.json, version: stored.version) {
            // A stored transaction is in the digest's kept records or before its fold point, where append refuses it.
            let kept = Set(digest.history.history.records.map(\.transactionID))
            var history = digest.history
            if others.isEmpty, rows.transactions.allSatisfy({ !kept.contains($0.transaction.transactionID) }),
                history.append(
                    records: rows.transactions.map(\.transaction.record),
                    renewals: rows.renewals.map(\.renewal.record))
            {
                try await Self.saveDigest(history, of: customer, version: version, db: db)
                return CustomerDigest(history: history, version: version)
            }
        }
        let found = try await db.rows(Self.recordsQuery(customer, documents: false))
        let built = CompactHistory(try history(from: found, written: rows))
        guard found.count >= Self.digestThreshold else {
            try await Self.dropDigest(of: customer, db: db)
            return CustomerDigest(history: built, version: 0)
        }
        try await Self.saveDigest(built, of: customer, version: version, db: db)
        return CustomerDigest(history: built, version: version)
    }

    /// Takes `customer`'s digest row for the rest of the write's transaction, creating it (stale, at version 0) when
    /// they have none, and answers it as it stands. On PostgreSQL a write of the same customer on any instance waits
    /// for this one (here, or in the one statement's bump) until it commits, and what this one reads afterwards
    /// includes every write before it; on SQLite writes take turns anyway.
    static func holdDigest(of customer: CustomerKey, db: any SQLStatementRunner) async throws
        -> (version: Int64, json: String)
    {
        let row = try await db.rows(
            SQLStatement(
                """
                INSERT INTO iap_customer_digests (bundle_id, customer_id, version, digest) VALUES ($1, $2, 0, '')
                ON CONFLICT (bundle_id, customer_id) DO UPDATE SET version = iap_customer_digests.version
                RETURNING version, digest
                """, [.text(customer.bundleID), .text(customer.id)])
        ).first
        return try decoding {
            guard let row else {
                throw StorageError(code: "storageCorrupt", reason: "a digest row could not be taken")
            }
            return (try row.integer("version"), try row.optionalText("digest") ?? "")
        }
    }

    func digest(json: String?, version: Int64) throws(StorageError) -> CustomerDigest? {
        try Self.decoding {
            guard let json, !json.isEmpty else { return nil }
            return CustomerDigest(
                history: try decoder.decode(CompactHistory.self, from: json), version: version)
        }
    }

    static func saveDigest(
        _ history: CompactHistory, of customer: CustomerKey, version: Int64, db: any SQLStatementRunner
    ) async throws {
        let json = String(
            decoding: try StreamingJSONEncoder(datesAsReferenceSeconds: true).encode(history), as: UTF8.self)
        try await db.run(
            SQLStatement(
                """
                INSERT INTO iap_customer_digests (bundle_id, customer_id, version, digest) VALUES ($1, $2, $3, $4)
                ON CONFLICT (bundle_id, customer_id) DO UPDATE SET version = excluded.version, digest = excluded.digest
                """, [.text(customer.bundleID), .text(customer.id), .integer(version), .text(json)]))
    }

    /// Marks a digest stale (empty), keeping its version counting (from 1 for a customer who had no row), so a fold
    /// read before can never replace the one built next.
    static func dropDigest(of customer: CustomerKey, db: any SQLStatementRunner) async throws {
        try await db.run(
            SQLStatement(
                """
                INSERT INTO iap_customer_digests (bundle_id, customer_id, version, digest) VALUES ($1, $2, 1, '')
                ON CONFLICT (bundle_id, customer_id)
                    DO UPDATE SET digest = '', version = iap_customer_digests.version + 1
                """, [.text(customer.bundleID), .text(customer.id)]))
    }

    /// The entitlement history in the rows of ``recordsQuery(_:unlessDigested:documents:)``, documents or not. A
    /// row whose stored JSON is one just written (in `written`) takes the record it was written from instead of
    /// decoding it again.
    func history(from rows: [SQLRow], written: EncodedRows? = nil) throws(StorageError) -> PurchaseHistory {
        let knownPurchases = Dictionary(
            (written?.transactions ?? []).map { ($0.json, $0.transaction.record) }, uniquingKeysWith: { a, _ in a })
        let knownRenewals = Dictionary(
            (written?.renewals ?? []).map { ($0.json, $0.renewal.record) }, uniquingKeysWith: { a, _ in a })
        return try Self.decoding {
            var history = PurchaseHistory()
            for row in rows {
                switch try row.integer("kind") {
                case 0:
                    let json = try row.text("record")
                    history.records.append(
                        try knownPurchases[json] ?? decoder.decode(PurchaseRecord.self, from: json))
                case 1:
                    let json = try row.text("record")
                    history.renewals.append(
                        try knownRenewals[json] ?? decoder.decode(RenewalRecord.self, from: json))
                case 2:
                    history.consumptions.append(
                        try decoder.decode(ConsumptionRecord.self, from: try row.text("record")))
                default:
                    break
                }
            }
            return history
        }
    }
}
