import Foundation
import IAPCore
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Testing

@testable import IAPStoreClient
@testable import IAPStoreClientTesting

/// `/simulator` speaks one set of types, `SimulatorWire`, at both ends: every body a client encodes is read by a real
/// server, and every answer the server writes decodes, field for field, into the value the store itself makes.
@Suite struct SimulatorWireTests {
    typealias F = FloristCatalog

    /// A client of the server at `url`, as the HTTP backend has one.
    static func client(_ url: URL) -> JSONHTTPClient {
        JSONHTTPClient(
            baseURL: url, headers: [], timeout: .seconds(10), unreachable: .networkError,
            transport: AsyncHTTPClientTransport())
    }

    @Test func everyBodyAndAnswerRoundTripsThroughARealServer() async throws {
        let world = try StoreHarness(.signedTransactions)
        let store = world.simulator
        try await StoreHarness.serve(store) { url in
            let http = Self.client(url)
            let token = UUID()
            let opened = try await http.decode(
                SimulatorWire.SignedIn.self, "POST", "/simulator/accounts",
                body: SimulatorWire.OpenAccount(accountId: "ana", storefront: "GBR", appAccountToken: token.uuidString))
            #expect(opened.accountId == "ana")
            #expect(try store.devices(account: "ana").map(\.uuidString) == [opened.deviceId])

            // (A purchase with a promotional offer in its body: HTTPBackendTests.)
            let bought = try await http.decode(
                SimulatorWire.PurchaseResult.self, "POST", "/simulator/accounts/ana/purchases",
                body: SimulatorWire.Purchase(
                    productId: F.flowers, deviceId: opened.deviceId, quantity: 1, interrupted: false, userCancels: false
                ))
            let flowers = try #require(try store.transactions(account: "ana").last)
            #expect(bought == SimulatorWire.PurchaseResult(.purchased(flowers)))
            // Answers decode into exactly what the store makes of its own state.
            #expect(try await http.decode(SimulatorWire.State.self, "GET", "/simulator") == (try store.wireState()))
            #expect(
                try await http.decode(SimulatorWire.Account.self, "GET", "/simulator/accounts/ana")
                    == (try store.wireAccount("ana")))
            #expect(
                try await http.decode(SimulatorWire.Products.self, "GET", "/simulator/accounts/ana/products")
                    == (try store.wireProducts(nil, account: "ana")))
            #expect(
                try await http.decode(SimulatorWire.Transactions.self, "GET", "/simulator/accounts/ana/transactions")
                    == SimulatorWire.Transactions(try store.transactions(account: "ana")))
            #expect(
                try await http.decode(
                    SimulatorWire.Done.self, "POST", "/simulator/transactions/\(flowers.transactionID)/finish")
                    == SimulatorWire.Done(finished: flowers.transactionID))
            #expect(
                try await http.decode(SimulatorWire.Clock.self, "GET", "/simulator/clock") == (try store.wireClock()))
            let moved = try await http.decode(
                SimulatorWire.Now.self, "POST", "/simulator/clock/advance", body: SimulatorWire.Advance(seconds: 3600))
            #expect(moved.now == (try store.now))
            let renewals = try await http.decode(
                SimulatorWire.RenewalInfos.self, "GET", "/simulator/accounts/ana/renewal-info")
            #expect(renewals.signedRenewalInfo == (try store.renewalInfos(account: "ana")))
            #expect(
                try await http.decode(SimulatorWire.Notifications.self, "GET", "/simulator/notifications")
                    == store.wireNotifications(since: 0))
            let limit = SimulatorWire.RateLimit(requests: 5, windowSeconds: 60)
            #expect(
                try await http.decode(
                    SimulatorWire.RateLimit.self, "PUT", "/simulator/inapps/rate-limit", body: limit) == limit)
        }
    }

    @Test func aMemberTheTypeDoesNotHaveIsRefusedNamed() async throws {
        let world = try StoreHarness(.signedTransactions)
        try world.customer("ana")
        try await StoreHarness.serve(world.simulator) { url in
            struct Misspelt: Encodable {
                var productId = FloristCatalog.flowers
                var quantitiy = 2
            }
            let (status, bytes) = try await Self.client(url).send(
                "POST", "/simulator/accounts/ana/purchases", body: Misspelt())
            #expect(status == 400)
            let answer = try JSONDecoder().decode([String: String].self, from: Data(bytes))
            #expect(answer["code"] == "unknownField")
            #expect(answer["message"]?.contains("quantitiy") == true)
            #expect(try world.simulator.transactions(account: "ana").isEmpty)
        }
    }
}
