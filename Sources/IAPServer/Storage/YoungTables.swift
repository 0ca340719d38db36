import IAPCore

/// PostgreSQL plans a prepared statement from the statistics it has of the tables, and has none until autovacuum's
/// first `ANALYZE` (it looks once a minute): until then every index that starts with the bundle id looks as good as a
/// table's key, and a plan can read every row of the app for each post (docs/scale.md, "Prepared statements"). So an
/// instance asks PostgreSQL to analyze the tables a post reads once, at its 64th write, unless they were analyzed
/// before; PostgreSQL then plans the prepared statements again from the statistics at their next use.
final class YoungTables: Sendable {
    /// The tables a post reads and writes.
    static let tables = ["iap_owners", "iap_transactions", "iap_customer_digests", "iap_renewals", "iap_consumptions"]

    private let writes = Locked(0)
    private let threshold: Int

    init(analyzingAt threshold: Int = 64) {
        self.threshold = threshold
    }

    /// Counts one write of this instance: true once, at the threshold.
    func noteWrite() -> Bool {
        writes.withLock { writes in
            writes += 1
            return writes == threshold
        }
    }

    /// Analyzes the tables unless PostgreSQL has statistics of the transactions already (analyzed by hand, by
    /// autovacuum or by another instance). Whether it analyzed them; a failure is left to autovacuum.
    static func analyzeUnlessAnalyzed(_ database: any SQLDatabase) async -> Bool {
        do {
            let never = try await database.read { db in
                try await db.rows(
                    SQLStatement(
                        """
                        SELECT COUNT(*) AS never FROM pg_stat_user_tables
                        WHERE relname = 'iap_transactions' AND last_analyze IS NULL AND last_autoanalyze IS NULL
                        """))
            }
            guard try never.first?.integer("never") == 1 else { return false }
            try await database.read { db in try await db.run(SQLStatement("ANALYZE " + tables.joined(separator: ", ")))
            }
            return true
        } catch {
            return false
        }
    }
}
