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

/// App keys and secret keys on a real socket: two apps on one server, each with an app key (shipped in the app) and a
/// secret key (its backend), and a server-wide key. Every route a key may not use answers 401 or 403 with a stable
/// code, and no key reaches another app's customers.
@Suite("Access keys: app keys, secret keys, one app each")
struct AccessKeyTests {
    static let floristApp = "florist-app-key-0001"
    static let floristSecret = "florist-secret-key-0001"
    static let gardenApp = "garden-app-key-00001"
    static let gardenSecret = "garden-secret-key-0001"
    static let serverWide = "server-wide-key-00001"

    /// Two stores (the florist and a garden app, the same catalog under two bundle ids) and a server for both.
    struct World {
        let florist: AppStoreSimulator
        let garden: AppStoreSimulator
        let service: ValidationService

        init() throws {
            florist = try AppStoreSimulator(
                catalog: FloristCatalog.catalog, configuration: SimulatorConfiguration(bundleID: "com.example.florist"),
                pki: SimulatorTestKeys.pki)
            garden = try AppStoreSimulator(
                catalog: FloristCatalog.catalog, configuration: SimulatorConfiguration(bundleID: "com.example.garden"),
                pki: SimulatorTestKeys.pki)
            func app(_ store: AppStoreSimulator, _ appKey: String, _ secret: String) -> AppConfiguration {
                var app = AppConfiguration(
                    bundleID: store.configuration.bundleID, appAppleID: store.configuration.appAppleID,
                    environments: [store.configuration.environment], trustStore: SimulatorTestKeys.pki.trustStore,
                    catalog: FloristCatalog.catalog)
                app.accessKeys = [
                    AccessKey(id: "app-2026", scope: .app, value: appKey),
                    AccessKey(id: "backend-2026", scope: .secret, value: secret),
                ]
                return app
            }
            let clock = florist
            service = try ValidationService(
                apps: [
                    app(florist, AccessKeyTests.floristApp, AccessKeyTests.floristSecret),
                    app(garden, AccessKeyTests.gardenApp, AccessKeyTests.gardenSecret),
                ],
                storage: MemoryStorage(), clock: { (try? clock.now) ?? clock.configuration.start },
                logger: Logger(label: "test"))
        }

        func application() -> some ApplicationProtocol {
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            return buildApplication(
                service: service,
                configuration: ServerConfiguration(host: "127.0.0.1", port: 0, apiKeys: [AccessKeyTests.serverWide]),
                logger: logger)
        }

        /// A purchase of flowers by a new customer of `store`: the signed transaction and the customer's token.
        func purchase(_ store: AppStoreSimulator, _ account: String) throws -> (
            jws: String, token: UUID, original: String
        ) {
            try store.createAccount(account)
            let token = UUID()
            let bought = try #require(
                try store.purchase(
                    FloristCatalog.installation, account: account, options: .init(appAccountToken: token)
                )
                .transaction)
            return (bought.jws, token, try #require(bought.payload.originalTransactionID))
        }
    }

    static func headers(_ key: String?) -> HTTPFields {
        var fields: HTTPFields = [.contentType: "application/json"]
        if let key { fields[.authorization] = "Bearer \(key)" }
        return fields
    }

    /// What a request got: its status and, for a refusal, the stable code.
    struct Outcome: Equatable, CustomStringConvertible {
        var status: Int
        var code: String?
        init(_ status: Int, _ code: String? = nil) {
            self.status = status
            self.code = code
        }
        var description: String { "\(status) \(code ?? "")" }
    }

    static func call(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, key: String?,
        body: [String: Any]? = nil
    ) async throws -> Outcome {
        try await client.execute(uri: uri, method: method, headers: headers(key), body: body.map(json)) { response in
            let answer = try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
            let code = response.status.code >= 400 ? (answer as? [String: Any])?["code"] as? String : nil
            return Outcome(Int(response.status.code), code)
        }
    }

    static func post(_ client: some TestClientProtocol, _ jws: String, _ key: String?) async throws -> Outcome {
        try await call(client, .post, "/v1/transactions", key: key, body: ["signedTransaction": jws])
    }

    @Test func postingTakesTheAppsOwnKeysOnly() async throws {
        let world = try World()
        let ana = try world.purchase(world.florist, "ana")
        let bo = try world.purchase(world.garden, "bo")
        try await world.application().test(.live) { (client) async throws -> Void in
            #expect(try await Self.post(client, ana.jws, nil) == Outcome(401, "apiKeyMissing"))
            #expect(try await Self.post(client, ana.jws, "not-a-key-of-this-server") == Outcome(403, "apiKeyInvalid"))
            #expect(try await Self.post(client, ana.jws, Self.gardenApp) == Outcome(403, "keyNotForApp"))
            #expect(try await Self.post(client, ana.jws, Self.gardenSecret) == Outcome(403, "keyNotForApp"))
            #expect(try await Self.post(client, ana.jws, Self.floristApp) == Outcome(200))
            #expect(try await Self.post(client, ana.jws, Self.floristSecret) == Outcome(200))
            #expect(try await Self.post(client, bo.jws, Self.floristApp) == Outcome(403, "keyNotForApp"))
            #expect(
                try await Self.post(client, bo.jws, Self.serverWide) == Outcome(200),
                "a server-wide key reaches every app")
        }
    }

    @Test func anAppKeyActsForTheCustomerItNamesAndListsNothing() async throws {
        let world = try World()
        let ana = try world.purchase(world.florist, "ana")
        let bo = try world.purchase(world.garden, "bo")
        try await world.application().test(.live) { client in
            for (jws, key) in [(ana.jws, Self.floristApp), (bo.jws, Self.gardenApp)] {
                let outcome = try await Self.call(
                    client, .post, "/v1/transactions", key: key, body: ["signedTransaction": jws])
                #expect(outcome == Outcome(200))
            }
            let customer = "/v1/customers/\(ana.token.uuidString)"
            let key = Self.floristApp
            #expect(try await Self.call(client, .get, customer + "/entitlements", key: key) == Outcome(200))
            let used: [String: Any] = ["productId": FloristCatalog.installation, "idempotencyKey": "use-1"]
            #expect(
                try await Self.call(client, .post, customer + "/consumptions", key: key, body: used) == Outcome(201))
            // Listings and catching up are the backend's.
            #expect(
                try await Self.call(client, .get, customer + "/transactions", key: key)
                    == Outcome(403, "secretKeyRequired"))
            #expect(
                try await Self.call(client, .post, customer + "/refresh", key: key, body: [:])
                    == Outcome(403, "secretKeyRequired"))
            // No search: an original transaction id does not find the customer with an app key.
            #expect(
                try await Self.call(client, .get, "/v1/customers/\(ana.original)/entitlements", key: key)
                    == Outcome(404, "customerNotFound"))
            // Another app's customers are out of reach, named or not.
            #expect(
                try await Self.call(client, .get, "/v1/customers/\(bo.token.uuidString)/entitlements", key: key)
                    == Outcome(404, "customerNotFound"))
            #expect(
                try await Self.call(
                    client, .get, "/v1/customers/\(bo.token.uuidString)/entitlements?bundleId=com.example.garden",
                    key: key) == Outcome(403, "keyNotForApp"))
            let theirs: [String: Any] = [
                "productId": FloristCatalog.installation, "idempotencyKey": "use-2", "bundleId": "com.example.garden",
            ]
            #expect(
                try await Self.call(
                    client, .post, "/v1/customers/\(bo.token.uuidString)/consumptions", key: key, body: theirs)
                    == Outcome(403, "keyNotForApp"))
            #expect(
                try await Self.call(client, .get, customer + "/entitlements", key: nil) == Outcome(401, "apiKeyMissing")
            )
        }
    }

    @Test func anAppKeyNeverNamesACustomerByAnOriginalTransactionID() async throws {
        let world = try World()
        try world.florist.createAccount("cy")
        let unclaimed = try #require(try world.florist.purchase(FloristCatalog.installation, account: "cy").transaction)
        let original = try #require(unclaimed.payload.originalTransactionID)
        try await world.application().test(.live) { (client) async throws -> Void in
            // Posted without a token: the server names the customer after the original transaction id (sequential,
            // so guessable), and a public app key must not reach it, even by that exact id.
            #expect(try await Self.post(client, unclaimed.jws, Self.floristApp) == Outcome(200))
            let uri = "/v1/customers/\(original)/entitlements"
            #expect(try await Self.call(client, .get, uri, key: Self.floristApp) == Outcome(404, "customerNotFound"))
            let used: [String: Any] = ["productId": FloristCatalog.installation, "idempotencyKey": "steal-1"]
            #expect(
                try await Self.call(
                    client, .post, "/v1/customers/\(original)/consumptions", key: Self.floristApp, body: used)
                    == Outcome(404, "customerNotFound"))
            #expect(try await Self.call(client, .get, uri, key: Self.floristSecret) == Outcome(200))
        }
    }

    @Test func verifyReceiptRecordsForAKeyedAppOnlyWithItsKey() async throws {
        let world = try World()
        try world.florist.createAccount("di")
        let device = try world.florist.addDevice(account: "di")
        let bought = try #require(try world.florist.purchase(FloristCatalog.flowers, account: "di").transaction)
        let receipt = Data(try world.florist.receipt(account: "di", device: device).bytes).base64EncodedString()
        let original = try #require(bought.payload.originalTransactionID)
        try await world.application().test(.live) { (client) async throws -> Void in
            let body: [String: Any] = ["receipt-data": receipt]
            func status(_ key: String?) async throws -> Int? {
                try await client.execute(
                    uri: "/sandbox/verifyReceipt", method: .post, headers: Self.headers(key), body: json(body)
                ) { response in
                    (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)))
                        .flatMap { $0 as? [String: Any] }?["status"] as? Int
                }
            }
            let lookup = "/v1/customers/\(original)/entitlements"
            // Without a key Apple's shape still answers what the receipt proves, and records nothing.
            #expect(try await status(nil) == 0)
            #expect(
                try await Self.call(client, .get, lookup, key: Self.floristSecret) == Outcome(404, "customerNotFound"))
            // Another app's key is refused as Apple refuses an unauthenticated receipt; the app's own key records.
            #expect(try await status(Self.gardenApp) == 21003)
            #expect(try await status(Self.floristApp) == 0)
            #expect(try await Self.call(client, .get, lookup, key: Self.floristSecret) == Outcome(200))
        }
    }

    @Test func aSecretKeyReachesEverythingOfItsAppAndNothingElse() async throws {
        let world = try World()
        let ana = try world.purchase(world.florist, "ana")
        let bo = try world.purchase(world.garden, "bo")
        try await world.application().test(.live) { client in
            for (jws, key) in [(ana.jws, Self.floristSecret), (bo.jws, Self.gardenSecret)] {
                let outcome = try await Self.call(
                    client, .post, "/v1/transactions", key: key, body: ["signedTransaction": jws])
                #expect(outcome == Outcome(200))
            }
            let key = Self.floristSecret
            #expect(
                try await Self.call(client, .get, "/v1/customers/\(ana.token)/transactions", key: key) == Outcome(200))
            #expect(
                try await Self.call(client, .get, "/v1/customers/\(ana.original)/entitlements", key: key)
                    == Outcome(200))
            // Refresh is allowed; this app has no App Store Server API key, which is a conflict, not a refusal.
            #expect(
                try await Self.call(client, .post, "/v1/customers/\(ana.token)/refresh", key: key, body: [:])
                    == Outcome(409, "refreshUnavailable"))
            #expect(
                try await Self.call(
                    client, .get, "/v1/customers/\(bo.token)/transactions?bundleId=com.example.garden", key: key)
                    == Outcome(403, "keyNotForApp"))
            // The server-wide key lists either app's customers.
            for uri in [
                "/v1/customers/\(ana.token)/transactions?bundleId=com.example.florist",
                "/v1/customers/\(bo.token)/transactions?bundleId=com.example.garden",
            ] {
                #expect(try await Self.call(client, .get, uri, key: Self.serverWide) == Outcome(200))
            }
        }
    }
}
