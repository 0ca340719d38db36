import Foundation
import Hummingbird
import HummingbirdTesting
import IAPCatalog
import IAPEntitlements
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPSimulatorServer
import IAPStoreClient
import IAPTestSupport
import Logging
import Testing

@testable import IAPStoreClientTesting

/// SwiftyReceiptValidator's way: the Store sends what the store handed out to a real validation server on a loopback
/// socket (the application `iapkit serve` builds, trusting the simulator's roots) and unlocks from its verdict.
@Suite struct ServerValidationTests {
    typealias F = FloristCatalog
    static let apiKey = "store-client-test-key"

    /// A live server validating for the florist app, with the server's clock on the simulator's; `body` gets its URL.
    static func withServer(
        _ world: StoreHarness, sharedSecret: String? = nil, policy: TransferPolicy = .refuse,
        _ body: @Sendable (URL, ValidationService) async throws -> Void
    ) async throws {
        let simulator = world.simulator
        var app = AppConfiguration(
            bundleID: StoreHarness.bundleID, appAppleID: simulator.configuration.appAppleID, environments: [.sandbox],
            trustStore: SimulatorTestKeys.pki.trustStore, sharedSecret: sharedSecret, catalog: F.catalog)
        app.transferPolicy = policy
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let service = try ValidationService(
            apps: [app], storage: MemoryStorage(), clock: { (try? simulator.now) ?? StoreHarness.start },
            logger: logger)
        let configuration = ServerConfiguration(host: "127.0.0.1", port: 0, apiKeys: [apiKey])
        let application = buildApplication(service: service, configuration: configuration, logger: logger)
        try await application.test(.live) { client in
            let port = try #require(client.port)
            try await body(URL(string: "http://127.0.0.1:\(port)")!, service)
        }
    }

    static func store(
        _ world: StoreHarness, _ backend: any StoreBackend, url: URL, document: ValidationServer.Document,
        acceptsSandbox: Bool = true, sharedSecret: String? = nil,
        persistence: any StorePersistence = MemoryStorePersistence(),
        token: UUID? = UUID(uuidString: "6F0D7E4C-1111-4E4B-9A39-6B1E2F3A4B5C")
    ) async -> (Store, EventLog) {
        let server = ValidationServer(
            url: url, apiKey: apiKey, document: document, acceptsSandbox: acceptsSandbox, sharedSecret: sharedSecret,
            timeout: .seconds(10))  // generous: CI runs every suite at once on two cores
        let store = Store(
            catalog: F.catalog, backend: backend, validation: .server(server), persistence: persistence,
            appAccountToken: token)
        let log = EventLog(await store.events())
        await store.start()
        return (store, log)
    }

    @Test func verifyReceiptCarriesTheAppsSharedSecret() async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        try await Self.withServer(world, sharedSecret: "florist-shared-secret") { url, _ in
            let document = ValidationServer.Document.verifyReceipt(excludeOldTransactions: true)
            let cache = MemoryStorePersistence()
            let (store, _) = await Self.store(
                world, try world.backend("ana"), url: url, document: document, sharedSecret: "florist-shared-secret",
                persistence: cache)
            #expect(try await store.purchase(F.gold) == .purchased)
            #expect(await store.isPurchased(F.gold))
            // verifyReceipt keeps no balance on the server: the device records the use, dated by the store's clock.
            try world.simulator.advance(by: 3600)
            try await store.purchase(F.installation)
            try await store.consume(F.installation)
            #expect(cache.cache?.history.consumptions.map(\.date) == [try world.simulator.now])

            // Without it (or with another), the server refuses every receipt with 21004, named.
            for secret in [nil, "another-secret"] {
                let (refused, _) = await Self.store(
                    world, try world.backend("ana"), url: url, document: document, sharedSecret: secret)
                let error = await #expect(throws: StoreError.self) { try await refused.purchase(F.flowers) }
                #expect(error?.code == .serverRefused && error?.reason.hasPrefix("sharedSecretMismatch") == true)
            }
        }
    }

    @Test(arguments: [
        ValidationServer.Document.signedTransaction, .receipt, .verifyReceipt(excludeOldTransactions: true),
    ])
    func purchasesUnlockFromTheServersVerdict(_ document: ValidationServer.Document) async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        try await Self.withServer(world) { url, service in
            let (store, _) = await Self.store(world, try world.backend("ana"), url: url, document: document)
            #expect(await store.origin == .verified)
            #expect(try await store.purchase(F.flowers) == .purchased)
            #expect(await store.isPurchased(F.flowers))
            #expect(try await store.purchase(F.gold) == .purchased)
            #expect(await store.subscriptionInfo(group: F.vipGroup)?.currentProductID == F.gold)
            #expect(await store.purchasedProductIDs == [F.flowers, F.gold])
            #expect(try world.simulator.unfinishedTransactions(account: "ana").isEmpty)
        }
    }

    /// The app as it runs against `iapkit serve` alone: the store over `/simulator`, validation through `/v1`, one
    /// server on one socket.
    @Test(arguments: [ValidationServer.Document.signedTransaction, .receipt])
    func theWholeLoopOverOneServer(_ document: ValidationServer.Document) async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        try await StoreHarness.serve(world.simulator, apiKeys: [Self.apiKey]) { url in
            let phone = try await HTTPStoreBackend.connect(to: url, account: "ana")
            let (store, _) = await Self.store(world, phone, url: url, document: document)
            #expect(try await store.purchase(F.flowers) == .purchased)
            #expect(try await store.purchase(F.gold) == .purchased)
            #expect(await store.purchasedProductIDs == [F.flowers, F.gold])
            #expect(try world.simulator.unfinishedTransactions(account: "ana").isEmpty)

            let tablet = try await HTTPStoreBackend.connect(
                to: url, account: "ana", device: try world.simulator.addDevice(account: "ana"))
            let (restored, _) = await Self.store(world, tablet, url: url, document: document)
            try await restored.restore()
            #expect(await restored.purchasedProductIDs == [F.flowers, F.gold])
        }
    }

    /// An app that sets no account token: the server names a customer at the first purchase, and every later purchase
    /// and every relaunch lands with that one customer.
    @Test(arguments: [ValidationServer.Document.signedTransaction, .receipt])
    func withoutAnAccountTokenEveryPurchaseLandsWithOneCustomer(_ document: ValidationServer.Document) async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        try await Self.withServer(world) { url, _ in
            let cache = MemoryStorePersistence()
            let server = ValidationServer(url: url, apiKey: Self.apiKey, document: document, timeout: .seconds(10))
            let store = Store(
                catalog: F.catalog, backend: try await world.backend("ana"), validation: .server(server),
                persistence: cache)
            await store.start()
            #expect(try await store.purchase(F.flowers) == .purchased)
            #expect(try await store.purchase(F.gold) == .purchased)
            #expect(await store.purchasedProductIDs == [F.flowers, F.gold])

            let relaunched = Store(
                catalog: F.catalog, backend: try await world.backend("ana"), validation: .server(server),
                persistence: cache)
            await relaunched.start()
            try await relaunched.restore()
            #expect(await relaunched.purchasedProductIDs == [F.flowers, F.gold])
            let fresh = Store(catalog: F.catalog, backend: try await world.backend("ana"), validation: .server(server))
            await fresh.start()
            try await fresh.restore()
            #expect(await fresh.purchasedProductIDs == [F.flowers, F.gold], "a new install restores everything")
        }
    }

    /// An install that buys before anyone logs in: logging in keeps its purchases (they join the user's on the
    /// server), and logging out makes a new anonymous customer, who gets the Apple ID's purchases only when the app
    /// transfers them.
    @Test(arguments: [TransferPolicy.refuse, .keep, .transfer])
    func logInKeepsAnAnonymousInstallsPurchasesAndLogOutFollowsThePolicy(_ policy: TransferPolicy) async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        try await Self.withServer(world, policy: policy) { url, service in
            let (store, log) = await Self.store(
                world, try await world.backend("ana"), url: url, document: .signedTransaction, token: nil)
            #expect(try await store.purchase(F.flowers) == .purchased)
            let user = UUID()
            try await store.logIn(user)
            #expect(await store.appAccountToken == user)
            #expect(await store.purchasedProductIDs == [F.flowers])
            #expect(try await store.purchase(F.gold) == .purchased)
            let customer = try await service.customer(user.uuidString, bundleID: nil)
            #expect(customer.id == user.uuidString.lowercased())
            #expect(
                Set(try await service.entitlements(of: customer).entitledProductIDs) == [F.flowers, F.gold],
                "the anonymous purchase and the one after the login are the user's")
            await log.wait(for: .loggedIn)

            await store.logOut()
            #expect(await store.appAccountToken == nil)
            await log.wait(for: .loggedOut)
            switch policy {
            case .transfer:
                #expect(await store.purchasedProductIDs == [F.flowers, F.gold], "moved to the new customer")
                #expect(try await service.entitlements(of: customer).entitledProductIDs.isEmpty)
            default:
                #expect(await store.purchasedProductIDs.isEmpty, "the user's purchases stay the user's")
                #expect(Set(try await service.entitlements(of: customer).entitledProductIDs) == [F.flowers, F.gold])
            }
        }
    }

    @Test func consumableBalancesLiveOnTheServer() async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        try await Self.withServer(world) { url, service in
            let (store, _) = await Self.store(world, try world.backend("ana"), url: url, document: .signedTransaction)
            for _ in 0..<3 { try await store.purchase(F.installation) }
            try await store.consume(F.installation)
            #expect(await store.consumableCount(F.installation) == 2)
            // The server's own answer, as another device of the same customer would get it.
            let customer = try await service.customer("6f0d7e4c-1111-4e4b-9a39-6b1e2f3a4b5c", bundleID: nil)
            #expect(try await service.entitlements(of: customer).balance(of: F.installation) == 2)
        }
    }

    @Test func refusalsAreTyped() async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        let otherApp = try StoreHarness(.signedTransactions, bundleID: "com.example.other")
        try otherApp.customer("ana")
        try await Self.withServer(world) { url, _ in
            for document in [
                ValidationServer.Document.signedTransaction, .verifyReceipt(excludeOldTransactions: false),
            ] {
                let (store, _) = await Self.store(otherApp, try otherApp.backend("ana"), url: url, document: document)
                await #expect(throws: StoreError(.wrongBundle, "")) { try await store.purchase(F.flowers) }
                #expect(await !store.isPurchased(F.flowers))
            }
            // A production-only app refuses the sandbox receipt the server recognises.
            let (strict, _) = await Self.store(
                world, try world.backend("ana"), url: url, document: .verifyReceipt(excludeOldTransactions: true),
                acceptsSandbox: false)
            await #expect(throws: StoreError(.sandboxReceiptInProduction, "")) { try await strict.purchase(F.flowers) }
            #expect(await !strict.isPurchased(F.flowers))
        }
        // Nothing listens there any more.
        let closed = URL(string: "http://127.0.0.1:9")!
        let (store, log) = await Self.store(world, try world.backend("ana"), url: closed, document: .signedTransaction)
        await log.wait(for: .reconcileFailed)
        await #expect(throws: StoreError(.serverUnreachable, "")) { try await store.purchase(F.flowers) }
        #expect(await !store.isPurchased(F.flowers))
        #expect(try world.simulator.unfinishedTransactions(account: "ana").count == 1, "not finished without a verdict")
    }
}
