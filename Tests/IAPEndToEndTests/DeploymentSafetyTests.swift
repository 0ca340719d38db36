import Foundation
import IAPSimulator
import IAPTestSupport
import Testing

/// `iapkit serve` as a real deployment runs it: a real process serving a configured app (so not in development mode)
/// with the local App Store beside it, reached over loopback sockets the way a proxy on the same host reaches it.
/// Trust comes from the admin token, never from the address; hosts, origins and bodies are checked before any route;
/// slow connections cannot hold it.
@Suite(.serialized) struct DeploymentSafetyTests {
    static let adminToken = "deployment-admin-token-0123456789"

    /// A configuration serving one real app (roots: the test authority's) beside the simulator, with an admin token.
    static func configured(extra: [String: Any] = [:]) throws -> (folder: URL, config: URL) {
        let folder = try ServerProcessTests.pkiFolder()
        var settings: [String: Any] = [
            "apps": ["shop"],
            "app": [
                "shop": [
                    "bundleId": "com.example.shop", "environments": ["Sandbox"],
                    "roots": [folder.appendingPathComponent("roots/jws-root.der").path],
                ]
            ],
            "simulator": ["enabled": true, "pki": folder.path],
            "adminToken": adminToken, "database": ["url": ":memory:"],
            "server": ["allowedHosts": ["iap.example.com"]],
        ]
        settings.merge(extra) { $1 }
        let config = folder.appendingPathComponent("iapkit.json")
        try JSONSerialization.data(withJSONObject: settings).write(to: config)
        return (folder, config)
    }

    @Test func operatorRoutesNeedTheTokenFromLoopbackAndWhateverAProxySays() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let (folder, config) = try Self.configured()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await ServerProcess.start(["--config", config.path])
        defer { Task { try? await server.stop() } }
        // Every request comes from 127.0.0.1, as behind a proxy on the same host; forwarded headers change nothing.
        let proxied = ["X-Forwarded-For": "127.0.0.1", "X-Real-IP": "127.0.0.1", "Forwarded": "for=127.0.0.1"]
        for path in ["/simulator", "/simulator/clock", "/console/customers/anyone", "/metrics"] {
            for headers in [[:], proxied] {
                let answer = try await RawHTTP.exchange(port: server.port, "GET", path, headers: headers)
                #expect(answer.status == 401, "\(path) \(headers): \(answer.body)")
                #expect(answer.json["code"] as? String == "adminTokenMissing", "\(path)")
            }
            let wrong = try await RawHTTP.exchange(
                port: server.port, "GET", path, headers: ["Authorization": "Bearer not-the-token"])
            #expect(wrong.status == 403, "\(path)")
            let right = try await RawHTTP.exchange(
                port: server.port, "GET", path, headers: ["Authorization": "Bearer \(Self.adminToken)"])
            #expect(![401, 403].contains(right.status), "\(path): \(right.status) \(right.body)")
        }
        // Writes too: nothing is created without the token.
        let create = try await RawHTTP.exchange(
            port: server.port, "POST", "/simulator/accounts", headers: ["Content-Type": "application/json"],
            body: #"{"accountId":"mallory"}"#)
        #expect(create.status == 401)
        let state = try await RawHTTP.exchange(
            port: server.port, "GET", "/simulator", headers: ["Authorization": "Bearer \(Self.adminToken)"])
        #expect((state.json["accounts"] as? [String])?.contains("mallory") == false)
        // What apps and Apple use stays public.
        #expect(try await RawHTTP.exchange(port: server.port, "GET", "/health").status == 200)
        // A balancer that probes with HEAD gets the statuses too.
        #expect(try await RawHTTP.exchange(port: server.port, "HEAD", "/health").status == 200)
        #expect(try await RawHTTP.exchange(port: server.port, "HEAD", "/ready").status == 200)
        #expect(try await RawHTTP.exchange(port: server.port, "GET", "/openapi.yaml").status == 200)
        #expect(try await RawHTTP.exchange(port: server.port, "GET", "/").status == 200)
    }

    @Test func foreignHostsOriginsAndBodiesAreRefusedBeforeAnyRoute() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        // Development mode (no app configured): the operator routes are open, so these guards are all that stands
        // between a web page in the same browser and the simulator.
        let server = try await ServerProcess.start(["--database", ":memory:"])
        defer { Task { try? await server.stop() } }
        let port = server.port
        let json = ["Content-Type": "application/json"]
        let body = #"{"accountId":"eve"}"#

        // DNS rebinding: a name that is not the server's.
        for host in ["evil.example", "evil.example:\(port)", "127.0.0.1.evil.example", "localhost.evil.example"] {
            let answer = try await RawHTTP.exchange(port: port, "GET", "/simulator", headers: ["Host": host])
            #expect(answer.status == 421 && answer.json["code"] as? String == "hostNotAllowed", "\(host)")
        }
        for host in ["localhost:\(port)", "127.0.0.1:\(port)", "LOCALHOST:\(port)"] {
            #expect(try await RawHTTP.exchange(port: port, "GET", "/simulator", headers: ["Host": host]).status == 200)
        }

        // Cross-site writes, as a page elsewhere would send them.
        let crossSite: [[String: String]] = [
            ["Origin": "http://evil.example"], ["Origin": "http://127.0.0.2:\(port)"], ["Origin": "null"],
            ["Origin": "http://localhost:\(port + 1)"], ["Sec-Fetch-Site": "cross-site"],
            ["Sec-Fetch-Site": "same-site"],
        ]
        for headers in crossSite {
            let answer = try await RawHTTP.exchange(
                port: port, "POST", "/simulator/accounts", headers: json.merging(headers) { $1 }, body: body)
            #expect(answer.status == 403 && answer.json["code"] as? String == "crossOriginRefused", "\(headers)")
        }
        // No preflight-free body gets through: no type, a form's type, text, and an empty body.
        for type in [nil, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
            let answer = try await RawHTTP.exchange(
                port: port, "POST", "/simulator/accounts", headers: type.map { ["Content-Type": $0] } ?? [:],
                body: body)
            #expect(answer.status == 415, "\(type ?? "no type")")
        }
        let empty = try await RawHTTP.exchange(port: port, "POST", "/simulator/clock/advance", headers: json, body: "")
        #expect(empty.status == 400 && empty.json["code"] as? String == "emptyBody")
        let state = try await RawHTTP.exchange(port: port, "GET", "/simulator")
        #expect((state.json["accounts"] as? [String]) == [], "nothing was created: \(state.body)")

        // Development mode serves this machine: not a request a proxy passed on, not a page of another site, even
        // for reads (opening an update stream ends the account's oldest).
        for headers in [
            ["X-Forwarded-For": "203.0.113.7"], ["Forwarded": "for=203.0.113.7"], ["X-Real-IP": "203.0.113.7"],
            ["Via": "1.1 proxy"],
        ] {
            let answer = try await RawHTTP.exchange(port: port, "GET", "/simulator", headers: headers)
            #expect(answer.status == 403 && answer.json["code"] as? String == "proxiedRequestRefused", "\(headers)")
        }
        let crossSiteRead = try await RawHTTP.exchange(
            port: port, "GET", "/simulator/accounts/eve/updates", headers: ["Sec-Fetch-Site": "cross-site"])
        #expect(crossSiteRead.status == 403 && crossSiteRead.json["code"] as? String == "crossOriginRefused")

        // The server's own pages, same origin, get through.
        let own = try await RawHTTP.exchange(
            port: port, "POST", "/simulator/accounts",
            headers: json.merging(["Origin": "http://127.0.0.1:\(port)", "Sec-Fetch-Site": "same-origin"]) { $1 },
            body: body)
        #expect(own.status == 201, "\(own.body)")
        // No CORS headers on any answer.
        let preflight = try await RawHTTP.exchange(
            port: port, "OPTIONS", "/simulator/accounts",
            headers: ["Origin": "http://evil.example", "Access-Control-Request-Method": "POST"])
        #expect(!preflight.head.lowercased().contains("access-control-allow"))
    }

    @Test func slowConnectionsCannotLockEveryoneOut() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        // 256 files for the server (so at most 128 connections), a one-second header deadline.
        let server = try await ServerProcess.start(
            ["--database", ":memory:"], openFiles: 256,
            environment: [
                "IAPKIT_SERVER_HEADER_TIMEOUT": "1", "IAPKIT_SERVER_BODY_TIMEOUT": "2",
                "IAPKIT_SERVER_IDLE_TIMEOUT": "2",
            ])
        defer { Task { try? await server.stop() } }
        let port = server.port

        // One half-sent request is closed once its headers are late, and one half-sent body once it is.
        let (headersClosed, bodyClosed) = try await offThePool { () throws -> (Bool, Bool) in
            let headers = try RawHTTP(port: port, timeout: .seconds(5))
            defer { headers.close() }
            try headers.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            let body = try RawHTTP(port: port, timeout: .seconds(6))
            defer { body.close() }
            try body.send(
                "POST /simulator/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100\r\n\r\n{")
            return (headers.readUntilClosed().closed, body.readUntilClosed().closed)
        }
        #expect(headersClosed, "a request whose headers never end is closed")
        #expect(bodyClosed, "a body that never ends is closed")

        // Refused before its body came (415), then the body: the connection is idle again and closes on its deadline.
        let earlyClosed = try await offThePool { () throws -> Bool in
            let connection = try RawHTTP(port: port, timeout: .seconds(6))
            defer { connection.close() }
            try connection.send(
                "POST /v1/notifications HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: 1\r\n\r\n")
            let refused = try connection.readAnswer()
            guard refused.status == 415 else { return false }
            try connection.send("x")
            return connection.readUntilClosed().closed
        }
        #expect(earlyClosed, "an early refusal leaves the connection on the idle deadline")

        // 1,100 connections that never finish their headers: /health still answers, each time within a second.
        let flood = try await offThePool { () throws -> [RawHTTP] in
            var connections: [RawHTTP] = []
            for _ in 0..<1_100 {
                guard let connection = try? RawHTTP(port: port, timeout: .seconds(1)) else { continue }
                try? connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                connections.append(connection)
            }
            return connections
        }
        defer { for connection in flood { connection.close() } }
        #expect(flood.count > 1_000, "the kernel took the flood's connections: \(flood.count)")
        // Locked out, each answer would wait for the header deadlines of the connections ahead of it: seconds at
        // least.
        try await Self.expectHealthAnswersPromptly(port: port)
        #expect(server.process.isRunning)
    }

    /// Ten `GET /health` on new connections, each answered 200: all within 5 s and the median under `median` (one
    /// answer may take longer on a machine busy with the whole suite; seen: 1.15 s for the first, right after a flood,
    /// in a CI run).
    static func expectHealthAnswersPromptly(
        port: Int, median: Duration = .seconds(1), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var latencies: [Duration] = []
        for _ in 0..<10 {
            let start = ContinuousClock.now
            let answer = try await RawHTTP.exchange(port: port, "GET", "/health")
            latencies.append(ContinuousClock.now - start)
            #expect(answer.status == 200, sourceLocation: sourceLocation)
        }
        #expect(latencies.allSatisfy { $0 < .seconds(5) }, "\(latencies)", sourceLocation: sourceLocation)
        #expect(latencies.sorted()[latencies.count / 2] < median, "\(latencies)", sourceLocation: sourceLocation)
    }

    /// The server's resident memory, from /proc.
    static func residentMiB(_ pid: Int32) -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
    }

    @Test func manyUnreadUpdateStreamsStayBounded() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let server = try await ServerProcess.start(["--database", ":memory:"])
        defer { Task { try? await server.stop() } }
        let port = server.port
        let json = ["Content-Type": "application/json"]
        // 30 customers, each with 10 unfinished purchases.
        for account in 0..<30 {
            _ = try await RawHTTP.exchange(
                port: port, "POST", "/simulator/accounts", headers: json, body: #"{"accountId":"a\#(account)"}"#)
            for _ in 0..<10 {
                let bought = try await RawHTTP.exchange(
                    port: port, "POST", "/simulator/accounts/a\(account)/purchases", headers: json,
                    body: #"{"productId":"com.example.florist.installation"}"#)
                #expect(bought.status == 201)
            }
        }
        let pid = server.process.processIdentifier
        let before = Self.residentMiB(pid)
        // 10 listeners per customer that never read: 300 streams; each customer keeps its 8 newest.
        let streams = try await offThePool { () throws -> [[RawHTTP]] in
            try (0..<30).map { account in
                try (0..<10).map { _ in
                    let connection = try RawHTTP(port: port, timeout: .seconds(3))
                    try connection.send(
                        "GET /simulator/accounts/a\(account)/updates HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    return connection
                }
            }
        }
        // Each customer's two oldest listeners (in the order the server registered them) are ended: waited for (up to
        // 30 s on a loaded machine), not assumed after a fixed pause.
        // (A stream's last chunk is read once: what ended stays marked here.)
        var ended = streams.map { listeners in listeners.map { _ in false } }
        var endedPerCustomer: [Int] = []
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            try await Task.sleep(for: .milliseconds(200))
            for (account, listeners) in streams.enumerated() {
                for (index, connection) in listeners.enumerated() where !ended[account][index] {
                    ended[account][index] = connection.answerEnded()
                }
            }
            endedPerCustomer = ended.map { $0.filter { $0 }.count }
        } while endedPerCustomer != Array(repeating: 2, count: 30) && ContinuousClock.now < deadline
        let during = Self.residentMiB(pid)
        #expect(endedPerCustomer == Array(repeating: 2, count: 30), "\(endedPerCustomer)")
        for listeners in streams { for connection in listeners { connection.close() } }
        try await Task.sleep(for: .seconds(1))
        let after = Self.residentMiB(pid)
        print("update streams: RSS \(before) MiB before, \(during) MiB with 300 open, \(after) MiB after they closed")
        #expect(during - before < 64, "300 unread streams cost \(during - before) MiB")
        #expect(after - before < 64, "and give it back when they close")
        #expect(server.process.isRunning)
    }

    @Test func aRestartOnTheSameDatabaseNeverReusesIdsOrNotificationUUIDs() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let folder = try ServerProcessTests.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("iapkit.sqlite").path
        let arguments = ["--database", database, "--pki", folder.path]
        func buy(_ server: ServerProcess, _ account: String) async throws -> String {
            #expect(try await server.post("/simulator/accounts", ["accountId": account]).0 == 201)
            let (status, answer) = try await server.post(
                "/simulator/accounts/\(account)/purchases", ["productId": "com.example.florist.flowers"])
            #expect(status == 201, "\(answer)")
            return try #require((answer["transaction"] as? [String: Any])?["transactionId"] as? String)
        }
        func stored(_ server: ServerProcess) async throws -> (transactions: Int, notifications: Int) {
            let (_, health) = try await server.get("/health")
            let storage = health["storage"] as? [String: Any] ?? [:]
            return (storage["transactions"] as? Int ?? -1, storage["notifications"] as? Int ?? -1)
        }
        func settled(_ server: ServerProcess, notifications: Int) async throws -> (
            transactions: Int, notifications: Int
        ) {
            for _ in 0..<100 {
                let counts = try await stored(server)
                if counts.notifications >= notifications { return counts }
                try await Task.sleep(for: .milliseconds(50))
            }
            return try await stored(server)
        }

        let first = try await ServerProcess.start(arguments)
        let ana = try await buy(first, "ana")
        let before = try await settled(first, notifications: 1)
        #expect(before.transactions == 1 && before.notifications == 1, "\(before)")
        _ = try await first.stop(within: .seconds(10))

        // The second start of the same command, on the same database: a new customer's purchase is a new
        // transaction and its notification a new one, not a collision with the first run's.
        let second = try await ServerProcess.start(arguments)
        defer { Task { try? await second.stop() } }
        let bob = try await buy(second, "bob")
        #expect(bob != ana)
        #expect(UInt64(bob)! > UInt64(ana)!, "ids continue past the stored ones: \(ana) then \(bob)")
        let after = try await settled(second, notifications: 2)
        #expect(after.transactions == 2 && after.notifications == 2, "\(after)")
    }

    @Test func aRestartContinuesTheSameStoreEvenAfterAKillAndWithAFreshPKIFolder() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let folder = try ServerProcessTests.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("iapkit.sqlite").path
        func transactionIDs(_ server: ServerProcess, _ account: String) async throws -> [String] {
            let (status, answer) = try await server.get("/simulator/accounts/\(account)/transactions")
            #expect(status == 200, "\(answer)")
            return (answer["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
        }
        func notificationUUIDs(_ server: ServerProcess) async throws -> [String] {
            let (_, answer) = try await server.get("/simulator/notifications")
            return (answer["notifications"] as? [[String: Any]] ?? []).compactMap { $0["notificationUUID"] as? String }
        }
        func state(_ server: ServerProcess) async throws -> [String: Any] { try await server.get("/simulator").1 }

        let first = try await ServerProcess.start(["--database", database, "--pki", folder.path])
        #expect(try await first.post("/simulator/accounts", ["accountId": "ana"]).0 == 201)
        #expect(try await first.post("/simulator/accounts", ["accountId": "bob", "askToBuy": true]).0 == 201)
        for product in ["com.example.florist.vip.gold", "com.example.florist.flowers"] {
            #expect(try await first.post("/simulator/accounts/ana/purchases", ["productId": product]).0 == 201)
        }
        let asked = try await first.post(
            "/simulator/accounts/bob/purchases", ["productId": "com.example.florist.installation"])
        #expect(asked.0 == 202, "\(asked.1)")
        let anaBefore = try await transactionIDs(first, "ana")
        let pendingBefore = try await state(first)["pendingPurchases"] as? [[String: Any]] ?? []
        let pendingID = try #require(pendingBefore.first?["id"] as? String)
        // Killed with no chance to save anything more: what it answered must already be in the database.
        try await first.kill()

        let second = try await ServerProcess.start(["--database", database, "--pki", folder.path])
        #expect((try await state(second)["accounts"] as? [String]) == ["ana", "bob"])
        #expect(try await transactionIDs(second, "ana") == anaBefore, "ana's purchases are still hers")
        let pendingAfter = try await state(second)["pendingPurchases"] as? [[String: Any]] ?? []
        #expect(pendingAfter.compactMap { $0["id"] as? String } == [pendingID], "bob's request still waits")
        let approved = try await second.post("/simulator/pending/\(pendingID)/approve", [:])
        #expect(approved.0 == 201 || approved.0 == 200, "\(approved.1)")
        let bobs = try await transactionIDs(second, "bob")
        #expect(bobs.count == 1)
        #expect(Set(bobs).isDisjoint(with: anaBefore), "a new id, not one of the first run's")
        let notesBefore = try await notificationUUIDs(second)
        _ = try await second.stop(within: .seconds(10))

        // A fresh PKI folder on the old database: the same store, signing with new keys, never repeating an id or UUID.
        let fresh = TestFiles.url("pki")
        defer { try? FileManager.default.removeItem(at: fresh) }
        let third = try await ServerProcess.start(["--database", database, "--pki", fresh.path])
        defer { Task { try? await third.stop() } }
        #expect((try await state(third)["accounts"] as? [String]) == ["ana", "bob"])
        let askedAgain = try await third.post(
            "/simulator/accounts/bob/purchases", ["productId": "com.example.florist.chocolates"])
        #expect(askedAgain.0 == 202, "bob still has ask to buy on: \(askedAgain.1)")
        let bought = try await third.post(
            "/simulator/accounts/ana/purchases", ["productId": "com.example.florist.chocolates"])
        #expect(bought.0 == 201, "\(bought.1)")
        let anaNow = try await transactionIDs(third, "ana")
        #expect(anaNow.count == anaBefore.count + 1)
        #expect(Set(anaNow).subtracting(anaBefore).isDisjoint(with: bobs), "a new id: \(anaNow) \(bobs)")
        let notesAfter = try await notificationUUIDs(third)
        #expect(Array(notesAfter.prefix(notesBefore.count)) == notesBefore, "the notification history is kept")
        #expect(Set(notesAfter).count == notesAfter.count, "no UUID twice: \(notesAfter)")
        #expect(notesAfter.count > notesBefore.count)
    }

    /// A customer with thousands of purchases: every answer stays the size of a short history's (the recent events,
    /// after a count of the earlier ones the totals include), the console shows the newest transactions, and the
    /// listing pages through every one. (What a post costs is measured by Scripts/history-bench.py, not timed here.)
    @Test func aCustomerWithThousandsOfTransactionsGetsBoundedAnswersAndPagesThroughThemAll() async throws {
        try #require(ServerProcess.executable != nil, Comment(rawValue: ServerProcess.skipMessage))
        let folder = try ServerProcessTests.pkiFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("long.sqlite").path
        let server = try await ServerProcess.start(
            ["--database", database, "--pki", folder.path, "--api-key", ServerProcessTests.key])
        defer { Task { try? await server.stop() } }
        let headers = ["Authorization": "Bearer \(ServerProcessTests.key)"]
        let token = "00000000-0000-4000-8000-00000000abcd"
        let store = try ServerProcessTests.simulator()
        try store.createAccount("long", appAccountToken: UUID(uuidString: token))
        let count = 1_500
        var last: [String: Any] = [:]
        for _ in 0..<count {
            let bought = try store.purchase("com.example.florist.installation", account: "long")
            let (status, answer) = try await server.post(
                "/v1/transactions", ["signedTransaction": try #require(bought.transaction?.jws)], headers: headers)
            #expect(status == 200, "\(answer)")
            last = answer
        }
        func consumable(_ answer: [String: Any]) -> [String: Any] {
            ((answer["entitlements"] as? [String: Any])?["consumables"] as? [[String: Any]])?.first ?? [:]
        }
        for (what, answer) in [
            ("the last post", last),
            ("GET entitlements", try await server.get("/v1/customers/\(token)/entitlements", headers: headers).1),
        ] {
            let balance = consumable(answer)
            let history = balance["history"] as? [[String: Any]] ?? []
            let earlier = balance["earlierEvents"] as? Int ?? 0
            #expect(balance["balance"] as? Int == count, "\(what): \(balance["balance"] ?? "?")")
            #expect(history.count <= 100, "\(what) lists the recent events only: \(history.count)")
            #expect(earlier + history.count == count, "\(what): \(earlier) earlier + \(history.count) listed")
        }
        let (status, view) = try await server.get("/console/customers/\(token)")
        #expect(status == 200)
        #expect((view["transactions"] as? [[String: Any]])?.count == 100)
        #expect(view["moreTransactions"] as? Bool == true)
        var ids: [String] = []
        var cursor: String?
        repeat {
            let query = "limit=1000" + (cursor.map { "&cursor=\($0)" } ?? "")
            let (status, page) = try await server.get("/v1/customers/\(token)/transactions?\(query)", headers: headers)
            #expect(status == 200)
            ids += (page["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
            cursor = page["next"] as? String
        } while cursor != nil && ids.count <= count
        #expect(ids.count == count && Set(ids).count == count, "every transaction once: \(ids.count)")
        #expect(ids == ids.sorted { ($0.count, $0) < ($1.count, $1) }, "in id order")
    }
}
