import Foundation
import Hummingbird
import HummingbirdTesting
import IAPCore
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Logging
import Testing

@testable import IAPServer

/// The console's notification log: every stored notification of an app, newest first, through filters (type,
/// subtype, outcome, dates, customer), a page at a time, with what the server did; refused ones kept in memory.
@Suite("Notification log")
struct NotificationLogTests {
    typealias Backend = StorageConformanceTests.Backend
    static let app = "com.example.app"
    static let start = Date(timeIntervalSince1970: 1_793_491_200)

    static func note(
        _ uuid: String, type: String, subtype: String? = nil, minute: Double, original: String? = nil,
        effect: NotificationEffect = .recorded, app: String = app
    ) -> StoredNotification {
        StoredNotification(
            uuid: uuid, bundleID: app, type: type, subtype: subtype, signedDate: start.addingTimeInterval(minute * 60),
            receivedAt: start.addingTimeInterval(minute * 60), body: #"{"signedPayload":"\#(uuid)"}"#,
            originalTransactionID: original, effect: effect)
    }

    @Test(arguments: Backend.allCases) func theLogFiltersAndPages(_ backend: Backend) async throws {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        // c1 owns purchase s1, c2 owns s2.
        for (customer, id) in [("c1", "s1"), ("c2", "s2")] {
            _ = try await storage.record(
                PurchaseBatch(
                    claimant: customer,
                    transactions: [OverviewTests.transaction(id, product: "p.monthly", bought: 1, price: 990)]))
        }
        let notes = [
            Self.note("n1", type: "SUBSCRIBED", subtype: "INITIAL_BUY", minute: 1, original: "s1"),
            Self.note("n2", type: "SUBSCRIBED", subtype: "INITIAL_BUY", minute: 2, original: "s2"),
            Self.note("n3", type: "TEST", minute: 3, effect: .nothingToRecord),
            Self.note("n4", type: "DID_RENEW", minute: 4, original: "s1"),
            Self.note("n5", type: "CONSUMPTION_REQUEST", minute: 5, original: "s2", effect: .answered),
            Self.note("o1", type: "TEST", minute: 6, effect: .nothingToRecord, app: "com.example.other"),
        ]
        for note in notes {
            #expect(
                try await storage.record(notification: note, applying: PurchaseBatch(claimant: nil, transactions: [])))
        }
        // The App Store sends n4 twice more: recorded once, counted.
        for _ in 0..<2 {
            #expect(
                !(try await storage.record(
                    notification: notes[3], applying: PurchaseBatch(claimant: nil, transactions: []))))
        }
        func uuids(_ query: NotificationQuery) async throws -> [String] {
            try await storage.notifications(query).map(\.notification.uuid)
        }
        let all = try await storage.notifications(NotificationQuery(bundleID: Self.app))
        #expect(all.map(\.notification.uuid) == ["n5", "n4", "n3", "n2", "n1"], "newest first, this app's only")
        #expect(all.map(\.customerID) == ["c2", "c1", nil, "c2", "c1"], "the owner of each purchase now")
        #expect(all[1].notification.repeats == 2)
        #expect(all[0].notification.effect == .answered && all[0].notification.body.isEmpty)
        #expect(try await uuids(NotificationQuery(bundleID: Self.app, type: "SUBSCRIBED")) == ["n2", "n1"])
        #expect(try await uuids(NotificationQuery(bundleID: Self.app, subtype: "INITIAL_BUY")) == ["n2", "n1"])
        #expect(try await uuids(NotificationQuery(bundleID: Self.app, effect: .nothingToRecord)) == ["n3"])
        #expect(
            try await uuids(
                NotificationQuery(
                    bundleID: Self.app, from: Self.start.addingTimeInterval(120), to: Self.start.addingTimeInterval(240)
                )) == ["n3", "n2"], "from is inclusive, to exclusive")
        #expect(try await uuids(NotificationQuery(bundleID: Self.app, customerID: "c1")) == ["n4", "n1"])
        #expect(try await uuids(NotificationQuery(bundleID: Self.app, customerID: "nobody")) == [])
        // Pages of two, each continuing where the last ended.
        var seen: [String] = []
        var cursor: NotificationQuery.Cursor?
        repeat {
            let page = try await storage.notifications(NotificationQuery(bundleID: Self.app, before: cursor, limit: 2))
            seen += page.map(\.notification.uuid)
            cursor =
                page.count == 2
                ? page.last.map { .init(receivedAt: $0.notification.receivedAt, uuid: $0.notification.uuid) } : nil
        } while cursor != nil
        #expect(seen == ["n5", "n4", "n3", "n2", "n1"])
        let stored = try #require(try await storage.notification(uuid: "n5", bundleID: Self.app))
        #expect(stored.originalTransactionID == "s2" && stored.effect == .answered && stored.body.contains("n5"))
        try await storage.shutdown()
    }

    /// Through HTTP with real signed notifications from the local App Store: what each did, a forged one refused and
    /// listed (in memory only), a notification's detail with its body, and the filters' refusals.
    @Test func theConsoleListsWhatArrivedAndWhatWasRefused() async throws {
        let store = try AppStoreSimulator(
            catalog: FloristCatalog.catalog,
            configuration: SimulatorConfiguration(bundleID: "com.example.florist", start: Self.start),
            pki: SimulatorTestKeys.pki)
        let inbox = SimulatorInbox(store)
        let app = AppConfiguration(
            bundleID: "com.example.florist", appAppleID: store.configuration.appAppleID, environments: [.sandbox],
            trustStore: SimulatorTestKeys.pki.trustStore, catalog: FloristCatalog.catalog,
            maximumNotificationAge: 400 * 86_400)
        let service = try ValidationService(
            apps: [app], storage: MemoryStorage(), clock: { (try? store.now) ?? .distantPast })
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let application = buildApplication(
            service: service, configuration: ServerConfiguration(port: 0), operatorAccess: .open, logger: logger)

        try store.createAccount("ana", appAccountToken: UUID(uuidString: "00000000-0000-4000-8000-000000000301")!)
        _ = try store.purchase(FloristCatalog.gold, account: "ana")
        _ = try store.requestTestNotification()
        let sent = inbox.take()
        #expect(sent.count == 2)
        for notification in sent {
            _ = try await service.receiveNotification(
                signedPayload: notification.signedPayload,
                body: String(decoding: notification.requestBody, as: UTF8.self))
        }
        // A forgery: the first notification with its signature's last characters changed.
        let forged = String(sent[0].signedPayload.dropLast(4)) + "AAAA"
        await #expect(throws: ServiceError.self) {
            _ = try await service.receiveNotification(
                signedPayload: forged, body: #"{"signedPayload":"\#(forged)"}"#)
        }

        try await application.test(.router) { client in
            try await client.execute(uri: "/console/notifications", method: .get) { response in
                #expect(response.status == .ok)
                let page = try object(response)
                let items = try #require(page["items"] as? [[String: Any]])
                #expect(items.map { $0["notificationType"] as? String } == ["TEST", "SUBSCRIBED"])
                #expect(items.map { $0["outcome"] as? String } == ["nothingToRecord", "recorded"])
                #expect(items[1]["customerId"] as? String == "00000000-0000-4000-8000-000000000301")
                #expect((items[1]["summary"] as? String)?.hasPrefix("Recorded") == true)
                #expect(page["next"] == nil)
            }
            try await client.execute(uri: "/console/notifications?outcome=refused", method: .get) { response in
                let page = try object(response)
                let items = try #require(page["items"] as? [[String: Any]])
                #expect(items.count == 1)
                #expect(items.first?["code"] as? String == "verificationFailed")
                #expect(items.first?["notificationType"] as? String == "SUBSCRIBED", "what it claims, unverified")
                #expect(page["refusedOnly"] as? Bool == true)
            }
            try await client.execute(
                uri: "/console/notifications?customer=00000000-0000-4000-8000-000000000301&type=SUBSCRIBED",
                method: .get
            ) { response in
                let items = try #require(try object(response)["items"] as? [[String: Any]])
                #expect(items.count == 1)
            }
            let uuid = try #require(
                try await client.execute(uri: "/console/notifications?type=TEST", method: .get) { response in
                    (try object(response)["items"] as? [[String: Any]])?.first?["notificationUUID"] as? String
                })
            try await client.execute(uri: "/console/notifications/\(uuid)", method: .get) { response in
                #expect(response.status == .ok)
                let detail = try object(response)
                #expect((detail["body"] as? String)?.contains("signedPayload") == true)
                #expect((detail["notification"] as? [String: Any])?["notificationType"] as? String == "TEST")
            }
            try await client.execute(uri: "/console/notifications/unknown", method: .get) { response in
                #expect(response.status == .notFound)
                let answer = try object(response)
                #expect(answer["code"] as? String == "notificationNotFound")
            }
            for query in [
                "outcome=lost", "from=yesterday", "before=nonsense", "limit=0", "type=%00", "customer=a%01b",
                "type=\(String(repeating: "x", count: 300))",
            ] {
                try await client.execute(uri: "/console/notifications?\(query)", method: .get) { response in
                    #expect(response.status == .badRequest, "\(query)")
                    let answer = try object(response)
                    #expect(answer["code"] as? String == "invalidQuery", "\(query)")
                }
            }
        }
    }
}
