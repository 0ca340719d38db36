import Foundation
import IAPCatalog
import IAPServer
import IAPServerAPI
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Logging
import Testing

/// Answers to Apple's consumption requests: a customer asks for a refund, the server tells `iapkit serve`'s own copy
/// of the App Store Server API (which records what it receives) how much was used, from what it stored.
@Suite("Answers to consumption requests", .serialized)
struct ConsumptionAnswerTests {
    @Test(arguments: [StorageConformanceBackend.memory, .sqlite])
    func aRefundRequestIsAnsweredWithWhatTheServerKnows(_ backend: StorageConformanceBackend) async throws {
        let simulator = try SimulatedServerAPITests.simulator()
        let inbox = SimulatorInbox(simulator)
        try simulator.createAccount("ana", appAccountToken: UUID())
        var bought: [String] = []
        for _ in 0..<4 {
            bought.append(
                try #require(try simulator.purchase(FloristCatalog.installation, account: "ana").transaction)
                    .transactionID)
        }
        let consumables = bought
        let gold = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        try await SimulatedServerAPITests.serve(simulator) { url in
            var app = AppConfiguration(
                bundleID: "com.example.florist", appAppleID: simulator.configuration.appAppleID,
                environments: [.sandbox], trustStore: SimulatorTestKeys.pki.trustStore,
                catalog: FloristCatalog.catalog, maximumNotificationAge: 400 * 86_400)
            app.serverAPI = try SimulatedServerAPITests.client(url)
            app.consumptionAnswers = ConsumptionAnswers(customerConsented: true, refundPreference: .decline)
            let storage: any ServerStorage =
                backend == .memory
                ? MemoryStorage()
                : try await SQLStorage(
                    database: try SQLiteDatabase(
                        path: TestFiles.path("store.sqlite")))
            let service = try ValidationService(
                apps: [app], storage: storage, clock: { (try? simulator.now) ?? Date() },
                logger: Logger(label: "test"))
            let sender = WebhookSender(
                storage: storage, apps: [app], settings: DeliverySettings(), signal: service.outboxSignal,
                logger: Logger(label: "test"))
            func sync() async throws {
                for notification in inbox.take() {
                    _ = try await service.receiveNotification(
                        signedPayload: notification.signedPayload,
                        body: String(decoding: notification.requestBody, as: UTF8.self))
                }
            }
            try await sync()
            let customer = try await service.customer(
                try #require(gold.payload.appAccountToken), bundleID: nil)
            _ = try await service.recordConsumption(
                of: customer, productID: FloristCatalog.installation, quantity: 3, idempotencyKey: "used-3")

            // A consumable: three of four used.
            try simulator.requestRefund(consumables[3])
            try await sync()
            // A subscription eight days into its first paid month (after the week's trial).
            try simulator.advance(by: 15 * 86_400)
            let renewal = try #require(
                try simulator.transactions(account: "ana").last { $0.payload.productID == FloristCatalog.gold })
            #expect(renewal.transactionID != gold.transactionID)
            try simulator.requestRefund(renewal.transactionID)
            try await sync()
            while await sender.sendDue() > 0 {}

            let consumable = try #require(simulator.consumptionReport(for: consumables[3]))
            #expect(consumable.consumptionPercentage == 75_000)
            #expect(consumable.consumptionStatus == 2)
            #expect(consumable.customerConsented && consumable.deliveryStatus == 0)
            #expect(consumable.refundPreference == 2, "the app's preference: decline")
            let subscription = try #require(simulator.consumptionReport(for: renewal.transactionID))
            #expect((20_000...35_000).contains(subscription.consumptionPercentage ?? -1), "8 of about 30 days")

            let answers = try await storage.deliveries(DeliveryQuery(limit: 10))
            #expect(answers.count == 2)
            #expect(answers.allSatisfy { $0.endpoint == WebhookSender.consumptionEndpoint && $0.state == .delivered })
            #expect(answers.allSatisfy { $0.attempts.map(\.status) == [202] })
            #expect(answers.allSatisfy { $0.event.type == "consumptionAnswer" && $0.event.giveUpAt != nil })
        }
    }
}

/// The storages these tests run on.
enum StorageConformanceBackend: String, CaseIterable, Sendable {
    case memory, sqlite
}
