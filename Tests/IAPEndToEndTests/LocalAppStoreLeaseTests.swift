import Foundation
import IAPTestSupport
import Testing

/// Several `iapkit serve` processes given the same flags on one database: one local App Store sells (two would
/// continue the same saved store and count the same transaction ids), the others verify its documents at its
/// simulated moment; one killed with -9 is taken over by a server that follows it once its beat stood still, one
/// stopped cleanly at once.
@Suite(
    "one local App Store on a shared database", .serialized,
    .enabled(if: ServerProcess.executable != nil, "\(ServerProcess.skipMessage)"))
struct LocalAppStoreLeaseTests {
    @Test func oneServerSellsTheOthersVerifyAndOneTakesOverWhileRunning() async throws {
        let folder = try ServerProcessTests.pkiFolder()
        let database = TestFiles.url("store.sqlite").path
        defer {
            try? FileManager.default.removeItem(at: folder)
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        }
        let arguments = ["--database", database, "--pki", folder.path, "--api-key", ServerProcessTests.key]
        let first = try await ServerProcess.start(arguments)
        #expect(try await first.post("/simulator/accounts", ["accountId": "ana"]).0 == 201)
        let (bought, purchase) = try await first.post(
            "/simulator/accounts/ana/purchases", ["productId": "com.example.florist.vip.gold"])
        #expect(bought == 201, "\(purchase)")
        let jws = try #require(
            (purchase["transaction"] as? [String: Any])?["signedTransaction"] as? String, "\(purchase)")

        // The second finds the first's beat moving: it verifies the store's documents and refuses to sell.
        let second = try await ServerProcess.start(arguments)
        defer { Task { try? await second.stop() } }
        let (refused, why) = try await second.post("/simulator/accounts", ["accountId": "bea"])
        #expect(refused == 503 && why["code"] as? String == "localAppStoreElsewhere", "\(why)")
        #expect((why["message"] as? String)?.contains("another server of this database") == true, "\(why)")
        #expect(try await second.get("/simulator").0 == 503)
        let (verified, answer) = try await second.post("/v1/transactions", ["signedTransaction": jws])
        #expect(verified == 200, "\(answer)")
        let (_, sellerHealth) = try await first.get("/health")
        let (alive, followerHealth) = try await second.get("/health")
        #expect(alive == 200)
        #expect((sellerHealth["additions"] as? [String: String])?["localAppStore"] == "sells", "\(sellerHealth)")
        #expect(
            (followerHealth["additions"] as? [String: String])?["localAppStore"] == "sellsElsewhere",
            "\(followerHealth)")

        // A purchase just made on the first is owned at once on the second: both read the same clock.
        #expect(try await first.post("/simulator/accounts", ["accountId": "bo"]).0 == 201)
        for _ in 0..<5 {
            let (status, bought) = try await first.post(
                "/simulator/accounts/bo/purchases", ["productId": "com.example.florist.vip.gold"])
            let signed = try #require(
                (bought["transaction"] as? [String: Any])?["signedTransaction"] as? String, "\(status) \(bought)")
            let (_, owned) = try await second.post("/v1/transactions", ["signedTransaction": signed])
            #expect(owned["entitledProductIds"] as? [String] == ["com.example.florist.vip.gold"], "\(owned)")
        }

        // The second answers at the first's simulated moment: a month's jump there reaches it with the next beat.
        #expect(try await first.post("/simulator/clock/advance", ["seconds": 30 * 86_400]).0 == 200)
        let jumped = try #require(try await Self.moment(first, jws))
        var followed = try #require(try await Self.moment(second, jws))
        for _ in 0..<40 where abs(followed.timeIntervalSince(jumped)) > 5 {
            try await Task.sleep(for: .milliseconds(100))
            followed = try #require(try await Self.moment(second, jws))
        }
        #expect(abs(followed.timeIntervalSince(jumped)) <= 5, "\(followed) against \(jumped)")

        // Killed with -9, the first never gives the lease up: the second sees its beat stand still for the watch (3 s),
        // takes over while it runs and continues the store (ana is there; new ids come after the first's).
        let before = try await Self.largestTransactionID(first, account: "bo")
        try await first.kill()
        let killed = ContinuousClock.now
        #expect(try await Self.awaitStatus("sells", of: second, within: .seconds(15)))
        let takeOver = ContinuousClock.now - killed
        #expect(takeOver < .seconds(10), "taken over \(takeOver) after the kill")
        let (ana, account) = try await second.get("/simulator/accounts/ana")
        #expect(ana == 200, "\(account)")
        #expect(try await second.post("/simulator/accounts", ["accountId": "bea"]).0 == 201)
        let (sold, sale) = try await second.post(
            "/simulator/accounts/bea/purchases", ["productId": "com.example.florist.vip.gold"])
        let soldID = try #require(
            ((sale["transaction"] as? [String: Any])?["transactionId"] as? String).flatMap { UInt64($0) },
            "\(sold) \(sale)")
        #expect(soldID > before, "a new id after the ones the first sold")
        let (owned, answer2) = try await second.post(
            "/v1/transactions",
            [
                "signedTransaction": try #require(
                    (sale["transaction"] as? [String: Any])?["signedTransaction"] as? String)
            ])
        #expect(owned == 200, "\(answer2)")

        // A third started now follows the second.
        let third = try await ServerProcess.start(arguments)
        defer { Task { try? await third.stop() } }
        #expect(try await third.post("/simulator/accounts", ["accountId": "cy"]).0 == 503, "the third stays apart")

        // Stopped cleanly, the second gives the lease up: the third takes over at once, with both accounts.
        try await second.stop()
        let stopped = ContinuousClock.now
        #expect(try await Self.awaitStatus("sells", of: third, within: .seconds(10)))
        let handOver = ContinuousClock.now - stopped
        #expect(handOver < .seconds(5), "handed over \(handOver) after a clean stop")
        #expect(try await third.get("/simulator/accounts/bea").0 == 200)
        #expect(try await third.post("/simulator/accounts", ["accountId": "cy"]).0 == 201)

        // A server that would not sell, without the selling one's signing authority, could verify none of its
        // documents: it does not start, and says which flag to give.
        let (exit, output) = try await ExternalTool.run(
            ServerProcess.executable!.path,
            [
                "serve", "--host", "127.0.0.1", "--port", "0", "--database", database, "--api-key",
                ServerProcessTests.key,
            ])
        #expect(exit != 0)
        #expect(output.contains("sells on another server of this database") && output.contains("--pki"), "\(output)")
        // Nor with another authority than the selling one's.
        let other = try ServerProcessTests.pkiFolder().appendingPathComponent("other")
        defer { try? FileManager.default.removeItem(at: other.deletingLastPathComponent()) }
        let (otherExit, otherOutput) = try await ExternalTool.run(
            ServerProcess.executable!.path,
            [
                "serve", "--host", "127.0.0.1", "--port", "0", "--database", database, "--pki", other.path,
                "--api-key", ServerProcessTests.key,
            ])
        #expect(otherExit != 0)
        #expect(otherOutput.contains("signs with another authority"), "\(otherOutput)")
    }

    /// Waits until `server`'s `GET /health` says `status` of its local App Store; false if it did not within `limit`.
    static func awaitStatus(_ status: String, of server: ServerProcess, within limit: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let said = (try await server.get("/health").1["additions"] as? [String: String])?["localAppStore"]
            if said == status { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// The largest transaction id among `account`'s purchases, as `server` reads the saved store.
    static func largestTransactionID(_ server: ServerProcess, account: String) async throws -> UInt64 {
        let (_, answer) = try await server.get("/simulator/accounts/\(account)/transactions")
        let items = answer["transactions"] as? [[String: Any]] ?? []
        return items.compactMap { ($0["transactionId"] as? String).flatMap(UInt64.init) }.max() ?? 0
    }

    /// The moment a server answered a post of `jws` at.
    static func moment(_ server: ServerProcess, _ jws: String) async throws -> Date? {
        let (status, answer) = try await server.post("/v1/transactions", ["signedTransaction": jws])
        guard status == 200, let text = (answer["entitlements"] as? [String: Any])?["moment"] as? String else {
            return nil
        }
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return format.date(from: text)
    }
}
