import Foundation
import IAPCore
import IAPEntitlements
import IAPTestSupport
import Testing

@testable import IAPServer

/// Posts of new purchases written several to one statement on PostgreSQL (``SQLStorage/recordInOneStatement(batch:)``)
/// are answered and stored as the same posts one by one are.
@Suite struct BatchedWriteTests {
    typealias Conformance = StorageConformanceTests

    /// Two storages on two fresh databases of the test server: one to batch, one to post one by one.
    static func twoDatabases() async throws -> (batched: SQLStorage, reference: SQLStorage)? {
        guard let url = TestDatabases.postgresURL else {
            print("note: skipped: set IAPKIT_TEST_POSTGRES_URL to run it")
            return nil
        }
        return (
            try await SQLStorage(
                database: try PostgresDatabase(url: try await Conformance.freshPostgresDatabase(at: url))),
            try await SQLStorage(
                database: try PostgresDatabase(url: try await Conformance.freshPostgresDatabase(at: url)))
        )
    }

    /// A period of subscription `original`, expiring `expires` seconds after the test's epoch.
    static func period(_ id: String, of original: String, expires: TimeInterval, signed: TimeInterval)
        -> StoredTransaction
    {
        var transaction = Conformance.transaction(id, original: original, product: "p.monthly", signed: signed)
        transaction.record.expiresDate = Date(timeIntervalSince1970: 1_700_000_000 + expires)
        return transaction
    }

    static func write(_ transaction: StoredTransaction, by claimant: String?, on storage: SQLStorage) throws
        -> SQLStorage.OneStatementWrite
    {
        SQLStorage.OneStatementWrite(
            transaction: transaction, json: try storage.encode(transaction.record), claimant: claimant)
    }

    /// What a database holds of every purchase and owner, to compare two.
    static func state(of storage: SQLStorage) async throws -> [String] {
        try await storage.database.read { db in
            let transactions = try await db.rows(
                SQLStatement(
                    """
                    SELECT transaction_id || ' ' || original_transaction_id || ' ' || document || ' ' || customer_id
                        || ' ' || superseded AS line FROM iap_transactions ORDER BY transaction_id
                    """))
            let owners = try await db.rows(
                SQLStatement(
                    """
                    SELECT original_transaction_id || ' ' || customer_id || ' ' || claimed AS line FROM iap_owners
                    ORDER BY original_transaction_id
                    """))
            let digests = try await db.rows(
                SQLStatement("SELECT customer_id AS line FROM iap_customer_digests ORDER BY customer_id"))
            return try (transactions + owners + digests).map { try $0.text("line") }
        }
    }

    /// A batch of every kind of post the one statement writes but a subscription's period (those go alone): new
    /// purchases of one customer and of another, a newer signed version of a stored purchase, a re-post of a stored one (nothing
    /// written), an unclaimed purchase (its owner made up), and two it cannot record (a claim on a purchase another
    /// customer holds, a claim on one the server made up an owner for), and two of a customer with a kept digest. Each
    /// is answered as posting them one by one, in order, answers its customer's history once all are in, and the
    /// databases end up the same.
    @Test func aBatchAnswersAndStoresWhatPostsOneByOneDo() async throws {
        guard let (batched, reference) = try await Self.twoDatabases() else { return }
        let before: [(String?, StoredTransaction)] = [
            ("ana", Conformance.transaction("a1", signed: 1)),
            ("bo", Self.period("s1", of: "s1", expires: 100, signed: 1)),
            (nil, Conformance.transaction("u1", signed: 1)),
            ("cy", Conformance.transaction("c1", signed: 1)),
            (nil, Conformance.transaction("m1", signed: 1)),
        ]
        // A customer with a kept digest (a history of 70 purchases).
        let long: [(String?, StoredTransaction)] = (0..<70).map {
            ("kim", Conformance.transaction("k\($0)", signed: 1))
        }
        for (claimant, transaction) in before + long {
            for storage in [batched, reference] {
                _ = try await storage.record(PurchaseBatch(claimant: claimant, transactions: [transaction]))
            }
        }
        let posts: [(String?, StoredTransaction)] = [
            ("ana", Conformance.transaction("a2", signed: 2)),
            ("ana", Conformance.transaction("a3", signed: 2, document: "doc-a3")),
            ("ana", Conformance.transaction("a1", signed: 5)),
            (nil, Conformance.transaction("u1", signed: 1)),
            (nil, Conformance.transaction("n1", signed: 2)),
            ("ana", Conformance.transaction("c1", signed: 1)),
            ("dee", Conformance.transaction("m1", signed: 3)),
            ("bo", Conformance.transaction("b1", signed: 2)),
            ("kim", Conformance.transaction("k70", signed: 2)),
            ("kim", Conformance.transaction("k71", signed: 2)),
        ]
        let answers = try await batched.recordInOneStatement(
            batch: try posts.map { try Self.write($1, by: $0, on: batched) })
        var expected: [SQLStorage.OneStatementResult] = []
        for (claimant, transaction) in posts {
            expected.append(
                try await reference.recordInOneStatement(
                    transaction, json: try reference.encode(transaction.record), claimant: claimant))
        }
        #expect(answers.count == posts.count)
        for (index, (answer, one)) in zip(answers, expected).enumerated() {
            let post = posts[index].1.transactionID
            #expect((answer == nil) == (one == nil), "post \(index) (\(post))")
            guard let answer, let one else { continue }
            #expect(answer.wrote == one.wrote, "post \(index) (\(post))")
            #expect(answer.outcome.owners == one.outcome.owners, "post \(index) (\(post))")
            // Each customer's whole history after the batch: the one-by-one answer is as of its own post.
            let owner = try #require(answer.outcome.owners?.first)
            let customer = CustomerKey(bundleID: Conformance.bundle, id: owner)
            guard case .recorded(_, let digest) = answer.outcome else { continue }
            #expect(digest.history == (try await reference.digest(of: customer)).history, "post \(index) (\(post))")
            // A version the answer is said to be exact at is the customer's digest row's now (nothing came between):
            // what ``HistoryCache`` offers later rests on it.
            if let version = answer.version {
                let rows = try await batched.database.read { db in
                    try await db.rows(
                        SQLStatement(
                            "SELECT version FROM iap_customer_digests WHERE bundle_id = $1 AND customer_id = $2",
                            [.text(customer.bundleID), .text(customer.id)]))
                }
                #expect(try rows.first?.integer("version") == version, "post \(index) (\(post))")
            }
        }
        #expect(answers.contains { $0?.version != nil }, "some answers are exact at a version")
        #expect(answers.compactMap { $0 }.count == 8, "the two claims the one statement cannot record are left")
        #expect(try await Self.state(of: batched) == (try await Self.state(of: reference)))
    }

    /// Posts that come at once from two instances go several to a statement (the lanes are busy) and are stored and
    /// answered as the same posts one by one: customers' purchases in the same batches and across the instances'
    /// batches at once, none refused (no statement waits on another in a circle), and each customer's subscription
    /// periods, which go alone, superseding one another whatever their order.
    @Test func concurrentPostsFromTwoInstancesAreBatchedAndLoseNothing() async throws {
        guard let url = TestDatabases.postgresURL else {
            print("note: skipped: set IAPKIT_TEST_POSTGRES_URL to run it")
            return
        }
        let address = try await Conformance.freshPostgresDatabase(at: url)
        let first = try await SQLStorage(database: try PostgresDatabase(url: address))
        let second = try await SQLStorage(database: try PostgresDatabase(url: address))
        let reference = try await SQLStorage(
            database: try PostgresDatabase(url: try await Conformance.freshPostgresDatabase(at: url)))
        let customers = (0..<6).map { "customer-\($0)" }
        let posts: [(String, StoredTransaction)] = (0..<96).map { index in
            let customer = customers[index % customers.count]
            let transaction =
                index % 4 == 0
                ? Self.period("t\(index)", of: "sub-\(customer)", expires: TimeInterval(100 + index), signed: 1)
                : Conformance.transaction("t\(index)", signed: 1)
            return (customer, transaction)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, (customer, transaction)) in posts.enumerated() {
                let storage = index.isMultiple(of: 2) ? first : second
                group.addTask {
                    let outcome = try await storage.record(
                        PurchaseBatch(claimant: customer, transactions: [transaction]))
                    guard case .recorded(let owners, let digest) = outcome else {
                        Issue.record("post \(index) refused: \(outcome)")
                        return
                    }
                    #expect(owners == [customer])
                    #expect(digest.history.history.records.contains { $0.transactionID == transaction.transactionID })
                }
            }
            try await group.waitForAll()
        }
        for (customer, transaction) in posts {
            _ = try await reference.record(PurchaseBatch(claimant: customer, transactions: [transaction]))
        }
        let (batches, purchases) = try #require(first.oneStatementWrites?.counts)
        #expect(purchases > batches, "posts went several to a statement (\(purchases) in \(batches))")
        #expect(first.failedWriteBatches + second.failedWriteBatches == 0)
        #expect(try await Self.state(of: first) == (try await Self.state(of: reference)))
        for customer in customers {
            let key = CustomerKey(bundleID: Conformance.bundle, id: customer)
            #expect(try await first.digest(of: key).history == (try await reference.digest(of: key)).history)
        }
    }

    /// Two apps' customers with the same id, posting at once: each answer holds only that app's purchases (a batch
    /// writes for one app), and both apps' posts still go several to a statement.
    @Test func twoAppsWithTheSameCustomerIdKeepTheirOwnHistories() async throws {
        guard let url = TestDatabases.postgresURL else {
            print("note: skipped: set IAPKIT_TEST_POSTGRES_URL to run it")
            return
        }
        let storage = try await SQLStorage(
            database: try PostgresDatabase(url: try await Conformance.freshPostgresDatabase(at: url)))
        let apps = [Conformance.bundle, "com.example.other"]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<64 {
                let app = apps[index % 2]
                var transaction = Conformance.transaction("\(index % 2)-\(index)", signed: 1)
                transaction.bundleID = app
                group.addTask {
                    let outcome = try await storage.record(PurchaseBatch(claimant: "same", transactions: [transaction]))
                    guard case .recorded(_, let digest) = outcome else {
                        Issue.record("post \(index) refused: \(outcome)")
                        return
                    }
                    let prefixes = Set(digest.history.history.records.map { $0.transactionID.prefix(2) })
                    #expect(prefixes == ["\(index % 2)-"], "post \(index) of \(app) answered \(prefixes)")
                }
            }
            try await group.waitForAll()
        }
        let (batches, purchases) = try #require(storage.oneStatementWrites?.counts)
        #expect(purchases > batches, "posts went several to a statement (\(purchases) in \(batches))")
        for (number, app) in apps.enumerated() {
            let records = try await storage.digest(of: CustomerKey(bundleID: app, id: "same")).history.history.records
            #expect(records.count == 32 && records.allSatisfy { $0.transactionID.hasPrefix("\(number)-") })
        }
    }
}
