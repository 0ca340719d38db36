import Foundation
import IAPCatalog
import IAPCore
import IAPServer
import IAPSignedData
import IAPSimulator
import IAPTestSupport
import Testing

/// Whether ``ScaleOutTests`` runs: asked for (`IAPKIT_SCALE_OUT_TESTS=1`: its load beside the rest of the suite made
/// other tests' time bounds fail on two cores), and this machine has the built server, PostgreSQL's binaries
/// (Debian's package), nginx, curl and openssl.
let scaleOutAvailable =
    ProcessInfo.processInfo.environment["IAPKIT_SCALE_OUT_TESTS"] == "1"
    && ServerProcess.executable != nil && NginxProxyTests.available
    && ThrowawayPostgres.available

/// Several `iapkit serve` processes on one PostgreSQL server, behind the repository's nginx site, as a deployment
/// beyond one machine runs them: load through the balancer, one instance killed with -9, the database stopped for
/// 10 s and started again. The test owns its PostgreSQL server (`Scripts/postgres.sh`), so it can stop it.
@Suite(
    "Several instances on one PostgreSQL", .serialized,
    .enabled(if: scaleOutAvailable, "set IAPKIT_SCALE_OUT_TESTS=1; needs PostgreSQL's binaries, nginx, curl, openssl"))
struct ScaleOutTests {
    /// What one request through the balancer got.
    struct Answer: Sendable {
        var status: Int
        var code: String?
        var seconds: Double
    }

    /// Posts `body` to `path` through nginx; the status, the error code when there is one, and how long it took.
    static func post(_ nginx: NginxProcess, _ path: String, _ body: [String: String], seconds: Int = 10) async throws
        -> Answer
    {
        let started = ContinuousClock.now
        let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        let answer = try await NginxProxyTests.curl(port: nginx.port, "POST", path, body: json, seconds: seconds)
        let object = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any]
        let elapsed = ContinuousClock.now - started
        return Answer(
            status: answer.status, code: object?["code"] as? String,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Posts `body` to `path` on one server: the status, the error code when there is one, and how long it took.
    static func post(_ server: ServerProcess, _ path: String, _ body: [String: String]) async throws -> Answer {
        let started = ContinuousClock.now
        let (status, answer) = try await server.post(path, body)
        let elapsed = ContinuousClock.now - started
        return Answer(
            status: status, code: answer["code"] as? String,
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// The product ids a server answers as entitled for the customer owning `original`.
    static func entitled(port: Int, original: String) async throws -> [String]? {
        let (status, answer) = try await ServerProcess.get(
            port: port, "/v1/customers/\(original)/entitlements",
            headers: ["Authorization": "Bearer \(ServerProcessTests.key)"])
        guard status == 200 else { return nil }
        return (answer["entitledProductIds"] as? [String])?.sorted()
    }

    @Test("three instances behind nginx: load, a kill -9 and a 10 s database outage end in one consistent state")
    func threeInstancesSurviveAKillAndAnOutage() async throws {
        let database = try await ThrowawayPostgres.start()
        let folder = try ServerProcessTests.pkiFolder()
        do {
            try await scenario(database, folder: folder)
        } catch {
            await database.remove()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        await database.remove()
        try? FileManager.default.removeItem(at: folder)
    }

    func scenario(_ database: ThrowawayPostgres, folder: URL) async throws {

        @Sendable func step(_ text: String) { FileHandle.standardError.write(Data("[scale-out] \(text)\n".utf8)) }
        // What apps and Apple send: 24 customers, each buying flowers and a gold subscription that renews.
        let store = try ServerProcessTests.simulator()
        let inbox = SimulatorInbox(store)
        var bought: [(id: String, original: String, jws: String)] = []
        for index in 0..<24 {
            try store.createAccount("customer\(index)")
            for product in [FloristCatalog.flowers, FloristCatalog.gold] {
                guard case .purchased(let one) = try store.purchase(product, account: "customer\(index)") else {
                    Issue.record("no purchase")
                    return
                }
                bought.append((one.transactionID, one.payload.originalTransactionID ?? one.transactionID, one.jws))
            }
        }
        let transactions = bought
        try store.advance(by: 35 * 86_400)
        let notifications = inbox.take().map(\.signedPayload)
        // Posts and notifications interleaved, as they arrive.
        var interleaved: [(path: String, body: [String: String], transactionID: String?)] = []
        for index in 0..<max(transactions.count, notifications.count) {
            if index < transactions.count {
                interleaved.append(
                    ("/v1/transactions", ["signedTransaction": transactions[index].jws], transactions[index].id))
            }
            if index < notifications.count {
                interleaved.append(("/v1/notifications", ["signedPayload": notifications[index]], nil))
            }
        }
        let requests = interleaved
        let (firstHalf, secondHalf) = (
            Array(requests[..<(requests.count / 2)]), Array(requests[(requests.count / 2)...])
        )

        try await WebhookReceiver.run(secret: WebhookProcessTests.secret) { receiver in
            // The default connect timeout (10 s) and statement timeout (30 s): a database that refuses connections
            // must be told at once, not after the one, and a statement in flight when it stops must end when its
            // connection closes, not after the other.
            let url = database.url
            var servers: [ServerProcess] = []
            for _ in 0..<3 {
                servers.append(
                    try await ServerProcess.start(
                        [
                            "--database", url, "--pki", folder.path, "--api-key", ServerProcessTests.key,
                            "--webhook", receiver.url.absoluteString, "--webhook-secret", WebhookProcessTests.secret,
                        ],
                        environment: WebhookProcessTests.fastDelivery.merging(
                            ["IAPKIT_SERVER_ALLOWED_HOSTS": "iap.example.com"]) { $1 }))
            }
            let nginx = try await NginxProcess.start(upstreams: servers.map(\.port), in: folder)
            defer { nginx.stop() }

            // 1. Load through the balancer, the webhook holding deliveries (leased, in flight); the third instance
            // is killed with -9 a third of the way in. nginx sends what it would have had to the others.
            receiver.hold(true)
            let stored = Locked(Set<String>())
            let answers = Locked([Answer]())
            // Through nginx, or straight to the surviving instances (`direct`: what each answers, timed without the
            // proxy and curl in between).
            let survivors = Array(servers.prefix(2))
            func send(_ batch: [(path: String, body: [String: String], transactionID: String?)], direct: Bool = false)
                async throws
            {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<4 {
                        group.addTask {
                            for request in batch.enumerated() where request.offset % 4 == worker {
                                let answer =
                                    direct
                                    ? try await Self.post(
                                        survivors[worker % 2], request.element.path, request.element.body)
                                    : try await Self.post(nginx, request.element.path, request.element.body)
                                answers.withLock { $0.append(answer) }
                                // Straight to an instance, a refusal is immediate: paced, so the outage's load does not
                                // starve the tests running beside this one.
                                if direct { try await Task.sleep(for: .milliseconds(20)) }
                                if answer.status == 200, let id = request.element.transactionID {
                                    stored.withLock { _ = $0.insert(id) }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            try await send(Array(firstHalf.prefix(firstHalf.count / 3)))
            let deadline = ContinuousClock.now + .seconds(20)
            while receiver.held == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(receiver.held > 0, "deliveries were in flight when the instance died")
            try await servers[2].kill()
            try await send(Array(firstHalf.dropFirst(firstHalf.count / 3)))
            #expect(answers.withLock { $0 }.allSatisfy { $0.status == 200 }, "every request before the outage")
            receiver.hold(false)

            // 2. The database stops for 10 s under load: every answer is 200 (before it noticed) or a quick 503
            // storageUnavailable; readiness says so while liveness stays up.
            answers.withLock { $0 = [] }
            let outage = ContinuousClock.now
            let load = Task {
                var round = 0
                while ContinuousClock.now - outage < .seconds(10.5) {
                    try await send(
                        Array(
                            secondHalf.dropFirst(round % 2).enumerated().filter { $0.offset % 2 == 0 }.map(\.element)),
                        direct: true)
                    round += 1
                }
            }
            // The load is running when the database stops, and for 10 s after.
            try await Task.sleep(for: .milliseconds(500))
            try await database.run("pause")
            try await Task.sleep(for: .seconds(3))
            let asked = ContinuousClock.now
            #expect(try await ServerProcess.get(port: servers[0].port, "/ready").0 == 503)
            #expect(ContinuousClock.now - asked < .seconds(2), "readiness answered without waiting for a connection")
            #expect(try await RawHTTP.exchange(port: servers[0].port, "HEAD", "/ready").status == 503)
            let (liveness, health) = try await ServerProcess.get(port: servers[0].port, "/health")
            #expect(liveness == 200 && health["database"] as? String == "unreachable")
            // Through the balancer, the instances' own answer: 503 storageUnavailable, not nginx's 502 once it has
            // left every instance out (the site's `iapkit_every`).
            for _ in 0..<3 {
                let through = try await Self.post(
                    nginx, "/v1/transactions", ["signedTransaction": transactions[0].jws])
                #expect(through.status == 503 && through.code == "storageUnavailable", "\(through)")
            }
            try await load.value
            try await database.run("resume")
            let during = answers.withLock { $0 }
            #expect(!during.isEmpty)
            #expect(during.allSatisfy { $0.status == 200 || ($0.status == 503 && $0.code == "storageUnavailable") })
            #expect(during.filter { $0.status == 503 }.count > during.count / 2, "most requests met the outage")
            // A request makes at most two database calls, each waiting for a connection until the database refuses one
            // of the server's own (a quarter second, then that attempt; never the 10 s connect timeout) and for an
            // answer until its connection closes (postgres-nio left one statement in flight at the stop unanswered
            // until the 30 s statement timeout in most outages, before the server watched its connections close).
            #expect(during.allSatisfy { $0.seconds < 7 }, "no request hung: \(during.map(\.seconds).max() ?? 0) s")
            let refused = during.filter { $0.status == 503 }
            step(
                "outage: \(during.count) requests, \(refused.count) refused (503), slowest "
                    + String(format: "%.3f s", during.map(\.seconds).max() ?? 0) + ", median refusal "
                    + String(format: "%.3f s", refused.map(\.seconds).sorted()[refused.count / 2]))

            // 3. Recovery without a restart: both instances ready within 15 s, and nothing answered 200 is lost.
            let recovery = ContinuousClock.now + .seconds(15)
            var ready = false
            while !ready, ContinuousClock.now < recovery {
                var all = true
                for server in servers.prefix(2) where try await ServerProcess.get(port: server.port, "/ready").0 != 200
                {
                    all = false
                }
                ready = all
                if !ready { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(ready, "the instances reached the database again")
            let storage = try await SQLStorage(database: try PostgresDatabase(url: database.url, maximumConnections: 1))
            for id in stored.withLock({ $0 }) {
                #expect(try await storage.customer(matching: id, bundleID: "com.example.florist") != nil, "\(id) lost")
            }

            // 4. Apps retry what failed: everything once more, through the balancer, all 200.
            answers.withLock { $0 = [] }
            try await send(requests)
            #expect(answers.withLock { $0 }.allSatisfy { $0.status == 200 })

            // One state: both instances answer every customer as a single SQLite server fed the same documents in
            // order does.
            let reference = try await ServerProcess.start(
                ["--database", ":memory:", "--pki", folder.path, "--api-key", ServerProcessTests.key])
            for request in requests {
                #expect(try await reference.post(request.path, request.body).0 == 200)
            }
            for original in Set(transactions.map(\.original)) {
                let expected = try await Self.entitled(port: reference.port, original: original)
                #expect(expected != nil)
                for server in servers.prefix(2) {
                    #expect(try await Self.entitled(port: server.port, original: original) == expected, "\(original)")
                }
            }
            try await reference.stop()

            // The outbox resumed: every stored event reaches the webhook, the dead instance's leased ones after
            // their leases ran out.
            let events = Set(try await storage.deliveries(DeliveryQuery(limit: 1_000)).map(\.event.id))
            #expect(!events.isEmpty)
            let delivered = try await receiver.waitUntil(timeout: .seconds(60)) { accepted in
                events.isSubset(of: Set(accepted.map(\.eventID)))
            }
            let missing = events.subtracting(delivered.map(\.eventID))
            if !missing.isEmpty {
                let states = try await storage.deliveries(DeliveryQuery(limit: 1_000))
                    .filter { missing.contains($0.event.id) }.map { "\($0.state) \($0.attempts.count)" }
                Issue.record("\(missing.count) of \(events.count) events not delivered: \(Set(states))")
            }
            step(
                "\(stored.withLock { $0.count }) transactions answered 200 all stored; \(events.count) events delivered"
            )
            try await storage.shutdown()
            for server in servers.prefix(2) { try await server.stop() }
        }
    }
}
