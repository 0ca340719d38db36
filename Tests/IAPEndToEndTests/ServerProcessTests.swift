import Foundation
import IAPCatalog
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPSimulatorServer
import IAPTestSupport
import Testing

/// The server as users run it: `iapkit serve` processes on real sockets, SQLite files and a PostgreSQL server.
@Suite(
    "iapkit serve processes", .serialized,
    .enabled(if: ServerProcess.executable != nil, "\(ServerProcess.skipMessage)"))
struct ServerProcessTests {
    static let key = "process-test-key-0123456789"

    /// A folder holding the fixed test authority, so the server's simulated app trusts what the test's simulator
    /// signs.
    static func pkiFolder() throws -> URL {
        let folder = TestFiles.url("pki")
        try SimulatorTestKeys.pki.export(to: folder, includingKeys: true)
        return folder
    }

    /// A simulator of the florist app on the test authority, its clock frozen at the real now (the server checks
    /// notification ages against its own wall clock).
    static func simulator() throws -> AppStoreSimulator {
        try AppStoreSimulator(
            catalog: try Catalog.load(contentsOfFile: "Examples/Florist/Florist.storekit"),
            configuration: SimulatorConfiguration(bundleID: "com.example.florist", start: Date()),
            pki: SimulatorTestKeys.pki)
    }

    /// A new user's first command, outside the repository and with no flags: the server starts with the florist
    /// catalog the package ships, sells it, and writes its database where it was started.
    @Test func servesTheFloristStoreFromAnyFolder() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let folder = TestFiles.url("anywhere")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await ServerProcess.start([], in: folder)
        let (status, health) = try await server.get("/health")
        #expect(status == 200)
        #expect(health["apps"] as? [String] == ["com.example.florist"])
        #expect(try await server.post("/simulator/accounts", ["accountId": "ana"]).0 == 201)
        let (bought, answer) = try await server.post(
            "/simulator/accounts/ana/purchases", ["productId": "com.example.florist.vip.gold"])
        #expect(bought == 201, "\(answer)")
        try await server.stop()
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("iapkit.sqlite").path))

        // A second server on the same port is told which port and which flag, not errno 98, before it opens its
        // database (it would make its tables, and could take a local App Store over, before it exits).
        let again = try await ServerProcess.start(["--database", ":memory:"], in: folder)
        defer { Task { try? await again.stop() } }
        let unopened = folder.appendingPathComponent("second.sqlite").path
        let (exit, output) = try await ExternalTool.run(
            ServerProcess.executable!.path,
            ["serve", "--host", "127.0.0.1", "--port", String(again.port), "--database", unopened])
        #expect(exit != 0)
        #expect(!FileManager.default.fileExists(atPath: unopened), "the database was opened first")
        #expect(output.contains("port \(again.port) on 127.0.0.1 is already in use"), "\(output)")
        #expect(output.contains("--port") && !output.contains("errno"), "\(output)")
        let (missing, said) = try await ExternalTool.run(
            ServerProcess.executable!.path,
            ["serve", "--catalog", "/nowhere/Products.plist", "--port", "0", "--database", ":memory:"])
        #expect(missing != 0)
        #expect(said.contains("/nowhere/Products.plist: no such file"), "\(said)")
    }

    /// Ctrl-C while an app listens for transaction updates: the stream ends and the server exits, instead of waiting
    /// for a client that never leaves.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"), "curl is not installed"))
    func anOpenUpdateStreamDoesNotHoldUpShutdown() async throws {
        let folder = try Self.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await ServerProcess.start(["--database", ":memory:", "--pki", folder.path])
        let (created, _) = try await server.post("/simulator/accounts", ["accountId": "ana"])
        #expect(created == 201)
        let listener = Process()
        listener.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        listener.arguments = [
            "-sN", "--max-time", "60", "http://127.0.0.1:\(server.port)/simulator/accounts/ana/updates",
        ]
        let received = Pipe()
        listener.standardOutput = received
        try listener.run()
        let opened = try await offThePool { received.fileHandleForReading.availableData }
        #expect(String(decoding: opened, as: UTF8.self).hasPrefix(": subscribed"))
        let (inTime, status) = try await server.stop(within: .seconds(20))
        #expect(inTime, "the server still ran 20 s after SIGTERM with an update stream open")
        #expect(status == 0)
        let remaining = try await offThePool {
            listener.waitUntilExit()
            return listener.terminationStatus
        }
        #expect(remaining == 0, "the stream ended cleanly for the client")
    }

    @Test func aNotificationAnswered200SurvivesKill9() async throws {
        let folder = try Self.pkiFolder()
        let database = TestFiles.url("store.sqlite").path
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Self.simulator()
        let inbox = SimulatorInbox(store)
        for index in 0..<40 {
            try store.createAccount("customer\(index)")
            _ = try store.purchase(FloristCatalog.flowers, account: "customer\(index)")
        }
        let notifications = inbox.take()
        #expect(notifications.count == 40)

        let server = try await ServerProcess.start([
            "--database", database, "--pki", folder.path, "--api-key", Self.key,
        ])
        for notification in notifications {
            let (status, answer) = try await server.post(
                "/v1/notifications", ["signedPayload": notification.signedPayload])
            #expect(status == 200, "\(answer)")
        }
        try await server.kill()  // right after the last 200: nothing is flushed or closed

        let storage = try await SQLStorage(database: try SQLiteDatabase(path: database))
        let counts = try await storage.counts()
        try await storage.shutdown()
        #expect(counts.notifications == notifications.count)
        #expect(counts.transactions == notifications.count)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
    }

    @Test(
        "two server processes on one PostgreSQL database, sent the same notifications, agree",
        .enabled(if: TestDatabases.postgresURL != nil, "set IAPKIT_TEST_POSTGRES_URL to run it"))
    func twoInstancesOnOnePostgreSQL() async throws {
        let base = try #require(TestDatabases.postgresURL)
        let name = "iapkit_instances_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = try PostgresDatabase(url: base)
        try await admin.execute(SQLStatement("CREATE DATABASE \(name)"))
        let url = base.replacingOccurrences(
            of: #"/[^/?]+(\?|$)"#, with: "/\(name)$1", options: .regularExpression,
            range: base.range(of: "@")
                .map { $0.upperBound..<base.endIndex })
        let folder = try Self.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }

        let store = try Self.simulator()
        let inbox = SimulatorInbox(store)
        let names = ["ana", "ben", "cy"]
        for (index, account) in names.enumerated() {
            try store.createAccount(
                account, appAccountToken: UUID(uuidString: "00000000-0000-4000-8000-00000000010\(index)"))
        }
        _ = try store.purchase(FloristCatalog.gold, account: "ana")
        _ = try store.purchase(FloristCatalog.silver, account: "ben")
        _ = try store.purchase(FloristCatalog.flowers, account: "cy")
        for day in 1...60 {
            try store.advance(by: 86_400)
            if day == 20,
                let group = store.catalog.products.first(where: { $0.id == FloristCatalog.gold })?.subscription?.groupID
            {
                try store.setAutoRenew(account: "ana", group: group, enabled: false)
            }
        }
        let notifications = inbox.take()

        let first = try await ServerProcess.start(["--database", url, "--pki", folder.path, "--api-key", Self.key])
        let second = try await ServerProcess.start(["--database", url, "--pki", folder.path, "--api-key", Self.key])
        // Every notification to both at once: one applies it, the other sees a duplicate (or both race to it).
        var outcomes: [String: Int] = [:]
        for notification in notifications {
            let body = ["signedPayload": notification.signedPayload]
            async let a = first.post("/v1/notifications", body)
            async let b = second.post("/v1/notifications", body)
            let (answerA, answerB) = try await (a, b)
            #expect(answerA.0 == 200 && answerB.0 == 200, "\(answerA.1) \(answerB.1)")
            for answer in [answerA.1, answerB.1] { outcomes[answer["status"] as? String ?? "?", default: 0] += 1 }
        }
        #expect(outcomes["applied"] == notifications.count)
        #expect(outcomes["duplicate"] == notifications.count)

        // The state both serve is the one a single server reaches with the notifications in order.
        let reference = try ValidationService(
            apps: [
                AppConfiguration(
                    bundleID: store.configuration.bundleID, appAppleID: store.configuration.appAppleID,
                    environments: [.sandbox], trustStore: SimulatorTestKeys.pki.trustStore,
                    catalog: FloristCatalog.catalog, maximumNotificationAge: 400 * 86_400)
            ],
            storage: MemoryStorage(), clock: { (try? store.now) ?? store.configuration.start })
        for notification in notifications {
            _ = try await reference.receiveNotification(
                signedPayload: notification.signedPayload,
                body: String(decoding: notification.requestBody, as: UTF8.self))
        }
        let headers = ["Authorization": "Bearer \(Self.key)"]
        for index in names.indices {
            let id = "00000000-0000-4000-8000-00000000010\(index)"
            let expected = try await reference.records(of: try await reference.customer(id, bundleID: nil))
            for server in [first, second] {
                let (status, answer) = try await server.get("/v1/customers/\(id)/transactions", headers: headers)
                #expect(status == 200)
                let documents = (answer["transactions"] as? [[String: Any]] ?? []).compactMap {
                    $0["document"] as? String
                }
                #expect(documents.sorted() == expected.transactions.map(\.document).sorted())
            }
        }
        let (_, health) = try await first.get("/health")
        #expect((health["storage"] as? [String: Any])?["notifications"] as? Int == notifications.count)
        try await first.stop()
        try await second.stop()
        try await admin.execute(SQLStatement("DROP DATABASE \(name)"))
        try await admin.close()
    }
}
