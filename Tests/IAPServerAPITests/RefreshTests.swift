import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPCatalog
import IAPEntitlements
import IAPServer
import IAPServerAPI
import IAPSignedData
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import Logging
import Testing

/// `POST /v1/customers/{id}/refresh`: a validation server that missed notifications catches up through the App Store
/// Server API (here `iapkit serve`'s copy, on a loopback socket, playing Apple).
@Suite struct RefreshTests {
    typealias S = SimulatedServerAPITests

    static func service(_ simulator: AppStoreSimulator, apple: URL?, timeout: Duration = .seconds(10)) throws
        -> ValidationService
    {
        var app = AppConfiguration(
            bundleID: simulator.configuration.bundleID, appAppleID: simulator.configuration.appAppleID,
            environments: [.sandbox], trustStore: SimulatorTestKeys.pki.trustStore, catalog: simulator.catalog)
        app.serverAPI = try apple.map { try S.client($0, timeout: timeout) }
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return try ValidationService(
            apps: [app], storage: MemoryStorage(), clock: { (try? simulator.now) ?? Date() }, logger: logger)
    }

    @Test func aServerThatMissedNotificationsCatchesUpThroughTheAPI() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        let gold = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        try await S.serve(simulator) { apple in
            let service = try Self.service(simulator, apple: apple)
            // The app posted its first purchase; every notification after it was lost.
            let first = try await service.recordTransaction(
                signedTransaction: gold.jws, signedRenewalInfo: nil, appAccountToken: nil, caller: nil)
            try simulator.advance(by: SubscriptionPeriod(value: 1, unit: .month), count: 3)
            _ = try simulator.purchase(FloristCatalog.flowers, account: "ana")
            let before = try await service.entitlements(of: first.customer)
            #expect(!before.entitledProductIDs.contains(FloristCatalog.gold), "the server thinks gold lapsed")
            #expect(!before.entitledProductIDs.contains(FloristCatalog.flowers))

            let refreshed = try await service.refresh(first.customer)
            #expect(refreshed.customer == first.customer)
            #expect(refreshed.entitlements.entitledProductIDs == [FloristCatalog.gold, FloristCatalog.flowers])
            #expect(refreshed.renewalsFetched == 1)
            let stored = try await service.records(of: first.customer)
            #expect(
                Set(stored.transactions.map(\.transactionID))
                    == Set(try simulator.transactions(account: "ana").map(\.transactionID)))
            // Again: nothing new, the same answer.
            let again = try await service.refresh(first.customer)
            #expect(again.entitlements.entitledProductIDs == refreshed.entitlements.entitledProductIDs)
        }
    }

    @Test func withoutAKeyOrAReachableAPIARefreshSaysWhy() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        let gold = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        let unconfigured = try Self.service(simulator, apple: nil)
        let customer = try await unconfigured.recordTransaction(
            signedTransaction: gold.jws, signedRenewalInfo: nil, appAccountToken: nil, caller: nil
        ).customer
        let missing = await #expect(throws: ServiceError.self) { try await unconfigured.refresh(customer) }
        #expect(missing.map(APIError.init)?.status == 409 && missing?.code == "refreshUnavailable")

        // Nothing listens on the discard port; the HTTP client retries the connection until its deadline.
        let unreachable = try Self.service(
            simulator, apple: URL(string: "http://127.0.0.1:9")!, timeout: .milliseconds(500))
        let known = try await unreachable.recordTransaction(
            signedTransaction: gold.jws, signedRenewalInfo: nil, appAccountToken: nil, caller: nil
        ).customer
        let down = await #expect(throws: ServiceError.self) { try await unreachable.refresh(known) }
        #expect(down.map(APIError.init)?.status == 502 && down?.code == "serverAPIFailed")
    }

    @Test func theRefreshRouteTakesAnAPIKeyAndAnswersTheCustomersEntitlements() async throws {
        let simulator = try S.simulator()
        try simulator.createAccount("ana")
        let gold = try #require(try simulator.purchase(FloristCatalog.gold, account: "ana").transaction)
        try await S.serve(simulator) { apple in
            let service = try Self.service(simulator, apple: apple)
            let customer = try await service.recordTransaction(
                signedTransaction: gold.jws, signedRenewalInfo: nil, appAccountToken: nil, caller: nil
            ).customer
            _ = try simulator.purchase(FloristCatalog.flowers, account: "ana")
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            let app = buildApplication(
                service: service, configuration: ServerConfiguration(port: 0, apiKeys: ["k1"]), logger: logger)
            try await app.test(.router) { client in
                let path = "/v1/customers/\(customer.id)/refresh"
                let json: HTTPFields = [.contentType: "application/json"]
                let key: HTTPFields = [.authorization: "Bearer k1", .contentType: "application/json"]
                let empty = ByteBuffer(string: "{}")
                try await client.execute(uri: path, method: .post, headers: json, body: empty) {
                    #expect($0.status == .unauthorized)
                }
                try await client.execute(
                    uri: path, method: .post, headers: [.authorization: "Bearer k2", .contentType: "application/json"],
                    body: empty
                ) {
                    #expect($0.status == .forbidden)
                }
                try await client.execute(
                    uri: "/v1/customers/999999/refresh", method: .post, headers: key, body: empty
                ) {
                    #expect($0.status == .notFound)
                }
                try await client.execute(uri: path, method: .post, headers: key, body: empty) { response in
                    #expect(response.status == .ok)
                    let body = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
                    let answer = try #require(body as? [String: Any])
                    #expect(answer["customer"] as? String == customer.id)
                    #expect(answer["transactionsFetched"] as? Int == 2)
                    let entitlements = try #require(answer["entitlements"] as? [String: Any])
                    let products = try #require(entitlements["entitledProductIds"] as? [String])
                    #expect(Set(products) == [FloristCatalog.gold, FloristCatalog.flowers])
                }
            }
        }
    }
}
