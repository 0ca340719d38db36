import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import IAPCore
import IAPServer
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

    /// A server whose local App Store stalled long enough for another to take the lease over stops selling at its
    /// next beat (its routes answer 503); when the new holder's beat stands still in turn, it takes the store back as
    /// the database holds it, and gives the lease up when it stops.
    @Test func aStoreWhoseLeaseWasTakenOverStopsSellingUntilItTakesItBack() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("iapkit-lease-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
        var settings = ServerSettings(databaseURL: file)
        settings.server.apiKeys = [ServerHarness.apiKey]
        settings.simulator?.catalogPath = "Examples/Florist/Florist.storekit"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let runtime = try await ServerRuntime.start(
            settings, logger: logger, clock: { Self.start }, authority: SimulatorTestKeys.pki)
        let addition = try #require(runtime.additions.first as? LocalAppStoreAddition)
        #expect(addition.heldElsewhere == nil)
        let intruder = try await SQLStorage(database: try SQLiteDatabase(path: file))
        try await runtime.application().test(.router) { client in
            #expect(try await client.post("/simulator/accounts", ["accountId": "ana"]).0 == .created)
            // The holder has not beaten (its run loop is not started: a stall); the intruder takes over.
            let seen = try await intruder.takeSimulatorLease(
                bundleID: "com.example.florist", holder: "intruder", replacing: nil)
            #expect(seen.holder != "intruder" && seen.beat == 0)
            #expect(
                try await intruder.takeSimulatorLease(
                    bundleID: "com.example.florist", holder: "intruder", replacing: seen
                ).holder == "intruder")
            let beating = Task { await addition.run() }
            var status = HTTPResponse.Status.created
            var answer: [String: Any] = [:]
            var refusedAccount = ""
            for _ in 0..<100 where status != .serviceUnavailable {
                try await Task.sleep(for: .milliseconds(50))
                refusedAccount = "bea\(UUID())"
                (status, answer) = try await client.post("/simulator/accounts", ["accountId": refusedAccount])
            }
            #expect(status == .serviceUnavailable && answer["code"] as? String == "localAppStoreElsewhere", "\(answer)")
            #expect((answer["message"] as? String)?.contains("took over") == true, "\(answer)")
            // However the path is spelled, as long as the router would route it.
            for path in ["//simulator/accounts", "/simulator//accounts", "//inApps/v1/notifications/test"] {
                #expect(try await client.post(path, ["accountId": "cy"]).0 == .serviceUnavailable, "\(path)")
            }
            #expect(try await client.execute(uri: "/store", method: .get) { $0.status } == .serviceUnavailable)
            // The intruder never beats: once its beat stood still for the watch (3 s), this server takes the store
            // back, as the database holds it (ana, saved before the intruder came; nothing after).
            for _ in 0..<100 where addition.health?.status != "sells" { try await Task.sleep(for: .milliseconds(100)) }
            #expect(addition.health?.status == "sells")
            #expect(try await client.get("/simulator/accounts/ana").0 == .ok)
            // The change answered 503 (its save found the lease taken) was never the store's: reloaded, it is gone.
            #expect(try await client.get("/simulator/accounts/\(refusedAccount)").0 == .notFound)
            #expect(try await client.post("/simulator/accounts", ["accountId": "dee"]).0 == .created)
            // The store's notifications reach validation again: a refund's is applied (its send attempt recorded).
            let (bought, purchase) = try await client.post(
                "/simulator/accounts/dee/purchases", ["productId": "com.example.florist.vip.gold"])
            let id = try #require(
                (purchase["transaction"] as? [String: Any])?["transactionId"] as? String, "\(bought) \(purchase)")
            #expect(try await client.post("/simulator/transactions/\(id)/refund", [:]).0 == .ok)
            let refund = try #require(addition.store.notifications.last)
            for _ in 0..<50 where addition.store.sendAttempts(notificationUUID: refund.uuid).isEmpty {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(addition.store.sendAttempts(notificationUUID: refund.uuid).map(\.result) == ["SUCCESS"])
            #expect(try await client.execute(uri: "/store", method: .get) { $0.status } == .ok)
            beating.cancel()
            await beating.value
        }
        await addition.finish()
        let lease = try await intruder.takeSimulatorLease(
            bundleID: "com.example.florist", holder: "someone", replacing: nil)
        #expect(lease.holder == "someone", "the server that took the store back gave it up when it stopped")
        let saved = try #require(try await intruder.simulatorState(bundleID: "com.example.florist"))
        #expect(saved.state.contains("ana") && saved.state.contains("dee"), "what it sold is saved")
        try await intruder.shutdown()
        try await runtime.storage.shutdown()
    }

    /// A holder that stalled while another server took the store, sold and gave it up (its row gone) does not take
    /// the free lease back with what it holds in memory: it counts the lease lost and takes the store over as the
    /// database holds it, with what the other server sold.
    @Test func aStalledHolderWhoseLeaseWasTakenAndGivenUpContinuesWhatTheOtherSold() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("iapkit-lease-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
        var settings = ServerSettings(databaseURL: file)
        settings.server.apiKeys = [ServerHarness.apiKey]
        settings.simulator?.catalogPath = "Examples/Florist/Florist.storekit"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let runtime = try await ServerRuntime.start(
            settings, logger: logger, clock: { Self.start }, authority: SimulatorTestKeys.pki)
        let addition = try #require(runtime.additions.first as? LocalAppStoreAddition)
        let other = try await SQLStorage(database: try SQLiteDatabase(path: file))
        try await runtime.application().test(.router) { client in
            #expect(try await client.post("/simulator/accounts", ["accountId": "ana"]).0 == .created)
            // Another server takes the lease over from the stalled holder (its run loop not started), sells a store
            // of its own (one account, zed) and stops cleanly.
            let seen = try await other.takeSimulatorLease(
                bundleID: "com.example.florist", holder: "other", replacing: nil)
            #expect(
                try await other.takeSimulatorLease(bundleID: "com.example.florist", holder: "other", replacing: seen)
                    .holder == "other")
            let sold = try AppStoreSimulator(
                catalog: addition.store.catalog, configuration: addition.store.configuration,
                pki: SimulatorTestKeys.pki)
            try sold.createAccount("zed")
            #expect(
                try await other.saveSimulatorState(
                    try #require(sold.changedRows()), bundleID: "com.example.florist", holder: "other"))
            try await other.releaseSimulatorLease(bundleID: "com.example.florist", holder: "other")
            // The stalled holder wakes up.
            let running = Task { await addition.run() }
            var zed = HTTPResponse.Status.notFound
            for _ in 0..<100 where zed != .ok {
                try await Task.sleep(for: .milliseconds(100))
                zed = try await client.get("/simulator/accounts/zed").0
            }
            #expect(zed == .ok, "what the other server sold")
            #expect(addition.health?.status == "sells")
            #expect(
                try await client.get("/simulator/accounts/ana").0 == .notFound, "the other server's store has no ana")
            running.cancel()
            await running.value
        }
        await addition.finish()
        try await other.shutdown()
        try await runtime.storage.shutdown()
    }

    /// A seller whose beats the database does not confirm (here another connection holds SQLite's write lock for 4 s)
    /// stops answering the store's routes after half the watch (1.5 s), before another server could take the store
    /// over from its still beat, and answers again once a beat goes through.
    @Test func aSellerWhoseLeaseTheDatabaseDoesNotConfirmStopsAnsweringUntilItDoes() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("iapkit-lease-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
        var settings = ServerSettings(databaseURL: file)
        settings.server.apiKeys = [ServerHarness.apiKey]
        settings.simulator?.catalogPath = "Examples/Florist/Florist.storekit"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let runtime = try await ServerRuntime.start(
            settings, logger: logger, clock: { Self.start }, authority: SimulatorTestKeys.pki)
        let addition = try #require(runtime.additions.first as? LocalAppStoreAddition)
        try await runtime.application().test(.router) { client in
            let running = Task { await addition.run() }
            #expect(try await client.post("/simulator/accounts", ["accountId": "ana"]).0 == .created)
            let locker = Process()
            locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            locker.arguments = [
                "python3", "-c",
                """
                import sqlite3, sys, time
                c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
                c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(4); c.execute('COMMIT')
                """, file,
            ]
            let output = Pipe()
            locker.standardOutput = output
            try locker.run()
            _ = output.fileHandleForReading.availableData  // "locked"
            var (status, answer) = (HTTPResponse.Status.ok, [String: Any]())
            for _ in 0..<35 where status != .serviceUnavailable {
                try await Task.sleep(for: .milliseconds(100))
                (status, answer) = try await client.get("/simulator/accounts/ana")
            }
            #expect(
                status == .serviceUnavailable && answer["code"] as? String == "localAppStoreUnconfirmed", "\(answer)")
            #expect(try await client.post("/v1/transactions", [:]).0 != .serviceUnavailable, "validation is untouched")
            locker.waitUntilExit()
            for _ in 0..<100 where status != .ok {
                try await Task.sleep(for: .milliseconds(100))
                status = try await client.get("/simulator/accounts/ana").0
            }
            #expect(status == .ok, "a beat went through: it sells again")
            #expect(addition.health?.status == "sells")
            running.cancel()
            await running.value
        }
        await addition.finish()
        try await runtime.storage.shutdown()
    }

    /// A start that fails after the local App Store took its lease (here: a saved store it cannot read) gives the lease
    /// up, so the next start need not wait for it to go still.
    @Test func aStartThatFailsGivesTheLeaseUp() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("iapkit-lease-\(UUID()).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
        let storage = try await SQLStorage(database: try SQLiteDatabase(path: file))
        try await storage.saveSimulatorState(
            SimulatorStateRows(state: "not a saved store", transactions: [], notifications: []),
            bundleID: "com.example.florist")
        var settings = ServerSettings(databaseURL: file)
        settings.simulator?.catalogPath = "Examples/Florist/Florist.storekit"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        await #expect(throws: (any Error).self) {
            _ = try await ServerRuntime.start(
                settings, logger: logger, clock: { Self.start }, authority: SimulatorTestKeys.pki)
        }
        let lease = try await storage.takeSimulatorLease(
            bundleID: "com.example.florist", holder: "next", replacing: nil)
        #expect(lease.holder == "next")
        try await storage.shutdown()
    }
}
