import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPCatalog
import IAPCore
import IAPEntitlements
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Logging
import Synchronization
import Testing

/// Outbound events: derived from what the local App Store's notifications and the app's posts change, stored with
/// the change, sent to a real webhook receiver on loopback, in order per customer, once each.
@Suite("Outbound events", .serialized)
struct OutboundEventTests {
    typealias Backend = StorageConformanceTests.Backend
    static let secret = "webhook-secret-0123456789"

    /// A wall clock the test moves.
    final class WallClock: Sendable {
        private let moment = Mutex(Date())
        var now: Date { moment.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { moment.withLock { $0 += seconds } }
    }

    /// The florist on the local App Store, a server for it with one webhook, and its sender.
    struct Rig {
        let store: AppStoreSimulator
        let inbox: SimulatorInbox
        let service: ValidationService
        let sender: WebhookSender
        let storage: any ServerStorage
        let wall: WallClock

        init(storage: any ServerStorage, endpoint: URL, settings: DeliverySettings = DeliverySettings()) throws {
            store = try AppStoreSimulator(
                catalog: FloristCatalog.catalog,
                configuration: SimulatorConfiguration(
                    bundleID: "com.example.florist", start: Date(timeIntervalSince1970: 1_790_000_000),
                    billingGracePeriodEnabled: true),
                pki: SimulatorTestKeys.pki)
            inbox = SimulatorInbox(store)
            var app = AppConfiguration(
                bundleID: "com.example.florist", appAppleID: store.configuration.appAppleID, environments: [.sandbox],
                trustStore: SimulatorTestKeys.pki.trustStore, catalog: FloristCatalog.catalog,
                maximumNotificationAge: 400 * 86_400)
            app.webhooks = Webhooks(endpoints: [endpoint.absoluteString], secret: OutboundEventTests.secret)
            let store = self.store
            let wall = WallClock()
            self.wall = wall
            self.storage = storage
            service = try ValidationService(
                apps: [app], storage: storage, clock: { (try? store.now) ?? Date.distantPast },
                wallClock: { wall.now })
            sender = WebhookSender(
                service: service, settings: settings, clock: { wall.now }, logger: Logger(label: "test"),
                instance: "test-sender")
        }

        /// Applies what the local App Store sent since the last call, as Apple's notifications.
        func sync() async throws {
            for notification in inbox.take() {
                _ = try await service.receiveNotification(
                    signedPayload: notification.signedPayload,
                    body: String(decoding: notification.requestBody, as: UTF8.self))
            }
        }

        /// Sends rounds until nothing is due now.
        func drain() async {
            while await sender.sendDue() > 0 {}
        }
    }

    static func token(_ index: Int) -> UUID { UUID(uuidString: "00000000-0000-4000-8000-00000000020\(index)")! }

    @Test(
        "every kind of change on the local App Store reaches the webhook once, in order per customer",
        arguments: Backend.allCases)
    func everyEventTypeArrivesOnceInOrder(_ backend: Backend) async throws {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        try await WebhookReceiver.run(secret: Self.secret) { receiver in
            let rig = try Rig(storage: storage, endpoint: receiver.url)
            let store = rig.store
            for (index, name) in ["ana", "ben", "cy", "dee"].enumerated() {
                try store.createAccount(name, appAccountToken: Self.token(index))
            }
            // The first two deliveries fail: they are tried again, and the customer's later events wait for them.
            receiver.answerNext([500, 503])

            _ = try store.purchase(FloristCatalog.gold, account: "ana")
            _ = try store.purchase(FloristCatalog.bronze, account: "ben")
            try rig.store.advance(by: 3_600)
            _ = try store.purchase(FloristCatalog.silver, account: "ben")
            _ = try store.purchase(FloristCatalog.installation, account: "cy")
            let chocolates = try store.purchase(FloristCatalog.chocolates, account: "cy")
            _ = try store.purchase(FloristCatalog.monthPass, account: "cy")
            try await rig.sync()
            await rig.drain()
            rig.wall.advance(11)
            await rig.drain()
            rig.wall.advance(21)
            await rig.drain()

            guard case .purchased(let bought) = chocolates else {
                Issue.record("chocolates were not bought")
                return
            }
            try store.refund(bought.transactionID)
            try await rig.sync()
            try store.advance(by: 60)
            try store.reverseRefund(bought.transactionID)
            try await rig.sync()

            try store.joinFamily("house", account: "ana")
            try store.joinFamily("house", account: "dee")
            _ = try store.purchase(FloristCatalog.flowers, account: "ana")
            try await rig.sync()
            try store.leaveFamily(account: "dee")
            try await rig.sync()

            try store.setAutoRenew(account: "ana", group: FloristCatalog.vipGroup, enabled: false)
            try await rig.sync()
            try store.setAutoRenew(account: "ana", group: FloristCatalog.vipGroup, enabled: true)
            try await rig.sync()
            let anasGold = try #require(
                try store.transactions(account: "ana").first { $0.payload.productID == FloristCatalog.gold })
            _ = try store.extendRenewalDate(
                originalTransactionID: anasGold.payload.originalTransactionID ?? "",
                .init(extendByDays: 3, extendReasonCode: 1, requestIdentifier: "extend-1"))
            try await rig.sync()

            try store.setBillingIssue(account: "ben", failing: true)
            for _ in 0..<80 {
                try store.advance(by: 86_400)
                try await rig.sync()
            }
            await rig.drain()

            // An anonymous install that bought, then logged in as ana: its purchase moves to her (a transfer).
            try store.createAccount("eve")
            let pass = try #require(try store.purchase(FloristCatalog.chocolates, account: "eve").transaction)
            let anonymous = UUID().uuidString.lowercased()
            _ = try await rig.service.recordTransaction(
                signedTransaction: pass.jws, signedRenewalInfo: nil, appAccountToken: anonymous, caller: nil)
            let login = try await rig.service.logIn(
                anonymous, as: Self.token(0).uuidString, bundleID: nil,
                caller: Caller(keyID: "backend", scope: .secret, bundleID: nil))
            #expect(login.merged && login.moved == [pass.payload.originalTransactionID ?? ""])
            await rig.drain()

            // Posting what is stored again (an app re-posting at launch) announces nothing new.
            let before = try await storage.deliveries(DeliveryQuery(limit: 1_000)).count
            let ana = try await rig.service.customer(Self.token(0).uuidString, bundleID: nil)
            for stored in try await rig.service.records(of: ana).transactions {
                _ = try await rig.service.recordTransaction(
                    signedTransaction: stored.document, signedRenewalInfo: nil,
                    appAccountToken: Self.token(0).uuidString, caller: nil)
            }
            await rig.drain()
            #expect(try await storage.deliveries(DeliveryQuery(limit: 1_000)).count == before)

            let accepted = receiver.accepted
            let expected = Set(OutboundEventType.allCases.map(\.rawValue))
            #expect(
                Set(accepted.map(\.type)).isSuperset(of: expected),
                "missing: \(expected.subtracting(accepted.map(\.type)))")
            #expect(receiver.deliveries.allSatisfy { $0.signatureValid })
            #expect(Set(accepted.map(\.eventID)).count == accepted.count, "an event was delivered twice")
            #expect(receiver.deliveries.count == accepted.count + 2, "the two refused deliveries were tried again")

            // Per customer, the order the server stored them in.
            let stored = try await storage.deliveries(DeliveryQuery(limit: 1_000))
            #expect(stored.allSatisfy { $0.state == .delivered })
            #expect(stored.count == accepted.count)
            for customer in Set(stored.map(\.event.customerID)) {
                let order = stored.filter { $0.event.customerID == customer }.reversed().map(\.event.id)
                let arrived = accepted.filter { $0.customerID == customer }.map(\.eventID)
                #expect(arrived == Array(order), "customer \(customer)")
            }

            // What a renewal says.
            let renewal = try #require(accepted.first { $0.type == "renewal" }?.json)
            #expect(renewal["productId"] as? String == FloristCatalog.gold)
            #expect(renewal["customerId"] as? String == Self.token(0).uuidString.lowercased())
            #expect(renewal["currency"] as? String == "USD")
            #expect((renewal["price"] as? Int ?? 0) > 0)
            #expect((renewal["period"] as? [String: Any])?["end"] != nil)
            #expect((renewal["entitledProductIds"] as? [String])?.contains(FloristCatalog.gold) == true)
            let change = try #require(accepted.first { $0.type == "productChange" }?.json)
            #expect(change["productId"] as? String == FloristCatalog.silver)
            let transfer = try #require(accepted.first { $0.type == "transfer" }?.json)
            #expect(transfer["fromCustomerId"] as? String == anonymous)
            #expect(transfer["reason"] as? String == "login")
            #expect(transfer["productId"] as? String == FloristCatalog.chocolates)
            let revoked = try #require(accepted.first { $0.type == "familyRevocation" }?.json)
            #expect(revoked["customerId"] as? String == Self.token(3).uuidString.lowercased())
        }
        try await storage.shutdown()
    }

    @Test("an event is given up after the retry window, and the console's retry sends it again")
    func aDeliveryIsGivenUpAndRetried() async throws {
        guard let storage = try await StorageConformanceTests.storage(.sqlite) else { return }
        try await WebhookReceiver.run(secret: Self.secret) { receiver in
            var settings = DeliverySettings()
            settings.firstRetry = .seconds(60)
            settings.retryFor = .seconds(600)
            let rig = try Rig(storage: storage, endpoint: receiver.url, settings: settings)
            try rig.store.createAccount("ana", appAccountToken: Self.token(0))
            receiver.answerNext(Array(repeating: 500, count: 4))
            _ = try rig.store.purchase(FloristCatalog.flowers, account: "ana")
            _ = try rig.store.purchase(FloristCatalog.chocolates, account: "ana")
            try await rig.sync()
            // 60, 120, 240 s later; the next (480 s after that) is past the window: given up after the fourth.
            for wait in [0.0, 60, 120, 240] {
                rig.wall.advance(wait)
                await rig.drain()
            }
            var records = try await storage.deliveries(DeliveryQuery())
            let first = try #require(records.last)
            #expect(first.state == .failed)
            #expect(first.attempts.map(\.status) == [500, 500, 500, 500])
            #expect(first.attempts.map(\.number) == [1, 2, 3, 4])
            // The customer's next event was held until the first one was settled, then goes.
            await rig.drain()
            #expect(receiver.accepted.map(\.type) == ["nonConsumablePurchase"])

            #expect(try await rig.service.retryDelivery(eventID: first.event.id, endpoint: nil) == 1)
            await rig.drain()
            records = try await storage.deliveries(DeliveryQuery())
            #expect(records.allSatisfy { $0.state == .delivered })
            #expect(receiver.accepted.count == 2)
            await #expect(throws: ServiceError.self) {
                try await rig.service.retryDelivery(eventID: "evt_unknown", endpoint: nil)
            }
        }
        try await storage.shutdown()
    }
}

extension OutboundEventTests {
    @Test("the console lists deliveries with their attempts, on the customer's page too, and retries one")
    func theConsoleListsAndRetriesDeliveries() async throws {
        guard let storage = try await StorageConformanceTests.storage(.sqlite) else { return }
        try await WebhookReceiver.run(secret: Self.secret) { receiver in
            let rig = try Rig(storage: storage, endpoint: receiver.url)
            try rig.store.createAccount("ana", appAccountToken: Self.token(0))
            receiver.answerNext([500])
            _ = try rig.store.purchase(FloristCatalog.flowers, account: "ana")
            try await rig.sync()
            await rig.drain()
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let app = buildApplication(
                service: rig.service, configuration: ServerConfiguration(port: 0), operatorAccess: .open,
                logger: logger)
            try await app.test(.live) { client in
                let (status, list) = try await client.get("/console/deliveries?state=pending")
                #expect(status == .ok)
                let items = try #require(list["deliveries"] as? [[String: Any]])
                #expect(items.count == 1)
                let first = try #require(items.first)
                #expect(first["type"] as? String == "nonConsumablePurchase")
                #expect((first["attempts"] as? [[String: Any]])?.first?["status"] as? Int == 500)
                #expect(first["nextAttemptAt"] != nil)
                let (badStatus, bad) = try await client.get("/console/deliveries?state=lost")
                #expect(badStatus == .badRequest && bad["code"] as? String == "invalidQuery")

                let (_, customer) = try await client.get("/console/customers/\(Self.token(0).uuidString)")
                #expect((customer["deliveries"] as? [[String: Any]])?.count == 1)

                let event = try #require(first["eventId"] as? String)
                let (retried, answer) = try await client.post("/console/deliveries/\(event)/retry", [:])
                #expect(retried == .ok && answer["retried"] as? Int == 1)
                await rig.drain()
                #expect(receiver.accepted.map(\.eventID) == [event])
                let (missing, _) = try await client.post("/console/deliveries/evt_nothing/retry", [:])
                #expect(missing == .notFound)
            }
        }
        try await storage.shutdown()
    }
}

/// The outbox's rules, on every backend.
@Suite("Outbox conformance", .serialized)
struct OutboxConformanceTests {
    typealias Backend = StorageConformanceTests.Backend

    /// One event per stored version of a transaction.
    static let announcer = EventAnnouncer(
        endpoints: { _ in ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"] },
        events: { change in
            change.transactions.map { replacement in
                OutboxEvent(
                    id: "e-\(replacement.after.transactionID)-\(replacement.after.document)",
                    bundleID: change.customer.bundleID, customerID: change.customer.id, type: "test",
                    createdAt: Date(timeIntervalSince1970: 1_000), body: "{}")
            }
        })

    static func record(_ storage: any ServerStorage, _ customer: String, _ id: String, signed: TimeInterval = 1)
        async throws
    {
        _ = try await storage.record(
            PurchaseBatch(
                claimant: customer,
                transactions: [StorageConformanceTests.transaction(id, signed: signed)]),
            announcing: announcer)
    }

    @Test(arguments: Backend.allCases) func leasesKeepEachCustomersOrderAndExpire(_ backend: Backend) async throws {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        let t0 = Date(timeIntervalSince1970: 2_000)
        try await Self.record(storage, "c1", "t1")
        try await Self.record(storage, "c1", "t2")
        try await Self.record(storage, "c2", "t3")
        try await Self.record(storage, "c1", "t1")  // the same version again: no event
        try await Self.record(storage, "c1", "t1", signed: 0)  // an older version: no event

        var leased = try await storage.leaseDeliveries(
            now: t0, leaseUntil: t0 + 60, instance: "one", limit: 10)
        #expect(
            Set(leased.map { "\($0.event.id)|\($0.endpoint.suffix(1))" })
                == ["e-t1-doc-t1-1.0|a", "e-t1-doc-t1-1.0|b", "e-t3-doc-t3-1.0|a", "e-t3-doc-t3-1.0|b"])
        // Leased: nobody else gets them; c1's second event waits for its first.
        #expect(
            try await storage.leaseDeliveries(now: t0 + 1, leaseUntil: t0 + 61, instance: "two", limit: 10)
                .isEmpty)
        // The lease of a dead instance runs out: another picks the work up.
        let taken = try await storage.leaseDeliveries(
            now: t0 + 61, leaseUntil: t0 + 121, instance: "two", limit: 10)
        #expect(Set(taken.map(\.event.id)) == Set(leased.map(\.event.id)))

        leased = taken
        func report(_ delivery: LeasedDelivery, _ state: DeliveryState, next: Date? = nil) -> DeliveryReport {
            DeliveryReport(
                delivery: delivery,
                attempt: DeliveryAttempt(
                    number: delivery.attempts + 1, startedAt: t0 + 62, status: state == .delivered ? 200 : 500,
                    error: state == .delivered ? nil : "500", milliseconds: 3, instance: "two"),
                state: state, nextAttempt: next)
        }
        try await storage.finishDeliveries(
            leased.map { $0.event.id.hasPrefix("e-t1") ? report($0, .delivered) : report($0, .pending, next: t0 + 200) }
        )
        let next = try await storage.leaseDeliveries(now: t0 + 63, leaseUntil: t0 + 123, instance: "two", limit: 10)
        #expect(Set(next.map(\.event.id)) == ["e-t2-doc-t2-1.0"])
        #expect(next.count == 2)
        try await storage.finishDeliveries(next.map { report($0, .delivered) })
        let again = try await storage.leaseDeliveries(now: t0 + 200, leaseUntil: t0 + 260, instance: "two", limit: 10)
        #expect(Set(again.map(\.event.id)) == ["e-t3-doc-t3-1.0"])
        #expect(again.allSatisfy { $0.attempts == 1 })

        let listed = try await storage.deliveries(DeliveryQuery(customerID: "c2"))
        #expect(listed.count == 2)
        #expect(listed.allSatisfy { $0.attempts.map(\.status) == [500] && $0.attempts.first?.instance == "two" })
        #expect(try await storage.deliveries(DeliveryQuery(state: .delivered)).count == 4)
        try await storage.shutdown()
    }

    @Test(arguments: [Backend.sqlite, .postgres]) func concurrentLeasesNeverShareADelivery(_ backend: Backend)
        async throws
    {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        for index in 0..<60 { try await Self.record(storage, "c\(index)", "t\(index)") }
        let now = Date(timeIntervalSince1970: 5_000)
        let sets = try await withThrowingTaskGroup(of: [String].self) { group in
            for instance in 0..<4 {
                group.addTask {
                    var mine: [String] = []
                    for _ in 0..<10 {
                        mine += try await storage.leaseDeliveries(
                            now: now, leaseUntil: now + 60, instance: "i\(instance)", limit: 7
                        ).map { "\($0.event.id)|\($0.endpoint)" }
                    }
                    return mine
                }
            }
            return try await group.reduce(into: [[String]]()) { $0.append($1) }
        }
        let all = sets.flatMap { $0 }
        #expect(all.count == 120)
        #expect(Set(all).count == all.count, "a delivery was leased twice")
        try await storage.shutdown()
    }

    /// Like ``announcer`` but leaving writes of new transactions for later, stamped with the write's moments.
    static let deferring = EventAnnouncer(
        endpoints: { _ in ["http://127.0.0.1:9/a"] },
        events: { change in
            change.transactions.map { replacement in
                OutboxEvent(
                    id: "e-\(replacement.after.transactionID)-\(replacement.after.document)",
                    bundleID: change.customer.bundleID, customerID: change.customer.id,
                    type: replacement.before == nil ? "new" : "replaced",
                    createdAt: change.recordedAt ?? Date(timeIntervalSince1970: 9_999),
                    body: #"{"at":\#((change.entitlementsAt ?? .distantPast).timeIntervalSince1970)}"#)
            }
        },
        defers: true,
        moments: { (Date(timeIntervalSince1970: 5_000), Date(timeIntervalSince1970: 6_000)) })

    /// A customer's events, oldest first (the listing is newest first).
    static func events(_ storage: any ServerStorage, of customer: String) async throws -> [OutboxEvent] {
        try await storage.deliveries(DeliveryQuery(customerID: customer, limit: 1_000)).map(\.event).reversed()
    }

    @Test(arguments: Backend.allCases) func writesOfNewTransactionsAreAnnouncedAfterThemInOrder(_ backend: Backend)
        async throws
    {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        func record(_ customer: String, _ transaction: StoredTransaction) async throws {
            _ = try await storage.record(
                PurchaseBatch(claimant: customer, transactions: [transaction]), announcing: Self.deferring)
        }
        let deferred = backend != .memory  // memory storage announces inside every write
        try await record("c1", StorageConformanceTests.transaction("t1", signed: 1))
        try await record("c1", StorageConformanceTests.transaction("t2", signed: 1))
        try await record("c2", StorageConformanceTests.transaction("t3", signed: 1))
        #expect(try await Self.events(storage, of: "c1").count == (deferred ? 0 : 2))

        // A write that changes a waiting transaction announces the customer's waiting writes first, t2 as it was.
        try await record("c1", StorageConformanceTests.transaction("t2", signed: 2, revoked: true))
        #expect(
            try await Self.events(storage, of: "c1").map { "\($0.id) \($0.type)" }
                == ["e-t1-doc-t1-1.0 new", "e-t2-doc-t2-1.0 new", "e-t2-doc-t2-2.0 replaced"])
        #expect(try await Self.events(storage, of: "c2").count == (deferred ? 0 : 1))

        #expect(try await storage.announceDeferred(by: Self.deferring, limit: 10) == (deferred ? 1 : 0))
        #expect(try await storage.announceDeferred(by: Self.deferring, limit: 10) == 0)
        let c2 = try await Self.events(storage, of: "c2")
        #expect(c2.map(\.id) == ["e-t3-doc-t3-1.0"])
        if deferred {
            // Stamped with the moments of the write, not of the announcing.
            #expect(c2.first?.createdAt == Date(timeIntervalSince1970: 5_000))
            #expect(c2.first?.body == #"{"at":6000.0}"#)
        }
        // Posting what is stored again, or an older version, announces nothing.
        try await record("c2", StorageConformanceTests.transaction("t3", signed: 1))
        try await record("c2", StorageConformanceTests.transaction("t3", signed: 0))
        #expect(try await storage.announceDeferred(by: Self.deferring, limit: 10) == 0)
        #expect(try await Self.events(storage, of: "c2").count == 1)
        try await storage.shutdown()
    }

    /// Announcers racing writes (two instances on PostgreSQL, the sender beside the requests on SQLite): every
    /// version announced once, and each customer's in the order written.
    @Test(arguments: [Backend.sqlite, .postgres]) func announcingBesideWritesLosesAndRepeatsNothing(
        _ backend: Backend
    ) async throws {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        let customers = 6
        let perCustomer = 12
        final class Flag: Sendable {
            private let value = Atomic(false)
            var isSet: Bool { value.load(ordering: .acquiring) }
            func set() { value.store(true, ordering: .releasing) }
        }
        let done = Flag()
        let writing = Task {
            defer { done.set() }
            for index in 0..<perCustomer {
                for customer in 0..<customers {
                    let id = "t\(customer)-\(index)"
                    _ = try await storage.record(
                        PurchaseBatch(
                            claimant: "c\(customer)",
                            transactions: [StorageConformanceTests.transaction(id, signed: 1)]),
                        announcing: Self.deferring)
                    if index % 3 == 2 {  // a refund of the one before: announced in the write, after it
                        _ = try await storage.record(
                            PurchaseBatch(
                                claimant: "c\(customer)",
                                transactions: [
                                    StorageConformanceTests.transaction(
                                        "t\(customer)-\(index - 1)", signed: 2, revoked: true)
                                ]),
                            announcing: Self.deferring)
                    }
                }
            }
        }
        let announcers = (0..<2).map { _ in
            Task {
                while !done.isSet {
                    if try await storage.announceDeferred(by: Self.deferring, limit: 5) == 0 {
                        try await Task.sleep(for: .milliseconds(1))
                    }
                }
            }
        }
        try await writing.value
        for announcer in announcers { _ = try await announcer.value }
        while try await storage.announceDeferred(by: Self.deferring, limit: 50) > 0 {}
        for customer in 0..<customers {
            let ids = try await Self.events(storage, of: "c\(customer)").map(\.id)
            #expect(Set(ids).count == ids.count, "an event was stored twice")
            #expect(ids.count == perCustomer + perCustomer / 3)
            for index in stride(from: 1, to: perCustomer, by: 3) {
                let first = ids.firstIndex(of: "e-t\(customer)-\(index)-doc-t\(customer)-\(index)-1.0")
                let refund = ids.firstIndex(of: "e-t\(customer)-\(index)-doc-t\(customer)-\(index)-2.0")
                #expect(first != nil && refund != nil && first! < refund!, "c\(customer) t\(index): \(ids)")
            }
        }
        try await storage.shutdown()
    }
}
