import Foundation
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPServer
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import Synchronization
import Testing

/// The rules of ``ServerStorage``, run against every backend: memory, an SQLite file, and PostgreSQL when
/// `IAPKIT_TEST_POSTGRES_URL` names a database (the suite skips it otherwise, saying so).
@Suite("Storage conformance", .serialized)
struct StorageConformanceTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case memory, sqlite, postgres
        var testDescription: String { rawValue }
    }

    static let postgresURL = TestDatabases.postgresURL

    /// A fresh, empty storage of the backend, or nil (with a note) when it is not available here.
    static func storage(_ backend: Backend) async throws -> (any ServerStorage)? {
        if backend == .memory { return MemoryStorage() }
        guard let database = try await database(backend) else { return nil }
        return try await SQLStorage(database: database)
    }

    /// A fresh, empty database of an SQL backend, or nil (with a note) when it is not available here.
    static func database(_ backend: Backend) async throws -> (any SQLDatabase)? {
        switch backend {
        case .memory:
            return nil
        case .sqlite:
            let path = TestFiles.url("store.sqlite").path
            return try SQLiteDatabase(path: path)
        case .postgres:
            guard let url = postgresURL else {
                print("note: PostgreSQL conformance skipped: set IAPKIT_TEST_POSTGRES_URL to run it")
                return nil
            }
            return try PostgresDatabase(url: try await freshPostgresDatabase(at: url))
        }
    }

    /// The URL of a new, empty database on the PostgreSQL server `url` names (suites run at once, and each starts
    /// empty), made with the `settings` given (`ALTER DATABASE ... SET`, such as `idle_session_timeout = '15s'`).
    static func freshPostgresDatabase(at url: String, settings: [String] = []) async throws -> String {
        let name = TestDatabases.freshDatabaseName()
        let admin = try PostgresDatabase(url: url, maximumConnections: 1)
        try await admin.execute(SQLStatement("CREATE DATABASE \(name)"))
        for setting in settings { try await admin.execute(SQLStatement("ALTER DATABASE \(name) SET \(setting)")) }
        try await admin.close()
        return try #require(TestDatabases.postgresURL(database: name))
    }

    static let bundle = "com.example.app"

    static func transaction(
        _ id: String, original: String? = nil, product: String = "p.lifetime", signed: TimeInterval,
        document: String? = nil, token: String? = nil, revoked: Bool = false
    ) -> StoredTransaction {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        var record = PurchaseRecord(
            transactionID: id, originalTransactionID: original ?? id, productID: product, purchaseDate: date,
            source: .signedTransaction)
        if revoked {
            record.revocation = Revocation(date: Date(timeIntervalSince1970: 1_700_000_000 + signed), kind: .refund)
        }
        return StoredTransaction(
            transactionID: id, originalTransactionID: original ?? id, bundleID: bundle, productID: product,
            signedDate: Date(timeIntervalSince1970: 1_700_000_000 + signed),
            document: document ?? "doc-\(id)-\(signed)",
            appAccountToken: token, record: record)
    }

    @Test(arguments: Backend.allCases) func theNewestSignedVersionWinsWhateverTheOrder(_ backend: Backend) async throws
    {
        guard let storage = try await Self.storage(backend) else { return }
        let older = Self.transaction("t1", signed: 10)
        let newer = Self.transaction("t1", signed: 20, revoked: true)
        _ = try await storage.record(PurchaseBatch(claimant: "c1", transactions: [newer]))
        _ = try await storage.record(PurchaseBatch(claimant: "c1", transactions: [older]))
        let records = try await storage.records(of: CustomerKey(bundleID: Self.bundle, id: "c1"))
        #expect(records.transactions.map(\.document) == [newer.document])
        #expect(records.transactions.first?.record.revocation != nil)
        // Equal dates: the greater document wins, in either order.
        let a = Self.transaction("t2", signed: 30, document: "a")
        let b = Self.transaction("t2", signed: 30, document: "b")
        _ = try await storage.record(PurchaseBatch(claimant: "c1", transactions: [b]))
        _ = try await storage.record(PurchaseBatch(claimant: "c1", transactions: [a]))
        let after = try await storage.records(of: CustomerKey(bundleID: Self.bundle, id: "c1"))
        #expect(after.transactions.map(\.document) == [newer.document, "b"])
        try await storage.shutdown()
    }

    @Test(arguments: Backend.allCases) func theLargestTransactionIDIsNumericAndPerApp(_ backend: Backend) async throws {
        guard let storage = try await Self.storage(backend) else { return }
        #expect(try await storage.largestTransactionID(bundleID: Self.bundle) == nil)
        for id in ["9", "2000000000000010", "2000000000000009", "150", "abc"] {
            _ = try await storage.record(PurchaseBatch(claimant: "c1", transactions: [Self.transaction(id, signed: 1)]))
        }
        // Numerically, not as text ("9" > "2000..." as text); a non-numeric id is no number.
        #expect(try await storage.largestTransactionID(bundleID: Self.bundle) == 2_000_000_000_000_010)
        #expect(try await storage.largestTransactionID(bundleID: "com.example.other") == nil)
        try await storage.shutdown()
    }

    @Test(arguments: Backend.allCases) func twoAppsKeepTheirOwnTransactionsUnderOneID(_ backend: Backend) async throws {
        guard let storage = try await Self.storage(backend) else { return }
        var ours = Self.transaction("1", signed: 1, document: "ours")
        var theirs = Self.transaction("1", signed: 5, document: "theirs")
        ours.bundleID = "com.example.one"
        theirs.bundleID = "com.example.two"
        _ = try await storage.record(PurchaseBatch(claimant: "c1", transactions: [ours]))
        _ = try await storage.record(PurchaseBatch(claimant: "c1", transactions: [theirs]))
        let one = try await storage.records(of: CustomerKey(bundleID: "com.example.one", id: "c1"))
        let two = try await storage.records(of: CustomerKey(bundleID: "com.example.two", id: "c1"))
        #expect(
            one.transactions.map(\.document) == ["ours"], "the newer version of another app's \"1\" replaced nothing")
        #expect(two.transactions.map(\.document) == ["theirs"])
        #expect(try await storage.counts().transactions == 2)
        try await storage.shutdown()
    }

    @Test(arguments: Backend.allCases) func twoAppsKeepTheirOwnNotificationsUnderOneUUID(_ backend: Backend)
        async throws
    {
        guard let storage = try await Self.storage(backend) else { return }
        var ours = Self.notification("shared-uuid")
        var theirs = Self.notification("shared-uuid")
        ours.bundleID = "com.example.one"
        theirs.bundleID = "com.example.two"
        theirs.body = #"{"signedPayload":"theirs"}"#
        #expect(try await storage.record(notification: ours, applying: PurchaseBatch(claimant: nil, transactions: [])))
        #expect(
            try await storage.record(notification: theirs, applying: PurchaseBatch(claimant: nil, transactions: [])),
            "another app's notification with the same UUID is not a duplicate")
        #expect(
            !(try await storage.record(notification: ours, applying: PurchaseBatch(claimant: nil, transactions: []))))
        ours.repeats = 1
        #expect(try await storage.notification(uuid: "shared-uuid", bundleID: "com.example.one") == ours)
        #expect(try await storage.notification(uuid: "shared-uuid", bundleID: "com.example.two") == theirs)
        #expect(try await storage.notification(uuid: "shared-uuid", bundleID: "com.example.three") == nil)
        #expect(try await storage.counts().notifications == 2)
        try await storage.shutdown()
    }

    @Test(arguments: Backend.allCases) func aLocalAppStoresRowsAreSavedByChangeAndReadBackWhole(_ backend: Backend)
        async throws
    {
        guard let storage = try await Self.storage(backend) else { return }
        typealias Row = SimulatorStateRows.Row
        #expect(try await storage.simulatorState(bundleID: "com.example.one") == nil)
        try await storage.saveSimulatorState(
            SimulatorStateRows(
                state: #"{"v":1}"#,
                transactions: [Row(key: "2", order: 2, json: "b"), Row(key: "1", order: 1, json: "a")],
                notifications: [Row(key: "n-b", order: 1, json: "nb"), Row(key: "n-a", order: 0, json: "na")]),
            bundleID: "com.example.one")
        try await storage.saveSimulatorState(
            SimulatorStateRows(
                state: #"{"other":true}"#, transactions: [Row(key: "1", order: 1, json: "x")], notifications: []),
            bundleID: "com.example.two")
        // A later save replaces the document, changes one row, removes one, adds one, and leaves the rest.
        try await storage.saveSimulatorState(
            SimulatorStateRows(
                state: #"{"v":2}"#,
                transactions: [Row(key: "1", order: 1, json: nil), Row(key: "3", order: 3, json: "c")],
                notifications: [Row(key: "n-a", order: 0, json: "na+attempt")]),
            bundleID: "com.example.one")
        let one = try #require(try await storage.simulatorState(bundleID: "com.example.one"))
        #expect(one.state == #"{"v":2}"#)
        #expect(one.transactions.map(\.key) == ["2", "3"])
        #expect(one.transactions.map(\.json) == ["b", "c"])
        #expect(one.notifications.map(\.key) == ["n-a", "n-b"], "in the order the store sent them")
        #expect(one.notifications.map(\.json) == ["na+attempt", "nb"])
        let two = try #require(try await storage.simulatorState(bundleID: "com.example.two"))
        #expect(two.transactions.map(\.json) == ["x"], "another app's store is its own")
        try await storage.shutdown()
    }

    /// A save that rewrites the whole store (the first after one that failed) takes more rows than one statement
    /// saves on PostgreSQL: every row arrives as it was given (quotes, backslashes, other scripts), a key given twice
    /// ends as its last, and a later save removes most of them.
    @Test(arguments: Backend.allCases) func aWholeLocalAppStoreIsSavedAndReadBackAsGiven(_ backend: Backend)
        async throws
    {
        guard let storage = try await Self.storage(backend) else { return }
        typealias Row = SimulatorStateRows.Row
        let count = 1_201  // more than two statements of rows on PostgreSQL (500 each)
        let body = { (index: Int) in #"{"id":"\#(index)","note":"a "quoted" \ path, ünïcödé, 中文"}"# }
        var transactions = (1...count).map { Row(key: "\($0)", order: Int64($0), json: body($0)) }
        transactions.append(Row(key: "7", order: 7, json: nil))  // given twice: gone
        transactions.append(Row(key: "9", order: 9, json: "nine, again"))  // given twice: the last body
        let notifications = (0..<count).map { Row(key: "n-\($0)", order: Int64($0), json: body($0)) }
        let app = "com.example.whole"
        try await storage.saveSimulatorState(
            SimulatorStateRows(state: "{}", transactions: transactions, notifications: notifications), bundleID: app)
        let saved = try #require(try await storage.simulatorState(bundleID: app))
        #expect(saved.transactions.count == count - 1)
        #expect(!saved.transactions.contains { $0.key == "7" })
        #expect(saved.transactions.first { $0.key == "9" }?.json == "nine, again")
        #expect(saved.transactions.first { $0.key == "1200" }?.json == body(1200))
        #expect(saved.notifications.map(\.key) == (0..<count).map { "n-\($0)" }, "in the order the store sent them")
        #expect(saved.notifications.map(\.json) == (0..<count).map(body))
        // Most rows gone in one save.
        let gone = (1...count - 100).map { Row(key: "\($0)", order: Int64($0), json: nil) }
        try await storage.saveSimulatorState(
            SimulatorStateRows(state: "{}", transactions: gone, notifications: []), bundleID: app)
        let after = try #require(try await storage.simulatorState(bundleID: app))
        #expect(after.transactions.map(\.key) == (count - 99...count).map { "\($0)" })
        #expect(after.notifications.count == count)
        try await storage.shutdown()
    }

    /// One server's local App Store sells for an app on a database: the lease goes to the first, stays with it while
    /// it beats (carrying a note), passes to another only when the holder gives it up or its beat stood still, and
    /// a holder that lost it learns so from its next beat; its saves write nothing after the take-over.
    @Test(arguments: Backend.allCases) func oneLocalAppStoreHoldsTheLeaseOfAnApp(_ backend: Backend) async throws {
        guard let storage = try await Self.storage(backend) else { return }
        let app = "com.example.one"
        let first = try await storage.takeSimulatorLease(bundleID: app, holder: "a", replacing: nil)
        #expect(first == SimulatorLease(holder: "a", beat: 0))
        #expect(try await storage.takeSimulatorLease(bundleID: app, holder: "b", replacing: nil) == first)
        #expect(
            try await storage.takeSimulatorLease(bundleID: "com.example.two", holder: "b", replacing: nil).holder == "b"
        )
        // a beats while b watches: what b saw is no longer the lease, so b does not take it.
        #expect(try await storage.beatSimulatorLease(bundleID: app, holder: "a", note: "1800000000000 1.0 0"))
        #expect(try await storage.takeSimulatorLease(bundleID: app, holder: "b", replacing: first).holder == "a")
        // a stops beating: b takes over from the lease it saw, and a's next beat says it lost it.
        let still = try await storage.takeSimulatorLease(bundleID: app, holder: "c", replacing: nil)
        #expect(still == SimulatorLease(holder: "a", beat: 1, note: "1800000000000 1.0 0"))
        #expect(try await storage.simulatorLease(bundleID: app) == still)
        let rows = SimulatorStateRows(state: "{}", transactions: [], notifications: [])
        #expect(try await storage.saveSimulatorState(rows, bundleID: app, holder: "a"), "a holds it: a saves")
        #expect(try await storage.takeSimulatorLease(bundleID: app, holder: "b", replacing: still).holder == "b")
        #expect(try await storage.beatSimulatorLease(bundleID: app, holder: "a", note: "") == false)
        // Saves are fenced by the lease: a's next one writes nothing, b's does.
        let late = SimulatorStateRows(state: #"{"by":"a"}"#, transactions: [], notifications: [])
        #expect(try await storage.saveSimulatorState(late, bundleID: app, holder: "a") == false)
        #expect(try await storage.simulatorState(bundleID: app)?.state == "{}")
        #expect(try await storage.saveSimulatorState(late, bundleID: app, holder: "b"))
        // A release by one who no longer holds it leaves the holder's; the holder's frees it for the next at once.
        try await storage.releaseSimulatorLease(bundleID: app, holder: "a")
        #expect(try await storage.takeSimulatorLease(bundleID: app, holder: "c", replacing: nil).holder == "b")
        try await storage.releaseSimulatorLease(bundleID: app, holder: "b")
        #expect(try await storage.takeSimulatorLease(bundleID: app, holder: "c", replacing: nil).holder == "c")
        try await storage.shutdown()
    }

    /// The engine reads the same from a customer's digest as from all of their records.
    static func expectDigestAgrees(
        _ digest: CustomerDigest, _ storage: any ServerStorage, _ customer: CustomerKey,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let engine = EntitlementEngine()
        let moment = Date(timeIntervalSince1970: 1_800_000_000)
        let whole = engine.snapshot(of: try await storage.records(of: customer).history, at: moment)
        #expect(engine.snapshot(of: digest.history, at: moment) == whole, sourceLocation: sourceLocation)
        let read = try await storage.digest(of: customer)
        #expect(engine.snapshot(of: read.history, at: moment) == whole, sourceLocation: sourceLocation)
    }

    /// Posts claimed by the customer, and unclaimed ones naming them by app account token (on PostgreSQL, the write
    /// in one statement).
    @Test(arguments: Backend.allCases, [true, false])
    func aCustomersDigestFollowsEveryKindOfWrite(_ backend: Backend, claimed: Bool) async throws {
        guard let storage = try await Self.storage(backend) else { return }
        let ana = CustomerKey(bundleID: Self.bundle, id: "ana")
        func coins(_ id: String, at seconds: TimeInterval, revoked: Bool = false) -> StoredTransaction {
            var transaction = Self.transaction(
                id, product: "p.coins", signed: seconds, token: claimed ? nil : "ana", revoked: revoked)
            transaction.record.kind = .consumable
            transaction.record.purchaseDate = Date(timeIntervalSince1970: 1_700_000_000 + seconds)
            return transaction
        }
        func post(_ transaction: StoredTransaction) async throws -> CustomerDigest {
            let outcome = try await storage.record(
                PurchaseBatch(claimant: claimed ? "ana" : nil, transactions: [transaction]))
            guard case .recorded(let owners, let digest) = outcome else { throw CancellationError() }
            #expect(owners == ["ana"])
            return digest
        }
        var last: CustomerDigest?
        for index in 0..<80 {  // new purchases, one at a time: a digest once the history is long, then appended
            let digest = try await post(coins("c\(index)", at: Double(index) * 10))
            // Versions count once a digest is kept (every backend keeps one for a long history).
            if let last, index >= 70 { #expect(digest.version > last.version) }
            last = digest
        }
        try await Self.expectDigestAgrees(try #require(last), storage, ana)
        // An older version of a stored purchase changes nothing; a refund of one (a new version) does.
        try await Self.expectDigestAgrees(try await post(coins("c3", at: 30)), storage, ana)
        try await Self.expectDigestAgrees(try await post(coins("c3", at: 400, revoked: true)), storage, ana)
        try await Self.expectDigestAgrees(try await post(coins("c5", at: 20)), storage, ana)
        try await Self.expectDigestAgrees(try await storage.digest(of: ana), storage, ana)
        _ = try await storage.record(
            consumption: ConsumptionRecord(
                productID: "p.coins", quantity: 4, date: Date(timeIntervalSince1970: 1_700_000_500), id: "use-1"),
            for: ana)
        try await Self.expectDigestAgrees(try await storage.digest(of: ana), storage, ana)
        var renewed = coins("c99", at: 600)
        renewed.appAccountToken = "ana"
        _ = try await storage.record(
            notification: Self.notification("n-digest"), applying: PurchaseBatch(claimant: nil, transactions: [renewed])
        )
        try await Self.expectDigestAgrees(try await storage.digest(of: ana), storage, ana)
        // A folded digest replaces the stored one only if nothing was written since it was read.
        let read = try await storage.digest(of: ana)
        let folded = EntitlementEngine().compacted(
            read.history, at: Date(timeIntervalSince1970: 1_700_001_000), keeping: 2)
        if backend != .memory {
            #expect(try await storage.replaceDigest(folded, of: ana, version: read.version))
            #expect(!(try await storage.replaceDigest(folded, of: ana, version: read.version)), "a stale version")
            #expect(try await storage.digest(of: ana).history.keptCount < read.history.keptCount)
        }
        let after = try await storage.digest(of: ana)
        let moment = Date(timeIntervalSince1970: 1_800_000_000)
        let whole = EntitlementEngine().snapshot(of: try await storage.records(of: ana).history, at: moment)
        let compact = try #require(EntitlementEngine().snapshot(of: after.history, at: moment))
        #expect(compact.balance(of: "p.coins") == whole.balance(of: "p.coins"))
        #expect(compact.consumables.first?.purchased == whole.consumables.first?.purchased)
        try await storage.shutdown()
    }

    @Test(arguments: Backend.allCases) func aCustomersTransactionsComeInPagesInIDOrder(_ backend: Backend) async throws
    {
        guard let storage = try await Self.storage(backend) else { return }
        let ana = CustomerKey(bundleID: Self.bundle, id: "ana")
        let ids = ["9", "10", "11", "100", "2", "abc"]
        for id in ids {
            _ = try await storage.record(
                PurchaseBatch(claimant: "ana", transactions: [Self.transaction(id, signed: 1)]))
        }
        _ = try await storage.record(PurchaseBatch(claimant: "bo", transactions: [Self.transaction("5", signed: 1)]))
        let ordered = ["2", "9", "10", "11", "100", "abc"]
        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try await storage.transactions(of: ana, after: cursor, limit: 4, newestFirst: false)
            seen += page.prefix(2).map(\.transactionID)
            cursor = page.count > 2 ? page[1].transactionID : nil
        } while cursor != nil
        #expect(seen == ordered, "pages of two, in id order (numeric ids by value), another customer's left out")
        let newest = try await storage.transactions(of: ana, after: nil, limit: 3, newestFirst: true)
        #expect(newest.map(\.transactionID) == ["abc", "100", "11"])
        let older = try await storage.transactions(of: ana, after: "11", limit: 10, newestFirst: true)
        #expect(older.map(\.transactionID) == ["10", "9", "2"])
        try await storage.shutdown()
    }

    @Test(arguments: Backend.allCases) func aClaimedPurchaseStaysWithItsOwner(_ backend: Backend) async throws {
        guard let storage = try await Self.storage(backend) else { return }
        let first = Self.transaction("t1", signed: 1)
        let recorded = try await storage.record(PurchaseBatch(claimant: "ana", transactions: [first]))
        // The answer carries what the owner has once the batch is in: what a later read sees.
        guard case .recorded(let owners, let digest) = recorded else {
            Issue.record("not recorded: \(recorded)")
            return
        }
        #expect(owners == ["ana"])
        try await Self.expectDigestAgrees(digest, storage, CustomerKey(bundleID: Self.bundle, id: "ana"))
        #expect(digest.history.history.records.map(\.transactionID) == ["t1"])
        let renewal = Self.transaction("t2", original: "t1", signed: 2)
        #expect(
            try await storage.record(PurchaseBatch(claimant: "eve", transactions: [renewal]))
                == .claimedByAnother(originalTransactionID: "t1", owner: "ana"))
        // Refused means nothing recorded.
        #expect(try await storage.counts().transactions == 1)
        // A notification (no claimant) keeps the owner.
        #expect(
            try await storage.record(
                notification: Self.notification("n1"), applying: PurchaseBatch(claimant: nil, transactions: [renewal])))
        #expect(try await storage.records(of: CustomerKey(bundleID: Self.bundle, id: "ana")).transactions.count == 2)
        try await storage.shutdown()
    }

    @Test(arguments: Backend.allCases) func anOwnerTheServerMadeUpGivesWayToTheFirstClaim(_ backend: Backend)
        async throws
    {
        guard let storage = try await Self.storage(backend) else { return }
        let bought = Self.transaction("t1", signed: 1)
        #expect(
            try await storage.record(
                notification: Self.notification("n1"), applying: PurchaseBatch(claimant: nil, transactions: [bought])))
        #expect(try await storage.customer(matching: "t1", bundleID: Self.bundle)?.id == "t1")
        #expect(try await storage.record(PurchaseBatch(claimant: "ana", transactions: [bought])).owners == ["ana"])
        #expect(try await storage.customer(matching: "t1", bundleID: Self.bundle)?.id == "ana")
        #expect(try await storage.customer(matching: "ana", bundleID: Self.bundle)?.id == "ana")
        #expect(try await storage.customer(matching: "ana", bundleID: "other.app") == nil)
        #expect(
            try await storage.record(PurchaseBatch(claimant: "eve", transactions: [bought]))
                == .claimedByAnother(originalTransactionID: "t1", owner: "ana"))
        try await storage.shutdown()
    }

    /// A claim takes a purchase from the owner the server made up (here an app account token's, from posts nobody
    /// claimed): that owner's answers stop counting it at once, their history long enough to be kept as a digest.
    @Test(arguments: Backend.allCases) func theMadeUpOwnerLosesWhatAClaimTookFromThem(_ backend: Backend)
        async throws
    {
        guard let storage = try await Self.storage(backend) else { return }
        let bought = (0..<70).map { Self.transaction("t\($0)", signed: 1, token: "tok") }
        for transaction in bought {
            _ = try await storage.record(PurchaseBatch(claimant: nil, transactions: [transaction]))
        }
        /// The made-up owner's history, as a post of their last purchase answers it.
        func madeUpOwnersPurchases() async throws -> [String] {
            let answer = try await storage.record(PurchaseBatch(claimant: nil, transactions: [bought[69]]))
            guard case .recorded(let owners, let digest) = answer else {
                Issue.record("the post was refused: \(answer)")
                return []
            }
            #expect(owners == ["tok"])
            return digest.history.history.records.map(\.transactionID)
        }
        #expect(try await madeUpOwnersPurchases().count == 70)
        #expect(try await storage.record(PurchaseBatch(claimant: "ana", transactions: [bought[3]])).owners == ["ana"])
        let left = try await madeUpOwnersPurchases()
        #expect(left.count == 69 && !left.contains("t3"))
        try await storage.shutdown()
    }

    @Test(arguments: Backend.allCases) func aNotificationIsRecordedOnceWithWhatItCarried(_ backend: Backend)
        async throws
    {
        guard let storage = try await Self.storage(backend) else { return }
        let bought = Self.transaction("t1", signed: 1, token: "tok")
        let note = Self.notification("n1")
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    try await storage.record(
                        notification: note, applying: PurchaseBatch(claimant: nil, transactions: [bought]))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.filter { $0 }.count == 1)
        var repeated = note
        repeated.repeats = 4
        #expect(
            try await storage.notification(uuid: "n1", bundleID: Self.bundle) == repeated,
            "the four repeats are counted, not recorded")
        #expect(try await storage.counts() == StorageCounts(transactions: 1, notifications: 1, customers: 1))
        #expect(try await storage.customer(matching: "tok", bundleID: Self.bundle)?.id == "tok")
        try await storage.shutdown()
    }

    @Test(arguments: Backend.allCases) func aConsumptionCountsOncePerKey(_ backend: Backend) async throws {
        guard let storage = try await Self.storage(backend) else { return }
        let customer = CustomerKey(bundleID: Self.bundle, id: "ana")
        let use = ConsumptionRecord(productID: "p.coins", quantity: 2, date: Date(timeIntervalSince1970: 1), id: "k1")
        #expect(try await storage.record(consumption: use, for: customer))
        #expect(!(try await storage.record(consumption: use, for: customer)))
        let other = ConsumptionRecord(productID: "p.coins", quantity: 1, date: Date(timeIntervalSince1970: 2), id: "k2")
        #expect(try await storage.record(consumption: other, for: customer))
        #expect(try await storage.records(of: customer).consumptions == [use, other])
        try await storage.shutdown()
    }

    /// Apps post the same transaction at every launch: a batch that would change nothing is answered as a recording
    /// is (the owner's records), and on SQL backends without a write transaction; anything that changes something
    /// (a newer version, a first claim, a refused claim) still takes the writer's turn, except on PostgreSQL a post
    /// by the customer who holds the claim (one statement, which commits on its own).
    @Test(arguments: [Backend.sqlite, .postgres]) func aPostOfWhatIsStoredIsAnsweredWithoutWriting(_ backend: Backend)
        async throws
    {
        guard let database = try await Self.database(backend) else { return }
        let counting = TransactionCountingDatabase(database)
        let storage = try await SQLStorage(database: counting)
        let ana = CustomerKey(bundleID: Self.bundle, id: "ana")
        /// What recording answered, and how many write transactions it took.
        func record(_ claimant: String?, _ transaction: StoredTransaction, renewals: [StoredRenewal] = [])
            async throws -> (outcome: RecordOutcome, writes: Int)
        {
            let before = counting.transactions.withLock { $0 }
            let outcome = try await storage.record(
                PurchaseBatch(claimant: claimant, transactions: [transaction], renewals: renewals))
            return (outcome, counting.transactions.withLock { $0 } - before)
        }
        let bought = Self.transaction("t1", signed: 1)
        let renewal = StoredRenewal(
            bundleID: Self.bundle, originalTransactionID: "t1", signedDate: Date(timeIntervalSince1970: 1_700_000_001),
            document: "renewal-1",
            record: RenewalRecord(originalTransactionID: "t1", productID: "p.lifetime", source: .signedTransaction))
        #expect(try await record("ana", bought, renewals: [renewal]).writes == 1)
        let stored = RecordOutcome.recorded(owners: ["ana"], digest: try await storage.digest(of: ana))
        let again = try await record("ana", bought, renewals: [renewal])
        #expect(again.outcome == stored && again.writes == 0)
        let unclaimed = try await record(nil, bought)
        #expect(unclaimed.outcome == stored && unclaimed.writes == 0)
        // An older version of what is stored changes nothing either.
        let older = try await record("ana", Self.transaction("t1", signed: 0, document: "older"))
        #expect(older.outcome == stored && older.writes == 0)
        // A newer version is written: by the claim's holder on PostgreSQL in one statement, outside a transaction.
        let newer = Self.transaction("t1", signed: 5, revoked: true)
        #expect(try await record("ana", newer).writes == (backend == .postgres ? 0 : 1))
        #expect(try await storage.records(of: ana).transactions.map(\.document) == [newer.document])
        // So is a new purchase the customer claims (what an app posts with its app account token).
        let second = Self.transaction("t2", original: "t2", signed: 3)
        #expect(try await record("ana", second).writes == (backend == .postgres ? 0 : 1))
        #expect(try await storage.records(of: ana).transactions.map(\.transactionID) == ["t1", "t2"])
        #expect(try await storage.customer(matching: "t2", bundleID: Self.bundle)?.id == "ana")
        // Another customer's claim goes to the writer, which refuses it.
        let refused = try await record("eve", newer)
        #expect(refused.outcome == .claimedByAnother(originalTransactionID: "t1", owner: "ana") && refused.writes == 1)
        // An owner the server made up gives way to the first claim, through the writer.
        let other = Self.transaction("t9", signed: 1)
        _ = try await storage.record(
            notification: Self.notification("n9"), applying: PurchaseBatch(claimant: nil, transactions: [other]))
        #expect(try await record(nil, other).writes == 0)
        #expect(try await record("bo", other).writes == 1)
        #expect(try await storage.customer(matching: "t9", bundleID: Self.bundle)?.id == "bo")
        try await storage.shutdown()
    }

    @Test func anSQLiteFileKeepsWhatWasCommittedAcrossReopening() async throws {
        let path = TestFiles.url("store.sqlite").path
        let first = try await SQLStorage(database: try SQLiteDatabase(path: path))
        _ = try await first.record(PurchaseBatch(claimant: "ana", transactions: [Self.transaction("t1", signed: 1)]))
        try await first.shutdown()
        let second = try await SQLStorage(database: try SQLiteDatabase(path: path))
        #expect(try await second.counts().transactions == 1)
        try await second.shutdown()
    }

    static func notification(_ uuid: String) -> StoredNotification {
        StoredNotification(
            uuid: uuid, bundleID: bundle, type: "ONE_TIME_CHARGE", subtype: nil,
            signedDate: Date(timeIntervalSince1970: 1_700_000_000),
            receivedAt: Date(timeIntervalSince1970: 1_700_000_001),
            body: #"{"signedPayload":"x"}"#)
    }
}

/// A database that counts the write transactions run through it.
final class TransactionCountingDatabase: SQLDatabase {
    let database: any SQLDatabase
    let transactions = Mutex(0)

    init(_ database: any SQLDatabase) { self.database = database }

    var engine: SQLEngine { database.engine }

    func transaction<R: Sendable>(_ body: (any SQLStatementRunner) async throws -> (result: R, commit: Bool))
        async throws -> R
    {
        transactions.withLock { $0 += 1 }
        return try await database.transaction(body)
    }

    func read<R: Sendable>(_ body: (any SQLStatementRunner) async throws -> R) async throws -> R {
        try await database.read(body)
    }

    func close() async throws { try await database.close() }
}
