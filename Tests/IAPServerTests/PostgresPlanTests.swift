import Foundation
import IAPCore
import IAPTestSupport
import Testing

@testable import IAPServer

/// PostgreSQL plans a prepared statement from what it knows of the tables when it is prepared. On a new database it
/// knows nothing of them, and the narrowest index that starts with the bundle id looks as good as the key: the one
/// statement's look-up of the stored transaction was planned as a search on the bundle id alone, reading every
/// transaction of the app for each new post, until the statement was prepared again on its 1,024th use on the
/// connection. Statements are now prepared again each time their uses double, and an instance has the tables analyzed
/// at its 64th write when nobody did yet (PostgreSQL then plans them again from the statistics).
@Suite struct PostgresPlanTests {
    /// A fresh database with one connection (so every post runs the statement prepared there) and its storage; nil
    /// (noted) without PostgreSQL 15 or later (`pg_stat_force_next_flush`).
    static func storage() async throws -> (PostgresDatabase, SQLStorage)? {
        guard let url = TestDatabases.postgresURL else {
            print("note: skipped: set IAPKIT_TEST_POSTGRES_URL to run it")
            return nil
        }
        let database = try PostgresDatabase(
            url: try await StorageConformanceTests.freshPostgresDatabase(at: url), maximumConnections: 1)
        let version = try await database.read { db in
            try await db.rows(SQLStatement("SELECT CAST(current_setting('server_version_num') AS BIGINT) AS number"))
        }
        guard try #require(version.first).integer("number") >= 150_000 else {
            print("note: skipped: it needs PostgreSQL 15 or later (pg_stat_force_next_flush)")
            try await database.close()
            return nil
        }
        return (database, try await SQLStorage(database: database))
    }

    /// Posts a new transaction for each index in `range`, none claimed.
    static func post(_ range: Range<Int>, to storage: SQLStorage) async throws {
        for index in range {
            let transaction = StorageConformanceTests.transaction("t\(index)", signed: Double(index))
            let outcome = try await storage.record(PurchaseBatch(claimant: nil, transactions: [transaction]))
            #expect(outcome.owners == [transaction.transactionID])
        }
    }

    /// The transaction index entries the connection's statements have read so far, once it has reported them.
    static func entriesRead(_ database: PostgresDatabase) async throws -> Int64 {
        _ = try await database.read { db in
            try await db.rows(SQLStatement("SELECT CAST(1 AS BIGINT) AS flushed FROM pg_stat_force_next_flush()"))
        }
        let read = try await database.read { db in
            try await db.rows(
                SQLStatement(
                    """
                    SELECT CAST(COALESCE(SUM(idx_tup_read), 0) AS BIGINT) AS entries FROM pg_stat_user_indexes
                    WHERE relname = 'iap_transactions'
                    """))
        }
        return try #require(read.first).integer("entries")
    }

    @Test func aNewPostReadsFewIndexEntriesOnceTheTableHasGrown() async throws {
        guard let (database, storage) = try await Self.storage() else { return }
        try await Self.post(0..<600, to: storage)
        let before = try await Self.entriesRead(database)
        try await Self.post(600..<1_000, to: storage)
        let entries = try await Self.entriesRead(database) - before
        // A search on the bundle id alone reads every transaction stored before each post: 319,800 entries for these
        // 400 posts. A search on the key reads none for a transaction that is not stored yet.
        #expect(entries < 4_000, "\(entries) transaction index entries read by 400 new posts")
        try await storage.shutdown()
    }

    /// Posts that come at once go several to a statement (``SQLStorage/recordInOneStatement(batch:)``); its plan, too,
    /// reads the rows each purchase needs, never the app's: 400 posts in batches after the first 600 read few
    /// transaction index entries.
    @Test func batchedPostsReadFewIndexEntriesOnceTheTableHasGrown() async throws {
        guard let (database, storage) = try await Self.storage() else { return }
        /// Posts `range` eight at a time, all at once: the first of each eight goes alone, the rest wait and share one
        /// statement.
        func post(_ range: Range<Int>) async throws {
            for start in stride(from: range.lowerBound, to: range.upperBound, by: 8) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in start..<min(start + 8, range.upperBound) {
                        let transaction = StorageConformanceTests.transaction("t\(index)", signed: Double(index))
                        group.addTask {
                            let outcome = try await storage.record(
                                PurchaseBatch(claimant: nil, transactions: [transaction]))
                            #expect(outcome.owners == [transaction.transactionID])
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        try await post(0..<600)
        let before = try await Self.entriesRead(database)
        let batchesBefore = try #require(storage.oneStatementWrites?.counts)
        try await post(600..<1_000)
        let entries = try await Self.entriesRead(database) - before
        let batches = try #require(storage.oneStatementWrites?.counts)
        #expect(batches.items - batchesBefore.items > 200, "most of the posts went several to a statement")
        #expect(entries < 4_000, "\(entries) transaction index entries read by 400 new posts in batches")
        try await storage.shutdown()
    }

    /// The tables are analyzed at an instance's 64th write when nobody analyzed them yet (autovacuum looks once a
    /// minute), once, and the posts after it read no more than they must.
    @Test func youngTablesAreAnalyzedAndPlannedAgain() async throws {
        guard let (database, storage) = try await Self.storage() else { return }
        func analyzed() async throws -> Bool {
            let rows = try await database.read { db in
                try await db.rows(
                    SQLStatement(
                        """
                        SELECT COUNT(*) AS analyzed FROM pg_stat_user_tables
                        WHERE relname = 'iap_transactions' AND last_analyze IS NOT NULL
                        """))
            }
            return try #require(rows.first).integer("analyzed") == 1
        }
        try await Self.post(0..<63, to: storage)
        #expect(try await !analyzed())
        try await Self.post(63..<64, to: storage)
        var done = false
        for _ in 0..<100 where !done {
            done = try await analyzed()
            if !done { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(done, "the tables were not analyzed after 64 writes")
        try await Self.post(64..<250, to: storage)
        let before = try await Self.entriesRead(database)
        try await Self.post(250..<500, to: storage)
        let entries = try await Self.entriesRead(database) - before
        #expect(entries < 2_500, "\(entries) transaction index entries read by 250 new posts")
        // Analyzed once: a second instance of the same database finds statistics and leaves them.
        #expect(await YoungTables.analyzeUnlessAnalyzed(database) == false)
        try await storage.shutdown()
    }
}
