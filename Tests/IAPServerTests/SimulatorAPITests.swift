import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPCore
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import Logging
import NIOCore
import Testing

/// The `/simulator` control plane as an app's purchase helper or a browser drives it: the runtime `iapkit serve`
/// builds, with the florist catalog, fixed keys and a clock that moves only when told.
@Suite("Simulator control plane")
struct SimulatorAPITests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    static func runtime(adminToken: String? = nil, host: String = "127.0.0.1") async throws -> ServerRuntime {
        var settings = ServerSettings(databaseURL: ":memory:")
        settings.server.host = host
        settings.server.apiKeys = [ServerHarness.apiKey]
        settings.adminToken = adminToken
        settings.simulator?.catalogPath = "Examples/Florist/Florist.storekit"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return try await ServerRuntime.start(
            settings, logger: logger, clock: { start }, authority: SimulatorTestKeys.pki)
    }

    /// Waits (at most 5 s) until the server has applied every notification the simulator sent.
    static func settle(_ runtime: ServerRuntime) async throws {
        let sent = try #require(runtime.simulator).statistics.notifications
        for _ in 0..<500 {
            if try await runtime.storage.counts().notifications >= sent { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the server applied fewer than \(sent) notifications")
    }

    @Test func anAppBuysRenewsRestoresAndIsRefundedThroughHTTP() async throws {
        let runtime = try await Self.runtime()
        try await runtime.application().test(.router) { client in
            let (created, account) = try await client.post("/simulator/accounts", ["accountId": "ana"])
            #expect(created == .created)
            let device = try #require(account["deviceId"] as? String)
            let (again, duplicate) = try await client.post("/simulator/accounts", ["accountId": "ana"])
            #expect(again.code >= 400 && again.code < 500, "\(duplicate)")

            let (_, products) = try await client.get("/simulator/accounts/ana/products")
            #expect((products["products"] as? [[String: Any]])?.count == 8)

            // Buy a subscription as the app would, then hand the signed transaction to the validation API.
            let token = UUID().uuidString.lowercased()
            let (bought, purchase) = try await client.post(
                "/simulator/accounts/ana/purchases",
                ["productId": FloristCatalog.gold, "deviceId": device, "appAccountToken": token])
            #expect(bought == .created, "\(purchase)")
            let transaction = try #require(purchase["transaction"] as? [String: Any])
            let signed = try #require(transaction["signedTransaction"] as? String)
            let (verified, entitlements) = try await client.post("/v1/transactions", ["signedTransaction": signed])
            #expect(verified == .ok)
            #expect(entitlements["entitledProductIds"] as? [String] == [FloristCatalog.gold])

            // Forty days later the renewals arrived as notifications; the server agrees with the simulator.
            let (advanced, clock) = try await client.post("/simulator/clock/advance", ["seconds": 40 * 86_400])
            #expect(advanced == .ok)
            #expect((clock["now"] as? String)?.hasPrefix("2026-") == true)
            try await Self.settle(runtime)
            let (_, simulated) = try await client.get("/simulator/accounts/ana")
            let (_, served) = try await client.get("/v1/customers/\(token)/entitlements")
            #expect(served["entitledProductIds"] as? [String] == simulated["entitledProductIds"] as? [String])
            #expect((simulated["transactions"] as? [Any])?.count ?? 0 > 1)

            // The receipt and the renewal information the app would read, accepted by the validation API.
            let (_, receipt) = try await client.get("/simulator/accounts/ana/receipt?deviceId=\(device)")
            let receiptData = try #require(receipt["receiptData"] as? String)
            let (receiptStatus, _) = try await client.post(
                "/v1/receipts", ["receiptData": receiptData, "appAccountToken": token])
            #expect(receiptStatus == .ok)
            let (_, renewals) = try await client.get("/simulator/accounts/ana/renewal-info")
            #expect((renewals["signedRenewalInfo"] as? [String])?.count == 1)

            // A minute later, a refund reaches the server by notification and ends the entitlement. (At the same
            // millisecond as the receipt, the two statements would tie and the tie-break would decide.)
            _ = try await client.post("/simulator/clock/advance", ["seconds": 60])
            let (_, listed) = try await client.get("/simulator/accounts/ana/transactions")
            let periods = try #require(listed["transactions"] as? [[String: Any]])
            let latest = try #require(
                periods.max { ($0["purchaseDate"] as? String ?? "") < ($1["purchaseDate"] as? String ?? "") }?[
                    "transactionId"] as? String)
            let (refunded, _) = try await client.post("/simulator/transactions/\(latest)/refund", [:])
            #expect(refunded == .ok)
            try await Self.settle(runtime)
            let (_, after) = try await client.get("/v1/customers/\(token)/entitlements")
            #expect(after["entitledProductIds"] as? [String] == [])

            let (_, notifications) = try await client.get("/simulator/notifications?since=0")
            let types = (notifications["notifications"] as? [[String: Any]] ?? []).compactMap {
                $0["notificationType"] as? String
            }
            #expect(types.first == "SUBSCRIBED")
            #expect(types.contains("DID_RENEW"))
            #expect(types.last == "REFUND")
            #expect(notifications["next"] as? Int == types.count)
        }
    }

    @Test func askToBuyWaitsForApprovalOrDecline() async throws {
        let runtime = try await Self.runtime()
        try await runtime.application().test(.router) { client in
            _ = try await client.post("/simulator/accounts", ["accountId": "kid", "askToBuy": true])
            let (asked, first) = try await client.post(
                "/simulator/accounts/kid/purchases", ["productId": FloristCatalog.flowers])
            #expect(asked == .accepted)
            #expect(first["outcome"] as? String == "pending")
            let pending = try #require((first["pending"] as? [String: Any])?["id"] as? String)
            let (approved, purchase) = try await client.post("/simulator/pending/\(pending)/approve", [:])
            #expect(approved == .created)
            #expect(purchase["outcome"] as? String == "purchased")

            let (_, second) = try await client.post(
                "/simulator/accounts/kid/purchases", ["productId": FloristCatalog.chocolates])
            let declined = try #require((second["pending"] as? [String: Any])?["id"] as? String)
            let (status, _) = try await client.post("/simulator/pending/\(declined)/decline", [:])
            #expect(status == .ok)
            let (_, account) = try await client.get("/simulator/accounts/kid")
            #expect(account["entitledProductIds"] as? [String] == [FloristCatalog.flowers])
        }
    }

    @Test func mistakesAreCodedClientErrors() async throws {
        let runtime = try await Self.runtime()
        try await runtime.application().test(.router) { client in
            let cases: [(String, [String: Any], HTTPResponse.Status, String)] = [
                ("/simulator/accounts", [:], .badRequest, "missingField"),
                ("/simulator/accounts", ["accountId": "a b"], .badRequest, "invalidField"),
                ("/simulator/accounts", ["accountId": "x", "extra": 1], .badRequest, "unknownField"),
                (
                    "/simulator/accounts/nobody/purchases", ["productId": FloristCatalog.gold], .notFound,
                    "unknownAccount"
                ),
                ("/simulator/transactions/999/refund", [:], .notFound, "unknownTransaction"),
                ("/simulator/pending/nope/approve", [:], .notFound, "unknownRequest"),
                ("/simulator/clock/advance", ["seconds": -5], .badRequest, "invalidField"),
            ]
            for (uri, body, status, code) in cases {
                let (got, answer) = try await client.post(uri, body)
                #expect(got == status, "\(uri) \(body): \(answer)")
                #expect(answer["code"] as? String == code, "\(uri) \(body): \(answer)")
            }
            _ = try await client.post("/simulator/accounts", ["accountId": "ana"])
            let (unknownProduct, answer) = try await client.post(
                "/simulator/accounts/ana/purchases", ["productId": "com.example.nothing"])
            #expect(unknownProduct.code >= 400 && unknownProduct.code < 500, "\(answer)")

            // A number its field cannot hold is named as such, not as JSON that does not parse; a field of a request
            // that takes none says so; and what the client sent is not sent back at any length.
            let (tooLarge, large) = try await client.post("/simulator/clock/advance", ["seconds": 1e308])
            #expect(tooLarge == .badRequest && (large["message"] as? String ?? "").contains("does not fit"))
            let (none, noFields) = try await client.post("/simulator/accounts/ana/devices", ["deviceId": "x"])
            #expect(none == .badRequest && (noFields["message"] as? String ?? "").contains("it takes none"))
            let long = String(repeating: "p", count: 100_000)
            let (_, echoed) = try await client.post("/simulator/accounts/ana/purchases", ["productId": long])
            #expect((echoed["message"] as? String ?? "").unicodeScalars.count <= 1_001, "cut at 1,000")
        }
    }

    @Test func theAdminTokenGuardsTheSimulatorAndBeyondLoopbackNoTokenRefusesEveryone() async throws {
        let token = "admin-token-0123456789"
        let guarded = try await Self.runtime(adminToken: token)
        try await guarded.application().test(.router) { client in
            let (missing, first) = try await client.get("/simulator", headers: [:])
            #expect(missing == .unauthorized)
            #expect(first["code"] as? String == "adminTokenMissing")
            let (wrong, _) = try await client.get("/simulator", headers: [.authorization: "Bearer nope"])
            #expect(wrong == .forbidden)
            let (right, state) = try await client.get("/simulator", headers: [.authorization: "Bearer \(token)"])
            #expect(right == .ok)
            #expect(state["bundleId"] as? String == "com.example.florist")
        }
        // An address beyond loopback (TEST-NET-1, never bound here: the router is tested without a socket).
        let exposed = try await Self.runtime(host: "192.0.2.10")
        #expect(exposed.simulatorServed == nil)
        #expect(exposed.settings.operatorAccess == .refused)
        try await exposed.application().test(.router) { client in
            for path in ["/simulator", "/console/customers/ana", "/metrics"] {
                let (status, answer) = try await client.get(path, headers: [:])
                #expect(status == .forbidden, "\(path)")
                #expect(answer["code"] as? String == "adminTokenNotConfigured", "\(path)")
            }
        }
    }
}
