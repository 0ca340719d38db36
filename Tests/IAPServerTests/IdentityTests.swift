import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPCatalog
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Logging
import Testing

/// Customer identity on a real socket: an anonymous install logs in (its purchases merge into the user, its id an
/// alias of theirs), a logged-in customer switches accounts (nothing moves), and a purchase another customer holds
/// follows the app's transfer policy.
@Suite("Customer identity: login, aliases, transfer policies", .serialized)
struct IdentityTests {
    typealias Backend = StorageConformanceTests.Backend
    static let appKey = "identity-app-key-0001"
    static let secretKey = "identity-secret-key-01"

    struct World {
        let store: AppStoreSimulator
        let service: ValidationService
        let storage: any ServerStorage
        let app: AppConfiguration

        init(storage: any ServerStorage, policy: TransferPolicy, endpoint: URL? = nil) throws {
            store = try AppStoreSimulator(
                catalog: FloristCatalog.catalog, configuration: SimulatorConfiguration(bundleID: "com.example.florist"),
                pki: SimulatorTestKeys.pki)
            var app = AppConfiguration(
                bundleID: "com.example.florist", appAppleID: store.configuration.appAppleID,
                environments: [store.configuration.environment], trustStore: SimulatorTestKeys.pki.trustStore,
                catalog: FloristCatalog.catalog)
            app.accessKeys = [
                AccessKey(id: "app", scope: .app, value: IdentityTests.appKey),
                AccessKey(id: "backend", scope: .secret, value: IdentityTests.secretKey),
            ]
            app.transferPolicy = policy
            if let endpoint {
                app.webhooks = Webhooks(endpoints: [endpoint.absoluteString], secret: "identity-secret-0001")
            }
            let store = self.store
            self.storage = storage
            self.app = app
            service = try ValidationService(
                apps: [app], storage: storage, clock: { (try? store.now) ?? store.configuration.start },
                logger: Logger(label: "test"))
        }

        func application() -> some ApplicationProtocol {
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            return buildApplication(
                service: service, configuration: ServerConfiguration(host: "127.0.0.1", port: 0), logger: logger)
        }

        /// A purchase by `account` (made if new) with no app account token in it: whoever posts it claims it.
        func buy(_ product: String, account: String) throws -> String {
            try? store.createAccount(account)
            return try #require(try store.purchase(product, account: account).transaction).jws
        }
    }

    static func headers(_ key: String) -> HTTPFields {
        [.contentType: "application/json", .authorization: "Bearer \(key)"]
    }

    static func post(
        _ client: some TestClientProtocol, _ path: String, _ body: [String: Any], key: String = appKey
    ) async throws -> (HTTPResponse.Status, [String: Any]) {
        try await client.post(path, body, headers: headers(key))
    }

    static func owned(_ answer: [String: Any]) -> [String] { answer["entitledProductIds"] as? [String] ?? [] }

    @Test(arguments: Backend.allCases) func anAnonymousInstallLogsInAndKeepsItsPurchases(_ backend: Backend)
        async throws
    {
        guard let storage = try await StorageConformanceTests.storage(backend) else { return }
        let world = try World(storage: storage, policy: .refuse)
        let anonymous = UUID().uuidString.lowercased()
        let user = UUID().uuidString.lowercased()
        let other = UUID().uuidString.lowercased()
        try await world.application().test(.live) { client in
            let flowers = try world.buy(FloristCatalog.flowers, account: "phone")
            var (status, answer) = try await Self.post(
                client, "/v1/transactions", ["signedTransaction": flowers, "appAccountToken": anonymous])
            #expect(status == .ok && answer["customerId"] as? String == anonymous)

            // The user already bought chocolates on another device.
            let chocolates = try world.buy(FloristCatalog.chocolates, account: "tablet")
            (status, _) = try await Self.post(
                client, "/v1/transactions", ["signedTransaction": chocolates, "appAccountToken": user])
            #expect(status == .ok)

            (status, answer) = try await Self.post(client, "/v1/customers/\(anonymous)/login", ["appUserId": user])
            #expect(status == .ok, "\(answer)")
            #expect(answer["customerId"] as? String == user)
            #expect(answer["merged"] as? Bool == true)
            #expect(Set(Self.owned(answer)) == [FloristCatalog.flowers, FloristCatalog.chocolates])

            // The anonymous id answers as the user from now on; posting the old purchase again lands with the user.
            (status, answer) = try await client.get(
                "/v1/customers/\(anonymous)/entitlements", headers: Self.headers(Self.appKey))
            #expect(status == .ok && answer["customerId"] as? String == user)
            (status, answer) = try await Self.post(
                client, "/v1/transactions", ["signedTransaction": flowers, "appAccountToken": user])
            #expect(status == .ok && answer["customerId"] as? String == user, "\(answer)")

            // A customer who logged in switches accounts: nothing moves.
            (status, answer) = try await Self.post(client, "/v1/customers/\(user)/login", ["appUserId": other])
            #expect(status == .ok && answer["merged"] as? Bool == false && Self.owned(answer).isEmpty)
            (status, answer) = try await client.get(
                "/v1/customers/\(user)/entitlements", headers: Self.headers(Self.appKey))
            #expect(Set(Self.owned(answer)) == [FloristCatalog.flowers, FloristCatalog.chocolates])

            // An app key names both sides by app account token; a secret key may use the app's own user ids.
            (status, answer) = try await Self.post(client, "/v1/customers/\(other)/login", ["appUserId": "user-42"])
            #expect(status == .badRequest && answer["code"] as? String == "invalidAppAccountToken")
            let fresh = UUID().uuidString.lowercased()
            (status, answer) = try await Self.post(
                client, "/v1/customers/\(fresh)/login", ["appUserId": "user-42"], key: Self.secretKey)
            #expect(status == .ok && answer["customerId"] as? String == "user-42")
            // Counted in Unicode scalars, one line without control characters: a letter and 150,000 combining marks
            // is one Character, and an escape sequence would reach the operator's terminal through the logs.
            for bad in ["u" + String(repeating: "\u{301}", count: 150_000), "u\u{7}\u{1B}[31m", "a\u{2028}b"] {
                (status, answer) = try await Self.post(
                    client, "/v1/customers/\(fresh)/login", ["appUserId": bad], key: Self.secretKey)
                #expect(status == .badRequest && answer["code"] as? String == "invalidField")
            }
            (status, answer) = try await Self.post(
                client, "/v1/customers/\(fresh)/login", ["appUserId": "ユーザー-42 é"], key: Self.secretKey)
            #expect(status == .ok && answer["customerId"] as? String == "ユーザー-42 é")
            (status, answer) = try await Self.post(client, "/v1/customers/\(fresh)/login", ["appUserId": user], key: "")
            #expect(status == .unauthorized)
        }
        try await storage.shutdown()
    }

    @Test(arguments: TransferPolicy.allCases) func aPurchaseClaimedByAnotherFollowsThePolicy(_ policy: TransferPolicy)
        async throws
    {
        guard let storage = try await StorageConformanceTests.storage(.sqlite) else { return }
        try await WebhookReceiver.run(secret: "identity-secret-0001") { receiver in
            let world = try World(storage: storage, policy: policy, endpoint: receiver.url)
            let first = UUID().uuidString.lowercased()
            let second = UUID().uuidString.lowercased()
            try await world.application().test(.live) { client in
                let flowers = try world.buy(FloristCatalog.flowers, account: "apple-id")
                var (status, answer) = try await Self.post(
                    client, "/v1/transactions", ["signedTransaction": flowers, "appAccountToken": first])
                #expect(status == .ok)
                // The same Apple ID restores on a second account of the app.
                (status, answer) = try await Self.post(
                    client, "/v1/transactions", ["signedTransaction": flowers, "appAccountToken": second])
                let (_, firstNow) = try await client.get(
                    "/v1/customers/\(first)/entitlements", headers: Self.headers(Self.appKey))
                switch policy {
                case .refuse:
                    #expect(status == .conflict && answer["code"] as? String == "transactionClaimed")
                    #expect(Self.owned(firstNow) == [FloristCatalog.flowers])
                case .keep:
                    #expect(status == .ok && answer["customerId"] as? String == second)
                    #expect(Self.owned(answer).isEmpty)
                    #expect(Self.owned(firstNow) == [FloristCatalog.flowers])
                case .transfer:
                    #expect(status == .ok && answer["customerId"] as? String == second)
                    #expect(Self.owned(answer) == [FloristCatalog.flowers])
                    #expect(Self.owned(firstNow).isEmpty)
                }
            }
            let delivering = WebhookSender(
                storage: storage, apps: [world.app],
                settings: DeliverySettings(), signal: world.service.outboxSignal, logger: Logger(label: "test"))
            while await delivering.sendDue() > 0 {}
            let types = receiver.accepted.map(\.type)
            #expect(types.filter { $0 == "transfer" }.count == (policy == .transfer ? 1 : 0))
            if policy == .transfer {
                let event = try #require(receiver.accepted.first { $0.type == "transfer" }?.json)
                #expect(event["customerId"] as? String == second)
                #expect(event["fromCustomerId"] as? String == first)
                #expect(event["reason"] as? String == "restore")
                #expect(event["productId"] as? String == FloristCatalog.flowers)
            }
            #expect(receiver.deliveries.allSatisfy { $0.signatureValid })
        }
        try await storage.shutdown()
    }

    /// A webhook endpoint that answers its head and then nothing holds a delivery no longer than the sender's timeout
    /// (draining the body went on until AsyncHTTPClient's 90 s read timeout); the 200 it answered still counts.
    @Test func anEndpointThatStallsMidAnswerHoldsTheSenderOnlyForItsTimeout() async throws {
        guard let storage = try await StorageConformanceTests.storage(.sqlite) else { return }
        let endpoint = try StallingHTTPServer(reply: "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{")
        defer { endpoint.stop() }
        let world = try World(
            storage: storage, policy: .keep, endpoint: URL(string: "http://127.0.0.1:\(endpoint.port)/hooks")!)
        try await world.application().test(.live) { client in
            let flowers = try world.buy(FloristCatalog.flowers, account: "apple-id")
            let (status, _) = try await Self.post(
                client, "/v1/transactions", ["signedTransaction": flowers, "appAccountToken": UUID().uuidString])
            #expect(status == .ok)
        }
        var settings = DeliverySettings()
        settings.timeout = .seconds(1)
        let sender = WebhookSender(service: world.service, settings: settings, logger: Logger(label: "test"))
        let clock = ContinuousClock()
        let started = clock.now
        var sent = 0
        while case let more = await sender.sendDue(), more > 0, clock.now - started < .seconds(60) { sent += more }
        // Generous beside the rest of the suite on two cores; without the bound it takes 90 s.
        #expect(clock.now - started < .seconds(45))
        #expect(sent > 0)
        let deliveries = try await storage.deliveries(DeliveryQuery())
        #expect(!deliveries.isEmpty)
        #expect(
            deliveries.allSatisfy { $0.state == .delivered }, "a 200 followed by a stalled body is still delivered")
        try await storage.shutdown()
    }
}
