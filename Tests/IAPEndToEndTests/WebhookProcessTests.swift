import Foundation
import IAPCatalog
import IAPServer
import IAPSimulator
import IAPTestSupport
import Testing

/// Outbound events from real `iapkit serve` processes to a real webhook receiver on loopback: across a kill -9, and
/// from two instances sharing one PostgreSQL database.
@Suite(
    "Webhooks from iapkit serve processes", .serialized,
    .enabled(if: ServerProcess.executable != nil, "\(ServerProcess.skipMessage)"))
struct WebhookProcessTests {
    static let secret = "process-webhook-secret-0123"
    /// Quick retries and short leases, so the test sees a dead instance's work picked up in seconds.
    static let fastDelivery = [
        "IAPKIT_EVENTS_FIRST_RETRY": "1", "IAPKIT_EVENTS_LEASE": "5", "IAPKIT_EVENTS_TIMEOUT": "2",
        "IAPKIT_EVENTS_POLL_INTERVAL": "100",
    ]

    static func serve(_ database: String, pki: URL, receiver: WebhookReceiver) async throws -> ServerProcess {
        try await ServerProcess.start(
            [
                "--database", database, "--pki", pki.path, "--api-key", ServerProcessTests.key,
                "--webhook", receiver.url.absoluteString, "--webhook-secret", secret,
            ], environment: fastDelivery)
    }

    @Test("events stored before a kill -9 are all delivered after the restart, in-flight ones again")
    func eventsSurviveKill9() async throws {
        let folder = try ServerProcessTests.pkiFolder()
        let database = TestFiles.url("store.sqlite").path
        defer {
            try? FileManager.default.removeItem(at: folder)
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        }
        let store = try ServerProcessTests.simulator()
        let inbox = SimulatorInbox(store)
        for index in 0..<40 {
            try store.createAccount("customer\(index)")
            _ = try store.purchase(FloristCatalog.flowers, account: "customer\(index)")
        }
        let notifications = inbox.take()

        try await WebhookReceiver.run(secret: Self.secret) { receiver in
            // The endpoint hangs: deliveries are in flight (leased) when the server dies.
            receiver.hold(true)
            var server = try await Self.serve(database, pki: folder, receiver: receiver)
            for notification in notifications {
                let (status, _) = try await server.post(
                    "/v1/notifications", ["signedPayload": notification.signedPayload])
                #expect(status == 200)
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while receiver.held == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(receiver.held > 0, "deliveries were in flight")
            try await server.kill()
            // What the dead server had in flight is refused (it could not have heard an answer anyway): those events
            // are delivered only once their leases run out and the new instance takes them.
            let inFlight = receiver.held
            receiver.answerNext(Array(repeating: 503, count: inFlight))
            receiver.hold(false)

            server = try await Self.serve(database, pki: folder, receiver: receiver)
            let delivered = try await receiver.waitUntil(timeout: .seconds(90)) { accepted in
                Set(accepted.map(\.eventID)).count >= notifications.count
            }
            #expect(Set(delivered.map(\.eventID)).count == notifications.count, "no event is lost")
            #expect(receiver.deliveries.filter { $0.answered == 503 }.count == inFlight)
            #expect(delivered.allSatisfy { $0.type == "nonConsumablePurchase" })
            #expect(receiver.deliveries.allSatisfy { $0.signatureValid })
            try await server.stop()
        }
    }

    @Test(
        "two server processes on one PostgreSQL database deliver each event once",
        .enabled(if: TestDatabases.postgresURL != nil, "set IAPKIT_TEST_POSTGRES_URL to run it"))
    func twoInstancesDeliverEachEventOnce() async throws {
        let name = TestDatabases.freshDatabaseName("iapkit_hooks")
        let admin = try PostgresDatabase(url: try #require(TestDatabases.postgresURL), maximumConnections: 1)
        try await admin.execute(SQLStatement("CREATE DATABASE \(name)"))
        let url = try #require(TestDatabases.postgresURL(database: name))
        let folder = try ServerProcessTests.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }

        let store = try ServerProcessTests.simulator()
        let inbox = SimulatorInbox(store)
        for index in 0..<12 {
            try store.createAccount("member\(index)", appAccountToken: UUID())
            _ = try store.purchase(
                index.isMultiple(of: 2) ? FloristCatalog.gold : FloristCatalog.silver, account: "member\(index)")
        }
        let group = try #require(
            store.catalog.products.first { $0.id == FloristCatalog.gold }?.subscription?.groupID)
        for day in 1...40 {
            try store.advance(by: 86_400)
            if day == 10 { try store.setAutoRenew(account: "member0", group: group, enabled: false) }
        }
        let notifications = inbox.take()

        try await WebhookReceiver.run(secret: Self.secret) { receiver in
            let first = try await Self.serve(url, pki: folder, receiver: receiver)
            let second = try await Self.serve(url, pki: folder, receiver: receiver)
            // Each notification to both at once: one applies it (and stores its events), the other sees a duplicate.
            for notification in notifications {
                let body = ["signedPayload": notification.signedPayload]
                async let a = first.post("/v1/notifications", body)
                async let b = second.post("/v1/notifications", body)
                let (answerA, answerB) = try await (a, b)
                #expect(answerA.0 == 200 && answerB.0 == 200)
            }
            let storage = try await SQLStorage(database: try PostgresDatabase(url: url, maximumConnections: 1))
            let events = try await storage.deliveries(DeliveryQuery(limit: 1_000))
            #expect(!events.isEmpty)
            let delivered = try await receiver.waitUntil(timeout: .seconds(60)) { accepted in
                Set(accepted.map(\.eventID)).count >= events.count
            }
            // Quiet for a moment: nothing more arrives.
            try await Task.sleep(for: .seconds(1))
            #expect(Set(delivered.map(\.eventID)) == Set(events.map(\.event.id)))
            // Each event is delivered once by one of the two: one successful attempt each. Delivery is at least once,
            // so an attempt the sender saw fail (a timeout on a loaded machine) may have reached the receiver and is
            // made again: only such retries may come beyond one delivery an event.
            let recorded = try await storage.deliveries(DeliveryQuery(limit: 1_000))
            let succeeded = { (attempt: DeliveryAttempt) in (200..<300).contains(attempt.status ?? 0) }
            #expect(recorded.allSatisfy { $0.attempts.filter(succeeded).count == 1 }, "an event was delivered twice")
            let failed = recorded.flatMap(\.attempts).filter { !succeeded($0) }.count
            #expect(receiver.deliveries.count <= events.count + failed, "an event was delivered twice")
            let instances = Set(recorded.flatMap(\.attempts).map(\.instance))
            #expect(instances.count >= 1)
            try await storage.shutdown()
            try await first.stop()
            try await second.stop()
        }
        try await admin.execute(SQLStatement("DROP DATABASE \(name)"))
        try await admin.close()
    }
}
