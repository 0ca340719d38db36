import Foundation
import Hummingbird
import HummingbirdTesting
import IAPEntitlements
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Logging
import Testing

@testable import IAPServer

/// The console's overview counts the same on every storage: purchases, first periods, revenue and refunds by
/// currency, churn, subscriptions and trials active at a moment, paying customers, by product, storefront and day.
@Suite("Console overview")
struct OverviewTests {
    typealias Backend = StorageConformanceTests.Backend
    static let app = "com.example.app"
    /// 2026-11-01T00:00:00Z.
    static let start = Date(timeIntervalSince1970: 1_793_491_200)

    static func day(_ days: Double) -> Date { start.addingTimeInterval(days * 86_400) }

    static func transaction(
        _ id: String, original: String? = nil, product: String, bought: Double, expires: Double? = nil,
        price: Int64, currency: String = "USD", storefront: String = "USA", trial: Bool = false,
        refunded: Double? = nil, app: String = app
    ) -> StoredTransaction {
        let record = PurchaseRecord(
            transactionID: id, originalTransactionID: original ?? id, productID: product, purchaseDate: day(bought),
            expiresDate: expires.map(day), revocation: refunded.map { Revocation(date: day($0), kind: .refund) },
            offer: trial ? OfferUse(kind: .introductory, isFreeTrial: true) : nil, source: .signedTransaction,
            signedDate: day(bought), price: price, currency: currency, storefront: storefront)
        return StoredTransaction(
            transactionID: id, originalTransactionID: original ?? id, bundleID: app, productID: product,
            signedDate: day(bought), document: "doc-\(id)", appAccountToken: nil, record: record)
    }

    /// Three customers of the app over November, and one of another app.
    static func record(into storage: any ServerStorage) async throws {
        let purchases: [(String, StoredTransaction)] = [
            ("c1", transaction("s1", product: "p.monthly", bought: 1, expires: 31, price: 9_990)),
            ("c2", transaction("s2", product: "p.monthly", bought: 2, expires: 9, price: 0, trial: true)),
            (
                "c3",
                transaction(
                    "s3", product: "p.yearly", bought: -20, expires: 10, price: 4_990, currency: "EUR",
                    storefront: "DEU")
            ),
            (
                "c3",
                transaction(
                    "s3b", original: "s3", product: "p.yearly", bought: 10, expires: 40, price: 4_990,
                    currency: "EUR", storefront: "DEU")
            ),
            ("c1", transaction("k1", product: "p.coins", bought: 3, price: 1_990, refunded: 5)),
            (
                "x1",
                transaction("o1", product: "p.monthly", bought: 4, expires: 34, price: 9_990, app: "com.example.other")
            ),
        ]
        for (customer, transaction) in purchases {
            _ = try await storage.record(PurchaseBatch(claimant: customer, transactions: [transaction]))
        }
    }

    static let twoWeeks = OverviewQuery(bundleID: app, from: start, to: day(14), now: day(14))

    static func checkTwoWeeks(_ overview: Overview) {
        let totals = overview.totals
        #expect(totals.purchases == 4, "s1, s2, k1 and the renewal s3b; s3 was bought before")
        #expect(totals.newSubscriptions == 2)
        #expect(totals.revenue == ["USD": 9_990 + 1_990, "EUR": 4_990])
        #expect(totals.refunds == 1 && totals.refunded == ["USD": 1_990])
        #expect(totals.churned == 1, "the trial ended on day 9; s3's period ended on day 10 but it renewed")
        #expect(totals.activeSubscriptions == 2 && totals.activeTrials == 0)
        #expect(overview.payingCustomers == 2, "c1 and c3: the trial paid nothing, the coins were refunded")
        #expect(overview.products["p.monthly"]?.purchases == 2)
        #expect(overview.products["p.monthly"]?.churned == 1)
        #expect(overview.products["p.monthly"]?.activeSubscriptions == 1)
        #expect(overview.products["p.yearly"]?.revenue == ["EUR": 4_990])
        #expect(overview.storefronts["USA"]?.purchases == 3 && overview.storefronts["DEU"]?.purchases == 1)
        #expect(overview.days.count == 14)
        #expect(overview.days.first?.day == Self.start)
        #expect(overview.days[5].figures.refunds == 1)
        #expect(overview.days[9].figures.churned == 1)
        #expect(overview.days[10].figures.revenue == ["EUR": 4_990])
        #expect(overview.days.map(\.figures.purchases).reduce(0, +) == 4)
    }

    @Test(arguments: Backend.allCases) func anAppsFiguresOverASpan(_ backend: Backend) async throws {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        try await Self.record(into: storage)
        Self.checkTwoWeeks(try await storage.overview(Self.twoWeeks))

        // Counted active on day 5: s1, the trial s2 and s3's first period.
        let early = try await storage.overview(
            OverviewQuery(bundleID: Self.app, from: Self.start, to: Self.day(5), now: Self.day(14)))
        #expect(early.totals.activeSubscriptions == 3 && early.totals.activeTrials == 1)
        #expect(early.totals.churned == 0 && early.totals.refunds == 0)
        // A span running past now counts active at now, and churn until now only.
        let ahead = try await storage.overview(
            OverviewQuery(bundleID: Self.app, from: Self.start, to: Self.day(60), now: Self.day(8)))
        #expect(ahead.at == Self.day(8))
        #expect(ahead.totals.churned == 0)
        #expect(ahead.totals.activeSubscriptions == 3)
        try await storage.shutdown()
    }

    /// Prices are what a signed document claims, and a store that signs anything (the local App Store in development)
    /// lets a client claim 2^63 - 1: each counts for at most a billion of its currency, and no sum overflows (an
    /// attacker's trial made the console answer 503 for good with two such purchases).
    @Test(arguments: Backend.allCases) func claimedPricesCannotOverflowTheSums(_ backend: Backend) async throws {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        for (id, price) in [("h1", Int64.max), ("h2", Int64.max), ("h3", 1), ("h4", -5)] {
            _ = try await storage.record(
                PurchaseBatch(
                    claimant: "rich", transactions: [Self.transaction(id, product: "p.coins", bought: 1, price: price)])
            )
        }
        _ = try await storage.record(
            PurchaseBatch(
                claimant: "rich", transactions: [Self.transaction("h5", product: "p.coins", bought: 2, price: .max)]))
        let overview = try await storage.overview(Self.twoWeeks)
        let most = OverviewLine.largestSummedPrice
        #expect(overview.totals.purchases == 5)
        #expect(overview.totals.revenue == ["USD": 3 * most + 1])
        let spent = try await storage.customers(bundleID: Self.app, after: nil, only: nil, limit: 10)
        #expect(spent.map(\.spent) == [["USD": 3 * most + 1]])
        try await storage.shutdown()
    }

    /// Rows stored before the overview's columns get them from their records when the database is migrated.
    @Test(arguments: [Backend.sqlite, .postgres]) func theMigrationFillsTheColumnsOfStoredRows(_ backend: Backend)
        async throws
    {
        guard let database = try await StorageConformanceTests.database(backend) else { return }
        let storage = try await SQLStorage(database: database)
        try await Self.record(into: storage)
        let backfills = try ["2026-11-27-overview", "2026-11-27-console-speed"].map { name in
            let migration = try #require(Migrations.all.first { $0.name == name })
            return migration.statements(database.engine).filter { $0.hasPrefix("UPDATE") }
        }.joined()
        func run(_ statement: String) async throws {
            try await database.transaction { db in
                try await db.run(SQLStatement(statement))
                return ((), true)
            }
        }
        try await run(
            """
            UPDATE iap_transactions SET purchase_ms = NULL, expires_ms = NULL, revoked_ms = NULL, price = NULL,
                currency = NULL, storefront = NULL, trial = 0, purchase_day = NULL, first_period = 0, customer_id = NULL,
                superseded = 0
            """)
        #expect(try await storage.overview(Self.twoWeeks).totals.purchases == 0)
        for backfill in backfills { try await run(backfill) }
        Self.checkTwoWeeks(try await storage.overview(Self.twoWeeks))
        try await storage.shutdown()
    }

    /// `GET /console/overview`: the span by name and end, JSON and CSV, and what it refuses.
    @Test func theConsoleAnswersTheOverviewAsJSONAndCSV() async throws {
        let storage = MemoryStorage()
        try await Self.record(into: storage)
        let service = try ValidationService(
            apps: [
                AppConfiguration(
                    bundleID: Self.app, environments: [.sandbox], trustStore: SimulatorTestKeys.pki.trustStore)
            ],
            storage: storage, clock: { Self.day(14) })
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let application = buildApplication(
            service: service, configuration: ServerConfiguration(port: 0), operatorAccess: .open, logger: logger)
        try await application.test(.router) { client in
            // A week ending with day 13 (the day of the end given): days 7 to 13.
            try await client.execute(uri: "/console/overview?range=week&end=2026-11-14T09:00:00Z", method: .get) {
                response in
                #expect(response.status == .ok)
                let overview = try object(response)
                #expect(overview["from"] as? String == "2026-11-08T00:00:00.000Z")
                #expect(overview["to"] as? String == "2026-11-15T00:00:00.000Z")
                #expect((overview["days"] as? [Any])?.count == 7)
                let totals = try #require(overview["totals"] as? [String: Any])
                #expect(totals["churned"] as? Int == 1)
                #expect((totals["revenue"] as? [String: Int]) == ["EUR": 4_990])
            }
            try await client.execute(uri: "/console/overview?range=month&format=csv", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/csv; charset=utf-8")
                let lines = String(buffer: response.body).split(separator: "\r\n")
                #expect(
                    lines.first
                        == "day,purchases,newSubscriptions,churned,refunds,revenue EUR,revenue USD,refunded EUR,refunded USD"
                )
                #expect(lines.count == 31)
                #expect(lines.contains("2026-11-02,1,1,0,0,0,9990,0,0"))
            }
            // The customers, a page at a time, and found by any of their ids.
            try await client.execute(uri: "/console/customers?limit=2", method: .get) { response in
                let page = try object(response)
                let customers = try #require(page["customers"] as? [[String: Any]])
                #expect(customers.map { $0["customerId"] as? String } == ["c1", "c2"])
                #expect(customers.first?["purchases"] as? Int == 2)
                #expect(customers.first?["spent"] as? [String: Int] == ["USD": 9_990], "the refunded coins left out")
                #expect(page["next"] as? String == "c2")
            }
            try await client.execute(uri: "/console/customers?after=c2", method: .get) { response in
                let customers = try #require(try object(response)["customers"] as? [[String: Any]])
                #expect(customers.map { $0["customerId"] as? String } == ["c3"])
                #expect(customers.first?["storefront"] as? String == "DEU")
            }
            for (search, found) in [("s3b", ["c3"]), ("s3", ["c3"]), ("c2", ["c2"]), ("nobody", [])] {
                try await client.execute(uri: "/console/customers?search=\(search)", method: .get) { response in
                    let customers = try #require(try object(response)["customers"] as? [[String: Any]])
                    #expect(customers.map { $0["customerId"] as? String } == found, "\(search)")
                }
            }
            for (query, code) in [
                ("range=year", "invalidQuery"), ("end=yesterday", "invalidQuery"), ("format=xml", "invalidQuery"),
                ("bundleId=com.example.other", "unknownApp"),
            ] {
                try await client.execute(uri: "/console/overview?\(query)", method: .get) { response in
                    #expect(response.status == (code == "unknownApp" ? .notFound : .badRequest), "\(query)")
                    let answer = try object(response)
                    #expect(answer["code"] as? String == code)
                }
            }
        }
    }
}

extension OverviewTests {
    /// A period counts as churned only when no later period of its subscription is stored, whatever order they
    /// arrive in.
    @Test(arguments: Backend.allCases) func churnIsTheLastPeriodWhateverTheOrderWritten(_ backend: Backend)
        async throws
    {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        let second = Self.transaction("r2", original: "r1", product: "p.monthly", bought: 5, expires: 10, price: 990)
        let first = Self.transaction("r1", product: "p.monthly", bought: 0, expires: 5, price: 990)
        let third = Self.transaction("r3", original: "r1", product: "p.monthly", bought: 10, expires: 15, price: 990)
        let query = OverviewQuery(bundleID: Self.app, from: Self.start, to: Self.day(20), now: Self.day(20))
        _ = try await storage.record(PurchaseBatch(claimant: "c", transactions: [second]))
        _ = try await storage.record(PurchaseBatch(claimant: "c", transactions: [first]))
        var overview = try await storage.overview(query)
        #expect(overview.totals.churned == 1, "the second period ended, the first was followed")
        #expect(overview.days[10].figures.churned == 1)
        _ = try await storage.record(PurchaseBatch(claimant: "c", transactions: [third]))
        overview = try await storage.overview(query)
        #expect(overview.totals.churned == 1 && overview.days[15].figures.churned == 1, "now the third ended")
        #expect(overview.totals.newSubscriptions == 1 && overview.totals.purchases == 3)
        try await storage.shutdown()
    }
}

extension OverviewTests {
    /// A subscription is counted active once at a moment, whichever of its periods holds it: a renewal charged before
    /// the period ended overlaps it, and a refunded last period leaves the one before it.
    @Test(arguments: Backend.allCases) func anActiveSubscriptionCountsOnce(_ backend: Backend) async throws {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        let early = [
            Self.transaction("e1", product: "p.monthly", bought: 0, expires: 10, price: 990),
            Self.transaction("e2", original: "e1", product: "p.monthly", bought: 9, expires: 40, price: 990),
        ]
        let refunded = [
            Self.transaction("q1", product: "p.yearly", bought: 0, expires: 12, price: 990, trial: true),
            Self.transaction(
                "q2", original: "q1", product: "p.yearly", bought: 11, expires: 50, price: 990, refunded: 11.5),
        ]
        for transaction in early + refunded {
            _ = try await storage.record(PurchaseBatch(claimant: "c", transactions: [transaction]))
        }
        func active(at day: Double) async throws -> (Int, Int) {
            let overview = try await storage.overview(
                OverviewQuery(bundleID: Self.app, from: Self.start, to: Self.day(60), now: Self.day(day)))
            return (overview.totals.activeSubscriptions ?? 0, overview.totals.activeTrials ?? 0)
        }
        #expect(try await active(at: 9.5) == (2, 1), "e1 and e2 overlap: once; q1's trial")
        #expect(try await active(at: 11.8) == (2, 1), "q2 refunded: q1 still holds the moment")
        #expect(try await active(at: 20) == (1, 0), "e2 only")
        try await storage.shutdown()
    }
}

/// Each transaction row carries the customer who owns its purchase (paying customers are counted by it): it follows
/// the owner table through a claim of a purchase the server had given a made-up owner, a transfer and a login.
@Suite("Console overview: owners on rows")
struct OverviewOwnerTests {
    typealias Backend = StorageConformanceTests.Backend

    @Test(arguments: [Backend.sqlite, .postgres]) func everyRowCarriesItsPurchasesOwner(_ backend: Backend)
        async throws
    {
        guard let database = try await StorageConformanceTests.database(backend) else { return }
        let storage = try await SQLStorage(database: database)
        let app = OverviewTests.app
        func mismatches() async throws -> Int64 {
            let statement = SQLStatement(
                """
                SELECT COUNT(*) AS n FROM iap_transactions t
                LEFT JOIN iap_owners o ON o.bundle_id = t.bundle_id
                    AND o.original_transaction_id = t.original_transaction_id
                WHERE o.customer_id IS NULL OR t.customer_id IS NULL OR t.customer_id <> o.customer_id
                """)
            let rows: [SQLRow] = try await database.read { db in try await db.rows(statement) }
            return try rows.first?.integer("n") ?? -1
        }
        func paying() async throws -> Int { try await storage.overview(OverviewTests.twoWeeks).payingCustomers }
        // A notification first: the server makes the owner up (the original transaction id).
        let first = OverviewTests.transaction("m1", product: "p.monthly", bought: 1, expires: 31, price: 9_990)
        _ = try await storage.record(PurchaseBatch(claimant: nil, transactions: [first]))
        let renewal = OverviewTests.transaction(
            "m2", original: "m1", product: "p.monthly", bought: 2, expires: 32, price: 9_990)
        _ = try await storage.record(PurchaseBatch(claimant: nil, transactions: [renewal]))
        #expect(try await mismatches() == 0)
        // The app posts it for its user: the made-up owner gives way, and both rows follow.
        _ = try await storage.record(PurchaseBatch(claimant: "user-a", transactions: [renewal]))
        #expect(try await mismatches() == 0)
        #expect(
            try await storage.customers(bundleID: app, after: nil, only: nil, limit: 10).map(\.customerId) == ["user-a"]
        )
        // Another user restores it under the transfer policy.
        _ = try await storage.record(PurchaseBatch(claimant: "user-b", transactions: [renewal], policy: .transfer))
        #expect(try await mismatches() == 0)
        // A purchase without a token notified first (owner made up), then a later period posted with the app's token
        // as the claimant: the earlier row follows too, though the token is the posted transaction's own owner.
        let plain = OverviewTests.transaction("t1", product: "p.monthly", bought: 4, expires: 34, price: 990)
        _ = try await storage.record(PurchaseBatch(claimant: nil, transactions: [plain]))
        var tokened = OverviewTests.transaction(
            "t2", original: "t1", product: "p.monthly", bought: 5, expires: 35, price: 990)
        tokened.appAccountToken = "00000000-0000-4000-8000-0000000000c1"
        _ = try await storage.record(PurchaseBatch(claimant: tokened.appAccountToken, transactions: [tokened]))
        #expect(try await mismatches() == 0)
        // A second purchase by an anonymous customer, who then logs in as user-b: merged.
        let coins = OverviewTests.transaction("k9", product: "p.coins", bought: 3, price: 1_990)
        _ = try await storage.record(PurchaseBatch(claimant: "anon-1", transactions: [coins]))
        #expect(try await paying() == 3, "user-b, the token's customer and anon-1")
        _ = try await storage.logIn(CustomerKey(bundleID: app, id: "anon-1"), as: "user-b", announcing: nil)
        #expect(try await mismatches() == 0)
        #expect(try await paying() == 2, "user-b paid for both, and the token's customer")
        try await storage.shutdown()
    }
}
