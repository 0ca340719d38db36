import Foundation
import SQLKit

/// The schema's history: each migration has a stable name and is never edited once shipped; a database records the
/// names it has applied, and start-up applies the rest in order.
enum Migrations {
    struct Migration: Sendable {
        let name: String
        let statements: @Sendable (SQLEngine) -> [String]
    }

    static let all: [Migration] = [
        Migration(name: "2026-11-23-initial-schema") { engine in
            // PostgreSQL compares text by the database's locale unless told otherwise; the "newest version wins"
            // tie-break needs byte order, as SQLite and Swift compare.
            let text = engine == .postgres ? "TEXT COLLATE \"C\"" : "TEXT"
            return [
                """
                CREATE TABLE iap_owners (
                    bundle_id TEXT NOT NULL,
                    original_transaction_id TEXT NOT NULL,
                    customer_id TEXT NOT NULL,
                    claimed BIGINT NOT NULL CHECK (claimed IN (0, 1)),
                    PRIMARY KEY (bundle_id, original_transaction_id)
                )
                """,
                "CREATE INDEX iap_owners_customer ON iap_owners (bundle_id, customer_id)",
                """
                CREATE TABLE iap_transactions (
                    transaction_id TEXT PRIMARY KEY,
                    original_transaction_id TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    product_id TEXT NOT NULL,
                    signed_date BIGINT NOT NULL,
                    document \(text) NOT NULL,
                    app_account_token TEXT,
                    record TEXT NOT NULL
                )
                """,
                "CREATE INDEX iap_transactions_original ON iap_transactions (bundle_id, original_transaction_id)",
                """
                CREATE TABLE iap_renewals (
                    bundle_id TEXT NOT NULL,
                    original_transaction_id TEXT NOT NULL,
                    signed_date BIGINT NOT NULL,
                    document \(text) NOT NULL,
                    record TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, original_transaction_id)
                )
                """,
                """
                CREATE TABLE iap_notifications (
                    notification_uuid TEXT PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    notification_type TEXT NOT NULL,
                    subtype TEXT,
                    signed_date BIGINT NOT NULL,
                    received_at BIGINT NOT NULL,
                    body TEXT NOT NULL
                )
                """,
                """
                CREATE TABLE iap_consumptions (
                    bundle_id TEXT NOT NULL,
                    customer_id TEXT NOT NULL,
                    idempotency_key TEXT NOT NULL,
                    sequence BIGINT NOT NULL,
                    record TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, customer_id, idempotency_key)
                )
                """,
            ]
        },
        // The next consumption's sequence is MAX(sequence) + 1: an index keeps that one step, not a scan.
        Migration(name: "2026-11-23-consumption-sequence-index") { _ in
            ["CREATE INDEX iap_consumptions_sequence ON iap_consumptions (sequence)"]
        },
    ]

    /// Applies what `db` has not seen, in one transaction (and, on PostgreSQL, under an advisory lock, so instances
    /// starting together do not race).
    static func apply(to db: any SQLDatabase, engine: SQLEngine) async throws {
        try await db.raw(engine == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN").run()
        do {
            if engine == .postgres { try await db.raw("SELECT pg_advisory_xact_lock(7355608)").run() }
            try await db.raw(
                "CREATE TABLE IF NOT EXISTS iap_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)"
            ).run()
            let applied = Set(
                try await db.raw("SELECT name FROM iap_migrations").all().map {
                    try $0.decode(column: "name", as: String.self)
                })
            for migration in all where !applied.contains(migration.name) {
                for statement in migration.statements(engine) { try await db.raw("\(unsafeRaw: statement)").run() }
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                try await db.raw(
                    "INSERT INTO iap_migrations (name, applied_at) VALUES (\(bind: migration.name), \(bind: now))"
                ).run()
            }
            try await db.raw("COMMIT").run()
        } catch {
            try? await db.raw("ROLLBACK").run()
            throw error
        }
    }
}
