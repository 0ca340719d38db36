import Foundation
import IAPTestSupport
import Testing

@testable import IAPServer

/// SQLite's planner once drove a customer's read from every row of the app: an index search on the bundle id alone
/// (364 requests a second, falling as the table grew). Every step of a request's reads must be a search on a whole
/// key (bundle id and customer, or bundle id and original transaction id), never a scan.
@Suite("SQLite query plans")
struct QueryPlanTests {
    @Test func customerReadsUseIndexesOnly() async throws {
        let path = TestFiles.url("plan.sqlite").path
        let database = try SQLiteDatabase(path: path)
        let storage = try await SQLStorage(database: database)  // migrates
        let customer = CustomerKey(bundleID: "com.example.app", id: "c1")
        for (name, query) in [
            ("records", SQLStorage.recordsQuery(customer)),
            ("customer", SQLStorage.customerQuery(id: "c1", bundleID: "com.example.app")),
        ] {
            let details = try await database.read { db in
                try await db.rows(SQLStatement("EXPLAIN QUERY PLAN " + query.text, query.binds)).map {
                    try $0.text("detail")
                }
            }
            #expect(!details.isEmpty)
            #expect(details.allSatisfy { !$0.hasPrefix("SCAN") }, "\(name): \(details)")
            let searches = details.filter { $0.hasPrefix("SEARCH") }
            #expect(!searches.isEmpty)
            #expect(searches.allSatisfy { $0.contains("=? AND ") }, "\(name): a search on part of a key: \(details)")
        }
        try await storage.shutdown()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// The console's overview reads index ranges only (by purchase, expiry or revocation moment, and owners by key):
    /// never every transaction of the app.
    @Test func overviewReadsUseIndexesOnly() async throws {
        let path = TestFiles.url("plan.sqlite").path
        let database = try SQLiteDatabase(path: path)
        let storage = try await SQLStorage(database: database)
        let statements = SQLStorage.overviewStatements(
            OverviewQuery(
                bundleID: "com.example.app", from: Date(timeIntervalSince1970: 0),
                to: Date(timeIntervalSince1970: 86_400 * 7), now: Date(timeIntervalSince1970: 86_400 * 7)))
        for (name, query) in [
            ("purchases", statements.purchases), ("refunds", statements.refunds), ("churns", statements.churns),
            ("actives", statements.actives), ("paying", statements.paying),
        ] {
            let details = try await database.read { db in
                try await db.rows(SQLStatement("EXPLAIN QUERY PLAN " + query.text, query.binds)).map {
                    try $0.text("detail")
                }
            }
            // `held` is the active subscriptions' union, read once as it is made: not a table.
            let reads = details.filter { ($0.hasPrefix("SCAN") || $0.hasPrefix("SEARCH")) && $0 != "SCAN held" }
            #expect(!reads.isEmpty, "\(name): \(details)")
            #expect(reads.allSatisfy { $0.hasPrefix("SEARCH") }, "\(name): \(details)")
            #expect(
                reads.allSatisfy { $0.contains("bundle_id=?") }, "\(name): a search without the app: \(details)")
        }
        try await storage.shutdown()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// The console's lists read index ranges of their app: the customers list by owner, and the notification log by
    /// received moment (or, for a customer, by purchase), whatever filters are set.
    @Test func consoleListsUseIndexesOnly() async throws {
        let path = TestFiles.url("plan.sqlite").path
        let database = try SQLiteDatabase(path: path)
        let storage = try await SQLStorage(database: database)
        let app = "com.example.app"
        let moment = Date(timeIntervalSince1970: 86_400)
        let statements: [(String, SQLStatement)] = [
            ("customer page", SQLStorage.customerPageStatement(bundleID: app, after: "c1", limit: 50)),
            ("customer summaries", SQLStorage.customerSummaryStatement(bundleID: app, ids: ["c1", "c2"])),
            ("log", SQLStorage.notificationLogStatement(NotificationQuery(bundleID: app))),
            (
                "log filtered",
                SQLStorage.notificationLogStatement(
                    NotificationQuery(
                        bundleID: app, type: "DID_RENEW", subtype: "BILLING_RECOVERY", effect: .recorded, from: moment,
                        to: moment.addingTimeInterval(86_400), before: .init(receivedAt: moment, uuid: "u")))
            ),
            (
                "log of a customer",
                SQLStorage.notificationLogStatement(NotificationQuery(bundleID: app, customerID: "c1"))
            ),
        ]
        for (name, query) in statements {
            let details = try await database.read { db in
                try await db.rows(SQLStatement("EXPLAIN QUERY PLAN " + query.text, query.binds)).map {
                    try $0.text("detail")
                }
            }
            let reads = details.filter { $0.hasPrefix("SCAN") || $0.hasPrefix("SEARCH") }
            #expect(!reads.isEmpty, "\(name): \(details)")
            #expect(reads.allSatisfy { $0.hasPrefix("SEARCH") }, "\(name): \(details)")
            #expect(reads.allSatisfy { $0.contains("bundle_id=?") }, "\(name): a search without the app: \(details)")
        }
        try await storage.shutdown()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
