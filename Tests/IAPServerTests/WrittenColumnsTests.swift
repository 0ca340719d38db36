import Foundation
import IAPCore
import IAPEntitlements
import Testing

@testable import IAPServer

/// What a write leaves in the columns beside the records (the console reads them), whichever way it was written:
/// on SQLite through a transaction, on PostgreSQL through one statement (claimed by the customer who holds the claim,
/// or unclaimed).
@Suite struct WrittenColumnsTests {
    @Test(
        arguments: [StorageConformanceTests.Backend.sqlite, .postgres], [true, false])
    func aNewPeriodSupersedesTheEarlierOnesAndRowsKnowTheirOwner(
        _ backend: StorageConformanceTests.Backend, claimed: Bool
    ) async throws {
        guard let database = try await StorageConformanceTests.database(backend) else { return }
        let storage = try await SQLStorage(database: database)
        func period(_ id: String, expires days: Double, signed: TimeInterval) -> StoredTransaction {
            var transaction = StorageConformanceTests.transaction(
                id, original: "p1", product: "p.monthly", signed: signed, token: claimed ? nil : "bo")
            transaction.record.expiresDate = Date(timeIntervalSince1970: 1_700_000_000 + days * 86_400)
            return transaction
        }
        func post(_ transaction: StoredTransaction) async throws {
            let outcome = try await storage.record(
                PurchaseBatch(claimant: claimed ? "bo" : nil, transactions: [transaction]))
            guard case .recorded(let owners, let digest) = outcome else { throw CancellationError() }
            #expect(owners == ["bo"])
            #expect(digest.history.history.records.contains { $0.transactionID == transaction.transactionID })
        }
        func columns() async throws -> [String: String] {
            let rows = try await database.read { db in
                try await db.rows(
                    SQLStatement(
                        "SELECT transaction_id, superseded, customer_id FROM iap_transactions ORDER BY transaction_id"))
            }
            return try Dictionary(
                uniqueKeysWithValues: rows.map {
                    (try $0.text("transaction_id"), "\(try $0.integer("superseded")) \(try $0.text("customer_id"))")
                })
        }
        try await post(period("p1", expires: 30, signed: 0))
        try await post(period("p2", expires: 60, signed: 1))
        #expect(try await columns() == ["p1": "1 bo", "p2": "0 bo"])
        // A newer version of the first period stays superseded; an older one of the second changes nothing.
        try await post(period("p1", expires: 30, signed: 5))
        try await post(period("p2", expires: 60, signed: 0))
        #expect(try await columns() == ["p1": "1 bo", "p2": "0 bo"])
        // A third period supersedes the second; a late copy of the first period's row is kept superseded.
        try await post(period("p3", expires: 90, signed: 2))
        #expect(try await columns() == ["p1": "1 bo", "p2": "1 bo", "p3": "0 bo"])
        let records = try await storage.records(of: CustomerKey(bundleID: StorageConformanceTests.bundle, id: "bo"))
        #expect(records.transactions.map(\.transactionID) == ["p1", "p2", "p3"])
        #expect(
            records.transactions.map(\.signedDate.timeIntervalSince1970) == [
                1_700_000_005, 1_700_000_001, 1_700_000_002,
            ])
        try await storage.shutdown()
    }

    /// Posts of one new purchase at the same moment (a retried request, two devices): one row, one owner, and every
    /// post answered with them. On PostgreSQL the statement that loses the race for the owner row finds no owner in
    /// its snapshot and takes the way through a transaction. Claimed by the customer the transaction names, or not.
    @Test(arguments: [StorageConformanceTests.Backend.sqlite, .postgres], [true, false])
    func postsOfOneNewPurchaseAtOnceAgreeOnItsOwner(_ backend: StorageConformanceTests.Backend, claimed: Bool)
        async throws
    {
        guard let database = try await StorageConformanceTests.database(backend) else { return }
        let storage = try await SQLStorage(database: database)
        for round in 0..<5 {
            let transaction = StorageConformanceTests.transaction("race\(round)", signed: 1, token: "cy")
            let owners = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        guard
                            case .recorded(let owners, let digest) = try await storage.record(
                                PurchaseBatch(claimant: claimed ? "cy" : nil, transactions: [transaction]))
                        else { return [] }
                        #expect(digest.history.history.records.contains { $0.transactionID == "race\(round)" })
                        return owners
                    }
                }
                return try await group.reduce(into: [[String]]()) { $0.append($1) }
            }
            #expect(owners == Array(repeating: ["cy"], count: 12))
        }
        let records = try await storage.records(of: CustomerKey(bundleID: StorageConformanceTests.bundle, id: "cy"))
        #expect(records.transactions.map(\.transactionID).sorted() == (0..<5).map { "race\($0)" })
        try await storage.shutdown()
    }
}
