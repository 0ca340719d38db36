import Foundation
import IAPCore
public import IAPEntitlements

/// Each customer's compact history (``CustomerDigest``), kept in `iap_customer_digests` beside their records: read
/// in place of a long history, appended in the write's own transaction, built again from the records when a write
/// reaches into what was folded.
extension SQLStorage {
    public func digest(of customer: CustomerKey) async throws(StorageError) -> CustomerDigest {
        let (stored, rows): (SQLRow?, [SQLRow]) = try await read { db in
            let stored = try await db.rows(Self.digestQuery(customer)).first
            if let stored, try !(stored.optionalText("digest") ?? "").isEmpty { return (stored, []) }
            return (stored, try await db.rows(Self.recordsQuery(customer, documents: false)))
        }
        if let stored, let digest = try digest(from: stored) { return digest }
        let version = (try Self.decoding { try stored?.integer("version") } ?? 0)
        let built = CustomerDigest(history: CompactHistory(try history(from: rows)), version: version)
        guard rows.count >= Self.digestThreshold else { return built }
        // A long history without a digest (from before digests, or one a refund made stale): built from every record
        // and kept, unless a write changed it meanwhile.
        return try await inTransaction { db in
            let current = try await db.rows(Self.digestQuery(customer)).first
            guard (try current?.integer("version") ?? 0) == version else { return (built, commit: false) }
            try await Self.saveDigest(built.history, of: customer, version: version + 1, db: db)
            return (CustomerDigest(history: built.history, version: version + 1), commit: true)
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
    /// the new rows appended when they are new transactions after what it folded, else it is built again from every
    /// row (and kept when the history is long enough to need one); any other owner's is marked stale (built again
    /// when next read). Answers the first owner's.
    func writeUpdatingDigests(
        _ rows: EncodedRows, owners: [String], bundleID: String, db: any SQLStatementRunner
    ) async throws -> CustomerDigest? {
        try await Self.write(rows, db: db)
        guard let first = owners.first else { return nil }
        for other in owners.dropFirst() {
            try await Self.dropDigest(of: CustomerKey(bundleID: bundleID, id: other), db: db)
        }
        let customer = CustomerKey(bundleID: bundleID, id: first)
        // One statement: the digest when there is a usable one, else every row (and the stale digest, if any).
        var found = try await db.rows(
            Self.recordsQuery(customer, unlessDigested: true, documents: false))
        let stored = try found.first { try $0.integer("kind") == 3 }
        let version = (try stored?.integer("sort_number") ?? 0) + 1
        if let stored, let digest = try digest(json: try stored.optionalText("record"), version: version - 1) {
            // A stored transaction is in the digest's kept records or before its fold point, where append refuses it.
            let kept = Set(digest.history.history.records.map(\.transactionID))
            var history = digest.history
            if owners.count == 1, rows.transactions.allSatisfy({ !kept.contains($0.transaction.transactionID) }),
                history.append(
                    records: rows.transactions.map(\.transaction.record),
                    renewals: rows.renewals.map(\.renewal.record))
            {
                try await Self.saveDigest(history, of: customer, version: version, db: db)
                return CustomerDigest(history: history, version: version)
            }
            found = try await db.rows(Self.recordsQuery(customer, documents: false))
        }
        let built = CompactHistory(try history(from: found, written: rows))
        if found.count >= Self.digestThreshold || stored != nil {
            try await Self.saveDigest(built, of: customer, version: version, db: db)
            return CustomerDigest(history: built, version: version)
        }
        return CustomerDigest(history: built, version: 0)
    }

    static func digestQuery(_ customer: CustomerKey) -> SQLStatement {
        SQLStatement(
            "SELECT version, digest FROM iap_customer_digests WHERE bundle_id = $1 AND customer_id = $2",
            [.text(customer.bundleID), .text(customer.id)])
    }

    /// The digest a row holds; nil when it is marked stale (empty) or the row has none (a join found no digest).
    func digest(from row: SQLRow) throws(StorageError) -> CustomerDigest? {
        let (json, version) = try Self.decoding { (try row.optionalText("digest"), try row.integer("version")) }
        return try digest(json: json, version: version)
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

    /// Marks a digest stale (empty), keeping its version counting, so a fold read before can never replace the one
    /// built next.
    static func dropDigest(of customer: CustomerKey, db: any SQLStatementRunner) async throws {
        try await db.run(
            SQLStatement(
                """
                UPDATE iap_customer_digests SET digest = '', version = version + 1
                WHERE bundle_id = $1 AND customer_id = $2
                """, [.text(customer.bundleID), .text(customer.id)]))
    }
}
