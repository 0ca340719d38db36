import Foundation
import IAPEntitlements
import IAPTestSupport
import Testing

@testable import IAPServer

/// A database made by an earlier version moves forward on start-up with its rows.
@Suite struct MigrationTests {
    @Test func transactionsAndNotificationsMoveToTheirAppsKeys() async throws {
        let path = TestFiles.url("store.sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The schema as the first two migrations left it, with one stored transaction.
        let database = try SQLiteDatabase(path: path)
        struct Runner {
            let database: SQLiteDatabase
            func execute(_ statement: SQLStatement) async throws {
                try await database.transaction { db in
                    try await db.run(statement)
                    return ((), true)
                }
            }
            func close() async throws { try await database.close() }
        }
        let old = Runner(database: database)
        try await old.execute(
            SQLStatement("CREATE TABLE iap_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)"))
        for migration in Migrations.all.prefix(2) {
            for statement in migration.statements(.sqlite) { try await old.execute(SQLStatement(statement)) }
            try await old.execute(
                SQLStatement(
                    "INSERT INTO iap_migrations (name, applied_at) VALUES ($1, 0)", [.text(migration.name)]))
        }
        try await old.execute(
            SQLStatement(
                """
                INSERT INTO iap_transactions (transaction_id, original_transaction_id, bundle_id, product_id,
                    signed_date, document, app_account_token, record)
                VALUES ('1', '1', 'com.example.one', 'p', 1, 'doc', NULL, '{}')
                """))
        try await old.execute(
            SQLStatement(
                """
                INSERT INTO iap_notifications (notification_uuid, bundle_id, notification_type, subtype, signed_date,
                    received_at, body)
                VALUES ('n-1', 'com.example.one', 'TEST', NULL, 1, 2, '{}')
                """))
        try await old.close()

        let storage = try await SQLStorage(database: try SQLiteDatabase(path: path))
        #expect(try await storage.counts().transactions == 1, "the stored row moved")
        #expect(try await storage.largestTransactionID(bundleID: "com.example.one") == 1)
        #expect(try await storage.notification(uuid: "n-1", bundleID: "com.example.one")?.type == "TEST")
        #expect(try await storage.notification(uuid: "n-1", bundleID: "com.example.two") == nil)
        try await storage.shutdown()
    }

    /// A role that may not create tables in the database is refused at start saying what it needs (an operator's
    /// trial got a bare "permission denied for schema public"). PostgreSQL 15 and later let only the database's owner
    /// create in `public`.
    @Test func aRoleThatMayNotCreateTheTablesIsToldWhatItNeeds() async throws {
        guard let url = TestDatabases.postgresURL else {
            print("note: skipped: set IAPKIT_TEST_POSTGRES_URL to run it")
            return
        }
        let role = TestDatabases.freshDatabaseName("iapkit_guest")
        let admin = try PostgresDatabase(url: url, maximumConnections: 1)
        try await admin.execute(SQLStatement("CREATE ROLE \(role) LOGIN"))
        try await admin.execute(SQLStatement("CREATE DATABASE \(role)"))
        // Whatever the server's version: no one but the owner creates in public.
        let owned = try PostgresDatabase(
            url: try #require(TestDatabases.postgresURL(database: role)), maximumConnections: 1)
        try await owned.execute(SQLStatement("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
        try await owned.close()
        let address = try #require(TestDatabases.postgresURL(database: role))
            .replacingOccurrences(of: "postgres://postgres@", with: "postgres://\(role)@")
        await #expect {
            let storage = try await SQLStorage(database: try PostgresDatabase(url: address, maximumConnections: 1))
            try await storage.shutdown()
        } throws: { error in
            let reason = (error as? StorageError)?.reason ?? ""
            return reason.contains("42501") && reason.contains("CREATE DATABASE iapkit OWNER iapkit")
        }
        try await admin.execute(SQLStatement("DROP DATABASE \(role)"))
        try await admin.execute(SQLStatement("DROP ROLE \(role)"))
        try await admin.close()
    }
}
