import Foundation
import IAPCore

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
        // A transaction belongs to its app: two apps' transaction "1" (Xcode and the simulator count from small
        // numbers) are two rows. The rows move as they are.
        Migration(name: "2026-11-24-transactions-by-app") { engine in
            let text = engine == .postgres ? "TEXT COLLATE \"C\"" : "TEXT"
            return [
                """
                CREATE TABLE iap_transactions_by_app (
                    bundle_id TEXT NOT NULL,
                    transaction_id TEXT NOT NULL,
                    original_transaction_id TEXT NOT NULL,
                    product_id TEXT NOT NULL,
                    signed_date BIGINT NOT NULL,
                    document \(text) NOT NULL,
                    app_account_token TEXT,
                    record TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, transaction_id)
                )
                """,
                """
                INSERT INTO iap_transactions_by_app (bundle_id, transaction_id, original_transaction_id, product_id,
                    signed_date, document, app_account_token, record)
                SELECT bundle_id, transaction_id, original_transaction_id, product_id, signed_date, document,
                    app_account_token, record
                FROM iap_transactions
                """,
                "DROP TABLE iap_transactions",
                "ALTER TABLE iap_transactions_by_app RENAME TO iap_transactions",
                "CREATE INDEX iap_transactions_original ON iap_transactions (bundle_id, original_transaction_id)",
            ]
        },
        // A notification belongs to its app too: its UUID is recorded once per app, so one app's notifications
        // can never mask another's.
        Migration(name: "2026-11-25-notifications-by-app") { _ in
            [
                """
                CREATE TABLE iap_notifications_by_app (
                    bundle_id TEXT NOT NULL,
                    notification_uuid TEXT NOT NULL,
                    notification_type TEXT NOT NULL,
                    subtype TEXT,
                    signed_date BIGINT NOT NULL,
                    received_at BIGINT NOT NULL,
                    body TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, notification_uuid)
                )
                """,
                """
                INSERT INTO iap_notifications_by_app (bundle_id, notification_uuid, notification_type, subtype,
                    signed_date, received_at, body)
                SELECT bundle_id, notification_uuid, notification_type, subtype, signed_date, received_at, body
                FROM iap_notifications
                """,
                "DROP TABLE iap_notifications",
                "ALTER TABLE iap_notifications_by_app RENAME TO iap_notifications",
            ]
        },
        // The local App Store's own state, so a restart continues the same store: a document per app, and a row
        // per transaction and per notification, so a save writes what changed and not the whole history.
        Migration(name: "2026-11-25-simulator-state") { _ in
            [
                """
                CREATE TABLE iap_simulator_state (
                    bundle_id TEXT PRIMARY KEY,
                    state TEXT NOT NULL,
                    saved_at BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE iap_simulator_rows (
                    bundle_id TEXT NOT NULL,
                    kind BIGINT NOT NULL CHECK (kind IN (0, 1)),
                    row_key TEXT NOT NULL,
                    position BIGINT NOT NULL,
                    body TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, kind, row_key)
                )
                """,
            ]
        },
        // Each customer's history kept compact for the engine (CompactHistory as JSON), so a post reads one row
        // whatever the length of the history; built from the records on first use.
        Migration(name: "2026-11-25-customer-digests") { _ in
            [
                """
                CREATE TABLE iap_customer_digests (
                    bundle_id TEXT NOT NULL,
                    customer_id TEXT NOT NULL,
                    version BIGINT NOT NULL,
                    digest TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, customer_id)
                )
                """
            ]
        },
        // The outbox: each event stored once with the change that made it (its sequence orders a customer's events),
        // a delivery per event and webhook endpoint, every attempt kept. Partial indexes keep the sender's look-ups on
        // what is pending, however many deliveries are done.
        Migration(name: "2026-11-26-outbox") { engine in
            // Keyed by sequence (ascending, so a write appends to the last pages of its b-trees) rather than by the
            // event id (a hash, so each insert would dirty a page somewhere): a write carrying an event changes four
            // b-trees in place, the event id's and the customer's two of them at random.
            let serial = engine == .postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY"
            return [
                """
                CREATE TABLE iap_events (
                    sequence \(serial),
                    event_id TEXT NOT NULL UNIQUE,
                    bundle_id TEXT NOT NULL,
                    customer_id TEXT NOT NULL,
                    event_type TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    give_up_at BIGINT,
                    body TEXT NOT NULL
                )
                """,
                """
                CREATE TABLE iap_deliveries (
                    sequence BIGINT NOT NULL,
                    endpoint TEXT NOT NULL,
                    event_id TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    customer_id TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
                    attempts BIGINT NOT NULL,
                    next_attempt_at BIGINT NOT NULL,
                    lease_owner TEXT,
                    lease_until BIGINT NOT NULL,
                    delivered_at BIGINT,
                    last_status BIGINT,
                    last_error TEXT,
                    PRIMARY KEY (sequence, endpoint)
                )
                """,
                "CREATE INDEX iap_deliveries_pending ON iap_deliveries (sequence) WHERE state = 'pending'",
                "CREATE INDEX iap_deliveries_customer ON iap_deliveries (bundle_id, customer_id, state, sequence)",
                // A write that only adds new transactions may leave announcing them for after it: the moment it was
                // written (the real one, and the service's for its entitlements) marks the row until its events are
                // stored. The partial index holds only rows waiting, in the order written.
                "ALTER TABLE iap_transactions ADD COLUMN announce_at BIGINT",
                "ALTER TABLE iap_transactions ADD COLUMN announce_moment BIGINT",
                """
                CREATE INDEX iap_transactions_unannounced ON iap_transactions (announce_at)
                WHERE announce_at IS NOT NULL
                """,
                """
                CREATE TABLE iap_delivery_attempts (
                    event_id TEXT NOT NULL,
                    endpoint TEXT NOT NULL,
                    attempt BIGINT NOT NULL,
                    started_at BIGINT NOT NULL,
                    status BIGINT,
                    error TEXT,
                    duration_ms BIGINT NOT NULL,
                    instance TEXT NOT NULL,
                    PRIMARY KEY (event_id, endpoint, attempt)
                )
                """,
            ]
        },
        // Customer identity: aliases (an anonymous customer merged into the one who logged in) and the customers
        // who logged in (so a later login from them switches accounts instead of merging).
        Migration(name: "2026-11-26-identity") { _ in
            [
                """
                CREATE TABLE iap_aliases (
                    bundle_id TEXT NOT NULL,
                    alias TEXT NOT NULL,
                    customer_id TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, alias)
                )
                """,
                "CREATE INDEX iap_aliases_customer ON iap_aliases (bundle_id, customer_id)",
                """
                CREATE TABLE iap_identified (
                    bundle_id TEXT NOT NULL,
                    customer_id TEXT NOT NULL,
                    PRIMARY KEY (bundle_id, customer_id)
                )
                """,
            ]
        },
        // What the console's overview adds up, kept in columns of each transaction beside the record they come from
        // (filled for the rows already stored): the moments as milliseconds, the price, currency and storefront, and
        // whether the period was a free trial. Indexes by purchase for every row, by expiry only for subscriptions
        // and by revocation only for what was refunded, so a write of a consumable maintains one more index.
        Migration(name: "2026-11-27-overview") { engine in
            func field(_ path: String) -> String {
                engine == .postgres
                    ? "(record::jsonb #>> '{\(path.replacingOccurrences(of: ".", with: ","))}')"
                    : "json_extract(record, '$.\(path)')"
            }
            func milliseconds(_ path: String) -> String {
                let seconds = engine == .postgres ? "\(field(path))::double precision" : field(path)
                return "CAST(ROUND((\(seconds) + 978307200) * 1000) AS BIGINT)"
            }
            let trial =
                engine == .postgres
                ? "CASE WHEN \(field("offer.isFreeTrial")) = 'true' THEN 1 ELSE 0 END"
                : "COALESCE(\(field("offer.isFreeTrial")), 0)"
            let price = engine == .postgres ? "CAST(\(field("price")) AS BIGINT)" : field("price")
            return [
                "ALTER TABLE iap_transactions ADD COLUMN purchase_ms BIGINT",
                "ALTER TABLE iap_transactions ADD COLUMN expires_ms BIGINT",
                "ALTER TABLE iap_transactions ADD COLUMN revoked_ms BIGINT",
                "ALTER TABLE iap_transactions ADD COLUMN price BIGINT",
                "ALTER TABLE iap_transactions ADD COLUMN currency TEXT",
                "ALTER TABLE iap_transactions ADD COLUMN storefront TEXT",
                "ALTER TABLE iap_transactions ADD COLUMN trial BIGINT NOT NULL DEFAULT 0",
                """
                UPDATE iap_transactions SET purchase_ms = \(milliseconds("purchaseDate")),
                    expires_ms = \(milliseconds("expiresDate")), revoked_ms = \(milliseconds("revocation.date")),
                    price = \(price), currency = \(field("currency")), storefront = \(field("storefront")),
                    trial = \(trial)
                """,
                // Covering: the overview adds up a month of purchases from the index alone, never reading the rows
                // (their documents make them large, and a month's are scattered over the table).
                """
                CREATE INDEX iap_transactions_purchased ON iap_transactions (bundle_id, purchase_ms, product_id,
                    storefront, currency, price, expires_ms, revoked_ms, original_transaction_id, transaction_id)
                """,
                """
                CREATE INDEX iap_transactions_expiring ON iap_transactions (bundle_id, expires_ms, product_id,
                    storefront, revoked_ms, purchase_ms, trial, original_transaction_id)
                WHERE expires_ms IS NOT NULL
                """,
                // Who owns each purchase, read from the index alone (paying customers: a month's purchases). Partial
                // on a condition every row meets, so only a statement that names it uses it: a customer's read,
                // given the choice, drove itself from this index by the app alone (QueryPlanTests).
                """
                CREATE INDEX iap_owners_owner ON iap_owners (bundle_id, original_transaction_id, customer_id, claimed)
                WHERE claimed IN (0, 1)
                """,
                // Whether a subscription's period was its last: its later periods, by subscription.
                """
                CREATE INDEX iap_transactions_periods ON iap_transactions (bundle_id, original_transaction_id, expires_ms)
                WHERE expires_ms IS NOT NULL
                """,
                """
                CREATE INDEX iap_transactions_revoked ON iap_transactions (bundle_id, revoked_ms)
                WHERE revoked_ms IS NOT NULL
                """,
            ]
        },
        // The overview's month within 200 ms at a million transactions: each transaction row keeps its UTC day, whether
        // it is a subscription's first period, the customer who owns it (kept with the owner table: a claim, a
        // transfer or a login that moves a purchase updates its rows too) and whether a later period followed it, so
        // purchases group in the index's order, and paying customers and churn are counted from indexes alone.
        Migration(name: "2026-11-27-console-speed") { _ in
            [
                "ALTER TABLE iap_transactions ADD COLUMN customer_id TEXT",
                "ALTER TABLE iap_transactions ADD COLUMN purchase_day BIGINT",
                "ALTER TABLE iap_transactions ADD COLUMN first_period BIGINT NOT NULL DEFAULT 0",
                """
                UPDATE iap_transactions SET purchase_day = purchase_ms / \(OverviewLine.millisecondsPerDay),
                    first_period = CASE WHEN expires_ms IS NOT NULL AND transaction_id = original_transaction_id
                        THEN 1 ELSE 0 END,
                    customer_id = (
                        SELECT o.customer_id FROM iap_owners o
                        WHERE o.bundle_id = iap_transactions.bundle_id
                            AND o.original_transaction_id = iap_transactions.original_transaction_id)
                """,
                "DROP INDEX iap_transactions_purchased",
                """
                CREATE INDEX iap_transactions_purchased ON iap_transactions (bundle_id, purchase_day, product_id,
                    storefront, currency, first_period, price, purchase_ms, revoked_ms, customer_id)
                """,
                "DROP INDEX iap_owners_owner",
                // Set by the owner upsert when a claim just took the purchase from the owner the server made up, so
                // the write knows its other rows must follow without asking.
                "ALTER TABLE iap_owners ADD COLUMN moved BIGINT NOT NULL DEFAULT 0",
                // Whether a later period of the same subscription is stored: churn is the periods ending in a span
                // that nothing followed, read from the expiry index alone instead of a look for a later period each.
                "ALTER TABLE iap_transactions ADD COLUMN superseded BIGINT NOT NULL DEFAULT 0",
                """
                UPDATE iap_transactions SET superseded = 1
                WHERE expires_ms IS NOT NULL AND EXISTS (
                    SELECT 1 FROM iap_transactions l
                    WHERE l.bundle_id = iap_transactions.bundle_id
                        AND l.original_transaction_id = iap_transactions.original_transaction_id
                        AND l.expires_ms > iap_transactions.expires_ms)
                """,
                "DROP INDEX iap_transactions_expiring",
                """
                CREATE INDEX iap_transactions_expiring ON iap_transactions (bundle_id, expires_ms, product_id,
                    storefront, revoked_ms, superseded, purchase_ms, trial, original_transaction_id)
                WHERE expires_ms IS NOT NULL
                """,
            ]
        },
        // The console's notification log: what each notification is about and what the server did with it (unknown,
        // NULL, for those stored before), how many times it came again; indexed newest first per app and per
        // purchase (a customer's notifications are those of the purchases they own).
        Migration(name: "2026-11-27-notification-log") { _ in
            [
                "ALTER TABLE iap_notifications ADD COLUMN original_transaction_id TEXT",
                "ALTER TABLE iap_notifications ADD COLUMN effect TEXT",
                "ALTER TABLE iap_notifications ADD COLUMN repeats BIGINT NOT NULL DEFAULT 0",
                """
                CREATE INDEX iap_notifications_received ON iap_notifications (bundle_id, received_at, notification_uuid)
                """,
                """
                CREATE INDEX iap_notifications_purchase ON iap_notifications (bundle_id, original_transaction_id,
                    received_at) WHERE original_transaction_id IS NOT NULL
                """,
            ]
        },
        // PostgreSQL compresses a value once its row passes about 2 KB, and a signed document (3 to 5 KB of base64,
        // which hardly compresses) put every transaction row past it: pglz took 7% of the database's time under the
        // server benchmark. Documents are now kept apart from their rows (TOAST) uncompressed, and the rows the
        // entitlement reads go through stay small.
        Migration(name: "2026-11-27-documents-apart") { engine in
            guard engine == .postgres else { return [] }
            return [
                "ALTER TABLE iap_transactions ALTER COLUMN document SET STORAGE EXTERNAL",
                "ALTER TABLE iap_renewals ALTER COLUMN document SET STORAGE EXTERNAL",
            ]
        },
        // A claim that takes a purchase from the owner the server made up names that owner (the row's customer before
        // the claim), so the write marks their digest stale too: their records changed as much as the claimant's.
        Migration(name: "2026-11-29-moved-from") { _ in
            ["ALTER TABLE iap_owners ADD COLUMN moved_from TEXT"]
        },
        // Who sells for each app's local App Store on this database (one server of those sharing it), the beat that
        // says it is alive, and what it says with each beat (its clock and authority, for the servers that do not sell).
        Migration(name: "2026-11-30-simulator-lease") { _ in
            [
                """
                CREATE TABLE iap_simulator_leases (
                    bundle_id TEXT PRIMARY KEY,
                    holder TEXT NOT NULL,
                    beat BIGINT NOT NULL,
                    note TEXT NOT NULL DEFAULT ''
                )
                """
            ]
        },
    ]

    /// Why the tables could not be made ready, saying so: a role without the right to create them (SQLSTATE 42501) was
    /// told only "permission denied for schema public" (an operator's trial), with what to give it.
    static func failure(_ error: any Error) -> StorageError {
        guard error is PostgresFailure else { return StorageError.unavailable(error) }
        let privilege =
            (error as? PostgresFailure)?.state == "42501"
            ? " (the URL's role must be able to create and change IAPKit's tables: give it a database it owns, "
                + "CREATE DATABASE iapkit OWNER iapkit; docs/scale.md)" : ""
        return StorageError(
            code: "storageUnavailable",
            reason: "the database failed while making its tables ready: \(error)\(privilege)")
    }

    /// Applies what `database` has not seen, in one transaction (and, on PostgreSQL, under an advisory lock, so
    /// instances starting together do not race).
    /// Schema changes and backfills may take as long as the tables are big: no statement deadline applies here.
    static func apply(to database: any SQLDatabase) async throws {
        let engine = database.engine
        try await StatementDeadline.$suspended.withValue(true) { try await transaction(database, engine) }
    }

    private static func transaction(_ database: any SQLDatabase, _ engine: SQLEngine) async throws {
        try await database.transaction { db in
            if engine == .postgres {
                // PostgreSQL's own statement timeout (set for every session of the pool) is lifted for this one.
                try await db.run(SQLStatement("SET LOCAL statement_timeout = 0"))
                try await db.run(SQLStatement("SELECT pg_advisory_xact_lock(7355608)"))
            }
            try await db.run(
                SQLStatement(
                    "CREATE TABLE IF NOT EXISTS iap_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)"))
            let applied = Set(
                try await db.rows(SQLStatement("SELECT name FROM iap_migrations")).map { try $0.text("name") })
            for migration in all where !applied.contains(migration.name) {
                for statement in migration.statements(engine) { try await db.run(SQLStatement(statement)) }
                try await db.run(
                    SQLStatement(
                        "INSERT INTO iap_migrations (name, applied_at) VALUES ($1, $2)",
                        [.text(migration.name), .integer(Date().millisecondsSince1970)]))
            }
            return ((), commit: true)
        }
    }
}
