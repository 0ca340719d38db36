import Foundation
import IAPCore
import IAPTestSupport
import Testing

@testable import IAPServer

/// PostgreSQL plans a prepared statement from what it knows of the tables when it is prepared. On a new database it
/// knows nothing of them, and the narrowest index that starts with the bundle id looks as good as the key: the one
/// statement's look-up of the stored transaction was planned as a search on the bundle id alone, reading every
/// transaction of the app for each new post, until the statement was prepared again on its 1,024th use on the
/// connection. Statements are now prepared again each time their uses double, so a plan made on a nearly empty table
/// is replaced while the table is still small.
@Suite struct PostgresPlanTests {
    @Test func aNewPostReadsFewIndexEntriesOnceTheTableHasGrown() async throws {
        guard let url = TestDatabases.postgresURL else {
            print("note: skipped: set IAPKIT_TEST_POSTGRES_URL to run it")
            return
        }
        // One connection, so every post runs the statement prepared there.
        let database = try PostgresDatabase(
            url: try await StorageConformanceTests.freshPostgresDatabase(at: url), maximumConnections: 1)
        let version = try await database.read { db in
            try await db.rows(SQLStatement("SELECT CAST(current_setting('server_version_num') AS BIGINT) AS number"))
        }
        guard try #require(version.first).integer("number") >= 150_000 else {
            print("note: skipped: it needs PostgreSQL 15 or later (pg_stat_force_next_flush)")
            try await database.close()
            return
        }
        let storage = try await SQLStorage(database: database)
        func post(_ range: Range<Int>) async throws {
            for index in range {
                let transaction = StorageConformanceTests.transaction("t\(index)", signed: Double(index))
                let outcome = try await storage.record(PurchaseBatch(claimant: nil, transactions: [transaction]))
                #expect(outcome.owners == [transaction.transactionID])
            }
        }
        /// Runs `text` on the connection after it has reported what its statements read so far.
        func afterFlushing(_ text: String) async throws -> [SQLRow] {
            _ = try await database.read { db in
                try await db.rows(SQLStatement("SELECT CAST(1 AS BIGINT) AS flushed FROM pg_stat_force_next_flush()"))
            }
            return try await database.read { db in try await db.rows(SQLStatement(text)) }
        }
        /// The transaction index entries the connection's statements have read so far.
        func entriesRead() async throws -> Int64 {
            let read = try await afterFlushing(
                """
                SELECT CAST(COALESCE(SUM(idx_tup_read), 0) AS BIGINT) AS entries FROM pg_stat_user_indexes
                WHERE relname = 'iap_transactions'
                """)
            return try #require(read.first).integer("entries")
        }
        try await post(0..<600)
        let before = try await entriesRead()
        try await post(600..<1_000)
        let entries = try await entriesRead() - before
        // A search on the bundle id alone reads every transaction stored before each post: 319,800 entries for these
        // 400 posts. A search on the key reads none for a transaction that is not stored yet.
        #expect(entries < 4_000, "\(entries) transaction index entries read by 400 new posts")
        try await storage.shutdown()
    }
}
