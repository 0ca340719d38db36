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
import Testing

/// The local App Store's lease in process, on a SQLite file: a store whose lease was taken stops selling and takes
/// it back, a stalled holder continues what another sold, a seller the database does not confirm stops answering, a
/// change the database did not take is not answered as done, a failed start gives the lease up. The servers' run
/// loops (which beat the lease) are started by each test where it says. Conditions are polled up to generous
/// deadlines: the whole suite shares two cores. One at a time: SQLite's wait for a lock another connection holds
/// blocks the waiting thread (up to 5 s), and the tests' threads are the cooperative pool's two.
@Suite("the local App Store's lease, in process", .serialized)
struct LocalAppStoreLeaseInProcessTests {
    static let bundleID = "com.example.florist"

    /// A server with the local App Store on a new SQLite file (removed by `cleanUp`), its lease watched for `watch`.
    struct Leased {
        let file: String
        let runtime: ServerRuntime
        let addition: LocalAppStoreAddition

        /// - Parameter file: the database (by default a new one).
        init(watch: Duration = .seconds(3), file: String? = nil) async throws {
            self.file =
                file
                ?? TestFiles.url("lease.sqlite").path
            var settings = ServerSettings(databaseURL: self.file)
            settings.server.apiKeys = [ServerHarness.apiKey]
            settings.simulator?.catalogPath = "Examples/Florist/Florist.storekit"
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            runtime = try await ServerRuntime.start(
                settings, logger: logger, clock: { SimulatorAPITests.start },
                additions: [LocalAppStoreAddition.maker(authority: SimulatorTestKeys.pki, leaseWatch: watch)])
            addition = try #require(runtime.additions.first as? LocalAppStoreAddition)
        }

        /// Another connection to the same database, as another server has.
        func otherStorage() async throws -> SQLStorage {
            try await SQLStorage(database: try SQLiteDatabase(path: file))
        }

        func cleanUp() async throws {
            await addition.finish()
            try await runtime.storage.shutdown()
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        }
    }

    /// Whether `condition` came true within `limit`, asked every 100 ms.
    static func eventually(within limit: Duration = .seconds(30), _ condition: () async throws -> Bool)
        async rethrows -> Bool
    {
        let deadline = ContinuousClock.now + limit
        repeat {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        return false
    }

    /// The status `GET path` answers (a page's, whose body is no JSON, included).
    static func status(_ client: some TestClientProtocol, _ path: String) async throws -> HTTPResponse.Status {
        try await client.execute(uri: path, method: .get, headers: keyHeaders) { $0.status }
    }

    /// A server whose local App Store stalled long enough for another to take the lease over stops selling at its
    /// next beat (its routes answer 503); when the new holder's beat stands still in turn, it takes the store back as
    /// the database holds it (what its fenced save refused is gone), its notifications reach validation again, and it
    /// gives the lease up when it stops.
    @Test func aStoreWhoseLeaseWasTakenOverStopsSellingUntilItTakesItBack() async throws {
        // A watch of 8 s: the store answers while its beats come within 4 s (a loaded machine delays them).
        let leased = try await Leased(watch: .seconds(8))
        let addition = leased.addition
        #expect(addition.heldElsewhere == nil)
        let intruder = try await leased.otherStorage()
        try await leased.runtime.application().test(.router) { client in
            #expect(try await client.post("/simulator/accounts", ["accountId": "ana"]).0 == .created)
            // The holder has not beaten (its run loop is not started: a stall); the intruder takes over.
            let seen = try await intruder.takeSimulatorLease(
                bundleID: Self.bundleID, holder: "intruder", replacing: nil)
            #expect(seen.holder != "intruder" && seen.beat == 0)
            #expect(
                try await intruder.takeSimulatorLease(bundleID: Self.bundleID, holder: "intruder", replacing: seen)
                    .holder == "intruder")
            let beating = Task { await addition.run() }
            var answer: [String: Any] = [:]
            var refusedAccount = ""
            let refused = try await Self.eventually {
                refusedAccount = "bea\(UUID())"
                let status: HTTPResponse.Status
                (status, answer) = try await client.post("/simulator/accounts", ["accountId": refusedAccount])
                return status == .serviceUnavailable
            }
            #expect(refused && answer["code"] as? String == "localAppStoreElsewhere", "\(answer)")
            #expect((answer["message"] as? String)?.contains("took over") == true, "\(answer)")
            // However the path is spelled, as long as the router would route it; its pages too.
            for path in ["//simulator/accounts", "/simulator//accounts", "//inApps/v1/notifications/test"] {
                #expect(try await client.post(path, ["accountId": "cy"]).0 == .serviceUnavailable, "\(path)")
            }
            #expect(try await Self.status(client, "/store") == .serviceUnavailable)
            // The intruder never beats: once its beat stood still for the watch (8 s), this server takes the store
            // back, as the database holds it (ana, saved before the intruder came; nothing after).
            #expect(
                try await Self.eventually {
                    try await Self.status(client, "/simulator/accounts/ana") == .ok
                })
            // The change answered 503 (its save found the lease taken) was never the store's: reloaded, it is gone.
            #expect(
                try await Self.eventually {
                    try await Self.status(client, "/simulator/accounts/\(refusedAccount)") == .notFound
                })
            #expect(
                try await Self.eventually {
                    try await client.post("/simulator/accounts", ["accountId": "dee"]).0 == .created
                })
            // The store's notifications reach validation again: a refund's is applied (its send attempt recorded).
            let (bought, purchase) = try await client.post(
                "/simulator/accounts/dee/purchases", ["productId": "com.example.florist.vip.gold"])
            let id = try #require(
                (purchase["transaction"] as? [String: Any])?["transactionId"] as? String, "\(bought) \(purchase)")
            #expect(try await client.post("/simulator/transactions/\(id)/refund", [:]).0 == .ok)
            let refund = try #require(addition.store.notifications.last)
            #expect(await Self.eventually { !addition.store.sendAttempts(notificationUUID: refund.uuid).isEmpty })
            #expect(addition.store.sendAttempts(notificationUUID: refund.uuid).map(\.result) == ["SUCCESS"])
            #expect(try await Self.status(client, "/store") == .ok)
            beating.cancel()
            await beating.value
        }
        await addition.finish()
        let lease = try await intruder.takeSimulatorLease(bundleID: Self.bundleID, holder: "someone", replacing: nil)
        #expect(lease.holder == "someone", "the server that took the store back gave it up when it stopped")
        let saved = try #require(try await intruder.simulatorState(bundleID: Self.bundleID))
        #expect(saved.state.contains("ana") && saved.state.contains("dee"), "what it sold is saved")
        try await intruder.shutdown()
        try await leased.cleanUp()
    }

    /// A holder that stalled while another server took the store, sold and gave it up (its row gone) does not take
    /// the free lease back with what it holds in memory: it counts the lease lost and takes the store over as the
    /// database holds it, with what the other server sold.
    @Test func aStalledHolderWhoseLeaseWasTakenAndGivenUpContinuesWhatTheOtherSold() async throws {
        // A free lease is taken at once whatever the watch: a long one, so late beats do not refuse.
        let leased = try await Leased(watch: .seconds(20))
        let addition = leased.addition
        let other = try await leased.otherStorage()
        try await leased.runtime.application().test(.router) { client in
            #expect(try await client.post("/simulator/accounts", ["accountId": "ana"]).0 == .created)
            // Another server takes the lease over from the stalled holder (its run loop not started), sells a store
            // of its own (one account, zed) and stops cleanly.
            let seen = try await other.takeSimulatorLease(bundleID: Self.bundleID, holder: "other", replacing: nil)
            #expect(
                try await other.takeSimulatorLease(bundleID: Self.bundleID, holder: "other", replacing: seen).holder
                    == "other")
            let sold = try AppStoreSimulator(
                catalog: addition.store.catalog, configuration: addition.store.configuration,
                pki: SimulatorTestKeys.pki)
            try sold.createAccount("zed")
            #expect(
                try await other.saveSimulatorState(
                    try #require(sold.changedRows()), bundleID: Self.bundleID, holder: "other"))
            try await other.releaseSimulatorLease(bundleID: Self.bundleID, holder: "other")
            // The stalled holder wakes up.
            let running = Task { await addition.run() }
            #expect(
                try await Self.eventually { try await Self.status(client, "/simulator/accounts/zed") == .ok },
                "what the other server sold")
            #expect(
                try await Self.eventually { try await Self.status(client, "/simulator/accounts/ana") == .notFound },
                "the other's store has no ana")
            running.cancel()
            await running.value
        }
        try await other.shutdown()
        try await leased.cleanUp()
    }

    /// A seller whose beats the database does not confirm (here another connection holds SQLite's write lock)
    /// stops answering the store's routes after half the watch (1 s here), before another server could take the store
    /// over from its still beat, and answers again once a beat goes through. Validation is untouched.
    @Test func aSellerWhoseLeaseTheDatabaseDoesNotConfirmStopsAnsweringUntilItDoes() async throws {
        let leased = try await Leased(watch: .seconds(2))
        let addition = leased.addition
        try await leased.runtime.application().test(.router) { client in
            let running = Task { await addition.run() }
            #expect(try await client.post("/simulator/accounts", ["accountId": "ana"]).0 == .created)
            let lock = try await WriteLock(leased.file)
            var answer: [String: Any] = [:]
            var (refused, said) = (false, false)
            _ = try await Self.eventually {
                let status: HTTPResponse.Status
                (status, answer) = try await client.get("/simulator/accounts/ana")
                if status == .serviceUnavailable && answer["code"] as? String == "localAppStoreUnconfirmed" {
                    refused = true
                }
                if addition.health?.status == "sellsUnconfirmed" { said = true }
                return refused && said
            }
            #expect(refused, "\(answer)")
            #expect(said, "/health says so")
            #expect(try await client.post("/v1/transactions", [:]).0 != .serviceUnavailable, "validation is untouched")
            try await lock.release()
            #expect(
                try await Self.eventually {
                    try await Self.status(client, "/simulator/accounts/ana") == .ok
                        && addition.health?.status == "sells"
                }, "a beat went through: it sells again")
            running.cancel()
            await running.value
        }
        try await leased.cleanUp()
    }

    /// A change whose save fails (another connection holds SQLite's write lock past the 5 s the server waits for it) is not answered as done: 503 `localAppStoreUnsaved`. It stays in memory and is saved once the
    /// database answers; its notification waits for the database too, and is applied then, with one send attempt.
    /// (The watch is long here, so the lease stays confirmed without beats.)
    @Test func aChangeTheDatabaseDidNotTakeIsNotAnsweredAsDoneAndItsNotificationWaits() async throws {
        let leased = try await Leased(watch: .seconds(600))
        let addition = leased.addition
        try await leased.runtime.application().test(.router) { client in
            #expect(try await client.post("/simulator/accounts", ["accountId": "ana"]).0 == .created)
            let (_, purchase) = try await client.post(
                "/simulator/accounts/ana/purchases", ["productId": "com.example.florist.vip.gold"])
            let id = try #require((purchase["transaction"] as? [String: Any])?["transactionId"] as? String)
            // No run loop: the change's save is the first write to wait for the lock.
            let lock = try await WriteLock(leased.file)
            let (status, answer) = try await client.post("/simulator/transactions/\(id)/refund", [:])
            #expect(status == .serviceUnavailable && answer["code"] as? String == "localAppStoreUnsaved", "\(answer)")
            let refund = try #require(addition.store.notifications.last)
            #expect(refund.type.rawValue == "REFUND")
            try await lock.release()
            #expect(await Self.eventually { !addition.store.sendAttempts(notificationUUID: refund.uuid).isEmpty })
            // One attempt, the one that reached validation: the tries while the database did not answer are none.
            #expect(addition.store.sendAttempts(notificationUUID: refund.uuid).map(\.result) == ["SUCCESS"])
        }
        await addition.finish()
        // Saved once the database answered: the refund is in the saved store.
        let saved = try #require(try await leased.runtime.storage.simulatorState(bundleID: Self.bundleID))
        #expect(saved.notifications.contains { $0.json?.contains("REFUND") == true })
        try await leased.cleanUp()
    }

    /// A notification reaches validation only once the change that made it is in the database: a take-over continues
    /// from there, so validation never holds what the store lost (nor sees its UUID again for something else). Here
    /// the store saves to a SQLite file another connection has locked, while validation's storage answers.
    @Test func aNotificationReachesValidationOnlyOnceTheChangeThatMadeItIsSaved() async throws {
        let harness = try ServerHarness()
        let file = TestFiles.url("lease.sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
        let storage = try await SQLStorage(database: try SQLiteDatabase(path: file))
        let (logger, log) = RecordedLog.logger()
        let addition = LocalAppStoreAddition(store: harness.store, storage: storage, logger: logger)
        await addition.attach(to: harness.service)
        try harness.store.createAccount("ana")
        let bought = try #require(try harness.store.purchase(FloristCatalog.flowers, account: "ana").transaction)
        // Saved, and its notifications (if any) applied: what validation holds before.
        #expect(await Self.eventually { (try? await storage.simulatorState(bundleID: Self.bundleID)) != nil })
        try await Task.sleep(for: .milliseconds(500))
        let before = try await harness.service.storage.counts().notifications
        let lock = try await WriteLock(file)
        try harness.store.refund(bought.transactionID)
        let refund = try #require(harness.store.notifications.last)
        #expect(refund.type.rawValue == "REFUND")
        // The save waits 5 s for the lock and fails, and is tried again: the refund's notification waits meanwhile.
        try await Task.sleep(for: .seconds(7))
        #expect(try await harness.service.storage.counts().notifications == before, "not applied while unsaved")
        #expect(harness.store.sendAttempts(notificationUUID: refund.uuid).isEmpty)
        try await lock.release()
        #expect(await Self.eventually { !harness.store.sendAttempts(notificationUUID: refund.uuid).isEmpty })
        #expect(harness.store.sendAttempts(notificationUUID: refund.uuid).map(\.result) == ["SUCCESS"])
        #expect(try await harness.service.storage.counts().notifications == before + 1)
        // The outage logged once as an error (not at every retry), and its end.
        let saves = log.all.filter { $0.message.contains("local App Store") && $0.message.contains("saved") }
        #expect(saves.filter { $0.level == .error }.count == 1, "\(saves.map(\.message))")
        #expect(saves.last?.message == "the local App Store was saved again" && saves.last?.level == .notice)
        await addition.finish()
        try await storage.shutdown()
    }

    /// A start that fails after the local App Store took its lease (here: a saved store it cannot read) gives the lease
    /// up, so the next start need not wait for it to go still.
    @Test func aStartThatFailsGivesTheLeaseUp() async throws {
        let file = TestFiles.url("lease.sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) } }
        let storage = try await SQLStorage(database: try SQLiteDatabase(path: file))
        try await storage.saveSimulatorState(
            SimulatorStateRows(state: "not a saved store", transactions: [], notifications: []), bundleID: Self.bundleID
        )
        await #expect(throws: (any Error).self) { _ = try await Leased(file: file) }
        let lease = try await storage.takeSimulatorLease(bundleID: Self.bundleID, holder: "next", replacing: nil)
        #expect(lease.holder == "next")
        try await storage.shutdown()
    }

    /// Another connection holding SQLite's write lock on a database until released (two minutes at most).
    struct WriteLock {
        let process: Process
        let released: String

        /// Returns once the lock is held (waiting without blocking a thread: the tests' threads are the cooperative
        /// pool's few).
        init(_ file: String) async throws {
            let held = file + ".locked"
            released = file + ".released"
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", "-c",
                """
                import os, sqlite3, sys, time
                c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
                c.execute('BEGIN EXCLUSIVE'); open(sys.argv[2], 'w').close()
                end = time.time() + 120
                while not os.path.exists(sys.argv[3]) and time.time() < end: time.sleep(0.05)
                c.execute('COMMIT')
                """, file, held, released,
            ]
            try process.run()
            while !FileManager.default.fileExists(atPath: held), process.isRunning {
                try await Task.sleep(for: .milliseconds(20))
            }
            try? FileManager.default.removeItem(atPath: held)
        }

        /// Lets the lock go and waits until the process has ended.
        func release() async throws {
            _ = FileManager.default.createFile(atPath: released, contents: nil)
            while process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
            try? FileManager.default.removeItem(atPath: released)
        }
    }
}
