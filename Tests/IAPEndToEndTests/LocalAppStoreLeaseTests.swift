import Foundation
import IAPTestSupport
import Testing

/// Several `iapkit serve` processes given the same flags on one database: one local App Store sells (two would
/// continue the same saved store and count the same transaction ids), the others verify its documents at its
/// simulated moment; one killed with -9 is followed by the next server that starts, one stopped cleanly at once.
@Suite(
    "one local App Store on a shared database", .serialized,
    .enabled(if: ServerProcess.executable != nil, "\(ServerProcess.skipMessage)"))
struct LocalAppStoreLeaseTests {
    @Test func oneServerSellsTheOthersVerifyAndTheNextTakesOverFromAKilledOne() async throws {
        let folder = try ServerProcessTests.pkiFolder()
        let database = FileManager.default.temporaryDirectory.appendingPathComponent("iapkit-\(UUID()).sqlite").path
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

        // Killed with -9, the first never gives the lease up: the next server to start sees its beat stand still,
        // takes over and continues its store (ana is there).
        try await first.kill()
        var noneSells = ""
        for _ in 0..<40 where noneSells != "noneSells" {
            try await Task.sleep(for: .milliseconds(250))
            noneSells = (try await second.get("/health").1["additions"] as? [String: String])?["localAppStore"] ?? ""
        }
        #expect(noneSells == "noneSells", "the second sees the seller's beat stand still")
        let third = try await ServerProcess.start(arguments)
        let (ana, account) = try await third.get("/simulator/accounts/ana")
        #expect(ana == 200, "\(account)")
        #expect(try await third.post("/simulator/accounts", ["accountId": "bea"]).0 == 201)
        #expect(try await second.post("/simulator/accounts", ["accountId": "cy"]).0 == 503, "the second stays apart")

        // Stopped cleanly, the third gives the lease up: the next one sells and still has both accounts.
        try await third.stop()
        let fourth = try await ServerProcess.start(arguments)
        defer { Task { try? await fourth.stop() } }
        #expect(try await fourth.get("/simulator/accounts/bea").0 == 200)
        #expect(try await fourth.post("/simulator/accounts", ["accountId": "cy"]).0 == 201)

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
